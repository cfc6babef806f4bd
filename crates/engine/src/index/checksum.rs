//! The index's whole-file checksum: bytes changed after a build (a bit
//! flip on disk, a bad copy) are caught before they are published.
//!
//! In: a finished index file. Out: `index_meta.checksum`, the SHA-256 of
//! every byte of the file, with two kinds of bytes held fixed so the
//! checksum can live inside the file it covers:
//! - the checksum's own text, which is hashed as a placeholder derived
//!   from the corpus revision (no corpus can hold it: the revision is a
//!   hash of the corpus), and
//! - the header fields SQLite rewrites on any write transaction (the file
//!   change counter and the version-valid-for number), hashed as zeros.
//!
//! The writer records the placeholder, builds, then [`seal`]s the file:
//! hashes it and writes the checksum over the placeholder's bytes in place
//! (same length, so no page changes shape). [`check`] undoes that: puts the
//! placeholder back where the recorded checksum stands and hashes again.

use crate::error::{DbContext, Error, Result};
use crate::util::hex;
use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The `index_meta` key of the checksum.
pub const CHECKSUM_KEY: &str = "checksum";

/// Header bytes SQLite itself rewrites (file change counter at 24,
/// version-valid-for number at 92): hashed as zeros.
const VOLATILE_HEADER: [std::ops::Range<usize>; 2] = [24..28, 92..96];

/// What `index_meta.checksum` holds until [`seal`] replaces it: 64 hex
/// digits, like the checksum itself.
pub fn placeholder(revision: &str) -> String {
    hex(&Sha256::digest(
        format!("gitsense-search checksum placeholder\0{revision}").as_bytes(),
    ))
}

/// Feeds `bytes`, found at file offset `start`, to `h`, the volatile
/// header fields as zeros.
fn hash_at(h: &mut Sha256, bytes: &[u8], start: usize) {
    let end = start + bytes.len();
    let mut at = start;
    for r in VOLATILE_HEADER {
        if r.end <= at || r.start >= end {
            continue;
        }
        let (a, b) = (r.start.max(at), r.end.min(end));
        h.update(&bytes[at - start..a - start]);
        h.update(&[0u8; 4][..b - a]);
        at = b;
    }
    h.update(&bytes[at - start..]);
}

/// Byte offsets where `needle` occurs in `hay`.
fn occurrences(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let Some(&first) = needle.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        match hay[i..=hay.len() - needle.len()]
            .iter()
            .position(|&b| b == first)
        {
            Some(off) => {
                let at = i + off;
                if &hay[at..at + needle.len()] == needle {
                    out.push(at);
                    i = at + needle.len();
                } else {
                    i = at + 1;
                }
            }
            None => break,
        }
    }
    out
}

/// Writes the checksum of the file at `path` over its placeholder (see
/// the module doc) and returns it. The file must hold
/// [`placeholder`]`(revision)` in `index_meta`. Reads the file piece by
/// piece: a build's memory does not grow with its index.
pub fn seal(path: &Path, revision: &str) -> Result<String> {
    seal_in_pieces(path, revision, 1 << 20)
}

fn seal_in_pieces(path: &Path, revision: &str, piece: usize) -> Result<String> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let io = |e: std::io::Error| {
        Error::io("sealing the index checksum", e).with_location(path.display().to_string())
    };
    let ph = placeholder(revision);
    let needle = ph.as_bytes();
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; piece];
    // Bytes not hashed yet (the tail that may begin a placeholder the next
    // piece completes), from file offset `offset`; the placeholder search
    // resumes at `carry[resume..]`.
    let (mut carry, mut offset, mut resume) = (Vec::new(), 0usize, 0usize);
    let mut at = Vec::new();
    loop {
        let n = match file.read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => r.map_err(io)?,
        };
        carry.extend_from_slice(&buf[..n]);
        for o in occurrences(&carry[resume..], needle) {
            at.push(offset + resume + o);
        }
        if let Some(&last) = at.last() {
            resume = resume.max((last + needle.len()).saturating_sub(offset));
        }
        let cut = if n == 0 {
            carry.len()
        } else {
            carry.len().saturating_sub(needle.len() - 1)
        };
        hash_at(&mut h, &carry[..cut], offset);
        carry.drain(..cut);
        offset += cut;
        resume = resume.saturating_sub(cut);
        if n == 0 {
            break;
        }
    }
    if at.is_empty() {
        return Err(Error::new(
            "internal.checksum",
            "the new index holds no checksum placeholder",
        )
        .with_location(path.display().to_string()));
    }
    let sum = hex(&h.finalize());
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io)?;
    for off in at {
        f.seek(SeekFrom::Start(off as u64)).map_err(io)?;
        f.write_all(sum.as_bytes()).map_err(io)?;
    }
    f.sync_all().map_err(io)?;
    Ok(sum)
}

/// The recorded revision and checksum of an open index (`None`: an index
/// built before checksums were recorded).
pub fn recorded(conn: &Connection) -> Result<(String, Option<String>)> {
    let get = |key: &str| -> Result<Option<String>> {
        conn.query_row(super::META_VALUE_SQL, [key], |r| r.get(0))
            .optional()
            .ctx("reading index_meta")
    };
    let revision = get("revision")?
        .ok_or_else(|| Error::new("index.corrupt", "index_meta has no 'revision' entry"))?;
    Ok((revision, get(CHECKSUM_KEY)?))
}

/// Checks the bytes of an index against the checksum recorded in them:
/// `index.checksum_mismatch` when any byte changed since the build,
/// `index.no_checksum` when none is recorded.
#[cfg(test)]
pub(crate) fn check_bytes(bytes: &[u8], revision: &str, recorded: Option<&str>) -> Result<()> {
    let mut check = Check::new(revision, recorded)?;
    check.update(bytes);
    check.finish()
}

/// `check_bytes` for a file read piece by piece (a publish of an index
/// larger than the memory it should take): feed every byte in order to
/// [`Check::update`], in pieces of any size, then [`Check::finish`].
pub struct Check {
    sum: String,
    placeholder: String,
    hasher: Sha256,
    /// Bytes not hashed yet: the last `sum.len() - 1` seen, which may
    /// start a checksum the next piece completes.
    carry: Vec<u8>,
    /// Where in `carry` the search for the checksum resumes (past one
    /// already replaced).
    resume: usize,
    /// File offset of `carry[0]`.
    offset: usize,
    found: bool,
}

impl Check {
    /// Starts a check against the `recorded` checksum (`index.no_checksum`
    /// when there is none).
    pub fn new(revision: &str, recorded: Option<&str>) -> Result<Check> {
        let Some(sum) = recorded else {
            return Err(Error::new(
                "index.no_checksum",
                "the index records no checksum (built by an older gitsense-search); rebuild it",
            ));
        };
        Ok(Check {
            sum: sum.to_string(),
            placeholder: placeholder(revision),
            hasher: Sha256::new(),
            carry: Vec::new(),
            resume: 0,
            offset: 0,
            found: false,
        })
    }

    /// The next bytes of the file.
    pub fn update(&mut self, piece: &[u8]) {
        self.carry.extend_from_slice(piece);
        self.replace();
        let keep = self.sum.len().saturating_sub(1);
        let cut = self.carry.len().saturating_sub(keep);
        self.hash(cut);
    }

    /// `index.checksum_mismatch` unless the bytes fed match the checksum.
    pub fn finish(mut self) -> Result<()> {
        self.replace();
        self.hash(self.carry.len());
        let matches =
            self.sum.len() == 64 && self.found && hex(&self.hasher.finalize()) == self.sum;
        if !matches {
            return Err(Error::new(
                "index.checksum_mismatch",
                "the index's bytes do not match the checksum recorded at build time: \
                 the file was altered or damaged after it was built; rebuild it",
            ));
        }
        Ok(())
    }

    /// Puts the placeholder back over every checksum in `carry`.
    fn replace(&mut self) {
        let (sum, ph) = (self.sum.as_bytes(), self.placeholder.as_bytes());
        if sum.len() != ph.len() {
            return; // not a checksum: finish() says so
        }
        let from = self.resume;
        for at in occurrences(&self.carry[from..], sum) {
            let at = from + at;
            self.carry[at..at + ph.len()].copy_from_slice(ph);
            self.found = true;
            // Occurrences never overlap (as in check_bytes): the search
            // goes on after this one.
            self.resume = at + ph.len();
        }
    }

    /// Hashes `carry[..n]` (the volatile header fields as zeros) and
    /// drops it.
    fn hash(&mut self, n: usize) {
        hash_at(&mut self.hasher, &self.carry[..n], self.offset);
        self.carry.drain(..n);
        // A checksum replaced across the cut is not searched again.
        self.resume = self.resume.saturating_sub(n);
        self.offset += n;
    }
}

/// Checks the index file at `path` against its recorded checksum (see
/// `check_bytes`), reading it piece by piece.
pub fn check(path: &Path) -> Result<()> {
    use std::io::Read;
    let conn = super::open_file(path)?;
    let (revision, sum) = recorded(&conn)?;
    drop(conn);
    let at = || path.display().to_string();
    let mut check = Check::new(&revision, sum.as_deref()).map_err(|e| e.with_location(at()))?;
    let mut file =
        std::fs::File::open(path).map_err(|e| Error::io("reading", e).with_location(at()))?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => check.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("reading", e).with_location(at())),
        }
    }
    check.finish().map_err(|e| e.with_location(at()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SHA-256 of `bytes` with the volatile header fields as zeros.
    fn digest(bytes: &[u8]) -> String {
        let mut h = Sha256::new();
        hash_at(&mut h, bytes, 0);
        hex(&h.finalize())
    }

    #[test]
    fn occurrences_are_found_without_overlap() {
        assert_eq!(occurrences(b"abcabcab", b"abc"), vec![0, 3]);
        assert_eq!(occurrences(b"aaaa", b"aa"), vec![0, 2]);
        assert_eq!(occurrences(b"ab", b"abc"), Vec::<usize>::new());
    }

    #[test]
    fn the_volatile_header_fields_do_not_count() {
        let mut a = vec![7u8; 200];
        let b = a.clone();
        a[25] = 1;
        a[93] = 1;
        assert_eq!(digest(&a), digest(&b));
        a[100] = 1;
        assert_ne!(digest(&a), digest(&b));
    }

    /// A made-up "file": the header, then the checksum (of the file with
    /// the placeholder in its place) at `at` and again near the end.
    fn sealed(at: usize) -> (Vec<u8>, String) {
        let revision = "r1";
        let ph = placeholder(revision);
        let mut bytes: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
        for off in [at, 2900] {
            bytes[off..off + 64].copy_from_slice(ph.as_bytes());
        }
        let sum = digest(&bytes);
        for off in [at, 2900] {
            bytes[off..off + 64].copy_from_slice(sum.as_bytes());
        }
        bytes[25] = 9; // a volatile header byte SQLite may rewrite
        (bytes, sum)
    }

    #[test]
    fn a_check_fed_in_pieces_of_any_size_agrees_with_the_whole() {
        for at in [96, 1000, 2800] {
            let (bytes, sum) = sealed(at);
            check_bytes(&bytes, "r1", Some(&sum)).expect("whole");
            let mut damaged = bytes.clone();
            damaged[1500] ^= 1;
            for piece in [1, 7, 63, 64, 65, 100, 4096] {
                let mut c = Check::new("r1", Some(&sum)).unwrap();
                bytes.chunks(piece).for_each(|p| c.update(p));
                c.finish()
                    .unwrap_or_else(|e| panic!("at {at}, pieces of {piece}: {e}"));
                let mut c = Check::new("r1", Some(&sum)).unwrap();
                damaged.chunks(piece).for_each(|p| c.update(p));
                assert_eq!(c.finish().unwrap_err().code, "index.checksum_mismatch");
            }
        }
        assert_eq!(
            Check::new("r1", None).err().unwrap().code,
            "index.no_checksum"
        );
    }

    #[test]
    fn a_file_sealed_in_pieces_of_any_size_gets_the_checksum_of_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.gsx");
        for at in [96, 1000, 2800] {
            let (want_bytes, want) = sealed(at);
            let mut unsealed = want_bytes.clone();
            for off in [at, 2900] {
                unsealed[off..off + 64].copy_from_slice(placeholder("r1").as_bytes());
            }
            for piece in [1, 7, 63, 64, 65, 100, 4096] {
                std::fs::write(&path, &unsealed).unwrap();
                let sum = seal_in_pieces(&path, "r1", piece).unwrap();
                assert_eq!(sum, want, "at {at}, pieces of {piece}");
                assert_eq!(std::fs::read(&path).unwrap(), want_bytes);
            }
        }
        std::fs::write(&path, vec![1u8; 500]).unwrap();
        assert_eq!(seal(&path, "r1").unwrap_err().code, "internal.checksum");
    }
}
