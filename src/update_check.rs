//! One update check at a time, shared by whoever asks while it runs.
//!
//! A visit's background check and the page's `engine.update()` ask the
//! same question of the same manifest. While a check runs, every caller
//! gets its outcome (one manifest request, one download); a background
//! check not started yet stands down once the page has asked for one of
//! its own, which answers for it. A published index's
//! [`super::session::Session`] and a writable overlay
//! ([`super::local::LocalIndex`]) each hold one.
//!
//! In: the check to run, as a future resolving with its outcome as a JS
//! value (or the structured error). Out: a `Promise` of that outcome,
//! the same one for every caller while the check runs.

use js_sys::Promise;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use wasm_bindgen::JsValue;

#[derive(Default)]
pub struct UpdateCheck {
    /// The page asked for a check itself.
    page_asked: Cell<bool>,
    /// The check in flight; cleared by the check when it ends.
    running: Rc<RefCell<Option<Promise>>>,
}

impl UpdateCheck {
    /// The page's check: `check` runs, unless a check is running, whose
    /// outcome this shares (`check` is then dropped unstarted).
    pub fn page<F>(&self, check: F) -> Promise
    where
        F: Future<Output = Result<JsValue, JsValue>> + 'static,
    {
        self.page_asked.set(true);
        self.share(check)
    }

    /// The visit's background check, as [`UpdateCheck::page`]; `None`
    /// (nothing runs) when the page has asked for a check of its own.
    pub fn background<F>(&self, check: F) -> Option<Promise>
    where
        F: Future<Output = Result<JsValue, JsValue>> + 'static,
    {
        if self.page_asked.get() {
            return None;
        }
        Some(self.share(check))
    }

    fn share<F>(&self, check: F) -> Promise
    where
        F: Future<Output = Result<JsValue, JsValue>> + 'static,
    {
        if let Some(running) = self.running.borrow().clone() {
            return running;
        }
        let slot = Rc::clone(&self.running);
        // Spawned, so not polled before `running` is set below.
        let running = wasm_bindgen_futures::future_to_promise(async move {
            let outcome = check.await;
            slot.borrow_mut().take();
            outcome
        });
        *self.running.borrow_mut() = Some(running.clone());
        running
    }
}
