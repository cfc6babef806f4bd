//! The worker's assisted-search sessions and the LLM-ready formats.

use super::*;

#[wasm_bindgen_test]
async fn the_worker_runs_assisted_searches_by_id_and_drops_them_when_they_end() {
    use crate::{api, assist as wa};
    fresh().await;
    publish(SITE, SAMPLE).await;
    let options = js_sys::JSON::parse(&format!(
        r#"{{"manifestUrl": "{}", "storage": "memory"}}"#,
        manifest_url(SITE)
    ))
    .unwrap();
    api::session_open(options, None, JsValue::UNDEFINED, None)
        .await
        .unwrap();
    let parse = |json: String| -> serde_json::Value { serde_json::from_str(&json).unwrap() };
    let id = |v: &serde_json::Value| v["session"].as_u64().unwrap() as u32;
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["reports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    };

    // Two searches at once, kept apart by id.
    let a = parse(wa::assist_start("Where are refunds processed?", "{}").unwrap());
    let b = parse(
        wa::assist_start(
            "How are users authenticated?",
            r#"{"condenseThreshold": 2}"#,
        )
        .unwrap(),
    );
    assert_ne!(id(&a), id(&b));
    assert_eq!(
        (a["step"]["kind"].as_str(), a["step"]["stage"].as_u64()),
        (Some("ask"), Some(1))
    );
    assert!(a["step"]["prompt"]
        .as_str()
        .unwrap()
        .contains(&wa::assist_guide()));
    assert_eq!(wa::assist_running(), 2);

    let a2 = parse(wa::assist_advance(id(&a), "refund OR refunds").unwrap());
    assert_eq!(a2["step"]["name"], "review");
    assert_eq!(names(&a2), ["query", "tiny-overviews", "overviews"]);
    // Timings come from performance.now (std's clock would have panicked).
    for r in a2["reports"].as_array().unwrap() {
        let ms = r["elapsedMs"].as_f64().unwrap();
        assert!(ms.is_finite() && ms >= 0.0, "{r}");
    }
    assert!(a2["reports"][0]["llmMs"].as_f64().unwrap() >= 0.0);
    let b2 = parse(wa::assist_advance(id(&b), "auth* OR login OR token").unwrap());
    assert_eq!(b2["step"]["name"], "condensed-pick");
    let a3 =
        parse(wa::assist_advance(id(&a), "| backend/src/payment/refundHandler.js | 43 |").unwrap());
    assert_eq!(a3["step"]["kind"], "done");
    assert_eq!(names(&a3), ["review"]);
    assert_eq!(
        a3["step"]["outcome"]["identifiedFiles"],
        serde_json::json!([{"path": "backend/src/payment/refundHandler.js", "chat_id": 43}])
    );
    assert_eq!(a3["step"]["outcome"]["stages"].as_array().unwrap().len(), 4);
    // A finished search is gone; B is cancelled.
    assert_eq!(wa::assist_running(), 1);
    let e = wa::assist_advance(id(&a), "more").unwrap_err();
    assert_eq!(js_code(&e), "assist.unknown_session");
    assert!(wa::assist_cancel(id(&b)));
    assert!(!wa::assist_cancel(id(&b)));
    assert_eq!(wa::assist_running(), 0);

    // A query still rejected after the retry: `failed`, with the reports.
    let c = parse(wa::assist_start("q?", "{}").unwrap());
    let c2 = parse(wa::assist_advance(id(&c), "pay \"unclosed").unwrap());
    assert_eq!(c2["step"]["stage"], 1);
    assert_eq!(c2["reports"][0]["error"]["code"], "query.unbalanced_quote");
    let c3 = parse(wa::assist_advance(id(&c), "pay \"unclosed").unwrap());
    assert_eq!(c3["step"]["kind"], "failed");
    assert_eq!(c3["step"]["error"]["code"], "query.unbalanced_quote");
    assert_eq!(c3["reports"][0]["attempt"], 2);
    assert_eq!(wa::assist_running(), 0);

    // Bad options are structured errors.
    let e = wa::assist_start("q?", r#"{"maxTokenz": 1}"#).unwrap_err();
    assert_eq!(js_code(&e), "options.invalid");
    let e = wa::assist_start(" ", "{}").unwrap_err();
    assert_eq!(js_code(&e), "options.empty_question");

    // An update that swaps the index ends the searches started before it.
    let d = parse(wa::assist_start("Where are payments?", "{}").unwrap());
    publish(SITE, HOSTILE).await;
    api::session_update(None).await.unwrap();
    let e = wa::assist_advance(id(&d), "payment").unwrap_err();
    assert_eq!(js_code(&e), "assist.index_changed");
    assert_eq!(wa::assist_running(), 0);

    // Closing the engine drops the rest.
    let f = parse(wa::assist_start("Where are payments?", "{}").unwrap());
    api::session_close();
    assert_eq!(wa::assist_running(), 0);
    assert_eq!(
        js_code(&wa::assist_advance(id(&f), "payment").unwrap_err()),
        "assist.unknown_session"
    );
    assert_eq!(
        js_code(&wa::assist_start("q?", "{}").unwrap_err()),
        "engine.closed"
    );
}

#[wasm_bindgen_test]
fn format_results_and_outcome_fit_their_budgets_in_the_worker() {
    use crate::assist as wa;
    use gitsense_engine::budget::estimate_text;
    let expected: Vec<Expected> = serde_json::from_str(EXPECTED).unwrap();
    let json = &expected.iter().find(|e| e.index == "sample").unwrap().json;
    for (format, max) in [
        ("json", 800),
        ("terse", 100),
        ("verbose", 150),
        ("markdown", 150),
        ("mcp", 150),
    ] {
        let full = wa::format_results(json, format, "{}").unwrap();
        let options = format!(r#"{{"maxTokens": {max}}}"#);
        let cut = wa::format_results(json, format, &options).unwrap();
        assert!(estimate_text(&cut) <= max, "{format}");
        assert!(
            estimate_text(&full) > max,
            "{format}: the budget cut nothing"
        );
    }
    let e = wa::format_results(json, "yaml", "{}").unwrap_err();
    assert_eq!(js_code(&e), "options.bad_format");
    let e = wa::format_results("{", "terse", "{}").unwrap_err();
    assert_eq!(js_code(&e), "options.invalid");
    let e = wa::format_outcome(json, "markdown", "{}").unwrap_err();
    assert_eq!(js_code(&e), "options.invalid");
}
