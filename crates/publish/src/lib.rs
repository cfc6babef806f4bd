//! Publishing an index for a static site: the manifest and the files it
//! names.
//!
//! `gitsense-search publish INDEX --out-dir DIR` writes
//! - `index-<hash>.pages`: every page of the index compressed on its own
//!   (raw DEFLATE, or as is where that is not smaller), one after another.
//!   It is the one copy of the index on the host: a browser reading lazily
//!   asks ranges of it (static hosts do not compress range answers, so the
//!   pages come compressed), and one downloading the whole index fetches it
//!   and inflates it page by page (compression `pages`); 40 % of the raw
//!   index's bytes for the Python docs,
//! - `index-<hash>.hot.gz`: the index's hot pages (those nearly every query
//!   reads, see [`hot`]) concatenated, then the packed file's
//!   page lengths ([`encode_packed_lengths`]), gzipped, so a browser
//!   reading lazily gets them in one request while its module compiles,
//! - `manifest.json`: a [`Manifest`] naming them, with the size and SHA-256
//!   of the uncompressed index, its format version, corpus revision and
//!   page geometry,
//! - `manifest.hot.gz` ([`FIRST_VISIT_FILE`]): the hot file again under a
//!   name that never changes, behind the manifest's own text
//!   ([`first_visit_bytes`]), so a browser's first visit can ask for the
//!   hot pages at once, alongside the manifest, instead of one round trip
//!   after it; it uses them only if that text is the manifest's.
//!
//! An index the packed file cannot hold (pages over 64 KiB, or no hot
//! pages to carry the lengths) is published as before the packed file
//! existed: `index-<hash>.gsx.gz` to download (compression `gzip`) and the
//! raw `index-<hash>.gsx` for range reads.
//!
//! File names carry the first 16 hex digits of the index's SHA-256, so a
//! site can cache them forever and a new build never overwrites what a
//! visitor is still downloading; only `manifest.json` changes in place and
//! it is written last. The browser side ([`Manifest::check`]) refuses a
//! manifest it cannot use before downloading anything.

#[cfg(feature = "write")]
pub mod hot;
// Wire format as well as writer: the browser module decodes the hot file
// with it.
pub mod pagecodec;
#[cfg(feature = "write")]
pub mod site;

use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::{IndexInfo, FORMAT_VERSION};
use serde::{Deserialize, Serialize};

/// Version of the manifest layout itself.
pub const MANIFEST_VERSION: u32 = 1;

/// `compression` of a manifest whose `file` is its `packed_file`: the
/// index is downloaded whole by inflating each page of it, with the page
/// lengths the hot file ends with ([`packed_offsets_in_hot`]).
pub const COMPRESSION_PAGES: &str = "pages";

/// The file name a site publishes the manifest under.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The hot file under a name that never changes, next to [`MANIFEST_FILE`]
/// (its name with `.json` replaced by `.hot.gz`): see [`first_visit_bytes`].
pub const FIRST_VISIT_FILE: &str = "manifest.hot.gz";

/// What starts the uncompressed [`FIRST_VISIT_FILE`].
pub const FIRST_VISIT_MAGIC: &[u8; 8] = b"GSXHOT1\n";

/// The uncompressed bytes of [`FIRST_VISIT_FILE`]: [`FIRST_VISIT_MAGIC`],
/// the manifest's length (4 bytes, little-endian), the manifest exactly as
/// `manifest.json` holds it, then the hot file's uncompressed bytes. A
/// client that fetched it alongside the manifest uses the hot pages only
/// when the manifest in it is byte for byte the one it got: an index
/// published in between (or a hand-edited manifest) is never mixed with
/// these pages.
pub fn first_visit_bytes(manifest_json: &[u8], hot_bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + manifest_json.len() + hot_bytes.len());
    out.extend_from_slice(FIRST_VISIT_MAGIC);
    out.extend_from_slice(&(manifest_json.len() as u32).to_le_bytes());
    out.extend_from_slice(manifest_json);
    out.extend_from_slice(hot_bytes);
    out
}

/// What a published index is, for clients deciding whether and how to fetch it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Layout of this manifest ([`MANIFEST_VERSION`]).
    pub manifest_version: u32,
    /// Index file format version ([`FORMAT_VERSION`]).
    pub format_version: u32,
    /// Corpus revision recorded in the index (`index_meta.revision`).
    pub revision: String,
    /// When the index was built (ISO 8601).
    pub built_at: String,
    /// The file to download, relative to the manifest's URL.
    pub file: String,
    /// How `file` is compressed: `gzip`, `none`, or [`COMPRESSION_PAGES`]
    /// (`file` is `packed_file`).
    pub compression: String,
    /// Bytes of `file` as stored (compressed).
    pub compressed_size: u64,
    /// The uncompressed index, relative to the manifest's URL, for clients
    /// that read pages with HTTP Range requests instead of downloading.
    /// Published only when there is no `packed_file` (which such clients
    /// read instead): the host keeps one copy to read by range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_file: Option<String>,
    /// Bytes of the uncompressed index.
    pub size: u64,
    /// SHA-256 (lowercase hex) of the uncompressed index.
    pub sha256: String,
    /// SQLite page size of the index.
    pub page_size: u64,
    /// Pages in the index (`size / page_size`).
    pub page_count: u64,
    pub counts: ManifestCounts,
    /// The pages (1-based, ascending) nearly every query reads; empty when
    /// not published.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hot_pages: Vec<u32>,
    /// Those pages' bytes in `hot_pages` order, then the packed file's
    /// page lengths, gzipped, relative to the manifest's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_file: Option<String>,
    /// How `hot_file` holds the pages: 1, each page as it is; 2, each
    /// encoded by [`crate::pagecodec::encode_hot`] (interior table
    /// pages as deltas). A client that knows neither leaves the hot file
    /// out, and with it the packed file's page lengths: it cannot read
    /// the packed file, and downloads `file` instead. Format 2's pages never
    /// take format 1's length, so a client of format 1 leaves it out too.
    #[serde(
        default = "hot_format_plain",
        skip_serializing_if = "is_hot_format_plain"
    )]
    pub hot_format: u32,
    /// Every page compressed on its own ([`pack_page`]), relative to the
    /// manifest's URL; each page's length in it follows the hot pages in
    /// `hot_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed_file: Option<String>,
    /// Bytes of `packed_file`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub packed_size: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `hotFormat` of the pages as they are (the default: manifests before
/// format 2 have no `hotFormat`).
pub const HOT_FORMAT_PLAIN: u32 = 1;
/// `hotFormat` of pages encoded by [`crate::pagecodec::encode_hot`].
pub const HOT_FORMAT_DELTA: u32 = 2;

fn hot_format_plain() -> u32 {
    HOT_FORMAT_PLAIN
}

fn is_hot_format_plain(f: &u32) -> bool {
    *f == HOT_FORMAT_PLAIN
}

/// The page lengths of a packed file as they follow the hot pages in the
/// hot file: each length less one as a 16-bit number, the low bytes of
/// all pages first, then the high bytes (which gzip better than
/// interleaved: the high bytes are mostly alike).
pub fn encode_packed_lengths(lengths: &[u32]) -> Vec<u8> {
    let mut out = vec![0u8; lengths.len() * 2];
    for (i, &l) in lengths.iter().enumerate() {
        let v = l.saturating_sub(1) as u16;
        out[i] = v as u8;
        out[lengths.len() + i] = (v >> 8) as u8;
    }
    out
}

/// The inverse of [`encode_packed_lengths`] for `count` pages; `None`
/// when `bytes` is not `2 × count` long.
pub fn decode_packed_lengths(bytes: &[u8], count: usize) -> Option<Vec<u32>> {
    (bytes.len() == count * 2).then(|| {
        (0..count)
            .map(|i| (u32::from(bytes[i]) | u32::from(bytes[count + i]) << 8) + 1)
            .collect()
    })
}

/// Byte offsets of each page in a packed file (one more than pages: the
/// last is the file's size), if `lengths` fits pages of `page_size` and
/// adds up to `packed_size`.
pub fn packed_offsets(lengths: &[u32], page_size: u64, packed_size: u64) -> Option<Vec<u64>> {
    let mut offsets = Vec::with_capacity(lengths.len() + 1);
    let mut at = 0u64;
    offsets.push(0);
    for &l in lengths {
        if l == 0 || u64::from(l) > page_size {
            return None;
        }
        at += u64::from(l);
        offsets.push(at);
    }
    (at == packed_size).then_some(offsets)
}

/// What follows the hot pages in a hot file (gunzipped) of `manifest`'s
/// `hotFormat`; `None` when the file is shorter than its pages say or
/// its format is one this build does not know.
pub fn hot_file_tail<'a>(manifest: &Manifest, hot_file: &'a [u8]) -> Option<&'a [u8]> {
    let pages = manifest.hot_pages.len();
    match manifest.hot_format {
        HOT_FORMAT_PLAIN => hot_file.get(pages * manifest.page_size as usize..),
        HOT_FORMAT_DELTA => pagecodec::hot_tail(hot_file, pages),
        _ => None,
    }
}

/// The packed file's page offsets ([`packed_offsets`]) from the page
/// lengths that end the hot file (gunzipped) `hot_file`:
/// `download.corrupt` when they are not there or do not add up to the
/// manifest's `packedSize`, `index.version_mismatch` for a hot file of a
/// format this build does not know.
pub fn packed_offsets_in_hot(manifest: &Manifest, hot_file: &[u8]) -> Result<Vec<u64>> {
    if !matches!(manifest.hot_format, HOT_FORMAT_PLAIN | HOT_FORMAT_DELTA) {
        return Err(Error::new(
            "index.version_mismatch",
            format!(
                "the hot file's format (hotFormat {}) is not one this module reads, and the \
                 packed file's page lengths are in it; republish the index with a matching \
                 gitsense-search",
                manifest.hot_format
            ),
        ));
    }
    let corrupt = |why: &str| {
        Error::new(
            "download.corrupt",
            format!("the hot file cannot give the packed file's page lengths: {why}"),
        )
    };
    let tail =
        hot_file_tail(manifest, hot_file).ok_or_else(|| corrupt("its pages are cut short"))?;
    let lengths = decode_packed_lengths(tail, manifest.page_count as usize)
        .ok_or_else(|| corrupt("it does not end with one length a page"))?;
    packed_offsets(&lengths, manifest.page_size, manifest.packed_size)
        .ok_or_else(|| corrupt("the lengths do not add up to the packed file's size"))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestCounts {
    pub chats: u64,
    pub messages: u64,
    pub code_blocks: u64,
}

impl Manifest {
    /// The manifest of an index published as gzip `file` (of
    /// `compressed_size` bytes), the index having `sha256` and `info`.
    pub fn gzip_of(
        info: &IndexInfo,
        sha256: String,
        file: String,
        compressed_size: u64,
        raw_file: Option<String>,
    ) -> Manifest {
        Manifest {
            manifest_version: MANIFEST_VERSION,
            format_version: info.format_version,
            revision: info.revision.clone(),
            built_at: info.built_at.clone(),
            file,
            compression: "gzip".into(),
            compressed_size,
            raw_file,
            size: info.size_bytes(),
            sha256,
            page_size: info.page_size,
            page_count: info.page_count,
            counts: ManifestCounts {
                chats: info.chats,
                messages: info.messages,
                code_blocks: info.code_blocks,
            },
            hot_pages: Vec::new(),
            hot_file: None,
            hot_format: HOT_FORMAT_PLAIN,
            packed_file: None,
            packed_size: 0,
        }
    }

    /// Parses manifest JSON, mapping failures to `manifest.invalid`.
    pub fn parse(json: &str) -> Result<Manifest> {
        let m: Manifest = serde_json::from_str(json).map_err(|e| {
            Error::new(
                "manifest.invalid",
                format!("the manifest is not valid: {e}"),
            )
        })?;
        m.check()?;
        Ok(m)
    }

    /// Checks that this build can use the index the manifest describes.
    pub fn check(&self) -> Result<()> {
        if self.manifest_version != MANIFEST_VERSION {
            return Err(Error::new(
                "manifest.unsupported",
                format!(
                    "manifest version {} is not supported (expects {MANIFEST_VERSION})",
                    self.manifest_version
                ),
            ));
        }
        if self.format_version != FORMAT_VERSION {
            return Err(Error::new(
                "index.version_mismatch",
                format!(
                    "the published index has format version {} but this module reads version {FORMAT_VERSION}; \
                     republish the index with a matching gitsense-search",
                    self.format_version
                ),
            ));
        }
        match self.compression.as_str() {
            "gzip" | "none" => {}
            COMPRESSION_PAGES => {
                if self.packed_file.as_deref() != Some(self.file.as_str())
                    || self.packed_size != self.compressed_size
                {
                    return Err(Error::new(
                        "manifest.invalid",
                        "compression \"pages\" downloads the packedFile: file must name it and compressedSize be its packedSize",
                    ));
                }
            }
            other => {
                return Err(Error::new(
                    "manifest.invalid",
                    format!("unknown compression '{other}'"),
                ))
            }
        }
        let hex = self.sha256.len() == 64
            && self
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Err(Error::new(
                "manifest.invalid",
                "sha256 must be 64 lowercase hex digits",
            ));
        }
        if self.page_size == 0 || self.size != self.page_size * self.page_count || self.size == 0 {
            return Err(Error::new(
                "manifest.invalid",
                format!(
                    "size {} is not page_size {} × page_count {}",
                    self.size, self.page_size, self.page_count
                ),
            ));
        }
        if self.file.is_empty() {
            return Err(Error::new("manifest.invalid", "the manifest names no file"));
        }
        let ascending = self.hot_pages.windows(2).all(|w| w[0] < w[1]);
        let in_file = self
            .hot_pages
            .iter()
            .all(|&p| p >= 1 && u64::from(p) <= self.page_count);
        if !ascending || !in_file || (!self.hot_pages.is_empty() && self.hot_file.is_none()) {
            return Err(Error::new(
                "manifest.invalid",
                "hotPages must be ascending page numbers of the index, with a hotFile",
            ));
        }
        if self.packed_file.is_some()
            && (self.hot_file.is_none() || self.packed_size == 0 || self.page_size > 65536)
        {
            return Err(Error::new(
                "manifest.invalid",
                "a packedFile needs a hotFile (which holds its page lengths), a packedSize, and pages of at most 64 KiB",
            ));
        }
        Ok(())
    }

    /// Checks that a browser can hold the index: refused with
    /// `download.too_large` when it declares more than
    /// [`MAX_BROWSER_INDEX_BYTES`], before any of it is requested.
    ///
    /// ```
    /// use gitsense_publish::Manifest;
    /// # let dir = tempfile::tempdir()?;
    /// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
    /// # let m = gitsense_publish::publish(&path, &dir.path().join("site"))?;
    /// assert!(m.check_browser_size().is_ok());
    /// let huge = Manifest { size: 1_000_000_000_000_000, ..m };
    /// assert_eq!(huge.check_browser_size().unwrap_err().code, "download.too_large");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_browser_size(&self) -> Result<()> {
        let declared = self.size.max(self.compressed_size);
        if declared > MAX_BROWSER_INDEX_BYTES {
            return Err(Error::new(
                "download.too_large",
                format!(
                    "the manifest declares an index of {declared} bytes; the browser module reads \
                     indexes of at most {MAX_BROWSER_INDEX_BYTES} bytes"
                ),
            ));
        }
        Ok(())
    }
}

/// The largest index (and compressed download) the browser module opens:
/// WebAssembly's 32-bit memory, which holds a downloaded index whole (a
/// larger one fails somewhere in the download, the copy or SQLite without
/// saying why). `src/js/lazy.js` (`MAX_INDEX_BYTES`) has the same number,
/// so that it asks for no page of a larger one.
pub const MAX_BROWSER_INDEX_BYTES: u64 = 4 << 30;

#[cfg(feature = "write")]
mod write {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use gitsense_engine::index;
    use gitsense_engine::util::hex;
    use sha2::{Digest, Sha256};
    use std::io::Write;
    use std::path::Path;

    fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
        Error::io(what, e).with_location(path.display().to_string())
    }

    /// Writes `bytes` to `path` through a temporary file and a rename, so a
    /// reader never sees a half-written file; the temporary file is removed
    /// when writing fails (a full disk) or the process is interrupted.
    fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
        let mut tmp = index::tempfiles::TempFile::new(
            path.with_extension(format!("{}.tmp", std::process::id())),
        );
        std::fs::write(tmp.path(), bytes).map_err(|e| io_err("writing", tmp.path(), e))?;
        std::fs::rename(tmp.path(), path).map_err(|e| io_err("renaming into place", path, e))?;
        tmp.keep();
        Ok(())
    }

    /// gzip as small as zopfli makes it (a standard stream: any gzip
    /// reader inflates it), for the hot files, which every first visit
    /// fetches before its first answer: a few per cent smaller than
    /// flate2's best, for seconds of CPU at publish time. Deterministic,
    /// as flate2's is.
    fn gzip_smallest(bytes: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(bytes.len() / 3);
        zopfli::compress(
            zopfli::Options::default(),
            zopfli::Format::Gzip,
            bytes,
            &mut out,
        )
        .map_err(|e| Error::io("compressing the hot pages", e))?;
        Ok(out)
    }

    /// One page as the packed file holds it: raw DEFLATE at the best
    /// level, or the page as is when that is not smaller (so a length
    /// equal to the page size means stored).
    pub fn pack_page(page: &[u8]) -> Result<Vec<u8>> {
        use flate2::write::DeflateEncoder;
        let mut d = DeflateEncoder::new(Vec::with_capacity(page.len()), Compression::best());
        d.write_all(page)
            .map_err(|e| Error::io("compressing a page", e))?;
        let packed = d.finish().map_err(|e| Error::io("compressing a page", e))?;
        Ok(if packed.len() < page.len() {
            packed
        } else {
            page.to_vec()
        })
    }

    /// Pages read and written at a time: the index is never held whole
    /// (a publish of a 300 MB index stays within a few MB).
    const CHUNK_PAGES: usize = 256;

    /// A file being written beside its final name, moved into place by
    /// [`Output::commit`]; removed if dropped before (a failed publish).
    struct Output {
        tmp: index::tempfiles::TempFile,
        file: std::io::BufWriter<std::fs::File>,
        path: std::path::PathBuf,
        written: u64,
    }

    impl Output {
        fn create(path: std::path::PathBuf) -> Result<Output> {
            // The whole name kept (`index-X.gsx` and `index-X.pages` are
            // written at once: their temporary names must differ).
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let tmp = index::tempfiles::TempFile::new(
                path.with_file_name(format!("{name}.{}.tmp", std::process::id())),
            );
            let file =
                std::fs::File::create(tmp.path()).map_err(|e| io_err("writing", tmp.path(), e))?;
            Ok(Output {
                tmp,
                file: std::io::BufWriter::with_capacity(1 << 20, file),
                path,
                written: 0,
            })
        }

        fn put(&mut self, bytes: &[u8]) -> Result<()> {
            self.write_all(bytes)
                .map_err(|e| io_err("writing", self.tmp.path(), e))
        }

        /// Moves the file into place; its size.
        fn commit(mut self) -> Result<u64> {
            self.file
                .flush()
                .map_err(|e| io_err("writing", self.tmp.path(), e))?;
            std::fs::rename(self.tmp.path(), &self.path)
                .map_err(|e| io_err("renaming into place", &self.path, e))?;
            self.tmp.keep();
            Ok(self.written)
        }
    }

    impl Write for Output {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = self.file.write(buf)?;
            self.written += n as u64;
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            self.file.flush()
        }
    }

    /// Reads the file at `path` in runs of whole pages, calling `each`
    /// with the index of the run's first page and its bytes (the last run
    /// may end in a partial page); the file's size.
    fn read_pages(
        path: &Path,
        page_size: usize,
        mut each: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<u64> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(|e| io_err("reading", path, e))?;
        let mut buf = vec![0u8; CHUNK_PAGES * page_size.max(1)];
        let mut size = 0u64;
        loop {
            let mut n = 0;
            while n < buf.len() {
                match file.read(&mut buf[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(io_err("reading", path, e)),
                }
            }
            if n == 0 {
                return Ok(size);
            }
            each(size / page_size.max(1) as u64, &buf[..n])?;
            size += n as u64;
            if n < buf.len() {
                return Ok(size);
            }
        }
    }

    /// Publishes `index_path` into `out_dir` and returns the manifest written.
    pub fn publish(index_path: &Path, out_dir: &Path) -> Result<Manifest> {
        publish_with(index_path, out_dir, &mut |_| {})
    }

    /// [`publish`], telling `progress` how far it is: the index is read
    /// twice, piece by piece (checked, then compressed and written), and
    /// never held in memory whole.
    pub fn publish_with(
        index_path: &Path,
        out_dir: &Path,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Manifest> {
        let at = || index_path.display().to_string();
        let conn = index::open_file(index_path)?;
        let info = index::verify(&conn)?;
        let (revision, checksum) = index::checksum::recorded(&conn)?;
        drop(conn);
        let page_size = info.page_size as usize;
        let pages = info.page_count;
        let report = |progress: &mut dyn FnMut(Progress), step, first: u64, bytes: &[u8]| {
            let done = first + bytes.len().div_ceil(page_size.max(1)) as u64;
            progress(Progress {
                step,
                done,
                total: pages,
            });
        };

        // Before anything is written: a damaged index must not get a
        // fresh content-addressed name and a manifest vouching for it.
        let mut check = index::checksum::Check::new(&revision, checksum.as_deref())
            .map_err(|e| e.with_location(at()))?;
        let mut sha = Sha256::new();
        let size = read_pages(index_path, page_size, |first, bytes| {
            check.update(bytes);
            sha.update(bytes);
            report(progress, Step::Verify, first, bytes);
            Ok(())
        })?;
        check.finish().map_err(|e| e.with_location(at()))?;
        if size != info.size_bytes() {
            return Err(Error::new(
                "index.corrupt",
                format!(
                    "the file has {size} bytes but its header says {} pages of {}",
                    info.page_count, info.page_size
                ),
            )
            .with_location(at()));
        }
        let sha256 = hex(&sha.finalize());
        let stem = format!("index-{}", &sha256[..16]);
        let raw_file = format!("{stem}.gsx");
        let file = format!("{stem}.gsx.gz");
        let hot_file = format!("{stem}.hot.gz");
        let packed_file = format!("{stem}.pages");

        progress(Progress {
            step: Step::HotPages,
            done: 0,
            total: 0,
        });
        let hot = crate::hot::hot_pages(index_path)?.pages;

        std::fs::create_dir_all(out_dir).map_err(|e| io_err("creating", out_dir, e))?;
        // What a publish killed before it could clean up (SIGKILL, a
        // crash) left here.
        index::tempfiles::remove_stale_named(out_dir, &["index-", "manifest"]);
        // One copy of the index for range reads: the packed file when
        // there is one (its pages inflate to the raw index's), else the
        // raw index itself.
        let packs = page_size <= 65536 && !hot.is_empty();
        let mut raw = if packs {
            None
        } else {
            Some(Output::create(out_dir.join(&raw_file))?)
        };
        // The gzip download only where the packed file cannot serve it.
        let mut gz = if packs {
            None
        } else {
            Some(GzEncoder::new(
                Output::create(out_dir.join(&file))?,
                Compression::best(),
            ))
        };
        // Pages of at most 64 KiB (SQLite's largest) always fit the
        // 16-bit lengths; the check is for a corrupt header.
        let mut packed = if packs {
            Some(Output::create(out_dir.join(&packed_file))?)
        } else {
            None
        };
        let mut lengths = Vec::with_capacity(pages as usize);
        let mut hot_pages = Vec::with_capacity(hot.len() * page_size);
        let mut next_hot = hot.iter().peekable();
        let mut again = Sha256::new();
        read_pages(index_path, page_size, |first, bytes| {
            again.update(bytes);
            if let Some(raw) = &mut raw {
                raw.put(bytes)?;
            }
            if let Some(gz) = &mut gz {
                gz.write_all(bytes)
                    .map_err(|e| Error::io("compressing the index", e).with_location(at()))?;
            }
            for (i, page) in bytes.chunks(page_size).enumerate() {
                let number = first + i as u64 + 1;
                if next_hot.peek().is_some_and(|&&h| u64::from(h) == number) {
                    next_hot.next();
                    hot_pages.extend_from_slice(page);
                }
                if let Some(packed) = &mut packed {
                    let p = pack_page(page)?;
                    lengths.push(p.len() as u32);
                    packed.put(&p)?;
                }
            }
            report(progress, Step::Write, first, bytes);
            Ok(())
        })?;
        if hex(&again.finalize()) != sha256 {
            return Err(Error::new(
                "index.changed",
                "the index changed while it was being published; publish it again",
            )
            .with_location(at()));
        }
        if next_hot.next().is_some() {
            return Err(Error::new(
                "index.corrupt",
                "a page the index's own b-trees name lies past its end",
            )
            .with_location(at()));
        }
        let gz = gz
            .map(|gz| {
                gz.finish()
                    .map_err(|e| Error::io("compressing the index", e))
            })
            .transpose()?;
        let mut hot_bytes = crate::pagecodec::encode_hot(&hot, &hot_pages, page_size);
        if packed.is_some() {
            hot_bytes.extend_from_slice(&encode_packed_lengths(&lengths));
        }

        let raw_file = raw.map(Output::commit).transpose()?.map(|_| raw_file);
        let compressed_size = gz.map(Output::commit).transpose()?;
        let packed_size = packed.map(Output::commit).transpose()?;
        if !hot.is_empty() {
            write_atomically(&out_dir.join(&hot_file), &gzip_smallest(&hot_bytes)?)?;
        }
        // `packs` decided both: a packed file, else the gzip index.
        let mut manifest = match packed_size {
            Some(size) => {
                let mut m = Manifest::gzip_of(&info, sha256, packed_file.clone(), size, None);
                m.compression = COMPRESSION_PAGES.into();
                m
            }
            None => Manifest::gzip_of(
                &info,
                sha256,
                file,
                compressed_size.unwrap_or_default(),
                raw_file,
            ),
        };
        if !hot.is_empty() {
            manifest.hot_pages = hot;
            manifest.hot_file = Some(hot_file);
            manifest.hot_format = HOT_FORMAT_DELTA;
        }
        if let Some(packed_size) = packed_size {
            manifest.packed_file = Some(packed_file);
            manifest.packed_size = packed_size;
        }
        manifest.check()?;
        let mut json = serde_json::to_string_pretty(&manifest)
            .map_err(|e| Error::new("internal.serialize", e.to_string()))?;
        json.push('\n');
        if manifest.hot_file.is_some() {
            write_atomically(
                &out_dir.join(FIRST_VISIT_FILE),
                &gzip_smallest(&first_visit_bytes(json.as_bytes(), &hot_bytes))?,
            )?;
        } else {
            // One of an earlier publish would hold another manifest:
            // clients leave it out, but it need not be fetched at all.
            let _ = std::fs::remove_file(out_dir.join(FIRST_VISIT_FILE));
        }
        // Last, so the manifest never names a file that is not there yet.
        write_atomically(&out_dir.join(MANIFEST_FILE), json.as_bytes())?;
        Ok(manifest)
    }

    /// The steps of a publish, for [`Progress`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Step {
        /// Reading the index against its checksum.
        Verify,
        /// Finding the hot pages (no count: `total` is 0).
        HotPages,
        /// Compressing and writing the published files.
        Write,
    }

    impl Step {
        /// What a progress line calls the step.
        pub fn label(self) -> &'static str {
            match self {
                Step::Verify => "checking the index (pages)",
                Step::HotPages => "finding the hot pages",
                Step::Write => "compressing and writing (pages)",
            }
        }
    }

    /// How far [`publish_with`] is: `done` of `total` pages in `step`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Progress {
        pub step: Step,
        pub done: u64,
        pub total: u64,
    }
}

#[cfg(feature = "write")]
pub use write::{pack_page, publish, publish_with, Progress, Step};

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            manifest_version: MANIFEST_VERSION,
            format_version: FORMAT_VERSION,
            revision: "r1".into(),
            built_at: "2026-01-01T00:00:00Z".into(),
            file: "index-0123456789abcdef.gsx.gz".into(),
            compression: "gzip".into(),
            compressed_size: 10,
            raw_file: Some("index-0123456789abcdef.gsx".into()),
            size: 8192,
            sha256: "ab".repeat(32),
            page_size: 4096,
            page_count: 2,
            counts: ManifestCounts {
                chats: 1,
                messages: 2,
                code_blocks: 3,
            },
            hot_pages: vec![1, 2],
            hot_file: Some("index-0123456789abcdef.hot.gz".into()),
            hot_format: HOT_FORMAT_DELTA,
            packed_file: Some("index-0123456789abcdef.pages".into()),
            packed_size: 5000,
        }
    }

    #[test]
    fn a_manifest_round_trips_through_json() {
        let m = sample();
        let json = serde_json::to_string(&m).unwrap();
        assert!(json.contains(&format!("\"formatVersion\":{FORMAT_VERSION}")));
        assert!(json.contains("\"pageSize\":4096"));
        assert!(json.contains("\"hotPages\":[1,2]"));
        assert!(json.contains("\"hotFormat\":2"));
        assert_eq!(Manifest::parse(&json).unwrap(), m);
        // A manifest of before hotFormat: the pages as they are.
        let plain = json.replace(",\"hotFormat\":2", "");
        assert_eq!(
            Manifest::parse(&plain).unwrap().hot_format,
            HOT_FORMAT_PLAIN
        );
    }

    #[test]
    fn a_manifest_of_another_format_version_is_refused() {
        let m = Manifest {
            format_version: FORMAT_VERSION + 1,
            ..sample()
        };
        assert_eq!(m.check().unwrap_err().code, "index.version_mismatch");
    }

    #[test]
    fn a_manifest_with_a_bad_checksum_or_geometry_is_refused() {
        let bad_hash = Manifest {
            sha256: "XYZ".into(),
            ..sample()
        };
        assert_eq!(bad_hash.check().unwrap_err().code, "manifest.invalid");
        let bad_size = Manifest {
            size: 8000,
            ..sample()
        };
        assert_eq!(bad_size.check().unwrap_err().code, "manifest.invalid");
        for hot_pages in [vec![2, 1], vec![0], vec![3]] {
            let bad_hot = Manifest {
                hot_pages,
                ..sample()
            };
            assert_eq!(bad_hot.check().unwrap_err().code, "manifest.invalid");
        }
        let hot_without_file = Manifest {
            hot_file: None,
            ..sample()
        };
        assert_eq!(
            hot_without_file.check().unwrap_err().code,
            "manifest.invalid"
        );
        let packed_without_size = Manifest {
            packed_size: 0,
            ..sample()
        };
        assert_eq!(
            packed_without_size.check().unwrap_err().code,
            "manifest.invalid"
        );
        let packed_without_hot = Manifest {
            hot_pages: vec![],
            hot_file: None,
            ..sample()
        };
        assert_eq!(
            packed_without_hot.check().unwrap_err().code,
            "manifest.invalid"
        );
        assert_eq!(
            Manifest::parse("{\"file\": 3}").unwrap_err().code,
            "manifest.invalid"
        );
    }

    #[test]
    fn packed_lengths_round_trip_and_give_offsets() {
        let lengths = vec![1, 4096, 300, 65536, 257];
        let enc = encode_packed_lengths(&lengths);
        assert_eq!(enc.len(), 10);
        assert_eq!(decode_packed_lengths(&enc, 5).unwrap(), lengths);
        assert_eq!(decode_packed_lengths(&enc, 4), None);
        let small = [10, 4096, 1];
        assert_eq!(
            packed_offsets(&small, 4096, 4107).unwrap(),
            vec![0, 10, 4106, 4107]
        );
        // A total that is not the packed file's size, a page longer than a
        // page: unusable.
        assert_eq!(packed_offsets(&small, 4096, 4108), None);
        assert_eq!(packed_offsets(&[4097], 4096, 4097), None);
    }

    #[test]
    fn a_pages_download_names_the_packed_file() {
        let pages = Manifest {
            file: "index-0123456789abcdef.pages".into(),
            compression: COMPRESSION_PAGES.into(),
            compressed_size: 5000,
            raw_file: None,
            ..sample()
        };
        pages.check().unwrap();
        for bad in [
            Manifest {
                file: "index-0123456789abcdef.gsx.gz".into(),
                ..pages.clone()
            },
            Manifest {
                compressed_size: 4999,
                ..pages.clone()
            },
            Manifest {
                packed_file: None,
                packed_size: 0,
                ..pages.clone()
            },
        ] {
            assert_eq!(bad.check().unwrap_err().code, "manifest.invalid");
        }
        let unknown = Manifest {
            compression: "brotli".into(),
            ..pages
        };
        assert!(unknown
            .check()
            .unwrap_err()
            .message
            .contains("unknown compression 'brotli'"));
    }

    #[test]
    fn the_packed_offsets_come_from_the_hot_file_tail() {
        // Two hot pages of format 1 (as they are), then two pages' lengths.
        let m = Manifest {
            hot_format: HOT_FORMAT_PLAIN,
            packed_size: 5000,
            ..sample()
        };
        let mut hot = vec![7u8; 2 * 4096];
        hot.extend_from_slice(&encode_packed_lengths(&[1000, 4000]));
        assert_eq!(
            packed_offsets_in_hot(&m, &hot).unwrap(),
            vec![0, 1000, 5000]
        );
        // Lengths that do not add up, a cut file, an unknown format.
        let short = Manifest {
            packed_size: 4999,
            ..m.clone()
        };
        let unknown = Manifest {
            hot_format: 9,
            ..m.clone()
        };
        for (manifest, bytes) in [(&short, &hot[..]), (&m, &hot[..4096])] {
            assert_eq!(
                packed_offsets_in_hot(manifest, bytes).unwrap_err().code,
                "download.corrupt"
            );
        }
        assert_eq!(
            packed_offsets_in_hot(&unknown, &hot).unwrap_err().code,
            "index.version_mismatch"
        );
        // Format 2: the encoded pages' own lengths say where the tail starts.
        let nos = [1u32, 2];
        let mut delta = pagecodec::encode_hot(&nos, &hot[..2 * 4096], 4096);
        delta.extend_from_slice(&encode_packed_lengths(&[1000, 4000]));
        let m2 = Manifest {
            hot_format: HOT_FORMAT_DELTA,
            ..m
        };
        assert_eq!(
            packed_offsets_in_hot(&m2, &delta).unwrap(),
            vec![0, 1000, 5000]
        );
    }
}
