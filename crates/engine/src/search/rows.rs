//! The rows a returned result is built from: for each target, one
//! statement reading a result's own row, its text and its chat by id, and
//! the named struct it reads into (the field order is the statement's
//! column order).

use crate::index::schema::chat_details::qualified as d;
use crate::index::schema::chats::qualified as c;
use crate::index::schema::code_blocks::qualified as b;
use crate::index::schema::code_text::qualified as x;
use crate::index::schema::message_text::qualified as t;
use crate::index::schema::messages::qualified as m;
use crate::index::schema::{chat_details, chats, code_blocks, code_text, message_text, messages};
use const_format::formatcp;
use rusqlite::{Connection, Row};

/// `JOIN chat_details d ON d.id = c.id`: a chat's details, after its row.
const DETAILS_OF_CHAT: &str = formatcp!(
    " JOIN {chat_details} {chat_details_alias} ON {d_id} = {c_id}",
    chat_details = chat_details::TABLE,
    chat_details_alias = chat_details::ALIAS,
    d_id = d::ID,
    c_id = c::ID
);

/// A returned chat's row and details.
#[derive(Debug)]
pub(crate) struct ChatRow {
    pub(crate) uuid: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) chat_type: Option<String>,
    pub(crate) owner: Option<String>,
    pub(crate) modified_at: Option<String>,
    pub(crate) num_messages: Option<i64>,
    pub(crate) last_updated_at: Option<String>,
    pub(crate) chat_path: Option<String>,
    pub(crate) meta: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) repo: Option<String>,
    pub(crate) language: Option<String>,
}

impl ChatRow {
    pub(crate) const SQL: &'static str = formatcp!(
        "SELECT {d_uuid}, {c_name}, {c_type}, {d_owner}, {c_modified_at}, {c_num_messages}, \
        {c_last_updated_at}, {d_chat_path}, {d_meta}, {c_path}, {c_repo}, {c_language} FROM \
        {chats} {chats_alias}{DETAILS_OF_CHAT} WHERE {c_id} = ?1",
        d_uuid = d::UUID,
        c_name = c::NAME,
        c_type = c::TYPE,
        d_owner = d::OWNER,
        c_modified_at = c::MODIFIED_AT,
        c_num_messages = c::NUM_MESSAGES,
        c_last_updated_at = c::LAST_UPDATED_AT,
        d_chat_path = d::CHAT_PATH,
        d_meta = d::META,
        c_path = c::PATH,
        c_repo = c::REPO,
        c_language = c::LANGUAGE,
        chats = chats::TABLE,
        chats_alias = chats::ALIAS,
        c_id = c::ID
    );

    fn from_row(r: &Row) -> rusqlite::Result<ChatRow> {
        Ok(ChatRow {
            uuid: r.get(0)?,
            name: r.get(1)?,
            chat_type: r.get(2)?,
            owner: r.get(3)?,
            modified_at: r.get(4)?,
            num_messages: r.get(5)?,
            last_updated_at: r.get(6)?,
            chat_path: r.get(7)?,
            meta: r.get(8)?,
            path: r.get(9)?,
            repo: r.get(10)?,
            language: r.get(11)?,
        })
    }

    pub(crate) fn read(conn: &Connection, id: i64) -> rusqlite::Result<ChatRow> {
        conn.prepare_cached(Self::SQL)?
            .query_row([id], Self::from_row)
    }
}

/// A returned message's row, text and chat.
#[derive(Debug)]
pub(crate) struct MessageRow {
    pub(crate) chat_id: i64,
    pub(crate) message_type: Option<String>,
    pub(crate) role: Option<String>,
    pub(crate) body: String,
    pub(crate) meta: Option<String>,
    pub(crate) chat_path: Option<String>,
    pub(crate) branch_name: Option<String>,
    pub(crate) created_at: Option<String>,
    pub(crate) updated_at: Option<String>,
    pub(crate) repo: Option<String>,
    pub(crate) file_path: Option<String>,
    pub(crate) title: String,
    pub(crate) language: Option<String>,
    /// The chat's metadata when the chat is a git file (its commit).
    pub(crate) blob_meta: Option<String>,
}

impl MessageRow {
    pub(crate) const SQL: &'static str = formatcp!(
        "SELECT {m_chat_id}, {m_type}, {m_role}, {t_body}, {t_meta}, {d_chat_path}, \
        {c_branch_name}, {m_created_at}, {m_updated_at}, {c_repo}, {m_file_path}, {t_title}, \
        {m_language}, CASE WHEN {c_type} = 'git-blob' THEN {d_meta} END FROM {messages} \
        {messages_alias} JOIN {message_text} {message_text_alias} ON {t_id} = {m_id} JOIN \
        {chats} {chats_alias} ON {c_id} = {m_chat_id}{DETAILS_OF_CHAT} WHERE {m_id} = ?1",
        m_chat_id = m::CHAT_ID,
        m_type = m::TYPE,
        m_role = m::ROLE,
        t_body = t::BODY,
        t_meta = t::META,
        d_chat_path = d::CHAT_PATH,
        c_branch_name = c::BRANCH_NAME,
        m_created_at = m::CREATED_AT,
        m_updated_at = m::UPDATED_AT,
        c_repo = c::REPO,
        m_file_path = m::FILE_PATH,
        t_title = t::TITLE,
        m_language = m::LANGUAGE,
        c_type = c::TYPE,
        d_meta = d::META,
        messages = messages::TABLE,
        messages_alias = messages::ALIAS,
        message_text = message_text::TABLE,
        message_text_alias = message_text::ALIAS,
        t_id = t::ID,
        m_id = m::ID,
        chats = chats::TABLE,
        chats_alias = chats::ALIAS,
        c_id = c::ID
    );

    fn from_row(r: &Row) -> rusqlite::Result<MessageRow> {
        Ok(MessageRow {
            chat_id: r.get(0)?,
            message_type: r.get(1)?,
            role: r.get(2)?,
            body: r.get(3)?,
            meta: r.get(4)?,
            chat_path: r.get(5)?,
            branch_name: r.get(6)?,
            created_at: r.get(7)?,
            updated_at: r.get(8)?,
            repo: r.get(9)?,
            file_path: r.get(10)?,
            title: r.get(11)?,
            language: r.get(12)?,
            blob_meta: r.get(13)?,
        })
    }

    pub(crate) fn read(conn: &Connection, id: i64) -> rusqlite::Result<MessageRow> {
        conn.prepare_cached(Self::SQL)?
            .query_row([id], Self::from_row)
    }
}

/// A returned code block's row, content, message and chat.
#[derive(Debug)]
pub(crate) struct CodeRow {
    pub(crate) uuid: String,
    pub(crate) message_id: i64,
    pub(crate) chat_id: i64,
    pub(crate) content: String,
    pub(crate) component: Option<String>,
    pub(crate) parent_uuid: Option<String>,
    pub(crate) major: Option<i64>,
    pub(crate) minor: Option<i64>,
    pub(crate) patch: Option<i64>,
    pub(crate) header: Option<String>,
    pub(crate) created_at: Option<String>,
    pub(crate) size: Option<i64>,
    pub(crate) branch_name: Option<String>,
    pub(crate) chat_path: Option<String>,
    pub(crate) language: Option<String>,
    pub(crate) file_path: Option<String>,
    pub(crate) repo: Option<String>,
}

impl CodeRow {
    pub(crate) const SQL: &'static str = formatcp!(
        "SELECT {b_uuid}, {b_message_id}, {b_chat_id}, {x_content}, {b_component}, \
        {x_parent_uuid}, {x_major}, {x_minor}, {x_patch}, {x_header}, {b_created_at}, {b_size}, \
        {c_branch_name}, {d_chat_path}, {b_language}, {m_file_path}, {c_repo} FROM {code_blocks} \
        {code_blocks_alias} JOIN {code_text} {code_text_alias} ON {x_id} = {b_id} JOIN \
        {messages} {messages_alias} ON {m_id} = {b_message_id} JOIN {chats} {chats_alias} ON \
        {c_id} = {b_chat_id}{DETAILS_OF_CHAT} WHERE {b_id} = ?1",
        b_uuid = b::UUID,
        b_message_id = b::MESSAGE_ID,
        b_chat_id = b::CHAT_ID,
        x_content = x::CONTENT,
        b_component = b::COMPONENT,
        x_parent_uuid = x::PARENT_UUID,
        x_major = x::MAJOR,
        x_minor = x::MINOR,
        x_patch = x::PATCH,
        x_header = x::HEADER,
        b_created_at = b::CREATED_AT,
        b_size = b::SIZE,
        c_branch_name = c::BRANCH_NAME,
        d_chat_path = d::CHAT_PATH,
        b_language = b::LANGUAGE,
        m_file_path = m::FILE_PATH,
        c_repo = c::REPO,
        code_blocks = code_blocks::TABLE,
        code_blocks_alias = code_blocks::ALIAS,
        code_text = code_text::TABLE,
        code_text_alias = code_text::ALIAS,
        x_id = x::ID,
        b_id = b::ID,
        messages = messages::TABLE,
        messages_alias = messages::ALIAS,
        m_id = m::ID,
        chats = chats::TABLE,
        chats_alias = chats::ALIAS,
        c_id = c::ID
    );

    fn from_row(r: &Row) -> rusqlite::Result<CodeRow> {
        Ok(CodeRow {
            uuid: r.get(0)?,
            message_id: r.get(1)?,
            chat_id: r.get(2)?,
            content: r.get(3)?,
            component: r.get(4)?,
            parent_uuid: r.get(5)?,
            major: r.get(6)?,
            minor: r.get(7)?,
            patch: r.get(8)?,
            header: r.get(9)?,
            created_at: r.get(10)?,
            size: r.get(11)?,
            branch_name: r.get(12)?,
            chat_path: r.get(13)?,
            language: r.get(14)?,
            file_path: r.get(15)?,
            repo: r.get(16)?,
        })
    }

    pub(crate) fn read(conn: &Connection, id: i64) -> rusqlite::Result<CodeRow> {
        conn.prepare_cached(Self::SQL)?
            .query_row([id], Self::from_row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_reads_as_many_columns_as_its_statement_selects() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&crate::index::schema::ddl()).unwrap();
        for (sql, fields) in [
            (ChatRow::SQL, 12),
            (MessageRow::SQL, 14),
            (CodeRow::SQL, 17),
        ] {
            let s = conn.prepare(sql).unwrap();
            assert_eq!(s.column_count(), fields, "{sql}");
        }
    }
}
