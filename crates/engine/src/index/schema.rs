//! The tables and columns of the index file: their names, the aliases
//! queries give them, and the DDL that creates them (`ddl`), all from
//! one description per table. Every statement the engine, the publisher
//! and the browser module run names tables and columns through the
//! constants here, so a rename is one edit and the compiler finds every
//! use.
//!
//! Each table is a module: `TABLE` (its name), one constant per column
//! (the bare name, `chats::PARENT_ID` = `"parent_id"`), and for the tables
//! queries join, `ALIAS` and `qualified` (the column with its alias,
//! `chats::qualified::PARENT_ID` = `"c.parent_id"`). The names are
//! literals, so a statement put together from them at compile time
//! (`const_format::formatcp!`) costs nothing per query.
//!
//! ```
//! use gitsense_engine::index::schema::{chats, messages};
//! assert_eq!(messages::qualified::CHAT_ID, "m.chat_id");
//! assert_eq!(chats::TABLE, "chats");
//! ```

/// One column: its name and its declaration (type and constraints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Column {
    pub(crate) name: &'static str,
    pub(crate) decl: &'static str,
}

/// How a table's DDL is laid out. The text SQLite stores in
/// `sqlite_schema` is the statement as written, so the layout is part of
/// the file format: changing it changes every index file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `CREATE TABLE t(a INTEGER, b TEXT)` on one line.
    OneLine,
    /// One column (or constraint) a line, indented by two spaces.
    Lines,
}

/// An ordinary table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    pub(crate) name: &'static str,
    pub(crate) columns: &'static [Column],
    /// Table constraints after the columns (`PRIMARY KEY(key, message_id)`).
    pub(crate) constraints: &'static [&'static str],
    pub(crate) without_rowid: bool,
    pub(crate) layout: Layout,
}

impl Table {
    /// The `CREATE TABLE` statement, without the final `;`.
    pub(crate) fn create(&self) -> String {
        self.create_as("CREATE TABLE")
    }

    /// `CREATE TABLE IF NOT EXISTS`, for the tables a writable index
    /// makes when first needed ([`LIVE_TABLES`]). SQLite drops the
    /// `IF NOT EXISTS` from the text it stores, so the file holds the same
    /// text as [`Table::create`] would write.
    pub(crate) fn create_if_missing(&self) -> String {
        self.create_as("CREATE TABLE IF NOT EXISTS")
    }

    fn create_as(&self, keywords: &str) -> String {
        let items: Vec<String> = self
            .columns
            .iter()
            .map(|c| format!("{} {}", c.name, c.decl))
            .chain(self.constraints.iter().map(|c| c.to_string()))
            .collect();
        let body = match self.layout {
            Layout::OneLine => items.join(", "),
            Layout::Lines => format!("\n  {}\n", items.join(",\n  ")),
        };
        let tail = if self.without_rowid {
            " WITHOUT ROWID"
        } else {
            ""
        };
        format!("{keywords} {}({body}){tail}", self.name)
    }
}

/// A b-tree index over some columns of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Index {
    pub(crate) name: &'static str,
    pub(crate) table: &'static str,
    pub(crate) columns: &'static [&'static str],
}

impl Index {
    pub(crate) fn create(&self) -> String {
        format!(
            "CREATE INDEX {} ON {}({})",
            self.name,
            self.table,
            self.columns.join(", ")
        )
    }
}

/// An external-content FTS5 table over the columns of a payload table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FtsTable {
    pub(crate) name: &'static str,
    pub(crate) columns: &'static [&'static str],
    /// The table FTS5 reads a row's text from, and its rowid column.
    pub(crate) content: &'static str,
    pub(crate) content_rowid: &'static str,
    pub(crate) tokenize: &'static str,
    /// Whether FTS5 keeps its `_docsize` table (token counts per row).
    pub(crate) columnsize: bool,
}

impl FtsTable {
    pub(crate) fn create(&self) -> String {
        format!(
            "CREATE VIRTUAL TABLE {} USING fts5(\n  {}, content='{}', content_rowid='{}',\n  tokenize='{}'{})",
            self.name,
            self.columns.join(", "),
            self.content,
            self.content_rowid,
            self.tokenize,
            if self.columnsize { "" } else { ", columnsize=0" }
        )
    }
}

/// Declares a table's module: `TABLE`, a constant per column, `ALIAS` and
/// `qualified` when the table has an alias, and `DEF` (its description).
macro_rules! table {
    (@qualified ; $($COL:ident = $col:literal),*) => {};
    (@qualified $alias:literal ; $($COL:ident = $col:literal),*) => {
        /// The alias statements give the table (`FROM chats c`).
        pub const ALIAS: &str = $alias;
        /// The columns qualified by the table's alias.
        pub mod qualified {
            $(pub const $COL: &str = concat!($alias, ".", $col);)*
        }
    };
    (
        $(#[$doc:meta])*
        $module:ident = $name:literal $(as $alias:literal)?, $layout:ident
        $(, without_rowid = $without_rowid:literal)?
        $(, constraints = [$($constraint:expr),* $(,)?])?
        { $($(#[$cdoc:meta])* $COL:ident = $col:literal : $decl:literal),* $(,)? }
    ) => {
        $(#[$doc])*
        pub mod $module {
            #[allow(unused_imports)]
            use super::*;
            pub const TABLE: &str = $name;
            table!(@qualified $($alias)? ; $($COL = $col),*);
            $($(#[$cdoc])* pub const $COL: &str = $col;)*
            pub const DEF: super::Table = super::Table {
                name: TABLE,
                columns: &[$(super::Column { name: $COL, decl: $decl }),*],
                constraints: &[$($($constraint),*)?],
                without_rowid: false $(|| $without_rowid)?,
                layout: super::Layout::$layout,
            };
        }
    };
}

table! {
    /// What the index says about itself: format version, revision, counts,
    /// source, checksum (`index::read_info`, `index::checksum`).
    index_meta = "index_meta", OneLine, without_rowid = true {
        KEY = "key": "TEXT PRIMARY KEY",
        VALUE = "value": "TEXT NOT NULL",
    }
}

table! {
    /// GitSense chat groups.
    groups = "groups", OneLine {
        ID = "id": "INTEGER PRIMARY KEY",
        NAME = "name": "TEXT NOT NULL",
    }
}

table! {
    /// Chats (documentation pages, repository trees): what filters and
    /// sorts of chats read.
    chats = "chats" as "c", Lines {
        ID = "id": "INTEGER PRIMARY KEY",
        PARENT_ID = "parent_id": "INTEGER NOT NULL",
        ROOT_ID = "root_id": "INTEGER NOT NULL DEFAULT 0",
        /// `/root/…/parent/id/`: the chat and its ancestors.
        LINEAGE = "lineage": "TEXT NOT NULL DEFAULT ''",
        TYPE = "type": "TEXT NOT NULL",
        NAME = "name": "TEXT NOT NULL",
        REPO = "repo": "TEXT",
        PATH = "path": "TEXT",
        LANGUAGE = "language": "TEXT",
        BRANCH_NAME = "branch_name": "TEXT",
        CREATED_AT = "created_at": "TEXT",
        MODIFIED_AT = "modified_at": "TEXT",
        NUM_MESSAGES = "num_messages": "INTEGER NOT NULL DEFAULT 0",
        LAST_UPDATED_AT = "last_updated_at": "TEXT",
    }
}

table! {
    /// What a returned chat shows besides its filter columns.
    chat_details = "chat_details" as "d", Lines {
        ID = "id": "INTEGER PRIMARY KEY",
        UUID = "uuid": "TEXT",
        OWNER = "owner": "TEXT",
        GROUP_ID = "group_id": "INTEGER",
        CHAT_PATH = "chat_path": "TEXT",
        META = "meta": "TEXT",
    }
}

table! {
    /// Messages (documentation sections): what filters and sorts of
    /// messages read.
    messages = "messages" as "m", Lines {
        ID = "id": "INTEGER PRIMARY KEY",
        CHAT_ID = "chat_id": "INTEGER NOT NULL",
        TYPE = "type": "TEXT NOT NULL",
        ROLE = "role": "TEXT NOT NULL",
        FILE_PATH = "file_path": "TEXT",
        LANGUAGE = "language": "TEXT",
        CREATED_AT = "created_at": "TEXT",
        UPDATED_AT = "updated_at": "TEXT",
    }
}

table! {
    /// Ranking records of messages, 256 to a row (`index::records`).
    message_rank = "message_rank" as "n", Lines {
        CHUNK = "chunk": "INTEGER PRIMARY KEY",
        RECORDS = "records": "BLOB NOT NULL",
    }
}

table! {
    /// Ranking records of code blocks, 256 to a row (`index::records`).
    code_rank = "code_rank" as "k", Lines {
        CHUNK = "chunk": "INTEGER PRIMARY KEY",
        RECORDS = "records": "BLOB NOT NULL",
    }
}

table! {
    /// Per FTS5 segment, the hashes of the last term starting on each leaf
    /// (`index::doclists`).
    fts_leaf_ends = "fts_leaf_ends", Lines, without_rowid = true,
        constraints = [const_format::formatcp!("PRIMARY KEY({FTS}, {SEGID})")] {
        FTS = "fts": "TEXT NOT NULL",
        SEGID = "segid": "INTEGER NOT NULL",
        HASHES = "hashes": "BLOB NOT NULL",
    }
}

table! {
    /// Average title and keyword lengths of messages (one row).
    rank_stats = "rank_stats", Lines {
        AVG_TITLE_LEN = "avg_title_len": "REAL",
        AVG_KEYWORDS_LEN = "avg_keywords_len": "REAL",
    }
}

table! {
    /// A message's text: the content of `fts_messages`.
    message_text = "message_text" as "t", Lines {
        ID = "id": "INTEGER PRIMARY KEY",
        TITLE = "title": "TEXT NOT NULL",
        BODY = "body": "TEXT NOT NULL",
        KEYWORDS = "keywords": "TEXT NOT NULL",
        META = "meta": "TEXT",
    }
}

table! {
    /// A message's names as `index::name_key`s, for the exact-name boost.
    message_names = "message_names", Lines, without_rowid = true,
        constraints = [const_format::formatcp!("PRIMARY KEY({KEY}, {MESSAGE_ID})")] {
        KEY = "key": "INTEGER NOT NULL",
        MESSAGE_ID = "message_id": "INTEGER NOT NULL",
    }
}

table! {
    /// The words of `fts_messages` and `fts_chats` that typo correction
    /// looks among (`crate::typo`): each as `w` + the word and `r` + the
    /// word reversed (a typo leaves the start or the end of a word
    /// intact: each is one range scan), with the rows holding it.
    typo_terms = "typo_terms", Lines, without_rowid = true {
        KEY = "key": "TEXT PRIMARY KEY",
        ROWS = "rows": "INTEGER NOT NULL",
    }
}

table! {
    /// Code blocks: what filters and sorts of code blocks read.
    code_blocks = "code_blocks" as "b", Lines {
        ID = "id": "INTEGER PRIMARY KEY",
        MESSAGE_ID = "message_id": "INTEGER NOT NULL",
        CHAT_ID = "chat_id": "INTEGER NOT NULL",
        UUID = "uuid": "TEXT NOT NULL",
        TYPE = "type": "TEXT",
        LANGUAGE = "language": "TEXT",
        COMPONENT = "component": "TEXT",
        CREATED_AT = "created_at": "TEXT",
        SIZE = "size": "INTEGER NOT NULL",
    }
}

table! {
    /// A code block's content (of `fts_code_blocks`) and GitSense header.
    code_text = "code_text" as "x", Lines {
        ID = "id": "INTEGER PRIMARY KEY",
        CONTENT = "content": "TEXT NOT NULL",
        PARENT_UUID = "parent_uuid": "TEXT",
        DESCRIPTION = "description": "TEXT",
        MAJOR = "major": "INTEGER",
        MINOR = "minor": "INTEGER",
        PATCH = "patch": "INTEGER",
        HEADER = "header": "TEXT",
    }
}

table! {
    /// A writable index's request keys and the summaries of their writes
    /// (`live::write_once`); made by the first keyed write.
    live_requests = "live_requests", OneLine {
        KEY = "key": "TEXT PRIMARY KEY",
        /// The write's summary as JSON.
        SUMMARY = "summary": "TEXT NOT NULL",
    }
}

table! {
    /// An overlay's writes in order (`live::adopt`), replayed on a new
    /// revision of its published index.
    overlay_log = "overlay_log", OneLine {
        SEQ = "seq": "INTEGER PRIMARY KEY",
        /// `add`, `update`, `remove` or `import`.
        OP = "op": "TEXT NOT NULL",
        /// The write's JSON.
        INPUT = "input": "TEXT NOT NULL",
    }
}

/// Tokenizer for chat names and message text.
pub(crate) const TEXT_TOKENIZER: &str = "unicode61 remove_diacritics 2";

/// FTS5 over chat names.
pub mod fts_chats {
    pub const TABLE: &str = "fts_chats";
    pub(crate) const NAME: &str = super::chats::NAME;
    pub(crate) const DEF: super::FtsTable = super::FtsTable {
        name: TABLE,
        columns: &[NAME],
        content: super::chats::TABLE,
        content_rowid: super::chats::ID,
        tokenize: super::TEXT_TOKENIZER,
        columnsize: true,
    };
}

/// FTS5 over message text; no `_docsize` (ranking takes token counts from
/// `message_rank`).
pub mod fts_messages {
    pub const TABLE: &str = "fts_messages";
    pub(crate) const TITLE: &str = super::message_text::TITLE;
    pub(crate) const BODY: &str = super::message_text::BODY;
    pub(crate) const KEYWORDS: &str = super::message_text::KEYWORDS;
    pub(crate) const DEF: super::FtsTable = super::FtsTable {
        name: TABLE,
        columns: &[TITLE, BODY, KEYWORDS],
        content: super::message_text::TABLE,
        content_rowid: super::message_text::ID,
        tokenize: super::TEXT_TOKENIZER,
        columnsize: false,
    };
}

/// FTS5 (trigram) over code block contents; no `_docsize`.
pub mod fts_code_blocks {
    pub const TABLE: &str = "fts_code_blocks";
    pub(crate) const CONTENT: &str = super::code_text::CONTENT;
    pub(crate) const DEF: super::FtsTable = super::FtsTable {
        name: TABLE,
        columns: &[CONTENT],
        content: super::code_text::TABLE,
        content_rowid: super::code_text::ID,
        tokenize: "trigram",
        columnsize: false,
    };
}

/// The ordinary tables, in the order the file creates them.
pub(crate) const TABLES: [Table; 14] = [
    index_meta::DEF,
    groups::DEF,
    chats::DEF,
    chat_details::DEF,
    messages::DEF,
    message_rank::DEF,
    code_rank::DEF,
    fts_leaf_ends::DEF,
    rank_stats::DEF,
    message_text::DEF,
    message_names::DEF,
    typo_terms::DEF,
    code_blocks::DEF,
    code_text::DEF,
];

/// The tables a writable index adds when it first needs them, not in a
/// new index ([`ddl`]): a published index never has them.
#[cfg(test)]
pub(crate) const LIVE_TABLES: [Table; 2] = [live_requests::DEF, overlay_log::DEF];

/// The b-tree indexes, after the tables.
pub(crate) const INDEXES: [Index; 4] = [
    Index {
        name: "chats_parent",
        table: chats::TABLE,
        columns: &[chats::PARENT_ID],
    },
    Index {
        name: "messages_chat",
        table: messages::TABLE,
        columns: &[messages::CHAT_ID, messages::TYPE],
    },
    Index {
        name: "code_blocks_message",
        table: code_blocks::TABLE,
        columns: &[code_blocks::MESSAGE_ID],
    },
    Index {
        name: "code_blocks_chat",
        table: code_blocks::TABLE,
        columns: &[code_blocks::CHAT_ID],
    },
];

/// The FTS5 tables, last.
pub(crate) const FTS: [FtsTable; 3] = [fts_chats::DEF, fts_messages::DEF, fts_code_blocks::DEF];

/// The statements that create an empty index: tables, indexes, FTS5
/// tables, each on its own line(s) and ending in `;`.
pub(crate) fn ddl() -> String {
    let mut out = String::from("\n");
    let statements = TABLES
        .iter()
        .map(Table::create)
        .chain(INDEXES.iter().map(Index::create))
        .chain(FTS.iter().map(FtsTable::create));
    for s in statements {
        out.push_str(&s);
        out.push_str(";\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn the_ddl_creates_every_described_table_with_its_columns_in_order() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&ddl()).unwrap();
        for t in TABLES {
            let mut s = conn
                .prepare(&format!("SELECT name FROM pragma_table_info('{}')", t.name))
                .unwrap();
            let names: Vec<String> = s
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(|n| n.unwrap())
                .collect();
            let described: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
            assert_eq!(names, described, "{}", t.name);
        }
        for f in FTS {
            let found: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE name = ?1 AND sql LIKE '%fts5%'",
                    [f.name],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(found, 1, "{}", f.name);
            // Without `_docsize` exactly when described so.
            let docsize: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE name = ?1",
                    [format!("{}_docsize", f.name)],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(docsize == 1, f.columnsize, "{}", f.name);
        }
    }

    #[test]
    fn layouts_write_one_line_or_one_column_a_line() {
        assert_eq!(
            index_meta::DEF.create(),
            "CREATE TABLE index_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID"
        );
        assert_eq!(
            message_names::DEF.create(),
            "CREATE TABLE message_names(\n  key INTEGER NOT NULL,\n  message_id INTEGER NOT NULL,\n  PRIMARY KEY(key, message_id)\n) WITHOUT ROWID"
        );
        assert_eq!(code_blocks::qualified::MESSAGE_ID, "b.message_id");
    }

    #[test]
    fn live_tables_are_created_if_missing_and_stored_as_plain_create_table() {
        assert_eq!(
            overlay_log::DEF.create_if_missing(),
            "CREATE TABLE IF NOT EXISTS overlay_log(seq INTEGER PRIMARY KEY, op TEXT NOT NULL, input TEXT NOT NULL)"
        );
        assert!(!ddl().contains(live_requests::TABLE));
        let conn = Connection::open_in_memory().unwrap();
        for t in LIVE_TABLES {
            // Twice: the second finds the table there.
            for _ in 0..2 {
                conn.execute_batch(&t.create_if_missing()).unwrap();
            }
            let stored: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_schema WHERE name = ?1",
                    [t.name],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(stored, t.create());
        }
    }

    #[test]
    fn ddl_creates_the_chats_table() {
        assert!(ddl().contains("CREATE TABLE chats("));
    }
}
