//! Errors with stable codes users can match on.
//!
//! Every failure the engine can report is an [`Error`] with a dotted `code`
//! (`query.unbalanced_quote`, `index.version_mismatch`, ...), a human message
//! and, for query errors, the character position in the query text. The CLI
//! turns them into exit codes, the browser module into `{code, message,
//! position}` objects. Raw SQLite errors never leave the crate unwrapped.

use std::fmt;

/// Broad class of an error: decides the CLI exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The query text or search options are wrong (exit code 2).
    Query,
    /// The index file is missing, corrupt or of another format (exit 1).
    Index,
    /// An importer could not read its input (exit 1).
    Import,
    /// Anything else: I/O, internal database failures (exit 1).
    Internal,
}

/// A structured error: `code`, `message` and an optional `position`.
///
/// ```
/// use gitsense_engine::{Engine, ErrorKind, SearchOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let engine = Engine::open(&path)?;
/// let e = engine.search("(retry OR", &SearchOptions::default()).unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::Query);
/// assert!(e.code.starts_with("query."), "{}", e.code);
/// assert!(e.position.is_some());
/// // A file that is not an index is an `index.*` error, never a raw SQLite one.
/// std::fs::write(dir.path().join("not.gsx"), "plain text")?;
/// let e = Engine::open(&dir.path().join("not.gsx")).err().unwrap();
/// assert_eq!(e.kind(), ErrorKind::Index);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Error {
    /// Stable dotted code, e.g. `query.unknown_filter`.
    pub code: String,
    /// What went wrong, in words a user can act on.
    pub message: String,
    /// Character offset (0-based, in Unicode scalar values) into the query
    /// text, for query errors that point at a place.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub position: Option<usize>,
    /// Where outside a query the error happened (a file, an element index).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub location: Option<String>,
}

impl Error {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Error {
            code: code.to_string(),
            message: message.into(),
            position: None,
            location: None,
        }
    }

    /// A query error pointing at a character position.
    pub(crate) fn at(code: &str, message: impl Into<String>, position: usize) -> Self {
        Error {
            position: Some(position),
            ..Error::new(code, message)
        }
    }

    /// Adds where the error happened (file, line, element).
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    pub fn kind(&self) -> ErrorKind {
        match self.code.split('.').next().unwrap_or("") {
            "query" | "options" | "cursor" => ErrorKind::Query,
            "stale_cursor" => ErrorKind::Query,
            "index" => ErrorKind::Index,
            "import" => ErrorKind::Import,
            _ => ErrorKind::Internal,
        }
    }

    /// An unexpected database failure, with the operation that failed.
    pub fn db(context: &str, e: impl fmt::Display) -> Self {
        Error::new("internal.database", format!("{context}: {e}"))
    }

    pub fn io(context: &str, e: impl fmt::Display) -> Self {
        Error::new("internal.io", format!("{context}: {e}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if let Some(p) = self.position {
            write!(f, " (at character {p})")?;
        }
        if let Some(l) = &self.location {
            write!(f, " [{l}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for mapping a rusqlite error with context.
pub trait DbContext<T> {
    fn ctx(self, context: &str) -> Result<T>;
}

impl<T> DbContext<T> for std::result::Result<T, rusqlite::Error> {
    fn ctx(self, context: &str) -> Result<T> {
        self.map_err(|e| Error::db(context, e))
    }
}
