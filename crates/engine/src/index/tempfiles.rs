//! Temporary files beside an output (a build's index, a publish's files):
//! never left behind.
//!
//! A [`TempFile`] is removed when it is dropped without [`TempFile::keep`]
//! (a failed build or write), when the process is interrupted by SIGINT,
//! SIGTERM or SIGHUP once [`remove_on_signal`] is installed (the CLI does),
//! and, after a crash or SIGKILL, by the next build beside it
//! (`remove_stale`: temporary files whose process is gone).
//!
//! The signal handler may only make async-signal-safe calls, so the paths
//! it removes are kept as C strings in a fixed table of atomic slots that
//! it reads without locking, and it calls `unlink` only.

use std::path::{Path, PathBuf};

/// A temporary file path: removed on drop unless kept.
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
    slot: Option<usize>,
    kept: bool,
}

impl TempFile {
    /// Takes charge of `path` (the file need not exist yet).
    pub fn new(path: PathBuf) -> TempFile {
        let slot = registry::register(&path);
        TempFile {
            path,
            slot,
            kept: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file was moved into place (or is wanted): leave it.
    pub fn keep(&mut self) {
        self.kept = true;
        if let Some(s) = self.slot.take() {
            registry::unregister(s);
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(s) = self.slot.take() {
            registry::unregister(s);
        }
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove every
/// live [`TempFile`] and then end the process by the same signal (so its
/// exit status still says it was interrupted). A no-op off Unix.
pub fn remove_on_signal() {
    registry::install();
}

/// Removes the temporary files in `dir` named `{prefix}{pid}{rest}{suffix}`
/// whose process `pid` is no longer running: what a crashed or killed run
/// left behind. Returns how many were removed. Files of running processes
/// (a concurrent build) are left alone; off Unix nothing is removed.
pub(crate) fn remove_stale(dir: &Path, prefix: &str, suffix: &str) -> usize {
    remove_stale_where(dir, |name| {
        let middle = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
        let digits: String = middle.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}

/// Removes the temporary files in `dir` named `{name}.{pid}.tmp`, `name`
/// starting with one of `starts`, whose process `pid` is no longer
/// running (what a killed `publish` left: `index-H.pages.1234.tmp`,
/// `manifest.1234.tmp`). Returns how many were removed.
pub fn remove_stale_named(dir: &Path, starts: &[&str]) -> usize {
    remove_stale_where(dir, |name| {
        if !starts.iter().any(|s| name.starts_with(s)) {
            return None;
        }
        let (_, pid) = name.strip_suffix(".tmp")?.rsplit_once('.')?;
        pid.parse().ok()
    })
}

/// Removes the files of `dir` whose name `pid_of` gives the pid of a
/// process that is gone (not this one).
fn remove_stale_where(dir: &Path, pid_of: impl Fn(&str) -> Option<u32>) -> usize {
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = pid_of(name) else {
            continue;
        };
        if pid != std::process::id()
            && registry::process_gone(pid)
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(all(unix, feature = "native"))]
mod registry {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, Ordering};

    /// Temporary files alive at once in one process (a build has one, a
    /// publish one at a time); beyond this, a file is still removed on
    /// drop and by the next build, just not from the signal handler.
    const SLOTS: usize = 32;

    static PATHS: [AtomicPtr<libc::c_char>; SLOTS] =
        [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

    pub(crate) fn register(path: &Path) -> Option<usize> {
        let c = CString::new(path.as_os_str().as_bytes()).ok()?;
        let p = c.into_raw();
        for (i, slot) in PATHS.iter().enumerate() {
            if slot
                .compare_exchange(std::ptr::null_mut(), p, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return Some(i);
            }
        }
        // SAFETY: `p` came from `CString::into_raw` above and was not shared.
        drop(unsafe { CString::from_raw(p) });
        None
    }

    pub(crate) fn unregister(i: usize) {
        // The path's bytes are not freed: a signal handler on another
        // thread may have loaded the pointer and be reading them (a few
        // dozen bytes per temporary file).
        PATHS[i].store(std::ptr::null_mut(), Ordering::SeqCst);
    }

    extern "C" fn on_signal(sig: libc::c_int) {
        for slot in &PATHS {
            let p = slot.load(Ordering::SeqCst);
            if !p.is_null() {
                // SAFETY: a NUL-terminated path that is never freed;
                // unlink, signal and raise are async-signal-safe.
                unsafe {
                    libc::unlink(p);
                }
            }
        }
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    pub(crate) fn install() {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: the handler only makes async-signal-safe calls.
            unsafe {
                libc::signal(sig, handler);
            }
        }
    }

    pub(crate) fn process_gone(pid: u32) -> bool {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 checks for the process without signalling it.
        let r = unsafe { libc::kill(pid, 0) };
        r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
}

#[cfg(not(all(unix, feature = "native")))]
mod registry {
    use std::path::Path;

    pub(crate) fn register(_: &Path) -> Option<usize> {
        None
    }

    pub(crate) fn unregister(_: usize) {}

    pub(crate) fn install() {}

    pub(crate) fn process_gone(_: u32) -> bool {
        false
    }
}
