//! Sessions: open from storage or download, update and swap, search,
//! errors, and the visit's background work.

use super::*;

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
    assert_eq!(first.info().unwrap().source, Source::Downloaded);
    assert_eq!(info.sha256, m.sha256);
    assert_eq!(info.downloaded_bytes, m.compressed_size);
    let answer = first.search("payment", "{}").unwrap();
    first.close();
    drop(first);

    // Next visit, the site unreachable: the stored index answers and
    // opening made no request at all.
    fake_network();
    let second = open(SITE, pref).await;
    assert_eq!(second.info().unwrap().source, Source::Stored);
    assert_eq!(second.info().unwrap().storage, kind);
    assert_eq!(second.search("payment", "{}").unwrap(), answer);
    assert!(
        requested().is_empty(),
        "open made requests: {:?}",
        requested()
    );

    // Online but unreachable: one manifest request, status offline.
    let status = second.update(None, None).await.unwrap();
    assert_eq!(status.status, "offline");
    assert_eq!(requested(), vec![manifest_url(SITE)]);

    // Known offline: no request at all.
    set_online(false);
    let status = second.update(None, None).await.unwrap();
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
    assert_eq!(s.update(None, None).await.unwrap().status, "current");

    let (new, _) = publish(SITE, HOSTILE).await;
    assert_ne!(new.revision, old.revision);
    // With the manifest text the page has just fetched, the check makes no
    // request of its own (that text still names the stored index).
    let before = requested().len();
    let fresh_text = serde_json::to_string(&old).unwrap();
    let status = s.update(None, Some(&fresh_text)).await.unwrap();
    assert_eq!(status.status, "current");
    assert_eq!(requested().len(), before, "{:?}", requested());
    let status = s.update(None, None).await.unwrap();
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
    assert_eq!(s.update(None, None).await.unwrap().status, "current");
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
        let err = s.update(None, None).await.unwrap_err();
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
    let err = s.update(None, None).await.unwrap_err();
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
    assert_eq!(sb.info().unwrap().source, Source::Downloaded);
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

#[wasm_bindgen_test]
async fn the_visit_s_background_work_is_decided_at_open_and_runs_once() {
    use crate::api;
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
        &api::session_open(options(""), None, JsValue::UNDEFINED, None)
            .await
            .unwrap(),
    );
    assert_eq!(opened["info"]["source"], "downloaded");
    assert_eq!(opened["background"], serde_json::Value::Null);
    assert_eq!(
        json_of(&api::session_info().unwrap())["offline"],
        serde_json::json!({"policy": "auto", "visits": 1, "metered": false, "copying": false, "canSave": false})
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
        &api::session_open(options(policy), None, handoff, None)
            .await
            .unwrap(),
    );
    assert_eq!(opened["info"]["source"], "stored");
    assert_eq!(opened["background"], "update");
    assert_eq!(
        opened["info"]["offline"],
        serde_json::json!({"policy": "always", "visits": 3, "metered": true, "copying": false, "canSave": false})
    );
    // The page's engine.update() while the background check runs gets
    // that check's outcome: one check, no manifest request of its own.
    let checked =
        update_during_background(api::session_background(None), api::session_update(None)).await;
    assert_eq!(checked["status"], "updated");
    assert_eq!(checked["revision"], index_info(HOSTILE).revision);
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
    let opened = json_of(
        &api::session_open(options(""), None, handoff, None)
            .await
            .unwrap(),
    );
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
    let e = api::session_open(options(bad), None, JsValue::UNDEFINED, None)
        .await
        .unwrap_err();
    assert_eq!(js_code(&e), "options.invalid");
}

/// The SQLite-free reader (`gitsense_engine::reader`) compiled to wasm
/// answers in Chromium what the native engine answered, byte for byte,
/// for every fixture query it can answer (the rest are
/// `reader.unsupported`, asked of SQLite).
#[wasm_bindgen_test]
fn the_reader_answers_in_the_browser_like_the_native_engine() {
    use gitsense_engine::reader::Reader;
    let expected: Vec<Expected> = serde_json::from_str(EXPECTED).unwrap();
    let mut readers =
        [("sample", SAMPLE), ("docs", DOCS), ("hostile", HOSTILE)].map(|(name, bytes)| {
            let mut r = Reader::open(bytes.to_vec()).unwrap();
            r.set_clock(crate::host::now_ms);
            (name, r)
        });
    let (mut answered, mut docs_unanswered) = (0, 0);
    for e in &expected {
        let (_, reader) = readers
            .iter_mut()
            .find(|(name, _)| *name == e.index.as_str())
            .unwrap();
        let opts: gitsense_engine::SearchOptions =
            gitsense_engine::util::from_json_arg(&e.options, "search options").unwrap();
        match reader.search(&e.query, &opts) {
            Ok(r) => {
                assert_eq!(
                    gitsense_engine::search::results_json(&r).unwrap(),
                    e.json,
                    "query {:?} options {}",
                    e.query,
                    e.options
                );
                answered += 1;
            }
            Err(err) => {
                assert_eq!(err.code, "reader.unsupported", "{}: {err}", e.query);
                docs_unanswered += usize::from(e.index == "docs");
            }
        }
    }
    // The fixture queries of the chat indexes are mostly filters (left to
    // SQLite); a documentation site's are words, which the reader answers.
    assert_eq!(docs_unanswered, 0);
    assert!(
        answered * 3 >= expected.len(),
        "the reader answered {answered} of {}",
        expected.len()
    );
}
