//! The functions `js/worker.js` calls, one [`Session`] per worker.
//!
//! Arguments and results cross as plain JS values; every failure is the
//! structured `{code, message, position?, location?}` object. A panic
//! (there should be none) is logged by console_error_panic_hook and
//! announced as a `gitsense-panic` event on the worker's global scope, so
//! the worker can report a clean error instead of dying silently.

use super::host::{error_to_js, to_js};
use super::local;
use super::session::{current, install, take, BackgroundWork, Session};
use super::storage::lazy::Prefetched;
use super::storage::StoragePref;
use super::visit::{Background, OfflineVisit};
use gitsense_engine::error::Error;
use gitsense_engine::index::live::WriteOp;
use js_sys::Function;
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = "export function announcePanic(message) {
  const g = globalThis;
  if (typeof g.dispatchEvent === 'function' && typeof CustomEvent === 'function') {
    g.dispatchEvent(new CustomEvent('gitsense-panic', { detail: message }));
  }
}")]
extern "C" {
    #[wasm_bindgen(js_name = announcePanic)]
    fn announce_panic(message: &str);
}

#[wasm_bindgen(start)]
fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        announce_panic(&info.to_string());
    }));
    // std's HashMap keys are made on the worker's first
    // `RandomState::new`. Made here, every visit makes them on this one
    // path, which the module split's profile always sees; made where a
    // visit's work first needed a map, they took a path that depended on
    // timing, and a first search that took one the profile had not seen
    // fetched the whole second module before its answer.
    let _ = std::collections::hash_map::RandomState::new();
}

fn js(e: Error) -> JsValue {
    error_to_js(&e)
}

fn session() -> Result<Rc<Session>, JsValue> {
    current().ok_or_else(|| {
        js(Error::new(
            "engine.closed",
            "no index is open in this worker",
        ))
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OpenOptions {
    manifest_url: String,
    #[serde(default)]
    storage: StoragePref,
    /// Lazy mode: how long one range request may wait before it is retried
    /// (twice); default 15 s for a page read, 60 s for prefetches and fill.
    #[serde(default)]
    request_timeout_ms: Option<u32>,
    /// The offline policy's inputs for this visit (`js/index.js` reads
    /// them); none: policy `auto`, a first visit.
    #[serde(default)]
    offline: Option<OfflineVisit>,
}

/// What `sessionOpen` and `localOpen` resolve with: `info()` and the
/// background work the visit needs (`fill`, `update` or null), which the
/// worker starts with `sessionBackground` / `localBackground` after the
/// first answer. (`info` nested, not flattened: a flattened struct
/// serializes through another copy of every field's code, all of it in
/// the module's first part.)
#[derive(Serialize)]
struct Opened<Info> {
    info: Info,
    background: Option<Background>,
}

/// The manifest text in the page's hand-off, if any (a Promise of the
/// hand-off, or the hand-off itself): only that field is read.
///
/// Read again here, not kept from what [`Session::open`] was handed: a
/// stored index opens as soon as storage is ready, without waiting for
/// the page's prefetch, so on a repeat visit the manifest may come in
/// only after the session opened (the future `open` was given is then
/// dropped unfinished); the update check waits for it here.
async fn handoff_manifest(v: JsValue) -> Option<String> {
    #[derive(Deserialize)]
    struct ManifestOnly {
        #[serde(default)]
        manifest: Option<String>,
    }
    let v = match v.dyn_into::<js_sys::Promise>() {
        Ok(p) => wasm_bindgen_futures::JsFuture::from(p).await.ok()?,
        Err(v) => v,
    };
    if !v.is_object() {
        return None;
    }
    serde_wasm_bindgen::from_value::<ManifestOnly>(v)
        .ok()?
        .manifest
}

/// What the page's prefetch resolved with (`handOff()` in js/lazy.js);
/// anything else (null: nothing was fetched) leaves the session to fetch.
fn prefetched(v: JsValue) -> Prefetched {
    // Not an object (null: nothing was fetched) is no error to format: that
    // is code of the module's second part, which may not be in yet.
    if !v.is_object() {
        return Prefetched::default();
    }
    serde_wasm_bindgen::from_value(v).unwrap_or_default()
}

/// What the page (or worker) is prefetching: a Promise of the hand-off,
/// or the hand-off itself.
async fn prefetched_later(v: JsValue) -> Prefetched {
    match v.dyn_into::<js_sys::Promise>() {
        Ok(p) => match wasm_bindgen_futures::JsFuture::from(p).await {
            Ok(v) => prefetched(v),
            Err(_) => Prefetched::default(),
        },
        Err(v) => prefetched(v),
    }
}

/// Opens the index (see [`Session::open`]) and decides the visit's
/// background work (see [`Session::plan_visit`]); resolves with `{ info,
/// background }`. `prefetched`: what was fetched while the module
/// compiled, or a Promise of it (storage is opened meanwhile).
/// `loadSecondPart`: the worker's `loadSecondary` (split.js), a function
/// returning a Promise that resolves once the module's second part is in;
/// opening SQLite waits for it.
#[wasm_bindgen(js_name = sessionOpen)]
pub async fn session_open(
    options: JsValue,
    on_progress: Option<Function>,
    prefetched_value: JsValue,
    load_second_part: Option<Function>,
) -> Result<JsValue, JsValue> {
    if let Some(load) = load_second_part {
        crate::host::set_second_part(load);
    }
    let opts: OpenOptions = serde_wasm_bindgen::from_value(options).map_err(|e| {
        js(Error::new(
            "options.invalid",
            format!("bad open options: {e} (expects {{manifestUrl, storage: 'auto'|'opfs'|'indexeddb'|'memory'|'lazy'}})"),
        ))
    })?;
    if let Some(ms) = opts.request_timeout_ms {
        if !(1..=600_000).contains(&ms) {
            return Err(js(Error::new(
                "options.invalid",
                format!("requestTimeoutMs must be 1 to 600000 (milliseconds), not {ms}"),
            )));
        }
    }
    if current().is_some() {
        return Err(js(Error::new(
            "engine.already_open",
            "this worker already has an open index",
        )));
    }
    let s = Session::open(
        &opts.manifest_url,
        opts.storage,
        opts.request_timeout_ms,
        on_progress.as_ref(),
        prefetched_later(prefetched_value.clone()),
    )
    .await
    .map_err(js)?;
    let (info, background) = s
        .plan_visit(
            opts.offline.unwrap_or_default(),
            handoff_manifest(prefetched_value),
        )
        .map_err(js)?;
    install(s);
    Ok(to_js(&Opened { info, background }))
}

/// Runs the visit's background work that `sessionOpen` named, once: the
/// fill (resolves with `info()`, the `fill` event's detail) or the update
/// check with the page's manifest (resolves with its status, the `update`
/// event's detail; undefined when the page asked for a check of its own
/// meanwhile, which then stands for it). Undefined when there is none.
#[wasm_bindgen(js_name = sessionBackground)]
pub async fn session_background(on_progress: Option<Function>) -> Result<JsValue, JsValue> {
    let s = session()?;
    match s.take_background() {
        None => Ok(JsValue::UNDEFINED),
        Some(BackgroundWork::Fill) => Ok(to_js(&s.fill(on_progress.as_ref()).await.map_err(js)?)),
        Some(BackgroundWork::Update(manifest)) => {
            match s.update_in_background(on_progress, manifest.await) {
                Some(check) => wasm_bindgen_futures::JsFuture::from(check).await,
                None => Ok(JsValue::UNDEFINED),
            }
        }
    }
}

/// The page's `saveOffline()`: copies the whole index into OPFS now (see
/// [`Session::save_offline`]); resolves with `info()` once the copy is
/// stored, rejects with the structured error.
#[wasm_bindgen(js_name = sessionSaveOffline)]
pub async fn session_save_offline(on_progress: Option<Function>) -> Result<JsValue, JsValue> {
    let s = session()?;
    Ok(to_js(
        &s.save_offline(on_progress.as_ref()).await.map_err(js)?,
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LocalOptions {
    name: String,
    #[serde(default)]
    storage: StoragePref,
    #[serde(default)]
    create: bool,
    /// An overlay over the index published here.
    #[serde(default)]
    manifest_url: Option<String>,
    #[serde(default)]
    request_timeout_ms: Option<u32>,
}

/// Opens (or, with `create`, makes) a writable index of the page's own,
/// or with `manifestUrl` an overlay over a published index (see
/// [`super::local`]), and decides the visit's background work (see
/// [`local::LocalIndex::plan_visit`]); resolves with `{ info, background
/// }`.
#[wasm_bindgen(js_name = localOpen)]
pub async fn local_open(
    options: JsValue,
    on_progress: Option<Function>,
) -> Result<JsValue, JsValue> {
    let opts: LocalOptions = serde_wasm_bindgen::from_value(options).map_err(|e| {
        js(Error::new(
            "options.invalid",
            format!(
                "bad options: {e} (expects {{name, storage: 'auto'|'opfs'|'indexeddb'|'memory'}})"
            ),
        ))
    })?;
    if current().is_some() || local::current().is_some() {
        return Err(js(Error::new(
            "engine.already_open",
            "this worker already has an open index",
        )));
    }
    let index = match &opts.manifest_url {
        Some(url) => local::LocalIndex::open_overlay(
            url,
            &opts.name,
            opts.storage,
            opts.request_timeout_ms,
            on_progress.as_ref(),
        )
        .await
        .map_err(js)?,
        None => local::LocalIndex::open(&opts.name, opts.storage, opts.create)
            .await
            .map_err(js)?,
    };
    let (info, background) = index.plan_visit().map_err(js)?;
    local::install(index);
    Ok(to_js(&Opened { info, background }))
}

/// Runs the visit's background work that `localOpen` named, once: an
/// overlay's update check (resolves with its status, the `update` event's
/// detail; undefined when the page asked for a check of its own first,
/// which then stands for it). Undefined when there is none.
#[wasm_bindgen(js_name = localBackground)]
pub async fn local_background(on_progress: Option<Function>) -> Result<JsValue, JsValue> {
    match local_index()?.background(on_progress) {
        Some(check) => wasm_bindgen_futures::JsFuture::from(check).await,
        None => Ok(JsValue::UNDEFINED),
    }
}

/// Applies a write (`add`, `update`, `remove`) to the open writable
/// index, at most once per `key` when given (a request another tab may
/// send again); resolves with its summary once it is committed.
#[wasm_bindgen(js_name = localWrite)]
pub async fn local_write(
    op: String,
    json: String,
    key: Option<String>,
) -> Result<JsValue, JsValue> {
    let index = local::current().ok_or_else(|| {
        js(Error::new(
            "write.read_only",
            "this engine serves a published index: only an index made by create() takes writes",
        ))
    })?;
    let op = WriteOp::parse(&op).map_err(js)?;
    Ok(to_js(
        &index.write(op, &json, key.as_deref()).await.map_err(js)?,
    ))
}

/// Starts importing a chat export into the open writable index (see
/// [`super::import`]); `file_name` names the export's chat; `tuning`
/// (benchmarks): `{ batchMessages, cacheMib, ftsBufferMib }`; `key`: the
/// import's request id. Returns null, or the summary of an import already
/// committed under `key` (then nothing is started).
#[wasm_bindgen(js_name = localImportBegin)]
pub fn local_import_begin(
    file_name: String,
    tuning: JsValue,
    key: Option<String>,
) -> Result<JsValue, JsValue> {
    let tuning = if tuning.is_undefined() || tuning.is_null() {
        super::import::Tuning::default()
    } else {
        serde_wasm_bindgen::from_value(tuning).map_err(|e| {
            js(Error::new(
                "options.invalid",
                format!("bad tuning: {e} (expects {{batchMessages, cacheMib, ftsBufferMib}})"),
            ))
        })?
    };
    let done = super::import::begin(&file_name, tuning, key.as_deref()).map_err(js)?;
    Ok(done.map_or(JsValue::NULL, |s| to_js(&s)))
}

/// The next piece of the export; resolves with the import's progress.
#[wasm_bindgen(js_name = localImportFeed)]
pub fn local_import_feed(piece: &[u8]) -> Result<JsValue, JsValue> {
    Ok(to_js(&super::import::feed(piece).map_err(js)?))
}

/// Ends the export: commits the import, or rolls it back and rejects.
#[wasm_bindgen(js_name = localImportFinish)]
pub async fn local_import_finish() -> Result<JsValue, JsValue> {
    Ok(to_js(&super::import::finish().await.map_err(js)?))
}

/// Drops the import in progress (an abort, a read that failed).
#[wasm_bindgen(js_name = localImportAbort)]
pub fn local_import_abort() {
    super::import::abort();
}

// A writable index has functions of its own (the worker calls them once
// it opened one), so that a published index's visit runs none of its code
// and the module's first part does not grow with it (xtask wasm_split).

fn local_index() -> Result<Rc<local::LocalIndex>, JsValue> {
    local::current().ok_or_else(|| {
        js(Error::new(
            "engine.closed",
            "no writable index is open in this worker",
        ))
    })
}

/// Runs a query on the writable index; the results object as JSON text.
#[wasm_bindgen(js_name = localSearch)]
pub fn local_search(query: String, options_json: String) -> Result<String, JsValue> {
    local_index()?.search(&query, &options_json).map_err(js)
}

#[wasm_bindgen(js_name = localInfo)]
pub fn local_info() -> Result<JsValue, JsValue> {
    Ok(to_js(&local_index()?.info().map_err(js)?))
}

/// The page's `engine.update()` on a writable index. An overlay: checks
/// the manifest and swaps in a new revision with the page's writes
/// applied; a check already running (the background one) is shared, and
/// one not started yet is no longer needed. A writable index: `current`.
#[wasm_bindgen(js_name = localUpdate)]
pub async fn local_update(on_progress: Option<Function>) -> Result<JsValue, JsValue> {
    wasm_bindgen_futures::JsFuture::from(local_index()?.update_for_page(on_progress)).await
}

/// Closes the writable index and releases its storage.
#[wasm_bindgen(js_name = localClose)]
pub fn local_close() {
    if let Some(index) = local::take() {
        index.close();
    }
}

/// Runs a query; returns the results object as JSON text. In lazy mode
/// the pages it reads are fetched in batches (see `Session::answer`).
#[wasm_bindgen(js_name = sessionSearch)]
pub async fn session_search(query: String, options_json: String) -> Result<String, JsValue> {
    let s = session()?;
    let planned = s.plan(&query, &options_json).map_err(js)?;
    s.answer(planned).await.map_err(js)
}

#[wasm_bindgen(js_name = sessionInfo)]
pub fn session_info() -> Result<JsValue, JsValue> {
    Ok(to_js(&session()?.info().map_err(js)?))
}

/// The page's `engine.update()`: checks the manifest and swaps in a
/// changed index; a check already running (the background one) is
/// shared, and one not started yet is no longer needed.
#[wasm_bindgen(js_name = sessionUpdate)]
pub async fn session_update(on_progress: Option<Function>) -> Result<JsValue, JsValue> {
    wasm_bindgen_futures::JsFuture::from(session()?.update_for_page(on_progress)).await
}

/// Names of the index files in storage.
#[wasm_bindgen(js_name = sessionStoredFiles)]
pub async fn session_stored_files() -> Result<JsValue, JsValue> {
    let s = session()?;
    Ok(to_js(&s.stored_files().await.map_err(js)?))
}

/// Closes the index and releases storage; a no-op when nothing is open.
#[wasm_bindgen(js_name = sessionClose)]
pub fn session_close() {
    super::assist::cancel_all();
    if let Some(s) = take() {
        s.close();
    }
}

/// The query language's filters and directives, for help screens:
/// `{filters: [{name, targets, values, example, help}], directives:
/// [{name, example, values, help}]}`.
#[wasm_bindgen(js_name = syntaxGuide)]
pub fn syntax_guide() -> JsValue {
    use gitsense_engine::guide::directive_values;
    use gitsense_engine::query::syntax::{DIRECTIVES, FILTERS};
    let filters: Vec<_> = FILTERS
        .iter()
        .map(|f| {
            serde_json::json!({
                "name": f.name,
                "targets": f.targets,
                "values": f.values,
                "example": f.example,
                "help": f.help,
            })
        })
        .collect();
    let directives: Vec<_> = DIRECTIVES
        .iter()
        .map(|d| {
            serde_json::json!({
                "name": d.name,
                "example": d.example,
                "values": directive_values(d.name),
                "help": d.help,
            })
        })
        .collect();
    to_js(&serde_json::json!({ "filters": filters, "directives": directives }))
}

/// Removes every stored index (see [`super::storage::clear_all`]).
#[wasm_bindgen(js_name = storageClear)]
pub async fn storage_clear() -> Result<(), JsValue> {
    super::storage::clear_all().await.map_err(js)
}

/// Panics on purpose: lets the tests check that a panic becomes a clean
/// error (`internal.panic`) rather than a silently dead worker.
#[wasm_bindgen(js_name = panicForTests)]
pub fn panic_for_tests() {
    panic!("deliberate panic requested by a test");
}
