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

/// SHA-256 of `bytes` with the volatile header fields as zeros.
fn digest(bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    let mut at = 0;
    for r in VOLATILE_HEADER {
        if bytes.len() < r.end {
            break;
        }
        h.update(&bytes[at..r.start]);
        h.update([0u8; 4]);
        at = r.end;
    }
    h.update(&bytes[at..]);
    hex(&h.finalize())
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
/// [`placeholder`]`(revision)` in `index_meta`.
pub fn seal(path: &Path, revision: &str) -> Result<String> {
    use std::io::{Seek, SeekFrom, Write};
    let io = |e: std::io::Error| {
        Error::io("sealing the index checksum", e).with_location(path.display().to_string())
    };
    let bytes = std::fs::read(path).map_err(io)?;
    let ph = placeholder(revision);
    let at = occurrences(&bytes, ph.as_bytes());
    if at.is_empty() {
        return Err(Error::new(
            "internal.checksum",
            "the new index holds no checksum placeholder",
        )
        .with_location(path.display().to_string()));
    }
    let sum = digest(&bytes);
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
        conn.query_row("SELECT value FROM index_meta WHERE key = ?1", [key], |r| {
            r.get(0)
        })
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
pub fn check_bytes(bytes: &[u8], revision: &str, recorded: Option<&str>) -> Result<()> {
    let Some(sum) = recorded else {
        return Err(Error::new(
            "index.no_checksum",
            "the index records no checksum (built by an older gitsense-search); rebuild it",
        ));
    };
    let mismatch = || {
        Error::new(
            "index.checksum_mismatch",
            "the index's bytes do not match the checksum recorded at build time: \
             the file was altered or damaged after it was built; rebuild it",
        )
    };
    let at = occurrences(bytes, sum.as_bytes());
    if sum.len() != 64 || at.is_empty() {
        return Err(mismatch());
    }
    let ph = placeholder(revision);
    let mut restored = bytes.to_vec();
    for off in at {
        restored[off..off + ph.len()].copy_from_slice(ph.as_bytes());
    }
    if digest(&restored) != sum {
        return Err(mismatch());
    }
    Ok(())
}

/// Checks the index file at `path` against its recorded checksum (see
/// [`check_bytes`]).
pub fn check(path: &Path) -> Result<()> {
    let conn = super::open_file(path)?;
    let (revision, sum) = recorded(&conn)?;
    drop(conn);
    let bytes = std::fs::read(path)
        .map_err(|e| Error::io("reading", e).with_location(path.display().to_string()))?;
    check_bytes(&bytes, &revision, sum.as_deref())
        .map_err(|e| e.with_location(path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
