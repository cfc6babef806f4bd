//! The browser engine in a real dedicated worker (headless Chromium via
//! wasm-bindgen-test-runner): storage backends, downloads, verification,
//! updates and swaps, errors, and results identical to the native engine;
//! the worker's assisted-search sessions and LLM-ready formats
//! (`web::assist`).
//!
//! Run by `./build.sh test`, which builds the fixtures first:
//!   GITSENSE_WEB_FIXTURES=target/fixtures \
//!     cargo test --target wasm32-unknown-unknown --test web
//! The network is a route table (tests/web_helpers.js) so every request is
//! seen and counted.
#![cfg(target_arch = "wasm32")]

use gitsense_engine::index::IndexInfo;
use gitsense_engine::util::hex;
use gitsense_publish::Manifest;
use gitsense_search::session::{Session, Source};
use gitsense_search::storage::lazy::Prefetched;
use gitsense_search::storage::{self, StorageKind, StoragePref};
use js_sys::Uint8Array;
use rusqlite::{Connection, OpenFlags};
use sha2::{Digest, Sha256};
use sqlite_wasm_rs::vfs::memvfs::MemVfsUtil;
use sqlite_wasm_rs::vfs::transfer::DbTransfer;
use sqlite_wasm_rs::vfs::VfsFilesManager;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

const SAMPLE: &[u8] = include_bytes!(concat!(env!("GITSENSE_WEB_FIXTURES"), "/sample.gsx"));
const HOSTILE: &[u8] = include_bytes!(concat!(env!("GITSENSE_WEB_FIXTURES"), "/hostile.gsx"));
const DOCS: &[u8] = include_bytes!(concat!(env!("GITSENSE_WEB_FIXTURES"), "/prose-docs.gsx"));
const EXPECTED: &str = include_str!(concat!(env!("GITSENSE_WEB_FIXTURES"), "/expected.json"));

const SITE: &str = "http://fake.test/site/";
const OTHER_SITE: &str = "http://fake.test/other/";
const DOCS_SITE: &str = "http://fake.test/docs/";

#[wasm_bindgen(module = "/tests/web_helpers.js")]
extern "C" {
    #[wasm_bindgen(js_name = fakeNetwork)]
    fn fake_network();
    fn route(url: &str, body: &JsValue, status: Option<u16>);
    fn requests() -> JsValue;
    #[wasm_bindgen(js_name = setOnline)]
    fn set_online(online: bool);
    async fn gzip(bytes: &[u8]) -> JsValue;
}

fn manifest_url(site: &str) -> String {
    format!("{site}manifest.json")
}

fn requested() -> Vec<String> {
    serde_wasm_bindgen::from_value(requests()).unwrap()
}

/// What the index says about itself, read through a scratch memvfs file.
fn index_info(bytes: &[u8]) -> IndexInfo {
    let name = format!("probe-{}.db", hex(&Sha256::digest(bytes)));
    let util = unsafe {
        sqlite_wasm_rs::sqlite3_initialize();
        MemVfsUtil::get().unwrap()
    };
    if !util.contains(&name).unwrap() {
        util.import_db(&name, bytes).unwrap();
    }
    let conn =
        Connection::open_with_flags_and_vfs(&name, OpenFlags::SQLITE_OPEN_READ_ONLY, "memvfs")
            .unwrap();
    let info = gitsense_engine::index::verify(&conn).unwrap();
    drop(conn);
    util.remove(&name).unwrap();
    info
}

fn serve_manifest(site: &str, m: &Manifest) {
    route(
        &manifest_url(site),
        &JsValue::from_str(&serde_json::to_string(m).unwrap()),
        None,
    );
}

/// Publishes `bytes` at `site` the way `gitsense-search publish` does
/// (gzip under a content-addressed name, then the manifest).
async fn publish(site: &str, bytes: &[u8]) -> (Manifest, Vec<u8>) {
    let info = index_info(bytes);
    let sha256 = hex(&Sha256::digest(bytes));
    let gz = Uint8Array::new(&gzip(bytes).await).to_vec();
    let file = format!("index-{}.gsx.gz", &sha256[..16]);
    route(
        &format!("{site}{file}"),
        &Uint8Array::from(&gz[..]).into(),
        None,
    );
    let m = Manifest::gzip_of(&info, sha256, file, gz.len() as u64, None);
    serve_manifest(site, &m);
    (m, gz)
}

/// A clean slate: fake network, nothing stored in OPFS or IndexedDB.
async fn fresh() {
    fake_network();
    storage::clear_all().await.unwrap();
}

async fn open(site: &str, pref: StoragePref) -> Session {
    Session::open(&manifest_url(site), pref, None, None, async {
        Prefetched::default()
    })
    .await
    .unwrap()
}

/// The error opening fails with.
async fn open_err(site: &str, pref: StoragePref) -> gitsense_engine::Error {
    Session::open(&manifest_url(site), pref, None, None, async {
        Prefetched::default()
    })
    .await
    .err()
    .expect("open should fail")
}

fn revision_of(s: &Session) -> String {
    s.info().unwrap().index.revision
}

#[derive(serde::Deserialize)]
struct Expected {
    index: String,
    query: String,
    options: String,
    json: String,
}

#[wasm_bindgen_test]
async fn the_browser_engine_answers_byte_for_byte_like_the_native_engine() {
    fresh().await;
    publish(SITE, SAMPLE).await;
    publish(OTHER_SITE, HOSTILE).await;
    publish(DOCS_SITE, DOCS).await;
    let sample = open(SITE, StoragePref::Memory).await;
    let hostile = open(OTHER_SITE, StoragePref::Memory).await;
    let docs = open(DOCS_SITE, StoragePref::Memory).await;
    let expected: Vec<Expected> = serde_json::from_str(EXPECTED).unwrap();
    assert!(expected.len() >= 8);
    for e in &expected {
        let s = match e.index.as_str() {
            "sample" => &sample,
            "docs" => &docs,
            _ => &hostile,
        };
        let got = s.search(&e.query, &e.options).unwrap();
        assert_eq!(got, e.json, "query {:?} options {}", e.query, e.options);
    }
    // On the documentation site the answers depend on English stemming
    // (`connections` finds the sections saying `connection` and
    // `connecting`, the exact name first) and on all-terms matching per
    // page (no section holds both `lock` and `class`).
    let docs_answer = |query: &str| -> serde_json::Value {
        let e = expected
            .iter()
            .find(|e| e.index == "docs" && e.query == query)
            .unwrap();
        serde_json::from_str(&e.json).unwrap()
    };
    let titles = |v: &serde_json::Value| -> Vec<String> {
        v["results"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                m["messages_meta_title"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let mut found = titles(&docs_answer("connections"));
    assert_eq!(found[0], "connections");
    found[1..].sort();
    assert_eq!(found, ["connections", "Opening", "Retries"]);
    let lock_class = docs_answer("lock class");
    assert!(lock_class["searchCriteria"].get("fallback").is_none());
    assert_eq!(titles(&lock_class)[0], "Lock objects");
}

async fn keeps_the_index_for_the_next_visit(pref: StoragePref, kind: StorageKind) {
    fresh().await;
    let (m, _) = publish(SITE, SAMPLE).await;
    let first = open(SITE, pref).await;
    let info = first.info().unwrap();
    assert_eq!(info.storage, kind);
    assert_eq!(first.source(), Source::Downloaded);
    assert_eq!(info.sha256, m.sha256);
    assert_eq!(info.downloaded_bytes, m.compressed_size);
    let answer = first.search("payment", "{}").unwrap();
    first.close();
    drop(first);

    // Next visit, the site unreachable: the stored index answers and
    // opening made no request at all.
    fake_network();
    let second = open(SITE, pref).await;
    assert_eq!(second.source(), Source::Stored);
    assert_eq!(second.info().unwrap().storage, kind);
    assert_eq!(second.search("payment", "{}").unwrap(), answer);
    assert!(
        requested().is_empty(),
        "open made requests: {:?}",
        requested()
    );

    // Online but unreachable: one manifest request, status offline.
    let status = second.update(None).await.unwrap();
    assert_eq!(status.status, "offline");
    assert_eq!(requested(), vec![manifest_url(SITE)]);

    // Known offline: no request at all.
    set_online(false);
    let status = second.update(None).await.unwrap();
    assert_eq!(status.status, "offline");
    assert_eq!(requested().len(), 1);
    assert_eq!(second.search("payment", "{}").unwrap(), answer);
}

#[wasm_bindgen_test]
async fn opfs_keeps_the_index_for_the_next_visit_without_network() {
    keeps_the_index_for_the_next_visit(StoragePref::Opfs, StorageKind::Opfs).await;
}

#[wasm_bindgen_test]
async fn indexeddb_keeps_the_index_for_the_next_visit_without_network() {
    keeps_the_index_for_the_next_visit(StoragePref::IndexedDb, StorageKind::IndexedDb).await;
}

#[wasm_bindgen_test]
async fn auto_storage_prefers_opfs_in_a_worker() {
    fresh().await;
    publish(SITE, SAMPLE).await;
    let s = open(SITE, StoragePref::Auto).await;
    let info = s.info().unwrap();
    assert_eq!(info.storage, StorageKind::Opfs);
    assert!(!info.storage_reason.is_empty());
}

#[wasm_bindgen_test]
async fn auto_storage_downloads_the_whole_index_when_no_raw_file_is_published() {
    fresh().await;
    publish(SITE, SAMPLE).await;
    let s = open(SITE, StoragePref::Auto).await;
    let info = s.info().unwrap();
    assert_eq!(info.source, Source::Downloaded);
    assert!(info.lazy.is_none());
    assert!(
        info.storage_reason
            .contains("lazy loading is not possible (lazy.unavailable"),
        "{}",
        info.storage_reason
    );
}

#[wasm_bindgen_test]
async fn a_lazy_open_with_a_range_probe_failure_reads_the_whole_index_instead() {
    fresh().await;
    let (m, _) = publish(SITE, SAMPLE).await;
    // As the worker reports a server that ignored Range.
    let prefetched = Prefetched {
        manifest: Some(
            serde_json::to_string(&Manifest {
                raw_file: Some("index.gsx".into()),
                ..m
            })
            .unwrap(),
        ),
        probe: Some(gitsense_engine::Error::new(
            "lazy.range_unsupported",
            "the server ignored the Range header",
        )),
        probed: true,
        ..Prefetched::default()
    };
    let s = Session::open(&manifest_url(SITE), StoragePref::Lazy, None, None, async {
        prefetched
    })
    .await
    .unwrap();
    let info = s.info().unwrap();
    assert_eq!(info.source, Source::Downloaded);
    assert!(
        info.storage_reason.contains("ignored the Range header"),
        "{}",
        info.storage_reason
    );
    // The manifest came with the prefetch: no second request for it.
    let requested = requested();
    assert!(
        !requested.iter().any(|u| u.ends_with("manifest.json")),
        "{requested:?}"
    );
}

async fn swaps_in_a_changed_index(pref: StoragePref) {
    fresh().await;
    let (old, _) = publish(SITE, SAMPLE).await;
    let s = open(SITE, pref).await;
    assert_eq!(revision_of(&s), old.revision);
    assert_eq!(s.update(None).await.unwrap().status, "current");

    let (new, _) = publish(SITE, HOSTILE).await;
    assert_ne!(new.revision, old.revision);
    // With the manifest text the page has just fetched, the check makes no
    // request of its own (that text still names the stored index).
    let before = requested().len();
    let fresh_text = serde_json::to_string(&old).unwrap();
    let status = s.update_with(None, Some(&fresh_text)).await.unwrap();
    assert_eq!(status.status, "current");
    assert_eq!(requested().len(), before, "{:?}", requested());
    let status = s.update(None).await.unwrap();
    assert_eq!(status.status, "updated");
    assert_eq!(status.revision, new.revision);
    assert_eq!(revision_of(&s), new.revision);
    let found: serde_json::Value =
        serde_json::from_str(&s.search("hostile payload", "{}").unwrap()).unwrap();
    assert!(found["totalResultsReturned"].as_u64().unwrap() > 0);
    // The old file is gone; only the new one is stored.
    let files = s.stored_files().await.unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].contains(&new.sha256), "{files:?}");
    assert_eq!(s.update(None).await.unwrap().status, "current");
    drop(s);

    // The next visit opens the new index.
    fake_network();
    let again = open(SITE, pref).await;
    assert_eq!(revision_of(&again), new.revision);
}

#[wasm_bindgen_test]
async fn a_changed_manifest_swaps_in_the_new_index_in_opfs() {
    swaps_in_a_changed_index(StoragePref::Opfs).await;
}

#[wasm_bindgen_test]
async fn a_changed_manifest_swaps_in_the_new_index_in_indexeddb() {
    swaps_in_a_changed_index(StoragePref::IndexedDb).await;
}

#[wasm_bindgen_test]
async fn a_corrupt_truncated_or_mismatching_download_never_replaces_the_current_index() {
    fresh().await;
    let (good, _) = publish(SITE, SAMPLE).await;
    let s = open(SITE, StoragePref::Opfs).await;
    let answer = s.search("payment", "{}").unwrap();
    let stored = s.stored_files().await.unwrap();

    let (hostile, gz) = publish(OTHER_SITE, HOSTILE).await;
    let file_url = format!("{SITE}{}", hostile.file);
    let serve = |bytes: &[u8]| route(&file_url, &Uint8Array::from(bytes).into(), None);
    let mut gzip_magic_garbage = vec![0x1f, 0x8b];
    gzip_magic_garbage.extend(std::iter::repeat_n(0x55, gz.len() - 2));
    let smaller = Manifest {
        size: hostile.size - hostile.page_size,
        page_count: hostile.page_count - 1,
        ..hostile.clone()
    };
    let cases: Vec<(&str, Manifest, Option<Vec<u8>>, &str)> = vec![
        (
            "wrong checksum",
            Manifest {
                sha256: "0".repeat(64),
                ..hostile.clone()
            },
            Some(gz.clone()),
            "download.checksum_mismatch",
        ),
        (
            "truncated",
            hostile.clone(),
            Some(gz[..gz.len() / 2].to_vec()),
            "download.truncated",
        ),
        (
            "not gzip",
            hostile.clone(),
            Some(gzip_magic_garbage),
            "download.corrupt",
        ),
        (
            "larger than announced",
            smaller,
            Some(gz.clone()),
            "download.too_large",
        ),
        (
            "other revision",
            Manifest {
                revision: "not-the-revision".into(),
                ..hostile.clone()
            },
            Some(gz.clone()),
            "download.revision_mismatch",
        ),
        ("missing file", hostile.clone(), None, "network.failed"),
    ];
    for (what, manifest, body, code) in cases {
        match &body {
            Some(b) => serve(b),
            None => fake_network(),
        }
        serve_manifest(SITE, &manifest);
        let err = s.update(None).await.unwrap_err();
        assert_eq!(err.code, code, "{what}: {err}");
        assert_eq!(revision_of(&s), good.revision, "{what}");
        assert_eq!(s.search("payment", "{}").unwrap(), answer, "{what}");
        assert_eq!(s.stored_files().await.unwrap(), stored, "{what}");
    }
    drop(s);
    // And the next visit still opens the good index.
    fake_network();
    let again = open(SITE, StoragePref::Opfs).await;
    assert_eq!(revision_of(&again), good.revision);
}

#[wasm_bindgen_test]
async fn an_http_error_is_reported_with_its_status() {
    fresh().await;
    let (m, _) = publish(SITE, SAMPLE).await;
    let s = open(SITE, StoragePref::Memory).await;
    route(&manifest_url(SITE), &JsValue::from_str("gone"), Some(503));
    let err = s.update(None).await.unwrap_err();
    assert_eq!(err.code, "network.http_status");
    assert!(err.message.contains("503"), "{err}");
    assert_eq!(revision_of(&s), m.revision);
}

#[wasm_bindgen_test]
async fn a_manifest_for_another_format_version_is_refused_before_downloading() {
    fresh().await;
    let (m, _) = publish(SITE, SAMPLE).await;
    serve_manifest(
        SITE,
        &Manifest {
            format_version: m.format_version + 1,
            ..m.clone()
        },
    );
    let err = open_err(SITE, StoragePref::Memory).await;
    assert_eq!(err.code, "index.version_mismatch");
    assert_eq!(requested(), vec![manifest_url(SITE)]);
}

#[wasm_bindgen_test]
async fn opening_with_nothing_stored_and_no_network_is_a_structured_error() {
    fresh().await;
    let err = open_err(SITE, StoragePref::Memory).await;
    assert_eq!(err.code, "network.failed");
    set_online(false);
    let err = open_err(SITE, StoragePref::Memory).await;
    assert_eq!(err.code, "network.offline");
    set_online(true);
    route(&manifest_url(SITE), &JsValue::from_str("{not json"), None);
    let err = open_err(SITE, StoragePref::Memory).await;
    assert_eq!(err.code, "manifest.invalid");
}

#[wasm_bindgen_test]
async fn bad_queries_and_options_are_structured_errors() {
    fresh().await;
    publish(SITE, SAMPLE).await;
    let s = open(SITE, StoragePref::Memory).await;
    let err = s.search("payment \"unbalanced", "{}").unwrap_err();
    assert_eq!(err.code, "query.unbalanced_quote");
    assert_eq!(err.position, Some(8));
    let err = s.search("payment", r#"{"perPge": 2}"#).unwrap_err();
    assert_eq!(err.code, "options.invalid");
    let err = s.search("payment", "not json").unwrap_err();
    assert_eq!(err.code, "options.invalid");
}

#[wasm_bindgen_test]
async fn indexes_published_at_different_urls_are_kept_apart() {
    fresh().await;
    let (a, _) = publish(SITE, SAMPLE).await;
    let (b, _) = publish(OTHER_SITE, HOSTILE).await;
    let sa = open(SITE, StoragePref::IndexedDb).await;
    drop(sa);
    let sb = open(OTHER_SITE, StoragePref::IndexedDb).await;
    assert_eq!(sb.source(), Source::Downloaded);
    assert_eq!(revision_of(&sb), b.revision);
    drop(sb);
    fake_network();
    assert_eq!(
        revision_of(&open(SITE, StoragePref::IndexedDb).await),
        a.revision
    );
    assert_eq!(
        revision_of(&open(OTHER_SITE, StoragePref::IndexedDb).await),
        b.revision
    );
}

#[wasm_bindgen_test]
fn stored_file_names_round_trip_and_keep_sites_apart() {
    let sha = "ab".repeat(32);
    let scope = storage::scope_of("https://example.org/search/manifest.json");
    let i = storage::StoredIndex::new(&scope, 7, &sha, 4096);
    assert_eq!(i.name, format!("gsx-{scope}-00000007-{sha}.db"));
    assert_eq!(storage::StoredIndex::parse(&i.name, 4096), Some(i));
    assert_eq!(storage::StoredIndex::parse("gsx-1-xyz.db", 0), None);
    let journal = format!("gsx-{scope}-00000001-{sha}.db-journal");
    assert_eq!(storage::StoredIndex::parse(&journal, 0), None);
    assert_ne!(
        scope,
        storage::scope_of("https://example.org/other/manifest.json")
    );
}

#[wasm_bindgen_test]
async fn a_closed_session_answers_with_engine_closed() {
    fresh().await;
    publish(SITE, SAMPLE).await;
    let s = open(SITE, StoragePref::Memory).await;
    s.close();
    assert_eq!(s.search("payment", "{}").unwrap_err().code, "engine.closed");
    assert_eq!(s.info().unwrap_err().code, "engine.closed");
}

/// `code` of a structured error thrown to JS.
fn js_code(e: &JsValue) -> String {
    js_sys::Reflect::get(e, &JsValue::from_str("code"))
        .ok()
        .and_then(|c| c.as_string())
        .unwrap_or_default()
}

#[wasm_bindgen_test]
async fn the_worker_runs_assisted_searches_by_id_and_drops_them_when_they_end() {
    use gitsense_search::{api, assist as wa};
    fresh().await;
    publish(SITE, SAMPLE).await;
    let options = js_sys::JSON::parse(&format!(
        r#"{{"manifestUrl": "{}", "storage": "memory"}}"#,
        manifest_url(SITE)
    ))
    .unwrap();
    api::session_open(options, None, JsValue::UNDEFINED)
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
    use gitsense_engine::budget::estimate_text;
    use gitsense_search::assist as wa;
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

#[wasm_bindgen_test]
async fn an_import_sent_again_under_its_key_is_answered_not_repeated() {
    use gitsense_search::import::{self, Tuning};
    use gitsense_search::local::{self, LocalIndex};
    fresh().await;
    let index = LocalIndex::open("import-once", StoragePref::Memory, true)
        .await
        .unwrap();
    local::install(index);
    let export = br#"[{"id": "a", "conversations": [
        {"from": "human", "value": "how do I sort a list in python"},
        {"from": "gpt", "value": "use sorted(items) or items.sort()"}]}]"#;
    let counts = || {
        let i = local::current().unwrap().info().unwrap().index;
        (i.chats, i.messages, i.revision)
    };
    let import = |key: &'static str| async move {
        let started = import::begin("e.json", Tuning::default(), Some(key)).unwrap();
        assert!(started.is_none(), "{key}: a new key starts an import");
        import::feed(export).unwrap();
        import::finish().await.unwrap()
    };

    let first = import("k1").await;
    assert_eq!((first.chats, first.messages), (2, 2));
    let after_first = counts();

    // The same key again (a relaying tab whose owner closed before it
    // answered): the first answer, nothing started, nothing imported.
    let again = import::begin("e.json", Tuning::default(), Some("k1"))
        .unwrap()
        .expect("the import under k1 is answered");
    assert!(!import::running());
    assert_eq!(
        again,
        import::ImportSummary {
            ms: 0.0,
            ..first.clone()
        }
    );
    assert_eq!(counts(), after_first);

    // Another key is another import.
    let second = import("k2").await;
    assert_eq!(second.messages, 2);
    let (_, messages, revision) = counts();
    assert_eq!(messages, after_first.1 + 2);
    assert_ne!(revision, after_first.2);
    local::take().unwrap().close();
}

/// A JS value as JSON, for comparing what the worker receives.
fn json_of(v: &JsValue) -> serde_json::Value {
    if v.is_undefined() {
        return serde_json::Value::Null;
    }
    serde_json::from_str(&String::from(js_sys::JSON::stringify(v).unwrap())).unwrap()
}

/// Lets spawned work run up to its next wait.
async fn yield_to_tasks() {
    for _ in 0..3 {
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&JsValue::NULL))
            .await
            .unwrap();
    }
}

#[wasm_bindgen_test]
async fn the_visit_s_background_work_is_decided_at_open_and_runs_once() {
    use gitsense_search::api;
    fresh().await;
    publish(SITE, SAMPLE).await;
    let options = |offline: &str| {
        js_sys::JSON::parse(&format!(
            r#"{{"manifestUrl": "{}", "storage": "indexeddb"{offline}}}"#,
            manifest_url(SITE)
        ))
        .unwrap()
    };

    // A download is the published index: no background work; without the
    // page's policy, info().offline is policy auto on a first visit.
    let opened = json_of(
        &api::session_open(options(""), None, JsValue::UNDEFINED)
            .await
            .unwrap(),
    );
    assert_eq!(opened["info"]["source"], "downloaded");
    assert_eq!(opened["background"], serde_json::Value::Null);
    assert_eq!(
        json_of(&api::session_info().unwrap())["offline"],
        serde_json::json!({"policy": "auto", "visits": 1, "metered": false, "copying": false})
    );
    assert!(api::session_background(None).await.unwrap().is_undefined());
    api::session_close();

    // A repeat visit: the stored index gets an update check, with the
    // manifest the page fetched (a newer index is published meanwhile).
    fake_network();
    let (newer, _) = publish(SITE, HOSTILE).await;
    let handoff = js_sys::JSON::parse(
        &serde_json::json!({ "manifest": serde_json::to_string(&newer).unwrap() }).to_string(),
    )
    .unwrap();
    let policy = r#", "offline": {"policy": "always", "visits": 3, "metered": true}"#;
    let opened = json_of(
        &api::session_open(options(policy), None, handoff)
            .await
            .unwrap(),
    );
    assert_eq!(opened["info"]["source"], "stored");
    assert_eq!(opened["background"], "update");
    assert_eq!(
        opened["info"]["offline"],
        serde_json::json!({"policy": "always", "visits": 3, "metered": true, "copying": false})
    );
    // The page's engine.update() while the background check runs gets
    // that check's outcome: one check, no manifest request of its own.
    let background = wasm_bindgen_futures::JsFuture::from(wasm_bindgen_futures::future_to_promise(
        api::session_background(None),
    ));
    yield_to_tasks().await;
    let asked = json_of(&api::session_update(None).await.unwrap());
    let checked = json_of(&background.await.unwrap());
    assert_eq!(checked["status"], "updated");
    assert_eq!(checked["revision"], index_info(HOSTILE).revision);
    assert_eq!(asked, checked);
    assert_eq!(requested(), vec![format!("{SITE}{}", newer.file)]);
    // It ran once.
    assert!(api::session_background(None).await.unwrap().is_undefined());
    api::session_close();

    // A page that checks before the background check starts stands for
    // it: the background one then does nothing and says nothing.
    fake_network();
    publish(SITE, HOSTILE).await;
    let handoff = js_sys::JSON::parse(
        &serde_json::json!({ "manifest": serde_json::to_string(&newer).unwrap() }).to_string(),
    )
    .unwrap();
    let opened = json_of(&api::session_open(options(""), None, handoff).await.unwrap());
    assert_eq!(opened["background"], "update");
    assert_eq!(
        json_of(&api::session_update(None).await.unwrap())["status"],
        "current"
    );
    assert!(api::session_background(None).await.unwrap().is_undefined());
    assert_eq!(requested(), vec![manifest_url(SITE)]);
    api::session_close();

    // A policy the module does not know is refused with the options'
    // error.
    let bad = r#", "offline": {"policy": "sometimes", "visits": 1, "metered": false}"#;
    let e = api::session_open(options(bad), None, JsValue::UNDEFINED)
        .await
        .unwrap_err();
    assert_eq!(js_code(&e), "options.invalid");
}

#[wasm_bindgen_test]
async fn an_overlay_s_update_check_is_decided_at_open_runs_once_and_is_shared_with_update() {
    use gitsense_search::api;
    fresh().await;
    publish(SITE, SAMPLE).await;
    let options = js_sys::JSON::parse(&format!(
        r#"{{"name": "notes", "storage": "indexeddb", "manifestUrl": "{}"}}"#,
        manifest_url(SITE)
    ))
    .unwrap();
    let open = || async { json_of(&api::local_open(options.clone(), None).await.unwrap()) };

    // A copy downloaded now is the published index: no background work.
    let opened = open().await;
    assert_eq!(opened["info"]["overlay"]["source"], "downloaded");
    assert_eq!(opened["background"], serde_json::Value::Null);
    assert!(api::local_background(None).await.unwrap().is_undefined());
    api::local_close();

    // A repeat visit: the stored copy gets an update check. The page's
    // engine.update() while it runs gets that check's outcome: one
    // manifest request, one download.
    fake_network();
    let (newer, _) = publish(SITE, HOSTILE).await;
    let opened = open().await;
    assert_eq!(opened["info"]["overlay"]["source"], "stored");
    assert_eq!(opened["background"], "update");
    let background = wasm_bindgen_futures::JsFuture::from(wasm_bindgen_futures::future_to_promise(
        api::local_background(None),
    ));
    yield_to_tasks().await;
    let asked = json_of(&api::local_update(None).await.unwrap());
    let checked = json_of(&background.await.unwrap());
    assert_eq!(checked["status"], "updated");
    assert_eq!(checked["revision"], index_info(HOSTILE).revision);
    assert_eq!(asked, checked);
    assert_eq!(
        requested(),
        vec![manifest_url(SITE), format!("{SITE}{}", newer.file)]
    );
    // It ran once.
    assert!(api::local_background(None).await.unwrap().is_undefined());
    api::local_close();

    // A page that checks before the background check starts stands for
    // it: the background one then does nothing and says nothing.
    fake_network();
    publish(SITE, HOSTILE).await;
    let opened = open().await;
    assert_eq!(opened["background"], "update");
    assert_eq!(
        json_of(&api::local_update(None).await.unwrap())["status"],
        "current"
    );
    assert!(api::local_background(None).await.unwrap().is_undefined());
    assert_eq!(requested(), vec![manifest_url(SITE)]);
    let info = json_of(&api::local_info().unwrap());
    assert_eq!(info["overlay"]["lastUpdate"]["status"], "current");
    api::local_close();
}
