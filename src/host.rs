//! Bindings to the JavaScript host: the `net.js`, `storage.js` and
//! `lazy.js` snippets (fetch streams, DecompressionStream, crypto.subtle,
//! IndexedDB, range requests and OPFS fill files read more plainly in JS), `performance.now`, and the conversions between
//! JS exceptions and the engine's structured [`Error`].

use gitsense_engine::error::Error;
use js_sys::{Function, Reflect, Uint8Array};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/net.js")]
extern "C" {
    #[wasm_bindgen(js_name = isOnline)]
    pub fn is_online() -> bool;
    #[wasm_bindgen(catch, js_name = resolveUrl)]
    pub fn resolve_url(rel: &str, base: &str) -> Result<String, JsValue>;
    #[wasm_bindgen(catch, js_name = fetchText)]
    pub async fn fetch_text(url: &str, timeout_ms: Option<u32>) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = downloadIndex)]
    pub async fn download_index(
        url: &str,
        expect: JsValue,
        on_progress: Option<Function>,
        stall_ms: Option<u32>,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = sha256Hex)]
    pub async fn sha256_hex(bytes: &Uint8Array) -> Result<JsValue, JsValue>;
    pub async fn sleep(ms: u32);
}

#[wasm_bindgen(module = "/src/js/storage.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = idbOpen)]
    pub async fn idb_open() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = idbList)]
    pub async fn idb_list(db: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = idbPut)]
    pub async fn idb_put(
        db: &JsValue,
        meta: JsValue,
        bytes: &Uint8Array,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = idbGet)]
    pub async fn idb_get(db: &JsValue, name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = idbDelete)]
    pub async fn idb_delete(db: &JsValue, name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = idbClose)]
    pub fn idb_close(db: &JsValue);
    #[wasm_bindgen(catch, js_name = idbDeleteDatabase)]
    pub async fn idb_delete_database() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = removeOpfsDirectory)]
    pub async fn remove_opfs_directory(name: &str) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/src/js/lazy.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = rangeSync)]
    pub fn range_sync(
        url: &str,
        start: f64,
        end: f64,
        size: f64,
        timeout_ms: u32,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = rangeFetch)]
    pub async fn range_fetch(
        url: &str,
        start: f64,
        end: f64,
        size: f64,
        timeout_ms: u32,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = rangeFetchAll)]
    pub async fn range_fetch_all(
        url: &str,
        starts: Vec<f64>,
        ends: Vec<f64>,
        size: f64,
        timeout_ms: u32,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = rangeFetchMulti)]
    pub async fn range_fetch_multi(
        url: &str,
        starts: Vec<f64>,
        ends: Vec<f64>,
        size: f64,
        timeout_ms: u32,
        per_request: u32,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = inflateRuns)]
    pub fn inflate_runs(
        answers: &JsValue,
        lengths: Vec<u32>,
        counts: Vec<u32>,
        page_size: f64,
    ) -> Result<js_sys::Array, JsValue>;
    #[wasm_bindgen(catch, js_name = fetchHot)]
    pub async fn fetch_hot(
        url: &str,
        manifest: JsValue,
        timeout_ms: Option<u32>,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = downloadPacked)]
    pub async fn download_packed(
        url: &str,
        size: f64,
        packed_size: f64,
        page_size: f64,
        lengths: Vec<u32>,
        on_progress: Option<Function>,
        stall_ms: Option<u32>,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = probeRanges)]
    pub async fn probe_ranges(url: &str, size: f64, timeout_ms: u32) -> JsValue;
    #[wasm_bindgen(catch, js_name = fillOpen)]
    pub async fn fill_open(base: &str, page_count: f64, page_size: f64)
        -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = fillWrite)]
    pub fn fill_write(handles: &JsValue, offset: f64, bytes: &[u8]) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = fillCommit)]
    pub fn fill_commit(
        handles: &JsValue,
        firsts: Vec<u32>,
        counts: Vec<u32>,
    ) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = fillRead)]
    pub fn fill_read(handles: &JsValue, offset: f64, buf: &mut [u8]) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = fillClose)]
    pub fn fill_close(handles: &JsValue);
    #[wasm_bindgen(js_name = fillRemove)]
    pub async fn fill_remove(prefix: &str, keep: &str);
    #[wasm_bindgen(js_name = markStored)]
    pub async fn mark_stored(scope: &str);
    #[wasm_bindgen(js_name = markRefused)]
    pub async fn mark_refused(base: &str);
    #[wasm_bindgen(js_name = isRefused)]
    pub async fn is_refused(base: &str) -> JsValue;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Milliseconds from `performance.now()` (std's clock panics on wasm32).
pub fn now_ms() -> f64 {
    performance_now()
}

fn string_prop(v: &JsValue, key: &str) -> Option<String> {
    Reflect::get(v, &JsValue::from_str(key))
        .ok()
        .and_then(|x| x.as_string())
}

/// Turns a JS exception into an [`Error`]: snippets throw `{code, message}`;
/// anything else (a DOMException, a TypeError) gets `fallback_code` and its
/// name and message.
pub fn js_error(v: &JsValue, fallback_code: &str, context: &str) -> Error {
    if let Some(code) = string_prop(v, "code").filter(|c| c.contains('.')) {
        return Error::new(&code, string_prop(v, "message").unwrap_or_default());
    }
    let detail = match (string_prop(v, "name"), string_prop(v, "message")) {
        (Some(n), Some(m)) => format!("{n}: {m}"),
        (None, Some(m)) => m,
        _ => v.as_string().unwrap_or_else(|| format!("{v:?}")),
    };
    let code = if string_prop(v, "name").as_deref() == Some("QuotaExceededError") {
        "storage.quota_exceeded"
    } else {
        fallback_code
    };
    Error::new(code, format!("{context}: {detail}"))
}

/// A plain JS object (not a `Map`) from a serializable value.
pub fn to_js<T: Serialize + ?Sized>(v: &T) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

/// The structured error object JS receives: `{code, message, position?,
/// location?}`.
pub fn error_to_js(e: &Error) -> JsValue {
    let v = to_js(e);
    if e.code.starts_with("write.") {
        add_where(&v, e);
    } else if e.code.starts_with("import.") {
        add_import_where(&v, e);
    }
    v
}

/// An import's error: `where: { byte, element, line }`, the numbers its
/// location names (`conversations.json:3 (element 2, which starts at
/// byte 512)`, `…:7 (byte 90)`), for a page to point at the place.
#[inline(never)]
fn add_import_where(v: &JsValue, e: &Error) {
    let Some(location) = e.location.as_deref() else {
        return;
    };
    let after = |word: &str| -> Option<u64> {
        let rest = &location[location.find(word)? + word.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let line = location
        .split_once(" (")
        .map_or(location, |(head, _)| head)
        .rsplit_once(':')
        .and_then(|(_, n)| n.parse::<u64>().ok());
    #[derive(Serialize)]
    struct Where {
        #[serde(skip_serializing_if = "Option::is_none")]
        byte: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        element: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<u64>,
    }
    let w = Where {
        byte: after("byte "),
        element: after("element "),
        line,
    };
    if w.byte.is_some() || w.element.is_some() {
        let _ = Reflect::set(v, &"where".into(), &to_js(&w));
    }
}

/// A write's bad record: `where: { record: 'messages[3]', field:
/// 'chat_id' }` beside the location it comes from. (A function of its
/// own: only writes need it, and the module's split leaves it out of the
/// part a published index's visit loads first.)
#[inline(never)]
fn add_where(v: &JsValue, e: &Error) {
    if let Some((record, field)) = e.location.as_deref().and_then(|l| l.rsplit_once('.')) {
        #[derive(Serialize)]
        struct Where<'a> {
            record: &'a str,
            field: &'a str,
        }
        let _ = Reflect::set(v, &"where".into(), &to_js(&Where { record, field }));
    }
}

/// Calls an optional progress callback with `{phase, loaded, total}`;
/// a throwing callback is ignored (progress must not break a download).
pub fn report(on_progress: Option<&Function>, phase: &str, loaded: f64, total: f64) {
    if let Some(f) = on_progress {
        #[derive(Serialize)]
        struct P<'a> {
            phase: &'a str,
            loaded: f64,
            total: f64,
        }
        let _ = f.call1(
            &JsValue::NULL,
            &to_js(&P {
                phase,
                loaded,
                total,
            }),
        );
    }
}

thread_local! {
    /// The worker's `loadSecondary` (split.js), when it gave one.
    static SECOND_PART: std::cell::RefCell<Option<Function>> = const { std::cell::RefCell::new(None) };
}

/// Sets how [`second_part`] loads the module's second part.
pub fn set_second_part(load: Function) {
    SECOND_PART.with(|s| *s.borrow_mut() = Some(load));
}

/// Resolves once the module's second part (SQLite, split.js) is in, when
/// the worker said how to load it. Async code about to open SQLite waits
/// here: a function of the second part called while the worker's
/// background fetch is still on its way would load the module a second
/// time, synchronously. A failed load is left for that call to report.
pub async fn second_part() {
    let Some(load) = SECOND_PART.with(|s| s.borrow().clone()) else {
        return;
    };
    if let Ok(p) = load.call0(&JsValue::NULL) {
        if let Ok(p) = p.dyn_into::<js_sys::Promise>() {
            let _ = wasm_bindgen_futures::JsFuture::from(p).await;
        }
    }
}
