//! Importer for chat exports (ChatGPT and Claude data exports, ShareGPT):
//! the file opened and streamed through [`gitsense_chat_export`], which
//! reads it one conversation at a time and says what each becomes; here
//! the records go into the [`IndexWriter`] as they come, so memory stays
//! bounded by the largest conversation, not the file.

use super::ImportReport;
use gitsense_chat_export::ExportReader;
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::IndexWriter;
use indicatif::ProgressBar;
use std::fs::File;
use std::io;
use std::path::Path;

pub use gitsense_chat_export::{conversation_name, role_of, NAME_MAX_CHARS};

/// Imports the export at `path` into `w`.
pub fn import(path: &Path, w: &mut IndexWriter, progress: &ProgressBar) -> Result<ImportReport> {
    let location = path.display().to_string();
    let file = File::open(path).map_err(|e| {
        let code = if e.kind() == io::ErrorKind::NotFound {
            "import.not_found"
        } else {
            "import.unreadable"
        };
        Error::new(code, format!("cannot open chat export: {e}")).with_location(&location)
    })?;
    progress.set_length(file.metadata().map(|m| m.len()).unwrap_or(0));
    let mut reader = ExportReader::new(file, location)?;
    while let Some(conv) = reader.next_conversation()? {
        for m in &conv.messages {
            w.add_message(m)?;
        }
        for b in &conv.code_blocks {
            w.add_code_block(b)?;
        }
        w.add_chat(&conv.chat)?;
        progress.set_position(reader.position().byte);
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "chat export".into());
    let summary = reader.finish(&file_name)?;
    w.add_chat(&summary.root)?;
    progress.finish_and_clear();
    Ok(ImportReport {
        warnings: summary.warnings,
    })
}
