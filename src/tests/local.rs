//! Writable indexes: an import sent again, an overlay's update check.

use super::*;

#[wasm_bindgen_test]
async fn an_import_sent_again_under_its_key_is_answered_not_repeated() {
    use crate::import::{self, Tuning};
    use crate::local::{self, LocalIndex};
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

#[wasm_bindgen_test]
async fn an_overlay_s_update_check_is_decided_at_open_runs_once_and_is_shared_with_update() {
    use crate::api;
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
    let checked =
        update_during_background(api::local_background(None), api::local_update(None)).await;
    assert_eq!(checked["status"], "updated");
    assert_eq!(checked["revision"], index_info(HOSTILE).revision);
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
