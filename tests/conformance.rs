//! The results object against the contract (`tests/contract/`): every
//! field it names is produced with the type `results.schema.json` gives it. Also code blocks
//! (trigram search, hint, block-id/lang/role filters) and safe snippets on
//! a fixture index built by code.

mod common;
use common::*;
use gitsense_engine::SearchOptions;
use serde_json::Value;

/// A validator for the JSON Schema subset the contract's schema uses:
/// type (with unions), const, enum, required, properties, items, minimum.
fn validate(v: &Value, schema: &Value, path: &str, errors: &mut Vec<String>) {
    if let Some(c) = schema.get("const") {
        if v != c {
            errors.push(format!("{path}: expected {c}, got {v}"));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(v) {
            errors.push(format!("{path}: {v} is not one of {allowed:?}"));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => false,
        });
        if !ok {
            errors.push(format!("{path}: {v} is not of type {types:?}"));
        }
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(|m| m.as_f64()), v.as_f64()) {
        if n < min {
            errors.push(format!("{path}: {n} < minimum {min}"));
        }
    }
    if let (Some(req), Some(obj)) = (
        schema.get("required").and_then(|r| r.as_array()),
        v.as_object(),
    ) {
        for r in req {
            let r = r.as_str().unwrap();
            if !obj.contains_key(r) {
                errors.push(format!("{path}: required field {r} missing"));
            }
        }
    }
    if let (Some(props), Some(obj)) = (
        schema.get("properties").and_then(|p| p.as_object()),
        v.as_object(),
    ) {
        for (k, s) in props {
            if let Some(x) = obj.get(k) {
                validate(x, s, &format!("{path}.{k}"), errors);
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            validate(x, items, &format!("{path}[{i}]"), errors);
        }
    }
}

fn schema() -> Value {
    let p = repo_root().join("tests/contract/results.schema.json");
    serde_json::from_str(&std::fs::read_to_string(&p).expect("schema readable")).unwrap()
}

/// Field names from the seed's tables, by section.
fn seed_fields() -> Vec<(String, Vec<String>)> {
    let seed = repo_root().join("tests/contract/seed-000-results-object.txt");
    let text = std::fs::read_to_string(seed).unwrap();
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line
            .strip_prefix("## ")
            .or_else(|| line.strip_prefix("### "))
        {
            sections.push((h.to_string(), vec![]));
        } else if let Some(rest) = line.strip_prefix("| `") {
            let name = rest.split('`').next().unwrap().to_string();
            if let Some(s) = sections.last_mut() {
                s.1.push(name);
            }
        }
    }
    sections
}

#[test]
fn results_match_the_schema_on_the_sample_and_the_fixture() {
    let schema = schema();
    let opts = SearchOptions {
        per_page: Some(50),
        ..Default::default()
    };
    let mut checked = 0;
    for (engine, queries) in [
        (
            sample_engine(),
            vec![
                "payment",
                "in:chats README",
                "msg-type:tiny-overview auth",
                "role:system",
                "profile:meta-insights insight-field:keywords:array,chat-type,lang insight-field:git-path",
            ],
        ),
        (
            fixture_engine(),
            vec!["widget", "json", "in:code-blocks widget", "chat-id:10"],
        ),
    ] {
        for q in queries {
            let opts = SearchOptions {
                facets: vec!["repo".into(), "role".into(), "msg-type".into()],
                ..opts.clone()
            };
            let r = search_with(&engine, q, opts);
            assert!(r.facets.as_ref().is_some_and(|f| !f.is_empty()), "{q} has facets");
            assert!(r.total_results_returned > 0, "{q} finds something");
            let mut errors = Vec::new();
            validate(&as_json(&r), &schema, "$", &mut errors);
            assert!(errors.is_empty(), "{q}: {errors:#?}");
            checked += r.total_results_returned;
        }
    }
    assert!(checked > 50);
}

#[test]
fn every_field_the_seed_names_is_produced() {
    let e = fixture_engine();
    let opts = SearchOptions {
        per_page: Some(50),
        ..Default::default()
    };
    let r = as_json(&search_with(&e, "widget OR json OR parse OR app", opts));
    let first = |list: &str, pred: &dyn Fn(&Value) -> bool| -> Value {
        r["results"][list]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| pred(x))
            .cloned()
            .unwrap_or_else(|| panic!("no {list} result"))
    };
    let chat = first("chats", &|c| c["chats_id"] == 10);
    let message = first("messages", &|m| m["messages_id"] == 100);
    let block = first("codeBlocks", &|b| {
        b["code_blocks_uuid"] == "bbbbbbbb-0000-4000-8000-000000000004"
    });
    let mut missing = Vec::new();
    for (section, fields) in seed_fields() {
        let target: Option<&Value> = if section.starts_with("Top-Level") {
            Some(&r)
        } else if section.starts_with("Pagination") {
            Some(&r["pagination"])
        } else if section.starts_with("Total Counts") {
            Some(&r["totalCounts"])
        } else if section.starts_with("Results Object") {
            Some(&r["results"])
        } else if section.starts_with("Chat Result") {
            Some(&chat)
        } else if section.starts_with("Message Result") {
            Some(&message)
        } else if section.starts_with("Code Block Result") {
            Some(&block)
        } else if section.starts_with("Individual Result") {
            None
        } else {
            continue;
        };
        let targets: Vec<&Value> = match target {
            Some(t) => vec![t],
            None => vec![&chat, &message, &block],
        };
        for f in &fields {
            for t in &targets {
                if t.get(f).is_none() {
                    missing.push(format!("{section}: {f}"));
                }
            }
        }
    }
    assert!(missing.is_empty(), "fields missing: {missing:#?}");
    // Types as the contract says.
    assert!(chat["chats_meta_assignees"].is_array());
    assert!(message["messages_meta_tags"].is_array());
    assert!(block["code_blocks_header"].is_object());
    assert!(block["code_blocks_meta_assignees"].is_array());
    assert_eq!(block["code_blocks_major_version"], 1);
}

#[test]
fn code_blocks_are_searched_by_substring_with_versions_and_headers() {
    let e = fixture_engine();
    let r = search(&e, "in:code-blocks parse_widget");
    assert_eq!(r.total_counts.code_blocks, 1);
    let b = &r.results.code_blocks[0];
    assert_eq!(b.code_blocks_uuid, "11111111-2222-4333-8444-555555555555");
    assert_eq!(
        (
            b.code_blocks_major_version,
            b.code_blocks_minor_version,
            b.code_blocks_patch_version
        ),
        (Some(2), Some(3), Some(4))
    );
    assert_eq!(
        b.code_blocks_header.as_ref().unwrap()["Component"],
        "Parser"
    );
    assert_eq!(b.code_blocks_component.as_deref(), Some("Parser"));
    assert_eq!(b.result_chat_id, 11);
    assert_eq!(
        b.chat_path.as_deref(),
        Some("Widget chat <b>bold</b> -> Forked widget chat")
    );
    // Substrings inside identifiers match (trigram).
    assert_eq!(
        search(&e, "in:code-blocks idget").total_counts.code_blocks,
        3
    );
    // Branch of a code block inside the git tree.
    let r = search(&e, "in:code-blocks widget::run");
    assert_eq!(
        r.results.code_blocks[0].code_blocks_branch_name.as_deref(),
        Some("develop")
    );
}

#[test]
fn short_code_terms_get_a_hint_instead_of_silence() {
    let e = fixture_engine();
    let r = search(&e, "in:code-blocks fn");
    assert_eq!(r.total_counts.code_blocks, 0);
    let hint = r.hint.expect("hint explains the empty result");
    assert!(
        hint.contains("3 characters") && hint.contains("'fn'"),
        "{hint}"
    );
    let r = search(&e, "in:code-blocks json");
    assert!(r.hint.is_none());
    assert!(r.total_counts.code_blocks > 0);
}

#[test]
fn code_block_filters_apply() {
    let e = fixture_engine();
    let c = |q: &str| search(&e, q).total_counts.code_blocks;
    assert_eq!(c("in:code-blocks widget"), 3);
    assert_eq!(c("in:code-blocks widget lang:rust"), 2);
    assert_eq!(c("in:code-blocks widget lang:rs,html"), 3);
    assert_eq!(c("in:code-blocks json lang:py"), 1);
    assert_eq!(
        c("in:code-blocks widget block-id:11111111-2222-4333-8444-555555555555"),
        1
    );
    assert_eq!(c("in:code-blocks widget role:user"), 1);
    assert_eq!(c("in:code-blocks widget msg-id:102"), 1);
    assert_eq!(c("in:code-blocks widget chat-type:git-blob"), 1);
    // Block 3 sits in the git blob, block 4 in a message whose meta names the file.
    assert_eq!(c("in:code-blocks widget git-path:src/**"), 2);
    assert_eq!(c("in:code-blocks widget git-path:src/app/main.rs"), 2);
    assert_eq!(c("in:code-blocks widget git-path:lib/*"), 0);
    assert_eq!(c("in:code-blocks widget repo:acme/widgets"), 1);
    // block-id does not apply to chats or messages: only code blocks answer.
    let r = search(&e, "widget block-id:11111111-2222-4333-8444-555555555555");
    assert_eq!(counts(&r), (0, 0, 1));
    assert!(r.search_criteria["skippedTargets"]["chats"].is_string());
}

#[test]
fn index_content_is_escaped_in_snippets() {
    let e = fixture_engine();
    let r = search(&e, "alert in:messages");
    let s = r.results.messages[0]
        .messages_content_snippet
        .clone()
        .unwrap();
    assert!(s.contains("&lt;script&gt;"), "{s}");
    assert!(!s.contains("<script>"));
    let r = search(&e, "in:code-blocks alert");
    let s = r.results.code_blocks[0]
        .code_blocks_content_snippet
        .clone()
        .unwrap();
    assert!(s.contains("&lt;script&gt;") && s.contains("<mark>"), "{s}");
    let r = search(&e, "in:chats bold");
    let s = r.results.chats[0].chats_name_snippet.clone().unwrap();
    assert!(s.contains("&lt;b&gt;"), "{s}");
}
