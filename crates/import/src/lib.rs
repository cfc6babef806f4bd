//! Importers: one module per source, each mapping its input onto the
//! GitSense data model ([`gitsense_engine::model`]) through an [`IndexWriter`].
//!
//! Every importer is deterministic (same input, same corpus revision),
//! reports unreadable input with its location, and leaves nothing behind on
//! failure (the writer builds into a temporary file).

pub mod chat_export;
pub mod docs;
/// The fenced-block parser lives in the engine, which the browser's
/// writable indexes share; importers keep their path to it.
pub use gitsense_engine::fenced;
pub mod git;
pub mod gitsense_db;
pub mod languages;
pub mod overview;

use gitsense_engine::error::{Error, Result};

/// Most directories an importer nests: each becomes a chat, and a chat's
/// path may name at most [`gitsense_engine::index::MAX_CHAT_DEPTH`]
/// chats (a few above the directories: the site or repository, the ref).
/// Deeper directories are skipped with a warning, the rest is indexed.
pub const MAX_DIR_DEPTH: usize = gitsense_engine::index::MAX_CHAT_DEPTH - 8;
use gitsense_engine::index::{BuildStats, FinishProgress, IndexWriter, SourceInfo};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};

/// What an import noticed besides its records.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ImportReport {
    /// Counted warnings, e.g. `skipped 3 binary files`.
    pub warnings: Vec<String>,
}

/// What a build reads, for [`check_output`].
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A file read whole: a GitSense database, a chat export.
    File(&'a Path),
    /// A documentation directory: its pages are inputs.
    Docs(&'a Path),
    /// A git repository (working tree or bare): its git directory is input.
    Git(&'a Path),
}

/// Refuses an output path that would destroy data: one that resolves
/// (symbolic links followed) to one of the build's `inputs`
/// (`import.output_is_input`, even with `force`: the build would replace
/// what it reads), or an existing file that is not a gitsense-search index
/// (`import.output_not_index`, unless `force`).
pub fn check_output(out: &Path, inputs: &[Input], force: bool) -> Result<()> {
    let at = || out.display().to_string();
    let resolved = resolve(out);
    for input in inputs {
        let hit = match *input {
            Input::File(f) => std::fs::canonicalize(f).is_ok_and(|f| f == resolved),
            Input::Docs(dir) => {
                docs::is_page_name(&resolved.file_name().unwrap_or_default().to_string_lossy())
                    && std::fs::canonicalize(dir).is_ok_and(|d| resolved.starts_with(d))
            }
            Input::Git(dir) => {
                let git_dir = dir.join(".git");
                let git_dir = if git_dir.exists() {
                    git_dir
                } else {
                    dir.into()
                };
                std::fs::canonicalize(git_dir).is_ok_and(|d| resolved.starts_with(d))
            }
        };
        if hit {
            return Err(Error::new(
                "import.output_is_input",
                "--out names a file the build reads; the index would replace its own source",
            )
            .with_location(at()));
        }
    }
    match std::fs::metadata(out) {
        Ok(m) if m.is_dir() => {
            Err(Error::new("import.bad_output", "--out is a directory").with_location(at()))
        }
        Ok(_) if !force && !gitsense_engine::index::is_index_file(out) => Err(Error::new(
            "import.output_not_index",
            "--out names an existing file that is not a gitsense-search index; \
             pass --force to replace it",
        )
        .with_location(at())),
        _ => Ok(()),
    }
}

/// [`check_output`] for an `add` from `index` to `out`: `index` must be an
/// index of this format first (the output checks would otherwise call a
/// file that is none a wrong `--out`), and it is one of the inputs unless
/// it is the output too (an add in place).
pub fn check_add_output(index: &Path, out: &Path, inputs: &[Input]) -> Result<()> {
    gitsense_engine::index::open_file(index)?;
    let mut inputs = inputs.to_vec();
    if out != index {
        inputs.push(Input::File(index));
    }
    check_output(out, &inputs, false)
}

/// `path` with symbolic links resolved: the file itself when it exists,
/// else its resolved directory joined with its name.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => path.to_path_buf(),
    }
}

/// Runs `fill` against a fresh writer for `out` and finishes the index.
pub fn build_with(
    out: &Path,
    description: String,
    fill: impl FnOnce(&mut IndexWriter) -> Result<ImportReport>,
) -> Result<(BuildStats, ImportReport)> {
    build_with_progress(out, description, fill, &mut |_| {})
}

/// [`build_with`], telling `finishing` the steps after the import
/// ([`IndexWriter::finish_with`]).
pub fn build_with_progress(
    out: &Path,
    description: String,
    fill: impl FnOnce(&mut IndexWriter) -> Result<ImportReport>,
    finishing: &mut dyn FnMut(FinishProgress),
) -> Result<(BuildStats, ImportReport)> {
    let w = IndexWriter::create(out, source(description))?;
    fill_and_finish(w, fill, finishing)
}

/// [`build_with_progress`] for a build that starts from the records of
/// the index at `base` ([`IndexWriter::extend`]) and ends at `out`
/// (which may be `base`).
pub fn add_with_progress(
    base: &Path,
    out: &Path,
    description: String,
    fill: impl FnOnce(&mut IndexWriter) -> Result<ImportReport>,
    finishing: &mut dyn FnMut(FinishProgress),
) -> Result<(BuildStats, ImportReport)> {
    let w = IndexWriter::extend(base, out, source(description))?;
    fill_and_finish(w, fill, finishing)
}

fn source(description: String) -> SourceInfo {
    SourceInfo {
        description,
        built_at: None,
    }
}

fn fill_and_finish(
    mut w: IndexWriter,
    fill: impl FnOnce(&mut IndexWriter) -> Result<ImportReport>,
    finishing: &mut dyn FnMut(FinishProgress),
) -> Result<(BuildStats, ImportReport)> {
    let report = fill(&mut w)?;
    let stats = w.finish_with(finishing)?;
    Ok((stats, report))
}

/// A progress bar that draws nothing (tests, `--quiet`).
pub fn no_progress() -> ProgressBar {
    ProgressBar::hidden()
}
