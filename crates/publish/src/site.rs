//! What `gitsense-search site` adds to a built site besides the published
//! index: the browser module copied beside it, and the lines a page pastes
//! to get a search box.
//!
//! In: the module's directory (`pkg/`, see [`find_module`]) and the web
//! path the published directory is served under. Out: the copied files and
//! the HTML text.

use gitsense_engine::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The environment variable naming the module directory.
pub const MODULE_ENV: &str = "GITSENSE_SEARCH_PKG";
/// The module directory's name in a published site and in the repository.
pub const MODULE_DIR: &str = "pkg";
/// Files without which a directory is not the browser module.
const MODULE_FILES: &[&str] = &["index.js", "worker.js", "gitsense_search_bg.wasm", "ui.js"];

/// Finds the browser module: `explicit` (`--pkg`), else `$GITSENSE_SEARCH_PKG`,
/// else `pkg/` in the current directory, else `pkg/` beside the executable
/// or in the repository it was built in (`target/release/..`). A directory
/// without the module's files is an error, as is finding none.
pub fn find_module(explicit: Option<&Path>, exe: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return check_module(p);
    }
    if let Some(p) = std::env::var_os(MODULE_ENV).filter(|v| !v.is_empty()) {
        return check_module(Path::new(&p));
    }
    let mut tried = vec![PathBuf::from(MODULE_DIR)];
    if let Some(dir) = exe.and_then(Path::parent) {
        tried.push(dir.join(MODULE_DIR));
        // target/release/gitsense-search → the repository's pkg/.
        if let Some(repo) = dir.parent().and_then(Path::parent) {
            tried.push(repo.join(MODULE_DIR));
        }
    }
    tried
        .iter()
        .find(|p| is_module(p))
        .cloned()
        .ok_or_else(|| {
            Error::new(
                "site.no_module",
                format!(
                    "the browser module (pkg/, built by ./build.sh) is not in {}; pass --pkg DIR or set {MODULE_ENV}",
                    tried
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })
}

fn is_module(dir: &Path) -> bool {
    MODULE_FILES.iter().all(|f| dir.join(f).is_file())
}

fn check_module(dir: &Path) -> Result<PathBuf> {
    if is_module(dir) {
        Ok(dir.to_path_buf())
    } else {
        Err(Error::new(
            "site.no_module",
            format!(
                "{} is not the browser module: it needs {}",
                dir.display(),
                MODULE_FILES.join(", ")
            ),
        )
        .with_location(dir.display().to_string()))
    }
}

/// Copies the module's files (regular files at its top level: the module
/// has no subdirectories) into `dest`, replacing what is there. Returns
/// the names copied.
pub fn copy_module(module: &Path, dest: &Path) -> Result<Vec<String>> {
    let io = |p: &Path, e: std::io::Error| {
        Error::new("site.io", e.to_string()).with_location(p.display().to_string())
    };
    std::fs::create_dir_all(dest).map_err(|e| io(dest, e))?;
    let mut names = Vec::new();
    for entry in std::fs::read_dir(module).map_err(|e| io(module, e))? {
        let entry = entry.map_err(|e| io(module, e))?;
        let path = entry.path();
        if !path.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        std::fs::copy(&path, dest.join(&name)).map_err(|e| io(&path, e))?;
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// The two lines a page pastes for search, the published directory served
/// at `web_dir` (e.g. `/_gitsense/`): the drop-in UI's script and its
/// element (`<gitsense-search>`, `pkg/ui.js`: a search box and a
/// ⌘K / Ctrl+K dialog that searches as the reader types and links each
/// result to its section). The element finds the module beside its script
/// and resolves the index's relative links against the directory above the
/// manifest's: the site's root when the index is published inside it.
///
/// ```
/// let html = gitsense_publish::site::paste_lines("/docs/_gitsense/");
/// assert_eq!(html.lines().count(), 2);
/// assert!(html.contains(r#"src="/docs/_gitsense/pkg/ui.js""#));
/// assert!(html.contains(r#"manifest="/docs/_gitsense/manifest.json""#));
/// ```
pub fn paste_lines(web_dir: &str) -> String {
    let d = if web_dir.ends_with('/') {
        web_dir.to_string()
    } else {
        format!("{web_dir}/")
    };
    let m = MODULE_DIR;
    format!(
        r#"<script type="module" src="{d}{m}/ui.js"></script>
<gitsense-search manifest="{d}manifest.json"></gitsense-search>
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_module(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        for f in MODULE_FILES {
            std::fs::write(dir.join(f), f).unwrap();
        }
    }

    #[test]
    fn the_module_is_found_beside_the_repository_of_the_executable() {
        let t = tempfile::tempdir().unwrap();
        fake_module(&t.path().join("pkg"));
        let exe = t.path().join("target/release/gitsense-search");
        assert_eq!(find_module(None, Some(&exe)).unwrap(), t.path().join("pkg"));
        let e = find_module(None, Some(&t.path().join("elsewhere/usr/local/bin/x"))).unwrap_err();
        assert_eq!(e.code, "site.no_module");
        assert_eq!(
            find_module(Some(t.path()), None).unwrap_err().code,
            "site.no_module"
        );
    }

    #[test]
    fn copying_takes_every_file_of_the_module() {
        let t = tempfile::tempdir().unwrap();
        fake_module(&t.path().join("pkg"));
        let names = copy_module(&t.path().join("pkg"), &t.path().join("out/pkg")).unwrap();
        assert_eq!(
            names,
            ["gitsense_search_bg.wasm", "index.js", "ui.js", "worker.js"]
        );
        assert!(t.path().join("out/pkg/worker.js").is_file());
    }
}
