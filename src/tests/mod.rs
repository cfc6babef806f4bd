//! The browser module in a real dedicated worker (headless Chromium via
//! wasm-bindgen-test-runner), tested from inside the crate: sessions
//! (storage backends, downloads, verification, updates and swaps, errors,
//! results identical to the native engine, the visit's background work),
//! the worker's assisted-search sessions and LLM-ready formats, and
//! writable indexes (imports, an overlay's update check).
//!
//! Run by `./build.sh test`, which builds the fixtures first:
//!   GITSENSE_WEB_FIXTURES=target/fixtures \
//!     cargo test --target wasm32-unknown-unknown -p gitsense-search --lib
//! The network is a route table (`web_helpers.js`, here) so every request
//! is seen and counted.

mod assist;
mod local;
mod session;

use crate::session::{Session, Source};
use crate::storage::lazy::Prefetched;
use crate::storage::{self, StorageKind, StoragePref};
use gitsense_engine::index::IndexInfo;
use gitsense_engine::util::hex;
use gitsense_publish::Manifest;
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

#[wasm_bindgen(module = "/src/tests/web_helpers.js")]
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

/// A query on a session as the worker's `sessionSearch` runs it, without
/// the lazy warm-up: the results object as JSON text.
trait SearchText {
    fn search(&self, query: &str, options_json: &str) -> gitsense_engine::error::Result<String>;
}

impl SearchText for Session {
    fn search(&self, query: &str, options_json: &str) -> gitsense_engine::error::Result<String> {
        self.search_planned(self.plan(query, options_json)?)
    }
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

/// `code` of a structured error thrown to JS.
fn js_code(e: &JsValue) -> String {
    js_sys::Reflect::get(e, &JsValue::from_str("code"))
        .ok()
        .and_then(|c| c.as_string())
        .unwrap_or_default()
}

/// A JS value as JSON, for comparing what the worker receives.
fn json_of(v: &JsValue) -> serde_json::Value {
    if v.is_undefined() {
        return serde_json::Value::Null;
    }
    serde_json::from_str(&String::from(js_sys::JSON::stringify(v).unwrap())).unwrap()
}

/// Starts `background` (the worker's background export), lets it reach
/// its first wait, then runs `update` (the page's `engine.update()`):
/// both must resolve with the same outcome, which is returned.
async fn update_during_background(
    background: impl std::future::Future<Output = Result<JsValue, JsValue>> + 'static,
    update: impl std::future::Future<Output = Result<JsValue, JsValue>>,
) -> serde_json::Value {
    let background =
        wasm_bindgen_futures::JsFuture::from(wasm_bindgen_futures::future_to_promise(background));
    yield_to_tasks().await;
    let asked = json_of(&update.await.unwrap());
    let checked = json_of(&background.await.unwrap());
    assert_eq!(asked, checked, "the page's check and the background's");
    checked
}

/// Lets spawned work run up to its next wait.
async fn yield_to_tasks() {
    for _ in 0..3 {
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&JsValue::NULL))
            .await
            .unwrap();
    }
}
