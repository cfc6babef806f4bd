//! Importers: one module per source, each mapping its input onto the
//! GitSense data model ([`gitsense_engine::model`]) through an [`IndexWriter`].
//!
//! Every importer is deterministic (same input, same corpus revision),
//! reports unreadable input with its location, and leaves nothing behind on
//! failure (the writer builds into a temporary file).

pub mod chat_export;
pub mod docs;
pub mod fenced;
pub mod git;
pub mod gitsense_db;
pub mod languages;
pub mod overview;

use gitsense_engine::error::Result;
use gitsense_engine::index::{BuildStats, IndexWriter, SourceInfo};
use indicatif::ProgressBar;
use std::path::Path;

/// What an import noticed besides its records.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ImportReport {
    /// Counted warnings, e.g. `skipped 3 binary files`.
    pub warnings: Vec<String>,
}

/// Runs `fill` against a fresh writer for `out` and finishes the index.
pub fn build_with(
    out: &Path,
    description: String,
    fill: impl FnOnce(&mut IndexWriter) -> Result<ImportReport>,
) -> Result<(BuildStats, ImportReport)> {
    let mut w = IndexWriter::create(
        out,
        SourceInfo {
            description,
            built_at: None,
        },
    )?;
    let report = fill(&mut w)?;
    let stats = w.finish()?;
    Ok((stats, report))
}

/// A progress bar that draws nothing (tests, `--quiet`).
pub fn no_progress() -> ProgressBar {
    ProgressBar::hidden()
}
