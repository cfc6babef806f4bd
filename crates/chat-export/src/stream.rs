//! Reads a chat export one top-level element at a time.
//!
//! In: the export's bytes from any reader (a file natively, a `File`
//! read in slices in the browser), a JSON array or JSON Lines. Out: one
//! `serde_json::Value` per element ([`Elements::next_element`]), the reader's
//! position (line, byte) for messages, and a count of the characters
//! repaired on the way.
//!
//! Bad characters are repaired before `serde_json` sees them, since it
//! rejects both and one of them would otherwise fail the whole export: an
//! invalid UTF-8 sequence becomes U+FFFD (each maximal invalid subpart, as
//! `String::from_utf8_lossy` does), and a `\uD800`-`\uDFFF` escape that is
//! not half of a high-low pair becomes `\uFFFD` (the same six bytes).
//! Positions stay those of the original file.

use gitsense_engine::error::{Error, Result};
use serde_json::Value;
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};

const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();
const REPLACEMENT_ESCAPE: &[u8] = b"\\ufffd";
/// Longest input a repair decision needs: a surrogate pair's two escapes.
const LOOKAHEAD: usize = 12;
const CHUNK: usize = 1 << 16;

/// Longest text (a JSON string of an element, a message's text above all)
/// kept whole, in bytes; a longer one is cut to it at a character
/// boundary. serde_json reads a string whole before handing it over, so a
/// string costs its length once while it is read; what is kept, and every
/// later step of the import, is bounded by this.
pub const MAX_TEXT_BYTES: usize = 4 << 20;

/// Where the reader stands in the original file: byte offset and 1-based
/// line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub byte: u64,
    pub line: u64,
}

/// Characters replaced by U+FFFD, and where the first one was.
#[derive(Clone, Copy, Debug, Default)]
pub struct Repairs {
    /// Unpaired surrogate escapes (`\ud83d` alone).
    pub lone_surrogates: u64,
    /// Invalid UTF-8 sequences.
    pub invalid_utf8: u64,
    pub first: Option<Position>,
}

impl Repairs {
    pub fn total(&self) -> u64 {
        self.lone_surrogates + self.invalid_utf8
    }
}

/// The file, repaired on the way and counted as handed out.
struct Source<R> {
    inner: R,
    at_eof: bool,
    /// Input not yet repaired: a tail that may begin an escape or a UTF-8
    /// sequence the next read completes.
    carry: Vec<u8>,
    /// Repaired bytes not yet handed out, from `out_pos`.
    out: Vec<u8>,
    out_pos: usize,
    /// Bytes and line breaks handed out so far.
    handed: u64,
    handed_newlines: u64,
    /// Bytes and line breaks put into `out` so far.
    produced: u64,
    produced_newlines: u64,
    /// How much longer the repaired stream is than the file up to
    /// `handed` at the last read (repairs before it are all consumed).
    growth_consumed: u64,
    /// Repairs that lengthened the stream after that point: (offset in
    /// the repaired stream just after the repair, bytes it added).
    growth_pending: VecDeque<(u64, u64)>,
    growth_total: u64,
    repairs: Repairs,
}

impl<R: Read> Source<R> {
    fn new(inner: R) -> Self {
        Source {
            inner,
            at_eof: false,
            carry: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            handed: 0,
            handed_newlines: 0,
            produced: 0,
            produced_newlines: 0,
            growth_consumed: 0,
            growth_pending: VecDeque::new(),
            growth_total: 0,
            repairs: Repairs::default(),
        }
    }

    /// The file offset of offset `at` of the repaired stream.
    fn original_offset(&self, at: u64) -> u64 {
        let pending: u64 = self
            .growth_pending
            .iter()
            .take_while(|(end, _)| *end <= at)
            .map(|(_, g)| g)
            .sum();
        at - self.growth_consumed - pending
    }

    fn emit(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        self.produced += bytes.len() as u64;
        self.produced_newlines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    }

    fn note_repair(&mut self, lone_surrogate: bool) {
        if self.repairs.first.is_none() {
            self.repairs.first = Some(Position {
                byte: self.produced - self.growth_total,
                line: 1 + self.produced_newlines,
            });
        }
        if lone_surrogate {
            self.repairs.lone_surrogates += 1;
        } else {
            self.repairs.invalid_utf8 += 1;
        }
    }

    fn replace_invalid(&mut self, len: usize) {
        self.note_repair(false);
        self.emit(REPLACEMENT);
        let added = REPLACEMENT.len() as i64 - len as i64;
        // A 1- or 2-byte subpart grows the stream; 3 bytes keep its length.
        if added > 0 {
            self.growth_total += added as u64;
            self.growth_pending.push_back((self.produced, added as u64));
        }
    }

    /// Repairs what of `carry` can be decided now; keeps the rest.
    fn repair_carry(&mut self) {
        let input = std::mem::take(&mut self.carry);
        let n = input.len();
        let mut i = 0;
        while i < n {
            if input[i] == b'\\' {
                match self.escape(&input[i..]) {
                    Some(used) => i += used,
                    None => break,
                }
                continue;
            }
            let end = input[i..]
                .iter()
                .position(|&b| b == b'\\')
                .map_or(n, |p| i + p);
            match std::str::from_utf8(&input[i..end]) {
                Ok(_) => {
                    self.emit(&input[i..end]);
                    i = end;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    self.emit(&input[i..i + valid]);
                    i += valid;
                    match e.error_len() {
                        Some(len) => {
                            self.replace_invalid(len);
                            i += len;
                        }
                        // An incomplete sequence that more input may finish.
                        None if end == n && !self.at_eof => break,
                        None => {
                            self.replace_invalid(end - i);
                            i = end;
                        }
                    }
                }
            }
        }
        self.carry = input[i..].to_vec();
    }

    /// Handles the escape at the start of `input`: how many bytes it used,
    /// or `None` when more input is needed to decide.
    fn escape(&mut self, input: &[u8]) -> Option<usize> {
        let at_eof = self.at_eof;
        let complete = |len: usize| input.len() >= len || at_eof;
        if input.len() < 2 || input[1] != b'u' {
            if !complete(2) {
                return None;
            }
            let used = input.len().min(2);
            self.emit(&input[..used]);
            return Some(used);
        }
        let Some(unit) = hex_unit(input.get(2..6)) else {
            if !complete(6) {
                return None;
            }
            // Not an escape serde_json accepts either: its error says so.
            self.emit(&input[..2]);
            return Some(2);
        };
        match unit {
            0xD800..=0xDBFF => {
                if !complete(LOOKAHEAD) {
                    return None;
                }
                let pair = input.get(6..8) == Some(b"\\u")
                    && matches!(hex_unit(input.get(8..12)), Some(0xDC00..=0xDFFF));
                if pair {
                    self.emit(&input[..12]);
                    return Some(12);
                }
                self.lone_surrogate();
            }
            0xDC00..=0xDFFF => self.lone_surrogate(),
            _ => self.emit(&input[..6]),
        }
        Some(6)
    }

    fn lone_surrogate(&mut self) {
        self.note_repair(true);
        self.emit(REPLACEMENT_ESCAPE);
    }

    /// Reads and repairs until there is output or the input ends.
    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.out_pos = 0;
        while self.out.is_empty() && !(self.at_eof && self.carry.is_empty()) {
            let old = self.carry.len();
            self.carry.resize(old + CHUNK, 0);
            let got = loop {
                match self.inner.read(&mut self.carry[old..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => break r,
                }
            };
            let got = got.inspect_err(|_| self.carry.truncate(old))?;
            self.carry.truncate(old + got);
            self.at_eof = got == 0;
            self.repair_carry();
        }
        Ok(())
    }
}

fn hex_unit(digits: Option<&[u8]>) -> Option<u32> {
    let s = std::str::from_utf8(digits?).ok()?;
    if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // The buffered reader above asks again only once it has consumed
        // all it was given: repairs up to here are behind it.
        while let Some(&(end, g)) = self.growth_pending.front() {
            if end > self.handed {
                break;
            }
            self.growth_consumed += g;
            self.growth_pending.pop_front();
        }
        if self.out_pos == self.out.len() {
            self.refill()?;
        }
        let n = buf.len().min(self.out.len() - self.out_pos);
        buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        self.handed += n as u64;
        self.handed_newlines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(n)
    }
}

type Reader<R> = BufReader<Source<R>>;

fn position<R: Read>(r: &Reader<R>) -> Position {
    let buffered = r.buffer();
    let s = r.get_ref();
    Position {
        byte: s.original_offset(s.handed - buffered.len() as u64),
        line: 1 + s.handed_newlines - buffered.iter().filter(|&&b| b == b'\n').count() as u64,
    }
}

/// Skips JSON whitespace and returns the next byte without consuming it.
fn peek_non_ws<R: Read>(r: &mut Reader<R>) -> io::Result<Option<u8>> {
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
pub enum Layout {
    /// `[elem, elem, ...]`
    Array,
    /// `elem elem ...` (JSON Lines)
    Lines,
}

/// What reading one element gave.
pub enum Next {
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
pub struct Elements<R> {
    reader: Reader<R>,
    pub layout: Layout,
    location: String,
    /// Index of the next element.
    pub index: usize,
    done: bool,
    /// Texts cut to [`MAX_TEXT_BYTES`], and the longest one's length.
    cut: Cut,
}

/// Texts longer than [`MAX_TEXT_BYTES`] that were cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    pub texts: u64,
    /// The longest cut text's length, in bytes.
    pub longest: u64,
}

impl<R: Read> Elements<R> {
    /// Starts reading the export `input`; `location` names it in errors.
    pub fn new(input: R, location: impl Into<String>) -> Result<Elements<R>> {
        let location = location.into();
        let mut reader = BufReader::with_capacity(1 << 18, Source::new(input));
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
            cut: Cut::default(),
        };
        if layout == Layout::Array && me.peek()? == Some(b']') {
            me.reader.consume(1);
            me.done = true;
        }
        Ok(me)
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

    /// The separator before every element but the first; `Some` when the
    /// input ends there.
    fn separator(&mut self) -> Result<Option<Next>> {
        let at = position(&self.reader);
        match (self.layout, self.peek()?) {
            (Layout::Array, Some(b',')) => self.reader.consume(1),
            (Layout::Array, Some(b']')) => {
                self.reader.consume(1);
                self.done = true;
                return self.check_trailing().map(Some);
            }
            (Layout::Lines, None) => {
                self.done = true;
                return Ok(Some(Next::End));
            }
            (_, None) => {
                self.done = true;
                return Ok(Some(Next::Truncated {
                    inside_element: false,
                    at,
                }));
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
        Ok(None)
    }

    pub fn next_element(&mut self) -> Result<Next> {
        if self.done {
            return Ok(Next::End);
        }
        if self.index > 0 {
            if let Some(end) = self.separator()? {
                return Ok(end);
            }
        }
        if self.peek()?.is_none() {
            self.done = true;
            return Ok(Next::Truncated {
                inside_element: false,
                at: position(&self.reader),
            });
        }
        let at = position(&self.reader);
        let first = self.peek()?;
        let parsed = if matches!(first, Some(b) if b == b'-' || b.is_ascii_digit()) {
            self.number()
        } else {
            let mut de = serde_json::Deserializer::from_reader(&mut self.reader);
            serde::de::DeserializeSeed::deserialize(Capped(&mut self.cut), &mut de)
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

    pub fn position(&self) -> Position {
        position(&self.reader)
    }

    /// The characters repaired so far.
    pub fn repairs(&self) -> Repairs {
        self.reader.get_ref().repairs
    }

    /// Texts cut so far.
    pub fn cut(&self) -> Cut {
        self.cut
    }
}

/// A JSON value as `serde_json::Value` reads it, but with every string
/// longer than [`MAX_TEXT_BYTES`] cut to it (counted in the `Cut`): a
/// 450 MB message is copied once while it is read, not kept and copied
/// again by every step after.
struct Capped<'a>(&'a mut Cut);

impl<'de> serde::de::DeserializeSeed<'de> for Capped<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Capped<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Value, E> {
        if v.len() <= MAX_TEXT_BYTES {
            return Ok(Value::String(v.to_owned()));
        }
        self.0.texts += 1;
        self.0.longest = self.0.longest.max(v.len() as u64);
        let mut end = MAX_TEXT_BYTES;
        while !v.is_char_boundary(end) {
            end -= 1;
        }
        Ok(Value::String(v[..end].to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> std::result::Result<Value, E> {
        if v.len() <= MAX_TEXT_BYTES {
            return Ok(Value::String(v));
        }
        self.visit_str(&v)
    }
    fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        serde::de::DeserializeSeed::deserialize(self, d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Capped(&mut *self.0))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(Capped(&mut *self.0))?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repaired(input: &[u8], chunk: usize) -> (Vec<u8>, Repairs) {
        // Feeds `chunk` bytes per read, so that every split point of an
        // escape or a UTF-8 sequence is crossed.
        struct Dribble<'a>(&'a [u8], usize);
        impl Read for Dribble<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut s = Source::new(Dribble(input, chunk));
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        (out, s.repairs)
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_escapes_and_pairs_stay() {
        let input =
            br#"["\ud83d\ude00", "a\ud83d", "\ude00b", "\ud83d\u0041", "\\ud83d", "\u00e9"]"#;
        let want =
            br#"["\ud83d\ude00", "a\ufffd", "\ufffdb", "\ufffd\u0041", "\\ud83d", "\u00e9"]"#;
        for chunk in [1, 2, 5, 7, 64] {
            let (out, r) = repaired(input, chunk);
            assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(want));
            assert_eq!((r.lone_surrogates, r.invalid_utf8), (3, 0));
            assert_eq!(r.first.unwrap().byte, 19);
        }
        let v: Vec<String> = serde_json::from_slice(want).unwrap();
        assert_eq!(v[0], "😀");
        assert_eq!(v[4], "\\ud83d");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters_and_valid_text_stays() {
        let input = b"[\"caf\xe9\",\n \"\xf0\x9f\x98\x80 ok\", \"cut \xe2\x82\"]";
        for chunk in [1, 3, 64] {
            let (out, r) = repaired(input, chunk);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "[\"caf\u{FFFD}\",\n \"😀 ok\", \"cut \u{FFFD}\"]"
            );
            assert_eq!((r.lone_surrogates, r.invalid_utf8), (0, 2));
            assert_eq!(r.first.unwrap(), Position { byte: 5, line: 1 });
        }
        // A sequence cut by the end of the file.
        let (out, r) = repaired(b"\"ab\xf0\x9f", 1);
        assert_eq!(String::from_utf8(out).unwrap(), "\"ab\u{FFFD}");
        assert_eq!(r.invalid_utf8, 1);
    }

    #[test]
    fn positions_after_a_repair_are_those_of_the_file() {
        let input: &[u8] = b"[\"\xff\xff\",\n \"ok\", }]";
        let mut e = Elements::new(input, "e.json").unwrap();
        assert!(matches!(e.next_element().unwrap(), Next::Element(_)));
        assert!(matches!(e.next_element().unwrap(), Next::Element(_)));
        let err = match e.next_element() {
            Err(err) => err,
            Ok(_) => panic!("'}}' is not an element"),
        };
        // `}` is byte 14 of the file (the repaired text is 4 bytes longer).
        assert!(
            err.location
                .as_deref()
                .unwrap()
                .ends_with(":2 (element 2, which starts at byte 14)"),
            "{err}"
        );
        assert_eq!(e.repairs().invalid_utf8, 2);
    }
}
