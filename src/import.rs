//! A chat export imported into the writable index (`engine.importFile`):
//! the file's bytes pushed in pieces as the worker reads `file.stream()`,
//! never the whole file in memory.
//!
//! In: [`begin`] with the file's name, [`feed`] with each piece, then
//! [`finish`] (or [`abort`]). Out: progress after each piece, and the
//! import's summary `{format, chats, messages, codeBlocks, warnings,
//! revision}`, or a structured error (`import.bad_json`,
//! `import.no_messages`, `import.aborted`, ...). A truncated file keeps
//! its complete conversations and says so in a warning, as the CLI does.
//!
//! The pieces go to [`ExportFeeder`] (format told by the content: ChatGPT,
//! Claude, ShareGPT, `messages` arrays); the conversations it completes
//! are stored in batches of about [`BATCH_MESSAGES`] messages by a
//! [`live::Import`], all inside one SQLite transaction: a bad file, any
//! failure or an abort rolls every batch back, and the index is
//! as it was. Searches between pieces run on the same connection and see
//! the batches stored so far; the next write waits for the import
//! (`worker.js` queues it).

use super::host::now_ms;
use super::local::{self, LocalIndex};
use gitsense_chat_export::{root_chat, ConversationRecords, ExportFeeder, ExportSummary};
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::live::{self, WriteSummary};
use gitsense_engine::model::{Chat, CodeBlock, Message};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;

/// Messages gathered before they are stored as one batch: large enough
/// that the per-batch work (derived chats, ranking records of the id
/// chunks touched) is spread over many records, small enough that the
/// records waiting stay a few MB.
pub const BATCH_MESSAGES: usize = 4096;

/// An import's batch size and memory ([`live::ImportTuning`]); the
/// defaults unless a benchmark asks for others.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Tuning {
    pub batch_messages: Option<usize>,
    pub cache_mib: Option<u32>,
    pub fts_buffer_mib: Option<u32>,
}

/// An import in progress: the export being read, and what stores it.
struct Run {
    feeder: ExportFeeder,
    file_name: String,
    /// The import's request key (see [`begin`]).
    key: Option<String>,
    started_ms: f64,
    store: Store,
}

/// The import's transaction and the records waiting for the next batch.
struct Store {
    index: Rc<LocalIndex>,
    import: live::Import,
    pending: Pending,
    progress: Progress,
    batch_messages: usize,
}

#[derive(Default)]
struct Pending {
    chats: Vec<Chat>,
    messages: Vec<Message>,
    blocks: Vec<CodeBlock>,
}

/// How far an import is: bytes read, and the records stored so far.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub bytes_read: u64,
    pub chats: u64,
    pub messages: u64,
    pub code_blocks: u64,
    /// Batches stored so far.
    pub batches: u64,
}

/// What an import added.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportSummary {
    /// `chatgpt`, `claude`, `sharegpt`, `mixed` (`-jsonl` for JSON Lines).
    pub format: String,
    /// Rows added: the export's chat and one per conversation.
    pub chats: u64,
    pub messages: u64,
    pub code_blocks: u64,
    /// As the CLI's importer reports them.
    pub warnings: Vec<String>,
    /// The index's revision after the import.
    pub revision: String,
    /// How long it took (0 for an answer to an import sent again).
    #[serde(default)]
    pub ms: f64,
}

thread_local! {
    static RUN: RefCell<Option<Run>> = const { RefCell::new(None) };
}

/// Whether an import is in progress.
pub fn running() -> bool {
    RUN.with(|r| r.borrow().is_some())
}

/// Starts importing the export called `file_name` into the open writable
/// index (opens the transaction, stores the export's root chat). `key`:
/// the import's request id, which a tab relaying it through another keeps
/// when it must send it again (the owner closed before answering); an
/// import already committed under it is answered with its summary
/// (returned here; nothing is started) instead of being imported twice.
pub fn begin(file_name: &str, tuning: Tuning, key: Option<&str>) -> Result<Option<ImportSummary>> {
    let index = local::current().ok_or_else(|| {
        Error::new(
            "write.read_only",
            "this engine serves a published index: only an index made by create() takes imports",
        )
    })?;
    if running() {
        return Err(Error::new(
            "engine.busy",
            "an import is already in progress in this index",
        ));
    }
    if let Some(key) = key {
        if let Some(done) = index.with_engine(|e| live::request_done(e.connection(), key))? {
            return serde_json::from_str(&done)
                .map(Some)
                .map_err(|e| Error::new("index.corrupt", format!("a stored import summary: {e}")));
        }
    }
    let file_name = if file_name.is_empty() {
        "chat export"
    } else {
        file_name
    };
    let import = index.with_engine(|e| {
        let defaults = live::ImportTuning::default();
        let memory = live::ImportTuning {
            cache_mib: tuning.cache_mib.unwrap_or(defaults.cache_mib),
            fts_buffer_mib: tuning.fts_buffer_mib.unwrap_or(defaults.fts_buffer_mib),
        };
        let import = live::Import::begin(e.connection(), &root_chat(file_name), memory)?;
        e.forget_cached()?;
        Ok(import)
    })?;
    RUN.with(|r| {
        *r.borrow_mut() = Some(Run {
            feeder: ExportFeeder::new(file_name),
            file_name: file_name.to_string(),
            key: key.map(str::to_string),
            started_ms: now_ms(),
            store: Store {
                index,
                import,
                pending: Pending::default(),
                progress: Progress::default(),
                batch_messages: tuning.batch_messages.unwrap_or(BATCH_MESSAGES).max(1),
            },
        })
    });
    Ok(None)
}

/// Takes the next piece of the file; stores the conversations it
/// completes once a batch is full. An error rolls the import back.
pub fn feed(piece: &[u8]) -> Result<Progress> {
    with_run(|run| {
        let store = &mut run.store;
        store.progress.bytes_read += piece.len() as u64;
        store.take(run.feeder.feed(piece)?);
        if store.pending.messages.len() >= store.batch_messages {
            store.store()?;
        }
        Ok(store.progress.clone())
    })
}

/// Ends the input: stores what is left, checks the export and commits.
/// An error (no messages, ...) rolls it all back.
pub async fn finish() -> Result<ImportSummary> {
    let Some(run) = RUN.with(|r| r.borrow_mut().take()) else {
        return Err(not_running());
    };
    let index = Rc::clone(&run.store.index);
    let committed = run.commit();
    let (summary, export, started_ms) = match committed {
        Ok(done) => done,
        Err(e) => {
            rolled_back(&index);
            return Err(e);
        }
    };
    if let Err(e) = index.save().await {
        // IndexedDB: memory holds the import, the saved copy does not.
        index.reload().await?;
        return Err(e);
    }
    Ok(ImportSummary {
        format: export.format,
        chats: summary.chats,
        messages: summary.messages,
        code_blocks: summary.code_blocks,
        warnings: export.warnings,
        revision: summary.revision,
        ms: now_ms() - started_ms,
    })
}

/// Drops the import in progress: everything it stored is rolled back.
pub fn abort() {
    if let Some(run) = RUN.with(|r| r.borrow_mut().take()) {
        rolled_back(&run.store.index);
    }
}

fn not_running() -> Error {
    Error::new("import.not_running", "no import is in progress")
}

fn with_run<T>(f: impl FnOnce(&mut Run) -> Result<T>) -> Result<T> {
    let out = RUN.with(|r| match r.borrow_mut().as_mut() {
        Some(run) => f(run),
        None => Err(not_running()),
    });
    if out.is_err() {
        abort();
    }
    out
}

/// Rolls the transaction back and lets the engine read the index afresh.
fn rolled_back(index: &LocalIndex) {
    let _ = index.with_engine(|e| {
        live::Import::rollback(e.connection())?;
        e.forget_cached()
    });
}

impl Store {
    fn take(&mut self, conversations: Vec<ConversationRecords>) {
        for c in conversations {
            self.pending.chats.push(c.chat);
            self.pending.messages.extend(c.messages);
            self.pending.blocks.extend(c.code_blocks);
        }
    }

    /// Stores the records gathered (one batch).
    fn store(&mut self) -> Result<()> {
        let p = std::mem::take(&mut self.pending);
        if p.chats.is_empty() && p.messages.is_empty() {
            return Ok(());
        }
        let import = &mut self.import;
        self.index.with_engine(|e| {
            import.add(e.connection(), &p.chats, &p.messages, &p.blocks)?;
            e.forget_cached()
        })?;
        self.progress.chats += p.chats.len() as u64;
        self.progress.messages += p.messages.len() as u64;
        self.progress.code_blocks += p.blocks.len() as u64;
        self.progress.batches += 1;
        Ok(())
    }
}

impl Run {
    fn commit(self) -> Result<(WriteSummary, ExportSummary, f64)> {
        let Run {
            feeder,
            file_name,
            key,
            started_ms,
            mut store,
        } = self;
        let (rest, export) = feeder.finish(&file_name)?;
        store.take(rest);
        store.store()?;
        let Store { index, import, .. } = store;
        let root_meta = &export.root.meta;
        let answer = serde_json::json!({ "format": export.format, "warnings": export.warnings });
        let request = key.as_deref().map(|k| (k, &answer));
        let summary = index.with_engine(|e| {
            let s = import.commit(e.connection(), root_meta, request)?;
            e.forget_cached()?;
            Ok(s)
        })?;
        Ok((summary, export, started_ms))
    }
}
