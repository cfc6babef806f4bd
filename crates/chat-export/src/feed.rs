//! The export pushed in pieces ([`ExportFeeder::feed`]) instead of pulled
//! from a reader: for a caller that gets the file's bytes as they arrive
//! (a browser `ReadableStream`), without blocking and without holding the
//! whole file.
//!
//! In: the export's bytes, in pieces of any size, then
//! [`ExportFeeder::finish`]. Out: each conversation's records as soon as
//! its element is complete, then the export's summary: the same records,
//! warnings and errors an [`ExportReader`] over the whole file gives.
//!
//! How: a scan of the raw bytes (`Boundaries`) tells where each
//! top-level element ends (brackets outside strings, escapes inside);
//! the [`ExportReader`] reads from a queue of the fed bytes, and is only
//! asked for an element once that element and a few bytes after it are
//! in the queue. So it never reaches the end of what was fed before
//! [`ExportFeeder::finish`] says the input is over.

use crate::{ConversationRecords, ExportReader, ExportSummary, Step};
use gitsense_engine::error::Result;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read};
use std::rc::Rc;

/// Bytes past an element's end that must be in the queue before the
/// element is read: the element stream decides a `\uD800`-`\uDBFF` escape
/// once it sees the 12 bytes a surrogate pair would take.
const LOOKAHEAD: u64 = 12;

/// Fed bytes not read yet; `closed` once the input is over.
#[derive(Default)]
struct Queue {
    bytes: VecDeque<u8>,
    closed: bool,
}

/// The element stream's input: the queue, shared with the feeder.
struct QueueReader(Rc<RefCell<Queue>>);

impl Read for QueueReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut q = self.0.borrow_mut();
        if q.bytes.is_empty() {
            if q.closed {
                return Ok(0);
            }
            // The feeder never asks for an element it has not queued: this
            // is a fault of the feeder, not the end of the input.
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "the chat export was read past the bytes fed so far",
            ));
        }
        let n = buf.len().min(q.bytes.len());
        for (slot, b) in buf.iter_mut().zip(q.bytes.drain(..n)) {
            *slot = b;
        }
        Ok(n)
    }
}

/// Where the scan of the raw bytes stands.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Scan {
    /// Before the first byte that is not whitespace (or a byte order mark).
    Start,
    /// Between elements, inside the array (or between JSON Lines).
    Between,
    /// Inside an object or array element, `depth` brackets deep.
    Container { depth: u32 },
    /// Inside a string: an element's (`depth` > 0) or a string element's.
    Text { depth: u32, escaped: bool },
    /// Inside a number or `true`/`false`/`null` element.
    Scalar,
    /// After the array's closing `]`.
    Closed,
}

/// The end offsets of complete top-level elements in the raw bytes.
struct Boundaries {
    scan: Scan,
    /// Bytes scanned so far.
    offset: u64,
    /// End offsets (exclusive) of complete elements not yet read.
    ends: VecDeque<u64>,
    /// The input starts with something that is neither `[` nor `{`: the
    /// reader is started at once, to report it.
    unexpected: bool,
}

impl Boundaries {
    fn new() -> Self {
        Boundaries {
            scan: Scan::Start,
            offset: 0,
            ends: VecDeque::new(),
            unexpected: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
            self.offset += 1;
        }
    }

    fn end_here(&mut self) {
        self.ends.push_back(self.offset + 1);
        self.scan = Scan::Between;
    }

    fn byte(&mut self, b: u8) {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        self.scan = match self.scan {
            Scan::Start if ws => Scan::Start,
            // The byte order mark (EF BB BF) at the very start.
            Scan::Start if self.offset < 3 && [0xEF, 0xBB, 0xBF][self.offset as usize] == b => {
                Scan::Start
            }
            Scan::Start if b == b'[' => Scan::Between,
            Scan::Start if b == b'{' => Scan::Container { depth: 1 },
            Scan::Start => {
                self.unexpected = true;
                Scan::Closed
            }
            Scan::Between if ws || b == b',' => Scan::Between,
            Scan::Between if b == b']' => Scan::Closed,
            Scan::Between if b == b'{' || b == b'[' => Scan::Container { depth: 1 },
            Scan::Between if b == b'"' => Scan::Text {
                depth: 0,
                escaped: false,
            },
            Scan::Between => Scan::Scalar,
            Scan::Container { depth } => match b {
                b'{' | b'[' => Scan::Container { depth: depth + 1 },
                b'}' | b']' if depth == 1 => return self.end_here(),
                b'}' | b']' => Scan::Container { depth: depth - 1 },
                b'"' => Scan::Text {
                    depth,
                    escaped: false,
                },
                _ => Scan::Container { depth },
            },
            Scan::Text {
                depth,
                escaped: true,
            } => Scan::Text {
                depth,
                escaped: false,
            },
            Scan::Text { depth, .. } if b == b'\\' => Scan::Text {
                depth,
                escaped: true,
            },
            Scan::Text { depth: 0, .. } if b == b'"' => return self.end_here(),
            Scan::Text { depth, .. } if b == b'"' => Scan::Container { depth },
            text @ Scan::Text { .. } => text,
            // A number or literal ends before the byte that ends it, which
            // is then scanned as a byte between elements.
            Scan::Scalar if ws || b == b',' || b == b']' => {
                self.ends.push_back(self.offset);
                self.scan = Scan::Between;
                return self.byte(b);
            }
            Scan::Scalar => Scan::Scalar,
            Scan::Closed => Scan::Closed,
        };
    }

    /// Whether the element ending at the front of `ends` can be read: the
    /// bytes after it that the reader may look at are in.
    fn front_ready(&self) -> bool {
        self.ends
            .front()
            .is_some_and(|&end| self.offset >= end + LOOKAHEAD)
    }
}

/// Reads an export pushed in pieces.
///
/// ```
/// use gitsense_chat_export::ExportFeeder;
/// let export = br#"[{"id": "1", "conversations": [{"from": "human", "value": "Hello"},
///                   {"from": "gpt", "value": "Hi there"}]}]"#;
/// let mut feeder = ExportFeeder::new("sharegpt.json");
/// let mut conversations = Vec::new();
/// for piece in export.chunks(10) {
///     conversations.extend(feeder.feed(piece)?);
/// }
/// let (rest, summary) = feeder.finish("sharegpt.json")?;
/// conversations.extend(rest);
/// assert_eq!(conversations.len(), 1);
/// assert_eq!(conversations[0].messages[1].content, "Hi there");
/// assert_eq!(summary.messages, 2);
/// # Ok::<(), gitsense_engine::error::Error>(())
/// ```
pub struct ExportFeeder {
    queue: Rc<RefCell<Queue>>,
    bounds: Boundaries,
    reader: Option<ExportReader<QueueReader>>,
    location: String,
}

impl ExportFeeder {
    /// Starts an export; `location` names it in errors.
    pub fn new(location: impl Into<String>) -> ExportFeeder {
        ExportFeeder {
            queue: Rc::default(),
            bounds: Boundaries::new(),
            reader: None,
            location: location.into(),
        }
    }

    /// Takes the next piece of the export; returns the conversations
    /// completed by it (often none, sometimes several).
    pub fn feed(&mut self, piece: &[u8]) -> Result<Vec<ConversationRecords>> {
        self.queue.borrow_mut().bytes.extend(piece);
        self.bounds.push(piece);
        let mut out = Vec::new();
        if self.reader.is_none() && (self.bounds.front_ready() || self.bounds.unexpected) {
            self.start()?;
        }
        while self.bounds.front_ready() {
            self.bounds.ends.pop_front();
            let reader = self.reader.as_mut().expect("started above");
            let before = reader.elements_read();
            match reader.step()? {
                Step::Conversation(c) => out.push(*c),
                Step::Skipped => {}
                // Only when the element is no element after all (a byte
                // the scan took for one): the end of the input says more.
                Step::End => break,
            }
            debug_assert_eq!(reader.elements_read(), before + 1);
        }
        Ok(out)
    }

    /// Ends the input: the conversations still to come, and the summary
    /// (or the error) [`ExportReader::finish`] gives.
    pub fn finish(mut self, file_name: &str) -> Result<(Vec<ConversationRecords>, ExportSummary)> {
        self.queue.borrow_mut().closed = true;
        if self.reader.is_none() {
            self.start()?;
        }
        let mut reader = self.reader.expect("started above");
        let mut out = Vec::new();
        while let Some(c) = reader.next_conversation()? {
            out.push(c);
        }
        Ok((out, reader.finish(file_name)?))
    }

    fn start(&mut self) -> Result<()> {
        let input = QueueReader(Rc::clone(&self.queue));
        self.reader = Some(ExportReader::new(input, self.location.clone())?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(input: &[u8]) -> Vec<u64> {
        let mut b = Boundaries::new();
        b.push(input);
        b.ends.into_iter().collect()
    }

    #[test]
    fn element_ends_skip_brackets_and_quotes_inside_strings() {
        let input = br#"[{"a": "}]\"{"}, [1, [2]], "x\\", 7, true ]"#;
        let text = std::str::from_utf8(input).unwrap();
        let cut = |end: u64| &text[..end as usize];
        let got: Vec<&str> = ends(input).into_iter().map(cut).collect();
        assert!(got[0].ends_with(r#""}]\"{"}"#), "{got:?}");
        assert!(got[1].ends_with("[1, [2]]"), "{got:?}");
        assert!(got[2].ends_with(r#""x\\""#), "{got:?}");
        assert!(got[3].ends_with("7"), "{got:?}");
        assert!(got[4].ends_with("true"), "{got:?}");
        assert_eq!(got.len(), 5);
        assert_eq!(ends(b"\xEF\xBB\xBF{\"a\": 1}\n{\"b\": [2]}\n").len(), 2);
    }
}
