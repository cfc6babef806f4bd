//! Importer for a static documentation site: built HTML (Sphinx, mdBook,
//! Docusaurus, MkDocs, Hugo, plain pages) and Markdown sources.
//!
//! In: a directory. Out: through the [`IndexWriter`], this mapping:
//!
//! | site | record |
//! | --- | --- |
//! | the site | root chat, type `git-repo`, `meta.kind = "doc-site"`, named after the site title |
//! | a directory | chat `git-tree`, `meta.kind = "doc-dir"`, `meta.path` |
//! | a page | chat `git-blob`, `meta.kind = "doc-page"`, named after the page title; `meta.path`, `url`, `language` (`html`/`markdown`), `title` |
//! | a heading and its content | message `doc-section` |
//! | an API definition (`<dt id>` + `<dd>`, or an API item's heading: rustdoc, Javadoc) | message `doc-definition` |
//! | text before the first heading | message `doc-intro` |
//! | `<pre>` | code block, language from the generator's classes; `url` and `anchor` of its section in its header |
//! | the page as a whole | messages `tiny-overview::file-content::default` (title + first sentence) and `short-overview::file-content::default` (first paragraph + outline) |
//!
//! Pages are `git-blob` chats so that everything written for files in a
//! repository works on them unchanged: `git-path:`, `chat-type:git-blob`,
//! and the AI stage-2 profile `tiny-overview-query-optimization`, which
//! only looks at git chat types. `meta.kind` tells documentation apart.
//!
//! Every message carries `url` (page URL + `#anchor`), `anchor`, `title`,
//! `file_path`, `kind` and `headings` (the enclosing headings) in its meta;
//! its `title` column (weighted above the body in ranking) holds the heading
//! or the definition's qualified name; its `keywords` column the terms of
//! the site's own index that point into it (Sphinx `genindex`, module
//! index, and the links of any listing page: symbol indexes, member lists,
//! contents pages): an author's index is the best statement of what a
//! section is about. Listing and source-listing pages are never pages of
//! the index themselves (see `extract::Listing`).
//!
//! Directory walks are sorted and ids are assigned in that order, so the
//! same site always gives the same corpus revision. Timestamps are left
//! empty: file times change when a site is copied, its content does not.

mod copies;
mod extract;
pub mod markdown;
mod open;
mod select;

pub use extract::{parse_page, Code, IndexEntry, Page, Skip, Unit, UnitKind};
pub use select::PageFilter;

use super::overview::{SHORT_OVERVIEW, TINY_OVERVIEW};
use super::ImportReport;
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::IndexWriter;
use gitsense_engine::model::{Chat, CodeBlock, Message};
use gitsense_engine::util::stable_uuid;
use indicatif::ProgressBar;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Chat and message types this importer writes.
pub const SITE_CHAT_TYPE: &str = "git-repo";
pub const DIR_CHAT_TYPE: &str = "git-tree";
pub const PAGE_CHAT_TYPE: &str = "git-blob";

/// Directories that hold generator assets or copies, never pages
/// (Sphinx `_static`, `_sources`, `_images`, `_downloads`, and `_modules`,
/// its highlighted source listings).
const SKIP_DIRS: &[&str] = &[
    "_static",
    "_sources",
    "_images",
    "_downloads",
    "_modules",
    "node_modules",
];

/// Generated pages that are not documentation: search pages and error
/// pages. (A whole-book page such as mdBook's `print.html` is read: what
/// it copies is found in its text, see `copies`.)
const SKIP_FILES: &[&str] = &["search.html", "404.html"];

/// Sphinx's general index (`genindex.html`, or `genindex-A.html`... when
/// split by letter): read for its entries, never indexed as a page.
const SITE_INDEX_PREFIX: &str = "genindex";

/// Pages that must share a first heading (under different `<title>`s)
/// for it to be the site's banner rather than a title.
const MIN_BANNER_PAGES: usize = 3;

/// Most keywords and entities an overview lists.
const OVERVIEW_KEYWORDS: usize = 12;
const OVERVIEW_ENTITIES: usize = 24;

/// How to import a site.
#[derive(Debug, Clone)]
pub struct DocsOptions {
    /// Prefix for page URLs (`https://docs.python.org/3.11/`); without it,
    /// URLs are paths relative to the site root.
    pub base_url: Option<String>,
    /// Attach the entries of the site's own index pages to the sections
    /// they point to (on by default).
    pub use_site_index: bool,
    /// The pages indexed (`--include` / `--exclude`); every page by default.
    pub pages: PageFilter,
}

impl Default for DocsOptions {
    fn default() -> Self {
        DocsOptions {
            base_url: None,
            use_site_index: true,
            pages: PageFilter::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceKind {
    Html,
    Markdown,
}

/// A file found by the walk.
#[derive(Debug, Clone)]
struct SourceFile {
    /// Path relative to the site root, `/`-separated.
    rel: String,
    abs: PathBuf,
    kind: SourceKind,
    /// The file the walk checked, which is the one read.
    id: open::FileId,
}

impl SourceFile {
    fn file_name(&self) -> &str {
        self.rel.rsplit('/').next().unwrap_or(&self.rel)
    }

    /// The page's URL path relative to the site root: the file itself for
    /// HTML, the `.html` a generator makes of Markdown (`README.md` →
    /// `index.html`, as mdBook does).
    fn url_path(&self) -> String {
        match self.kind {
            SourceKind::Html => self.rel.clone(),
            SourceKind::Markdown => {
                let (dir, file) = match self.rel.rsplit_once('/') {
                    Some((d, f)) => (format!("{d}/"), f),
                    None => (String::new(), self.rel.as_str()),
                };
                let stem = file.rsplit_once('.').map(|(s, _)| s).unwrap_or(file);
                if stem.eq_ignore_ascii_case("readme") {
                    format!("{dir}index.html")
                } else {
                    format!("{dir}{stem}.html")
                }
            }
        }
    }
}

fn unreadable(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new("import.unreadable", format!("cannot read {e}"))
        .with_location(path.display().to_string())
}

/// Imports the documentation site under `dir` into `w`.
pub fn import(
    dir: &Path,
    opts: &DocsOptions,
    w: &mut IndexWriter,
    progress: &ProgressBar,
) -> Result<ImportReport> {
    let mut report = ImportReport::default();
    let mut site = Site::load(dir, opts, &mut report, progress)?;
    if opts.use_site_index {
        let (attached, unresolved) = site.attach_index_terms();
        if attached + unresolved > 0 {
            report.warnings.push(format!(
                "attached {attached} site index entries to the sections they point to ({unresolved} pointed nowhere in the site)"
            ));
        }
    }
    site.write(w)?;
    progress.finish_and_clear();
    Ok(report)
}

/// A page as [`import`] indexes it, before it becomes chats and messages:
/// for tools that give the same pages to other search engines (the
/// benchmark does).
#[derive(Debug, Clone)]
pub struct SitePage {
    /// URL path relative to the site root (`library/json.html`).
    pub path: String,
    /// The page title without the site name (the file name when untitled).
    pub title: String,
    pub page: Page,
}

/// The pages [`import`] indexes, in its order: site index pages, redirect
/// stubs, copies and `noindex` pages left out; listing pages with only
/// their text besides their entries.
pub fn site_pages(dir: &Path) -> Result<Vec<SitePage>> {
    let opts = DocsOptions::default();
    let site = Site::load(
        dir,
        &opts,
        &mut ImportReport::default(),
        &super::no_progress(),
    )?;
    Ok((0..site.pages.len())
        .filter(|&i| indexed(&site.pages[i]))
        .map(|i| SitePage {
            path: site.files[i].url_path(),
            title: site.page_title(i),
            page: site.pages[i].clone(),
        })
        .collect())
}

/// The kind of page a file name says a file is; `None` for other files.
fn page_kind(name: &str) -> Option<SourceKind> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".html") || lower.ends_with(".htm") {
        Some(SourceKind::Html)
    } else if lower.ends_with(".md") || lower.ends_with(".markdown") {
        Some(SourceKind::Markdown)
    } else {
        None
    }
}

/// Whether the importer reads a file of this name as a page.
pub fn is_page_name(name: &str) -> bool {
    page_kind(name).is_some()
}

/// What the walk found under the site root.
struct Walk {
    /// The site root, symbolic links resolved.
    root: PathBuf,
    files: Vec<SourceFile>,
    /// Symbolic links to directories (never followed).
    dir_links: usize,
    /// Page-named entries that are not read, with why.
    refused: Vec<(String, String)>,
    /// Which pages to read.
    pages: PageFilter,
    /// Pages left out by `pages`.
    filtered: usize,
}

/// Keeps one path of each file the walk reached under several (a site
/// that links untranslated pages into each translation's directory, or
/// the same page under two names): the file's own path when one is not a
/// symbolic link, else the first; a link's target is read the same, so
/// the page is indexed once where it lives. Returns how many were left
/// out.
fn one_path_per_file(files: &mut Vec<SourceFile>) -> usize {
    let mut chosen: HashMap<(u64, u64), usize> = HashMap::new();
    for (i, f) in files.iter().enumerate() {
        let Some(key) = f.id.file() else { continue };
        match chosen.get(&key) {
            Some(&j) if !files[j].id.via_link() || f.id.via_link() => {}
            _ => {
                chosen.insert(key, i);
            }
        }
    }
    let before = files.len();
    let mut i = 0;
    files.retain(|f| {
        let keep = f.id.file().is_none_or(|key| chosen[&key] == i);
        i += 1;
        keep
    });
    before - files.len()
}

impl Walk {
    /// Collects page files under `dir` in sorted order. A page-named entry
    /// is read only when it is (or links to) a regular file inside the
    /// site: a link out of the tree, a dangling link, a FIFO, socket or
    /// device is refused with a reason instead (reading it could leak a
    /// file, block forever or never end).
    fn dir(&mut self, dir: &Path, rel: &str) -> Result<()> {
        let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
            .map_err(|e| unreadable(dir, format!("directory: {e}")))?
            .map(|e| {
                e.map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                    .map_err(|e| unreadable(dir, format!("directory: {e}")))
            })
            .collect::<Result<_>>()?;
        entries.sort();
        for (name, path) in entries {
            if name.starts_with('.') {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).map_err(|e| unreadable(&path, e))?;
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if meta.is_dir() {
                if SKIP_DIRS.contains(&name.as_str()) {
                    continue;
                }
                if child_rel.split('/').count() > crate::MAX_DIR_DEPTH {
                    self.refused.push((
                        child_rel,
                        format!("a directory nested deeper than {}", crate::MAX_DIR_DEPTH),
                    ));
                    continue;
                }
                self.dir(&path, &child_rel)?;
                continue;
            }
            let Some(kind) = page_kind(&name) else {
                continue;
            };
            let id = if meta.file_type().is_symlink() {
                match std::fs::metadata(&path) {
                    Err(_) => {
                        self.refused
                            .push((child_rel, "a dangling symbolic link".into()));
                        continue;
                    }
                    Ok(m) if m.is_dir() => {
                        self.dir_links += 1;
                        continue;
                    }
                    Ok(m) if !m.is_file() => {
                        self.refused
                            .push((child_rel, "a symbolic link to a special file".into()));
                        continue;
                    }
                    Ok(m) => {
                        if !std::fs::canonicalize(&path).is_ok_and(|t| t.starts_with(&self.root)) {
                            self.refused
                                .push((child_rel, "a symbolic link out of the site".into()));
                            continue;
                        }
                        open::FileId::of(&m, true)
                    }
                }
            } else if !meta.is_file() {
                self.refused.push((
                    child_rel,
                    "not a regular file (a FIFO, socket or device)".into(),
                ));
                continue;
            } else {
                open::FileId::of(&meta, false)
            };
            if SKIP_FILES.contains(&name.to_ascii_lowercase().as_str()) {
                continue;
            }
            if !self.pages.keeps(&child_rel) {
                self.filtered += 1;
                continue;
            }
            self.files.push(SourceFile {
                rel: child_rel,
                abs: path,
                kind,
                id,
            });
        }
        Ok(())
    }
}

/// Largest page file read, in bytes; a larger one is skipped
/// (`import.page_too_large`).
pub const MAX_PAGE_BYTES: u64 = 32 << 20;

/// How many skipped files the warnings name one by one.
const LISTED_SKIPS: usize = 10;

/// A file read and parsed, or why its page is left out (a page over a
/// bound: the rest of the site is still indexed).
enum Parsed {
    /// `lossy` when the file was not valid UTF-8.
    Page {
        page: Page,
        lossy: bool,
    },
    Refused(Error),
}

/// Reads and parses every file, on all cores; results keep file order.
fn parse_all(files: &[SourceFile], progress: &ProgressBar) -> Result<Vec<Parsed>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8);
    let chunks: Vec<Vec<(usize, Result<Parsed>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    files
                        .iter()
                        .enumerate()
                        .skip(t)
                        .step_by(threads)
                        .map(|(i, f)| {
                            let r = parse_file(f);
                            progress.inc(1);
                            (i, r)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("page parser thread panicked"))
            .collect()
    });
    let mut all: Vec<(usize, Result<Parsed>)> = chunks.into_iter().flatten().collect();
    // The first failing file in walk order is the one reported.
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

fn parse_file(f: &SourceFile) -> Result<Parsed> {
    use std::io::Read;
    // The walk checked a path; what is read is checked on the handle.
    let file = match open::open_checked(&f.abs, f.id).map_err(|e| unreadable(&f.abs, e))? {
        Ok(file) => file,
        Err(refusal) => {
            return Ok(Parsed::Refused(Error::new(
                "import.page_changed",
                refusal.reason(),
            )))
        }
    };
    let mut bytes = Vec::new();
    file.take(MAX_PAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(&f.abs, e))?;
    if bytes.len() as u64 > MAX_PAGE_BYTES {
        return Ok(Parsed::Refused(Error::new(
            "import.page_too_large",
            format!("the file is larger than {} MiB", MAX_PAGE_BYTES >> 20),
        )));
    }
    let (text, lossy) = match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    let html = match f.kind {
        SourceKind::Html => text,
        SourceKind::Markdown => markdown::to_html(&text),
    };
    let mut page = match parse_page(&html) {
        Ok(p) => p,
        Err(e) => return Ok(Parsed::Refused(e)),
    };
    let name = f.file_name();
    if f.kind == SourceKind::Html && name.starts_with(SITE_INDEX_PREFIX) && page.skip.is_none() {
        page.skip = Some(Skip::SiteIndex);
    }
    Ok(Parsed::Page { page, lossy })
}

/// Warnings naming the files left out and why (the first
/// [`LISTED_SKIPS`], then a count of the rest).
fn report_skipped(report: &mut ImportReport, skipped: &[(String, String)]) {
    for (rel, why) in skipped.iter().take(LISTED_SKIPS) {
        report.warnings.push(format!(
            "skipped {}: {why}",
            gitsense_engine::util::echo(rel)
        ));
    }
    if skipped.len() > LISTED_SKIPS {
        report.warnings.push(format!(
            "skipped {} more files that are not readable pages",
            skipped.len() - LISTED_SKIPS
        ));
    }
}

/// Separators between a page title and the site name in `<title>`.
const TITLE_SEPARATORS: &[&str] = &[" \u{2014} ", " \u{2013} ", " | ", " - ", " \u{b7} "];

/// Splits `Page — Site` into (`Page`, `Site`).
fn split_title(t: &str) -> Option<(&str, &str)> {
    TITLE_SEPARATORS
        .iter()
        .filter_map(|sep| t.rfind(sep).map(|i| (&t[..i], &t[i + sep.len()..])))
        .max_by_key(|(a, _)| a.len())
        .filter(|(a, b)| !a.trim().is_empty() && !b.trim().is_empty())
}

/// The parsed site, ready to be written.
struct Site {
    files: Vec<SourceFile>,
    pages: Vec<Page>,
    title: String,
    base_url: Option<String>,
    /// Page URL path → page index.
    by_url: HashMap<String, usize>,
    /// First headings that are the site's banner on many pages: a
    /// section under one is titled by its page.
    banners: BTreeSet<String>,
}

impl Site {
    /// Walks and parses the site under `dir` (warnings go to `report`).
    fn load(
        dir: &Path,
        opts: &DocsOptions,
        report: &mut ImportReport,
        progress: &ProgressBar,
    ) -> Result<Site> {
        if !dir.exists() {
            return Err(Error::new("import.not_found", "no such directory")
                .with_location(dir.display().to_string()));
        }
        if !dir.is_dir() {
            return Err(Error::new(
                "import.bad_source",
                "--docs expects a directory (a built site or Markdown sources)",
            )
            .with_location(dir.display().to_string()));
        }
        let mut walk = Walk {
            root: std::fs::canonicalize(dir).map_err(|e| unreadable(dir, e))?,
            files: Vec::new(),
            dir_links: 0,
            refused: Vec::new(),
            pages: opts.pages.clone(),
            filtered: 0,
        };
        walk.dir(dir, "")?;
        let Walk {
            mut files,
            dir_links: skipped_links,
            refused,
            filtered,
            ..
        } = walk;
        if filtered > 0 {
            report.warnings.push(format!(
                "left out {filtered} page(s) by --include / --exclude"
            ));
        }
        let mut skipped = refused;
        // A built page wins over its Markdown source in the same directory.
        let html_paths: BTreeSet<String> = files
            .iter()
            .filter(|f| f.kind == SourceKind::Html)
            .map(|f| f.rel.clone())
            .collect();
        let before = files.len();
        files.retain(|f| f.kind == SourceKind::Html || !html_paths.contains(&f.url_path()));
        if files.len() < before {
            report.warnings.push(format!(
                "left out {} Markdown sources whose built HTML page is in the site",
                before - files.len()
            ));
        }
        let copies = one_path_per_file(&mut files);
        if copies > 0 {
            report.warnings.push(format!(
                "left out {copies} pages: the same file as another page (a symbolic or hard link)"
            ));
        }
        if skipped_links > 0 {
            report.warnings.push(format!(
                "did not follow {skipped_links} symbolic links to directories"
            ));
        }
        if files.is_empty() {
            return Err(Error::new(
                "import.empty_source",
                "no HTML or Markdown pages found (looked for *.html, *.htm, *.md, *.markdown)",
            )
            .with_location(dir.display().to_string()));
        }
        progress.set_length(files.len() as u64);
        let parsed = parse_all(&files, progress)?;
        let (mut kept, mut pages, mut lossy) = (Vec::new(), Vec::new(), 0usize);
        for (f, p) in files.into_iter().zip(parsed) {
            match p {
                Parsed::Page { page, lossy: l } => {
                    lossy += usize::from(l);
                    kept.push(f);
                    pages.push(page);
                }
                Parsed::Refused(e) => skipped.push((f.rel, e.to_string())),
            }
        }
        let files = kept;
        report_skipped(report, &skipped);
        if lossy > 0 {
            report.warnings.push(format!(
                "{lossy} pages were not valid UTF-8; invalid bytes were replaced"
            ));
        }
        let mut site = Site::new(files, pages, opts);
        let paths: Vec<String> = site.files.iter().map(SourceFile::url_path).collect();
        let found = copies::mark(&mut site.pages, &paths);
        if found.units > 0 {
            report.warnings.push(format!(
                "left out {} sections that copy other pages of the site",
                found.units
            ));
        }
        site.skip_report(report);
        Ok(site)
    }

    fn new(files: Vec<SourceFile>, mut pages: Vec<Page>, opts: &DocsOptions) -> Site {
        // A first heading that many pages share, under `<title>`s that
        // differ, is the site's banner, not the page's title.
        let mut by_heading: HashMap<&str, (usize, BTreeSet<&str>)> = HashMap::new();
        for p in pages
            .iter()
            .filter(|p| p.skip.is_none() && !p.title.is_empty())
        {
            let e = by_heading.entry(p.title.as_str()).or_default();
            e.0 += 1;
            if let Some(t) = &p.html_title {
                e.1.insert(t.as_str());
            }
        }
        let banners: BTreeSet<String> = by_heading
            .into_iter()
            .filter(|(_, (n, titles))| *n >= MIN_BANNER_PAGES && titles.len() * 2 > *n)
            .map(|(h, _)| h.to_string())
            .collect();
        for p in &mut pages {
            if banners.contains(&p.title) {
                if let Some(t) = &p.html_title {
                    p.title = t.clone();
                }
            }
        }
        // The site name is the suffix most page titles share.
        let mut suffixes: BTreeMap<&str, usize> = BTreeMap::new();
        let mut titled = 0;
        for p in &pages {
            if let Some(t) = &p.html_title {
                titled += 1;
                if let Some((_, site)) = split_title(t) {
                    *suffixes.entry(site).or_insert(0) += 1;
                }
            }
        }
        let common = suffixes
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .filter(|(_, n)| **n >= 2 && **n * 2 >= titled)
            .map(|(s, _)| s.to_string());
        let root_index = files
            .iter()
            .position(|f| f.url_path() == "index.html")
            .and_then(|i| pages[i].html_title.clone());
        let title = common
            .clone()
            .or(root_index)
            .unwrap_or_else(|| "Documentation".to_string());
        // Pages titled by <title> lose the site suffix.
        for p in &mut pages {
            if let (Some(site), Some(t)) = (&common, &p.html_title) {
                if p.title == *t {
                    if let Some((page, s)) = split_title(t) {
                        if s == site {
                            p.title = page.trim().to_string();
                        }
                    }
                }
            }
        }
        let by_url = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.url_path(), i))
            .collect();
        let base_url = opts.base_url.as_ref().map(|b| {
            if b.ends_with('/') {
                b.clone()
            } else {
                format!("{b}/")
            }
        });
        Site {
            files,
            pages,
            title,
            base_url,
            by_url,
            banners,
        }
    }

    /// A page's title: its own, else its file name.
    fn page_title(&self, i: usize) -> String {
        match self.pages[i].title.as_str() {
            "" => self.files[i].file_name().to_string(),
            t => t.to_string(),
        }
    }

    fn skip_report(&self, report: &mut ImportReport) {
        let count = |k: Skip| self.pages.iter().filter(|p| p.skip == Some(k)).count();
        for (k, what) in [
            (Skip::NoIndex, "marked noindex"),
            (Skip::Redirect, "redirect stubs"),
            (Skip::SiteIndex, "site index pages"),
            (Skip::SourceListing, "source-code listings"),
            (
                Skip::Copy,
                "copies of other pages (every section found on them)",
            ),
        ] {
            let n = count(k);
            if n > 0 {
                report.warnings.push(format!("left out {n} pages: {what}"));
            }
        }
        let n = count(Skip::Listing);
        if n > 0 {
            report.warnings.push(format!(
                "{n} listing pages (mostly links into the site): their links name the sections they point to, only their other text is indexed"
            ));
        }
    }

    fn url(&self, path: &str, anchor: Option<&str>) -> String {
        let mut u = match &self.base_url {
            Some(b) => format!("{b}{path}"),
            None => path.to_string(),
        };
        if let Some(a) = anchor {
            u.push('#');
            u.push_str(a);
        }
        u
    }

    /// The unit a link points to: the anchor's unit, else the page's first
    /// emitted unit.
    fn resolve(&self, from: &str, href: &str) -> Option<(usize, usize)> {
        if href.contains("://") || href.starts_with("mailto:") || href.starts_with('/') {
            return None;
        }
        let (path, anchor) = match href.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (href, None),
        };
        let path = path.split('?').next().unwrap_or("");
        let target = if path.is_empty() {
            from.to_string()
        } else {
            join_relative(from, path)?
        };
        let page = *self.by_url.get(&target)?;
        let p = &self.pages[page];
        if p.skip.is_some() {
            return None;
        }
        let unit = match anchor.and_then(|a| p.anchors.get(a).copied()) {
            // A link into a copied section points at text indexed on
            // another page, not at this page's first section.
            Some(u) if p.units[u].copy => return None,
            Some(u) if emitted(&p.units[u]) => u,
            _ => p.units.iter().position(emitted)?,
        };
        Some((page, unit))
    }

    /// Attaches site-index terms to units; returns (attached, unresolved).
    fn attach_index_terms(&mut self) -> (usize, usize) {
        let mut adds: Vec<(usize, usize, String)> = Vec::new();
        let mut unresolved = 0;
        for (i, p) in self.pages.iter().enumerate() {
            if !matches!(p.skip, Some(Skip::SiteIndex | Skip::Listing)) {
                continue;
            }
            let from = self.files[i].url_path();
            for e in &p.index_entries {
                let term = index_term(&e.term);
                if term.is_empty() {
                    continue;
                }
                for h in &e.hrefs {
                    match self.resolve(&from, h) {
                        Some((page, unit)) => adds.push((page, unit, term.clone())),
                        None => unresolved += 1,
                    }
                }
            }
        }
        let mut attached = 0;
        for (page, unit, term) in adds {
            let u = &mut self.pages[page].units[unit];
            let have: BTreeSet<String> = words(&u.title)
                .chain(u.index_terms.iter().flat_map(|t| words(t)))
                .collect();
            if words(&term).all(|w| have.contains(&w)) {
                continue;
            }
            u.index_terms.push(term);
            attached += 1;
        }
        (attached, unresolved)
    }

    fn write(&self, w: &mut IndexWriter) -> Result<()> {
        let mut next_chat = 1i64;
        let mut next_msg = 1i64;
        let mut next_code = 1i64;
        let root_id = next_chat;
        next_chat += 1;
        w.add_chat(&Chat {
            id: root_id,
            parent_id: 0,
            chat_type: SITE_CHAT_TYPE.into(),
            uuid: Some(stable_uuid(&format!("site:{}", self.title))),
            name: self.title.clone(),
            owner: None,
            group_id: None,
            created_at: None,
            modified_at: None,
            meta: json!({
                "kind": "doc-site",
                "title": self.title,
                "url": self.base_url.clone().unwrap_or_default(),
            }),
        })?;
        let mut dirs: BTreeMap<String, i64> = BTreeMap::new();
        // Each page's language, for a site shipping several side by side.
        let mut languages = Vec::new();
        for (i, (f, p)) in self.files.iter().zip(&self.pages).enumerate() {
            if !indexed(p) {
                continue;
            }
            let listing = p.skip == Some(Skip::Listing);
            let parent = self.dir_chat(f, root_id, &mut dirs, &mut next_chat, w)?;
            let chat_id = next_chat;
            next_chat += 1;
            if let Some(lang) = &p.lang {
                languages.push((chat_id, lang.clone()));
            }
            let path = f.url_path();
            let file_name = f.file_name().to_string();
            let language = match f.kind {
                SourceKind::Html => "html",
                SourceKind::Markdown => "markdown",
            };
            let title = self.page_title(i);
            let page_url = self.url(&path, None);
            w.add_chat(&Chat {
                id: chat_id,
                parent_id: parent,
                chat_type: PAGE_CHAT_TYPE.into(),
                uuid: Some(stable_uuid(&format!("page:{path}"))),
                name: title.clone(),
                owner: None,
                group_id: None,
                created_at: None,
                modified_at: None,
                meta: json!({
                    "kind": "doc-page",
                    "path": path,
                    "source_path": f.rel,
                    "name": file_name,
                    "url": page_url,
                    "language": language,
                    "title": title,
                }),
            })?;
            let parents = parent_keywords(&path, &self.title);
            for (msg_type, content, meta, title_col) in
                overviews(p, &title, &path, &file_name, chat_id, &page_url, &parents)
            {
                w.add_message(&Message {
                    id: next_msg,
                    chat_id,
                    msg_type: msg_type.into(),
                    role: "assistant".into(),
                    content,
                    title: title_col,
                    keywords: String::new(),
                    meta,
                    created_at: None,
                    updated_at: None,
                })?;
                next_msg += 1;
            }
            let has_sections = p.units.iter().any(|u| u.kind == UnitKind::Section);
            for (unit_index, u) in p
                .units
                .iter()
                .enumerate()
                .filter(|(_, u)| emitted(u) && (!listing || has_prose(u)))
            {
                let unit_title = if (u.kind == UnitKind::Intro && !has_sections)
                    || (u.kind == UnitKind::Section && self.banners.contains(&u.title))
                {
                    title.clone()
                } else {
                    u.title.clone()
                };
                let mut title_col: Vec<&str> = vec![unit_title.as_str()];
                title_col.extend(u.aliases.iter().map(String::as_str));
                if u.kind == UnitKind::Section {
                    title_col.extend(unnumbered(&unit_title));
                }

                let kind = match u.kind {
                    UnitKind::Intro => "intro",
                    UnitKind::Section => "section",
                    UnitKind::Definition => "definition",
                };
                let msg_id = next_msg;
                next_msg += 1;
                w.add_message(&Message {
                    id: msg_id,
                    chat_id,
                    msg_type: format!("doc-{kind}"),
                    role: "assistant".into(),
                    content: u.text.clone(),
                    keywords: u.index_terms.join("\n"),
                    title: title_col
                        .into_iter()
                        .filter(|t| !t.is_empty())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    meta: json!({
                        "kind": kind,
                        "title": unit_title,
                        "anchor": u.anchor,
                        "url": self.url(&path, u.anchor.as_deref()),
                        "file_path": path,
                        "headings": u.headings,
                        "level": u.level,
                        "index_terms": (!u.index_terms.is_empty()).then_some(&u.index_terms),
                    }),
                    created_at: None,
                    updated_at: None,
                })?;
                for (n, c) in u.code.iter().enumerate() {
                    let mut block = CodeBlock::from_text(
                        next_code,
                        msg_id,
                        c.content.clone(),
                        c.language.clone(),
                        || stable_uuid(&format!("docs:{path}:{unit_index}:{n}")),
                    );
                    if block.component.is_none() && !unit_title.is_empty() {
                        block.component = Some(unit_title.clone());
                    }
                    // The section's address on the block itself (returned
                    // as `code_blocks_meta_url` / `_anchor`): a result
                    // links to it without reading its message.
                    let header = block.header.get_or_insert_with(|| json!({}));
                    if let Some(h) = header.as_object_mut() {
                        h.entry("url")
                            .or_insert_with(|| json!(self.url(&path, u.anchor.as_deref())));
                        h.entry("anchor").or_insert_with(|| json!(u.anchor));
                    }
                    w.add_code_block(&block)?;
                    next_code += 1;
                }
            }
        }
        w.set_page_languages(languages);
        Ok(())
    }

    /// The chat of a page's directory, creating it and its parents.
    fn dir_chat(
        &self,
        f: &SourceFile,
        root: i64,
        dirs: &mut BTreeMap<String, i64>,
        next: &mut i64,
        w: &mut IndexWriter,
    ) -> Result<i64> {
        let path = f.url_path();
        let Some((dir, _)) = path.rsplit_once('/') else {
            return Ok(root);
        };
        let mut parent = root;
        let mut so_far = String::new();
        for part in dir.split('/') {
            if !so_far.is_empty() {
                so_far.push('/');
            }
            so_far.push_str(part);
            if let Some(&id) = dirs.get(&so_far) {
                parent = id;
                continue;
            }
            let id = *next;
            *next += 1;
            w.add_chat(&Chat {
                id,
                parent_id: parent,
                chat_type: DIR_CHAT_TYPE.into(),
                uuid: Some(stable_uuid(&format!("dir:{so_far}"))),
                name: part.to_string(),
                owner: None,
                group_id: None,
                created_at: None,
                modified_at: None,
                meta: json!({
                    "kind": "doc-dir",
                    "path": so_far,
                    "url": self.url(&format!("{so_far}/"), None),
                }),
            })?;
            dirs.insert(so_far.clone(), id);
            parent = id;
        }
        Ok(parent)
    }
}

/// Whether a unit becomes a message: headings and definitions always, the
/// intro when it has text.
/// Whether a page is written: every page but those skipped, and listing
/// pages, whose text without their entries is their own (a page a site
/// ships is searchable: a reference page full of links can look like a
/// listing).
fn indexed(p: &Page) -> bool {
    matches!(p.skip, None | Some(Skip::Listing))
}

/// Whether a unit of a listing page says anything besides its heading.
fn has_prose(u: &Unit) -> bool {
    u.text
        .lines()
        .filter(|l| !(u.kind == UnitKind::Section && l.starts_with('#')))
        .any(|l| l.chars().any(char::is_alphanumeric))
}

/// A heading without its section number (`18.2 Keymaps` → `Keymaps`,
/// `A.1. Setup`, `3. Usage`): the name a reader types. Only a dotted
/// number counts: `2to3` and `404 errors` are words of their titles.
fn unnumbered(title: &str) -> Option<&str> {
    let (number, rest) = title.split_once(char::is_whitespace)?;
    let rest = rest.trim();
    let mut parts = number.strip_suffix('.').unwrap_or(number).split('.');
    let first = parts.next()?;
    let numbered = (first.chars().all(|c| c.is_ascii_digit())
        || (first.len() == 1 && first.chars().all(|c| c.is_ascii_uppercase())))
        && !first.is_empty();
    let rest_numbered = parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    (numbered && rest_numbered && number.contains('.') && rest.chars().any(char::is_alphabetic))
        .then_some(rest)
}

fn emitted(u: &Unit) -> bool {
    !u.copy && (u.kind != UnitKind::Intro || !u.text.is_empty())
}

/// Lower-cased word tokens, split as the full-text tokenizer splits them.
fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// An index entry as a search term: `join() (str method)` → `join`.
pub fn index_term(entry: &str) -> String {
    let mut t = entry.trim();
    if t.ends_with(')') {
        if let Some(i) = t.rfind(" (") {
            t = t[..i].trim();
        }
    }
    t.trim_end_matches("()").trim().to_string()
}

/// Resolves `path` against the directory of the page `from`.
fn join_relative(from: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Directory names above a page and the site title, nearest first.
fn parent_keywords(path: &str, site: &str) -> Vec<String> {
    let mut v: Vec<String> = path.split('/').rev().skip(1).map(str::to_string).collect();
    v.push(site.to_string());
    v
}

/// The first sentence of a paragraph (up to 300 characters).
fn first_sentence(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    for i in 0..chars.len() {
        if matches!(chars[i], '.' | '!' | '?')
            && chars.get(i + 1).is_none_or(|c| c.is_whitespace())
            && i > 20
        {
            // "e.g. " and "i.e. " do not end a sentence.
            let before: String = chars[i.saturating_sub(4)..i].iter().collect();
            if before.ends_with("e.g") || before.ends_with("i.e") || before.ends_with("etc") {
                continue;
            }
            return chars[..=i].iter().collect();
        }
        if i >= 300 {
            return format!("{}...", chars[..i].iter().collect::<String>().trim_end());
        }
    }
    p.to_string()
}

type OverviewMessage = (&'static str, String, Value, String);

/// The tiny and short overview messages of a page, built from its
/// structure (no model involved): title, first sentence or paragraph,
/// headings as keywords, defined names as key entities.
fn overviews(
    p: &Page,
    title: &str,
    path: &str,
    file_name: &str,
    chat_id: i64,
    url: &str,
    parents: &[String],
) -> Vec<OverviewMessage> {
    let mut seen = BTreeSet::new();
    let headings: Vec<&Unit> = p
        .units
        .iter()
        .filter(|u| !u.copy && u.kind == UnitKind::Section && u.title != title)
        .filter(|u| seen.insert(u.title.to_lowercase()))
        .collect();
    let keywords: Vec<String> = headings
        .iter()
        .take(OVERVIEW_KEYWORDS)
        .map(|u| u.title.clone())
        .collect();
    let entities: Vec<String> = p
        .units
        .iter()
        .filter(|u| !u.copy && u.kind == UnitKind::Definition)
        .map(|u| u.title.clone())
        .take(OVERVIEW_ENTITIES)
        .collect();
    let purpose = p
        .first_paragraph
        .as_deref()
        .map(first_sentence)
        .unwrap_or_else(|| title.to_string());
    // GitSense's `file_name` is the stem: `README` + `md`.
    let (stem, extension) = file_name
        .rsplit_once('.')
        .map(|(s, e)| (s.to_string(), e.to_string()))
        .unwrap_or_else(|| (file_name.to_string(), String::new()));
    let meta = |purpose: &str, keywords: &[String]| -> Value {
        json!({
            "file_path": path,
            "file_name": stem,
            "file_extension": extension,
            "chat_id": chat_id,
            "title": title,
            "url": url,
            "purpose": purpose,
            "keywords": keywords,
            "parent_keywords": parents,
            "key_entities": entities,
        })
    };
    let mut tiny = format!("{title}\n\n{purpose}");
    if !keywords.is_empty() {
        tiny.push_str(&format!("\n\nKeywords: {}", keywords.join(", ")));
    }
    if !entities.is_empty() {
        tiny.push_str(&format!("\n\nKey entities: {}", entities.join(", ")));
    }
    let paragraph = p.first_paragraph.clone().unwrap_or_default();
    let mut short = format!("# {title}\n\n{paragraph}");
    if !headings.is_empty() {
        short.push_str("\n\n## Outline\n");
        let top = headings.iter().map(|u| u.level).min().unwrap_or(1);
        for u in &headings {
            let indent = "  ".repeat(u.level.saturating_sub(top) as usize);
            short.push_str(&format!("\n{indent}- {}", u.title));
        }
    }
    let all_headings: Vec<String> = headings.iter().map(|u| u.title.clone()).collect();
    vec![
        (
            TINY_OVERVIEW,
            tiny,
            meta(&purpose, &keywords),
            title.to_string(),
        ),
        (
            SHORT_OVERVIEW,
            short.trim_end().to_string(),
            meta(
                if paragraph.is_empty() {
                    &purpose
                } else {
                    &paragraph
                },
                &all_headings,
            ),
            String::new(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_number_is_not_part_of_the_name() {
        assert_eq!(unnumbered("18.2 Keymaps"), Some("Keymaps"));
        assert_eq!(unnumbered("3. Usage notes"), Some("Usage notes"));
        assert_eq!(unnumbered("A.1 Setup"), Some("Setup"));
        assert_eq!(unnumbered("2to3 Automated translation"), None);
        assert_eq!(unnumbered("404 errors"), None);
        assert_eq!(unnumbered("Keymaps"), None);
        assert_eq!(unnumbered("1.2.3"), None);
        assert_eq!(unnumbered("v1.2 Notes"), None);
    }

    #[test]
    fn index_entries_become_plain_terms() {
        assert_eq!(index_term("join() (str method)"), "join");
        assert_eq!(index_term("Jansen, Jack"), "Jansen, Jack");
        assert_eq!(index_term("os.path.join()"), "os.path.join");
    }

    #[test]
    fn relative_links_resolve_against_the_page() {
        assert_eq!(
            join_relative("library/index.html", "../reference/x.html").as_deref(),
            Some("reference/x.html")
        );
        assert_eq!(
            join_relative("genindex-A.html", "library/a.html").as_deref(),
            Some("library/a.html")
        );
        assert_eq!(join_relative("a.html", "../../x.html"), None);
    }

    #[test]
    fn titles_split_off_the_site_name() {
        assert_eq!(
            split_title("json \u{2014} JSON encoder \u{2014} Python 3.11.2 documentation"),
            Some(("json \u{2014} JSON encoder", "Python 3.11.2 documentation"))
        );
        assert_eq!(split_title("Plain"), None);
    }

    #[test]
    fn first_sentences_skip_abbreviations() {
        assert_eq!(
            first_sentence("Use a tool, e.g. a hammer, to hit nails. Then rest."),
            "Use a tool, e.g. a hammer, to hit nails."
        );
    }

    #[test]
    fn markdown_pages_get_html_urls() {
        let f = |rel: &str| SourceFile {
            rel: rel.into(),
            abs: PathBuf::new(),
            kind: SourceKind::Markdown,
            id: open::FileId::of(&std::fs::metadata(".").unwrap(), false),
        };
        assert_eq!(f("guide/intro.md").url_path(), "guide/intro.html");
        assert_eq!(f("README.md").url_path(), "index.html");
    }
}
