//! Importer for ShareGPT-style chat exports.
//!
//! Input: a JSON array of conversations,
//! `[{"id": "...", "conversations": [{"from": "human", "value": "..."}, ...]}, ...]`
//! (or the same objects as JSON Lines, one after another). The variant with
//! `messages: [{role, content}]` is read too.
//!
//! Output, per export:
//! - one root chat (type `chat-export`, named after the file), so that chat
//!   paths read `export.json -> Conversation name`;
//! - per conversation a `regular` chat named after its first user turn
//!   (shortened), with `meta.conversation_id` and `meta.element` (its index
//!   in the file);
//! - per turn a `regular` message; `from` maps to the role (`human`, `user`
//!   → user; `system` → system; `gpt`, `chatgpt`, `bard`, `bing`,
//!   `assistant`, ... → assistant; anything else → assistant, with a
//!   warning); `meta.from` keeps the original speaker;
//! - per fenced block (```` ``` ```` or `~~~`) a code block with the info
//!   string's language; a GitSense header inside the block supplies uuid,
//!   parent, component, version, ...; blocks without one get a uuid derived
//!   from the conversation id, its occurrence, turn index and block index.
//!
//! The file is streamed element by element through a buffered reader, so
//! memory stays bounded by the largest conversation, not the file. A file
//! that ends inside an element (a damaged tail) keeps every complete
//! element before it and reports a warning naming the element index. An
//! element that is valid JSON but not a conversation is skipped with a
//! warning; invalid JSON anywhere else is an `import.bad_json` error
//! naming the element, line and byte offset, since there is no safe place
//! to resume parsing from.

use super::fenced::fenced_blocks;
use super::ImportReport;
use crate::error::{Error, Result};
use crate::index::IndexWriter;
use crate::model::{Chat, CodeBlock, Message};
use crate::util::stable_uuid;
use indicatif::ProgressBar;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// Longest conversation name, in characters (before the ellipsis).
pub const NAME_MAX_CHARS: usize = 80;

/// Id of the export's root chat.
const ROOT_CHAT_ID: i64 = 1;

/// How many element indices a skip warning lists.
const LISTED_INDICES: usize = 10;

/// A `Read` that counts the bytes and line breaks it hands out, so the
/// importer knows where in the file the buffered reader above it stands.
struct Counted<R> {
    inner: R,
    bytes: u64,
    newlines: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        self.newlines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(n)
    }
}

type Reader = BufReader<Counted<File>>;

/// Where the reader stands: byte offset and 1-based line.
#[derive(Clone, Copy)]
struct Position {
    byte: u64,
    line: u64,
}

fn position(r: &Reader) -> Position {
    let buffered = r.buffer();
    let c = r.get_ref();
    Position {
        byte: c.bytes - buffered.len() as u64,
        line: 1 + c.newlines - buffered.iter().filter(|&&b| b == b'\n').count() as u64,
    }
}

/// Skips JSON whitespace and returns the next byte without consuming it.
fn peek_non_ws(r: &mut Reader) -> io::Result<Option<u8>> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        match buf
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            Some(i) => {
                let b = buf[i];
                r.consume(i);
                return Ok(Some(b));
            }
            None => {
                let n = buf.len();
                r.consume(n);
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// `[elem, elem, ...]`
    Array,
    /// `elem elem ...` (JSON Lines)
    Lines,
}

/// What reading one element gave.
enum Next {
    Element(Value),
    /// The input ended cleanly (after `]`, or at the end of JSON Lines).
    End,
    /// The input ended inside an element or before the closing `]`.
    Truncated {
        inside_element: bool,
        at: Position,
    },
}

/// Streams the elements of the export one at a time.
struct Elements {
    reader: Reader,
    layout: Layout,
    location: String,
    /// Index of the next element.
    index: usize,
    done: bool,
}

impl Elements {
    fn open(path: &Path) -> Result<(Elements, u64)> {
        let location = path.display().to_string();
        let file = File::open(path).map_err(|e| {
            let code = if e.kind() == io::ErrorKind::NotFound {
                "import.not_found"
            } else {
                "import.unreadable"
            };
            Error::new(code, format!("cannot open chat export: {e}")).with_location(&location)
        })?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut reader = BufReader::with_capacity(
            1 << 18,
            Counted {
                inner: file,
                bytes: 0,
                newlines: 0,
            },
        );
        let io_err = |e: io::Error| Error::io("reading chat export", e).with_location(&location);
        if reader
            .fill_buf()
            .map_err(io_err)?
            .starts_with(b"\xEF\xBB\xBF")
        {
            reader.consume(3);
        }
        let layout = match peek_non_ws(&mut reader).map_err(io_err)? {
            Some(b'[') => {
                reader.consume(1);
                Layout::Array
            }
            Some(b'{') => Layout::Lines,
            Some(other) => {
                return Err(Error::new(
                    "import.bad_format",
                    format!(
                        "a chat export is a JSON array of conversations (or JSON Lines); \
                         the file starts with {:?}",
                        other as char
                    ),
                )
                .with_location(format!("{location}:{}", position(&reader).line)))
            }
            None => {
                return Err(Error::new(
                    "import.bad_format",
                    "the chat export is empty (expected a JSON array of conversations)",
                )
                .with_location(location))
            }
        };
        let mut me = Elements {
            reader,
            layout,
            location,
            index: 0,
            done: false,
        };
        if layout == Layout::Array && me.peek()? == Some(b']') {
            me.reader.consume(1);
            me.done = true;
        }
        Ok((me, size))
    }

    fn peek(&mut self) -> Result<Option<u8>> {
        peek_non_ws(&mut self.reader)
            .map_err(|e| Error::io("reading chat export", e).with_location(&self.location))
    }

    fn element_location(&self, at: Position) -> String {
        format!(
            "{}:{} (element {}, byte {})",
            self.location, at.line, self.index, at.byte
        )
    }

    fn next(&mut self) -> Result<Next> {
        if self.done {
            return Ok(Next::End);
        }
        // The separator before every element but the first.
        if self.index > 0 {
            let at = position(&self.reader);
            match (self.layout, self.peek()?) {
                (Layout::Array, Some(b',')) => self.reader.consume(1),
                (Layout::Array, Some(b']')) => {
                    self.reader.consume(1);
                    self.done = true;
                    return self.check_trailing();
                }
                (Layout::Lines, None) => {
                    self.done = true;
                    return Ok(Next::End);
                }
                (_, None) => {
                    self.done = true;
                    return Ok(Next::Truncated {
                        inside_element: false,
                        at,
                    });
                }
                (Layout::Lines, Some(_)) => {}
                (Layout::Array, Some(b)) => {
                    return Err(Error::new(
                        "import.bad_json",
                        format!(
                            "expected ',' or ']' after element {}, found {:?}",
                            self.index - 1,
                            b as char
                        ),
                    )
                    .with_location(format!("{}:{} (byte {})", self.location, at.line, at.byte)))
                }
            }
        }
        let (at, first) = match self.peek()? {
            None => {
                self.done = true;
                return Ok(Next::Truncated {
                    inside_element: false,
                    at: position(&self.reader),
                });
            }
            Some(b) => (position(&self.reader), b),
        };
        let parsed = if first == b'-' || first.is_ascii_digit() {
            self.number()
        } else {
            let mut de = serde_json::Deserializer::from_reader(&mut self.reader);
            Value::deserialize(&mut de)
        };
        match parsed {
            Ok(v) => {
                self.index += 1;
                Ok(Next::Element(v))
            }
            Err(e) if e.is_eof() => {
                self.done = true;
                Ok(Next::Truncated {
                    inside_element: true,
                    at,
                })
            }
            Err(e) if e.is_io() => {
                Err(Error::io("reading chat export", e).with_location(self.element_location(at)))
            }
            Err(e) => {
                // serde_json counts lines from the element's start.
                let line = at.line + e.line() as u64 - 1;
                let msg = e.to_string();
                let msg = msg
                    .rsplit_once(" at line ")
                    .map_or(msg.as_str(), |(m, _)| m);
                Err(Error::new(
                    "import.bad_json",
                    format!("element {} is not valid JSON: {msg}", self.index),
                )
                .with_location(format!(
                    "{}:{} (element {}, which starts at byte {})",
                    self.location, line, self.index, at.byte
                )))
            }
        }
    }

    /// A number element, read up to its last character. serde_json's
    /// reader would take the byte after a number too (it looks one byte
    /// ahead to see the number end) and drop it with the deserializer:
    /// the `,` or `]` that follows.
    fn number(&mut self) -> serde_json::Result<Value> {
        let mut text = Vec::new();
        loop {
            let buf = self.reader.fill_buf().map_err(serde_json::Error::io)?;
            let n = buf
                .iter()
                .take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .count();
            text.extend_from_slice(&buf[..n]);
            let end = n < buf.len() || buf.is_empty();
            self.reader.consume(n);
            if end {
                break;
            }
        }
        serde_json::from_slice(&text)
    }

    /// After the closing `]` only whitespace may follow.
    fn check_trailing(&mut self) -> Result<Next> {
        let at = position(&self.reader);
        match self.peek()? {
            None => Ok(Next::End),
            Some(b) => Err(Error::new(
                "import.bad_json",
                format!("unexpected {:?} after the closing ']'", b as char),
            )
            .with_location(format!("{}:{} (byte {})", self.location, at.line, at.byte))),
        }
    }

    fn position(&self) -> Position {
        position(&self.reader)
    }
}

/// Maps a ShareGPT `from` (or `role`) to a GitSense role; `None` for a
/// speaker this importer does not know.
pub fn role_of(from: &str) -> Option<&'static str> {
    match from.trim().to_ascii_lowercase().as_str() {
        "human" | "user" | "prompter" => Some("user"),
        "system" => Some("system"),
        "gpt" | "chatgpt" | "assistant" | "bard" | "bing" | "model" | "bot" | "ai" | "claude"
        | "gemini" => Some("assistant"),
        _ => None,
    }
}

/// A chat name from the first user turn: its first non-empty line,
/// whitespace collapsed, cut at a word boundary to [`NAME_MAX_CHARS`].
pub fn conversation_name(text: &str) -> Option<String> {
    let line = text
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let full = words.join(" ");
    if full.chars().count() <= NAME_MAX_CHARS {
        return Some(full);
    }
    let mut out = String::new();
    for w in &words {
        let extra = if out.is_empty() { 0 } else { 1 } + w.chars().count();
        if out.chars().count() + extra > NAME_MAX_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        // One very long word.
        out = full.chars().take(NAME_MAX_CHARS).collect();
    }
    out.push('…');
    Some(out)
}

/// Counters and ids while importing.
#[derive(Default)]
struct State {
    next_chat: i64,
    next_message: i64,
    next_block: i64,
    conversations: u64,
    /// How often each conversation id has been seen (duplicates exist in
    /// real exports); part of derived uuids.
    seen_ids: HashMap<String, u32>,
    skipped_elements: Vec<usize>,
    skipped_element_count: usize,
    skipped_turns: usize,
    unknown_speakers: BTreeSet<String>,
    unknown_speaker_turns: usize,
}

fn text_field<'a>(o: &'a serde_json::Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| o.get(*k).and_then(Value::as_str))
}

/// A chat of the export; `key` derives its uuid. Exports carry no times.
fn export_chat(
    id: i64,
    parent_id: i64,
    chat_type: &str,
    key: &str,
    name: String,
    meta: Value,
) -> Chat {
    Chat {
        id,
        parent_id,
        chat_type: chat_type.into(),
        uuid: Some(stable_uuid(key)),
        name,
        owner: None,
        group_id: None,
        created_at: None,
        modified_at: None,
        meta,
    }
}

/// Writes one conversation; `false` when the element is not one.
fn add_conversation(
    w: &mut IndexWriter,
    st: &mut State,
    element: usize,
    v: &Value,
) -> Result<bool> {
    let Some(obj) = v.as_object() else {
        return Ok(false);
    };
    let Some(turns) = obj
        .get("conversations")
        .or_else(|| obj.get("messages"))
        .and_then(Value::as_array)
    else {
        return Ok(false);
    };
    let conv_id = match obj.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => format!("element-{element}"),
    };
    let occurrence = {
        let n = st.seen_ids.entry(conv_id.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let key = format!("chat-export:{conv_id}:{occurrence}");
    let chat_id = st.next_chat;
    st.next_chat += 1;
    st.conversations += 1;

    let mut first_user = None;
    let mut first_any = None;
    for (turn_index, turn) in turns.iter().enumerate() {
        let Some(t) = turn.as_object() else {
            st.skipped_turns += 1;
            continue;
        };
        let Some(text) = text_field(t, &["value", "content", "text"]) else {
            st.skipped_turns += 1;
            continue;
        };
        let from = text_field(t, &["from", "role"]).unwrap_or("");
        let role = role_of(from).unwrap_or_else(|| {
            st.unknown_speaker_turns += 1;
            st.unknown_speakers.insert(from.to_string());
            "assistant"
        });
        if role == "user" && first_user.is_none() {
            first_user = conversation_name(text);
        }
        if first_any.is_none() {
            first_any = conversation_name(text);
        }
        let message_id = st.next_message;
        st.next_message += 1;
        w.add_message(&Message {
            id: message_id,
            chat_id,
            msg_type: "regular".into(),
            role: role.into(),
            content: text.to_string(),
            title: String::new(),
            keywords: String::new(),
            meta: json!({ "from": from }),
            created_at: None,
            updated_at: None,
        })?;
        for (block_index, b) in fenced_blocks(text).into_iter().enumerate() {
            let id = st.next_block;
            st.next_block += 1;
            w.add_code_block(&CodeBlock::from_text(
                id,
                message_id,
                b.content,
                b.language,
                || stable_uuid(&format!("{key}:{turn_index}:{block_index}")),
            ))?;
        }
    }
    let name = first_user
        .or(first_any)
        .unwrap_or_else(|| format!("Conversation {conv_id}"));
    w.add_chat(&export_chat(
        chat_id,
        ROOT_CHAT_ID,
        "regular",
        &key,
        name,
        json!({
            "source": "chat-export",
            "conversation_id": conv_id,
            "element": element,
        }),
    ))?;
    Ok(true)
}

/// Imports the export at `path` into `w`.
pub fn import(path: &Path, w: &mut IndexWriter, progress: &ProgressBar) -> Result<ImportReport> {
    let (mut elements, size) = Elements::open(path)?;
    progress.set_length(size);
    let mut st = State {
        next_chat: ROOT_CHAT_ID + 1,
        next_message: 1,
        next_block: 1,
        ..State::default()
    };
    let mut report = ImportReport::default();
    let mut truncated = false;
    loop {
        let element = elements.index;
        match elements.next()? {
            Next::Element(v) => {
                if !add_conversation(w, &mut st, element, &v)? {
                    st.skipped_element_count += 1;
                    if st.skipped_elements.len() < LISTED_INDICES {
                        st.skipped_elements.push(element);
                    }
                }
                progress.set_position(elements.position().byte);
            }
            Next::End => break,
            Next::Truncated { inside_element, at } => {
                truncated = true;
                report.warnings.push(if inside_element {
                    format!(
                        "the export is truncated: it ends inside element {element} \
                         (which starts at line {}, byte {}); kept the {element} complete \
                         elements before it",
                        at.line, at.byte
                    )
                } else {
                    format!(
                        "the export ends after element {} without its closing ']'; \
                         kept all {element} elements",
                        element.saturating_sub(1)
                    )
                });
                break;
            }
        }
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "chat export".into());
    w.add_chat(&export_chat(
        ROOT_CHAT_ID,
        0,
        "chat-export",
        &format!("chat-export:{file_name}"),
        file_name.clone(),
        json!({
            "source": "chat-export",
            "format": if elements.layout == Layout::Array { "sharegpt" } else { "sharegpt-jsonl" },
            "file": file_name,
            "conversations": st.conversations,
            "truncated": truncated,
        }),
    ))?;
    if st.skipped_element_count > 0 {
        let listed: Vec<String> = st.skipped_elements.iter().map(|i| i.to_string()).collect();
        let more = if st.skipped_element_count > st.skipped_elements.len() {
            ", ..."
        } else {
            ""
        };
        report.warnings.push(format!(
            "skipped {} elements that are not conversations (an object with a \
             'conversations' array): element {}{more}",
            st.skipped_element_count,
            listed.join(", ")
        ));
    }
    if st.skipped_turns > 0 {
        report.warnings.push(format!(
            "skipped {} turns without a text 'value'",
            st.skipped_turns
        ));
    }
    if st.unknown_speaker_turns > 0 {
        let names: Vec<String> = st
            .unknown_speakers
            .iter()
            .take(LISTED_INDICES)
            .map(|s| format!("'{}'", crate::util::echo(s)))
            .collect();
        report.warnings.push(format!(
            "{} turns from unknown speakers ({}) were given the role assistant",
            st.unknown_speaker_turns,
            names.join(", ")
        ));
    }
    progress.finish_and_clear();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speakers_map_to_roles() {
        assert_eq!(role_of("human"), Some("user"));
        assert_eq!(role_of("GPT"), Some("assistant"));
        assert_eq!(role_of("system"), Some("system"));
        assert_eq!(role_of("narrator"), None);
    }

    #[test]
    fn names_are_the_first_line_shortened_at_a_word() {
        assert_eq!(
            conversation_name("\n  # Hello   world \nmore").as_deref(),
            Some("Hello world")
        );
        let long = "word ".repeat(40);
        let n = conversation_name(&long).unwrap();
        assert!(n.ends_with('…'));
        assert!(n.chars().count() <= NAME_MAX_CHARS + 1);
        assert!(!n.contains("  "));
        assert_eq!(conversation_name("   \n \n"), None);
    }
}
