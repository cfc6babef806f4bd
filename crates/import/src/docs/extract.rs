//! One HTML page → its searchable structure ([`Page`]).
//!
//! Takes the main content only: the first of `[data-pagefind-body]`,
//! `[role=main]`, `<main>`, `<body>` (narrowed to its `<article>` when it
//! holds exactly one), and inside it skips navigation, sidebars, headers
//! without headings, footers, forms, scripts, permalink markers and
//! everything marked `data-pagefind-ignore` / `data-search-ignore` /
//! `hidden`. What remains is cut into [`Unit`]s: one per heading (a
//! section, up to the next heading) and one per API definition (a `<dt>`
//! with an `id` and its `<dd>`, as Sphinx and other generators write
//! them, or a heading anchored at an API item's id that shows the item's
//! name as code, as rustdoc and Javadoc write them), plus an untitled
//! intro when text comes before the first heading. The functions a
//! DocBook `funcsynopsis` declares are further names of its section.
//! Every element `id` is remembered with the unit holding it, so links
//! into the page (`page.html#index-3`) can be resolved to a unit.
//!
//! Sphinx index pages (`table.indextable`: `genindex*.html`,
//! `py-modindex.html`) yield [`IndexEntry`]s instead of units.
//!
//! So do listing pages of any generator, told by their shape rather than
//! their name ([`Listing`]): a back-of-book index, symbol index, member
//! list or table of contents is mostly words inside links to the same
//! site, and each link names what its target explains. Source-code
//! listings (Doxygen `*_source.html`, rustdoc `src/`: one numbered anchor
//! per line) are left out without entries: their words are code, and the
//! page documenting that code is the answer.

use gitsense_engine::error::{Error, Result};
use scraper::node::Element;
use scraper::{ElementRef, Html, Node};
use std::collections::HashMap;

/// Why a page is left out of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// `<meta name="robots" content="noindex">`
    NoIndex,
    /// `<meta http-equiv="refresh">`: a redirect stub.
    Redirect,
    /// A site index (Sphinx `genindex`, module index): its entries are
    /// attached to the pages they point to instead.
    SiteIndex,
    /// A page that mostly lists links into the site (`Listing`): as a
    /// site index, its links' texts go to the sections they point to.
    Listing,
    /// A source file shown line by line with an anchor per line.
    SourceListing,
    /// Every section is a copy of another page's (`super::copies`).
    Copy,
}

/// The measure that tells a listing page from a page that explains.
///
/// Counted over the main content as the walker indexes it (navigation and
/// skipped furniture are not counted, nor is code in `<pre>`). The content
/// is cut into text lines (a paragraph, list item, table row, definition
/// term); an *entry* is a line holding an in-site link and at most
/// [`ENTRY_MAX_OTHER_WORDS`] words outside links (`abs() (since C++11)`,
/// `g_hash_table_new, function in Hash Tables`). A page is a listing when
/// it has at least [`LISTING_MIN_ENTRIES`] entries and they are at least
/// [`LISTING_MIN_ENTRY_SHARE`] of its lines. The entry share is the
/// measure, rather than the share of words inside links, because index
/// lines carry kinds and qualifiers (`function in`, `(since C++11)`) that
/// weigh as much as the linked names, while explaining pages always have
/// lines without links: on real sites back-of-book, symbol, member and
/// contents pages have 0.8 to 1.0 of their lines as entries, reference
/// pages (a class with its member table, a header synopsis) 0.3 to 0.55.
/// The entry count keeps short pages out: a stub with three links says
/// nothing about its kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Listing {
    /// In-site links.
    pub links: usize,
    /// Element ids of the form `l00012`, `L12`, `12`, `line-12`.
    pub line_anchors: usize,
    /// Non-empty text lines of the content, code lines included.
    pub lines: usize,
    /// Lines of text outside code.
    pub text_lines: usize,
    /// Those of them that are entries.
    pub entry_lines: usize,
}

/// Most words outside links an entry line has.
pub const ENTRY_MAX_OTHER_WORDS: usize = 6;
/// Fewest entries a listing page has.
pub const LISTING_MIN_ENTRIES: usize = 20;
/// Least share of a listing page's text lines that are entries.
pub const LISTING_MIN_ENTRY_SHARE: f64 = 0.75;
/// Longest word that is a letter dividing an index rather than text.
pub const DIVIDER_MAX_CHARS: usize = 2;
/// Fewest numbered line anchors a source listing has.
pub const SOURCE_MIN_LINE_ANCHORS: usize = 20;

impl Listing {
    /// Whether the page mostly lists links into the site.
    pub fn is_listing(&self) -> bool {
        self.entry_lines >= LISTING_MIN_ENTRIES
            && self.entry_lines as f64 >= LISTING_MIN_ENTRY_SHARE * self.text_lines as f64
    }

    /// Whether the page is a source file shown line by line: numbered
    /// anchors on at least half of its lines.
    pub fn is_source(&self) -> bool {
        self.line_anchors >= SOURCE_MIN_LINE_ANCHORS && self.line_anchors * 2 >= self.lines
    }
}

/// Whether an element id numbers a line: `l00012` (Doxygen), `12`
/// (rustdoc), `L12`, `line-12`, `n12`.
fn is_line_anchor(id: &str) -> bool {
    let digits = id.trim_start_matches(|c: char| !c.is_ascii_digit());
    let prefix = &id[..id.len() - digits.len()];
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && matches!(
            prefix.to_ascii_lowercase().as_str(),
            "" | "l" | "n" | "line" | "line-" | "line_" | "lineno-" | "l-"
        )
}

/// Whether an `href` points into the same site (a relative link).
fn is_site_link(href: &str) -> bool {
    !href.is_empty()
        && !href.starts_with('#')
        && !href.starts_with('/')
        && !href.contains("://")
        && !href.starts_with("mailto:")
        && !href.starts_with("javascript:")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// Text before the first heading.
    Intro,
    /// A heading and the content up to the next heading.
    Section,
    /// An API definition (`<dt id>` + `<dd>`).
    Definition,
}

/// A code block (`<pre>`) with the language its classes name.
#[derive(Debug, Clone, PartialEq)]
pub struct Code {
    pub language: Option<String>,
    pub content: String,
}

/// A searchable part of a page: becomes one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub kind: UnitKind,
    /// Heading text, or the qualified name of a definition.
    pub title: String,
    /// Further names of a definition (overloads, display names).
    pub aliases: Vec<String>,
    /// Fragment id of the unit's start, when the page has one.
    pub anchor: Option<String>,
    /// Heading level (1-6); definitions and the intro take their section's.
    pub level: u8,
    /// Titles of the enclosing headings, outermost first.
    pub headings: Vec<String>,
    /// Text in Markdown-like form: heading line, paragraphs, fenced code.
    pub text: String,
    pub code: Vec<Code>,
    /// Terms of the site's own index that point into this unit.
    pub index_terms: Vec<String>,
    /// A copy of another page's text (`super::copies`): not indexed.
    pub copy: bool,
}

/// An entry of a site index: a term and the links it lists.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexEntry {
    pub term: String,
    /// `href` values as written (relative to the index page).
    pub hrefs: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    /// First `<h1>` of the content, else the `<title>`, else empty.
    pub title: String,
    /// The `<title>` element's text.
    pub html_title: Option<String>,
    /// The page's language as `<html lang>` (or `xml:lang`) names it,
    /// lowercased (`page_language`).
    pub lang: Option<String>,
    pub skip: Option<Skip>,
    pub units: Vec<Unit>,
    /// Element id → index of the unit holding it.
    pub anchors: HashMap<String, usize>,
    /// First paragraph of at least `MIN_PARAGRAPH_WORDS` words.
    pub first_paragraph: Option<String>,
    pub index_entries: Vec<IndexEntry>,
    /// How much of the content is links (`Listing`).
    pub listing: Listing,
}

/// Shorter paragraphs ("Source code: Lib/json/__init__.py") do not
/// describe a page.
pub const MIN_PARAGRAPH_WORDS: usize = 8;

/// Attributes that keep an element and its subtree out of the index.
pub const IGNORE_ATTRIBUTES: &[&str] = &["data-pagefind-ignore", "data-search-ignore", "hidden"];

/// Elements never indexed.
const SKIP_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "nav", "footer", "form", "button", "select",
    "textarea", "input", "iframe", "object", "canvas", "head", "link", "meta", "dialog",
];

/// Classes of navigation and decoration inside main content: permalink
/// markers (Sphinx, MkDocs `headerlink`, Docusaurus `hash-link`, VitePress
/// `header-anchor`, Doxygen `permalink`, makeinfo `copiable-anchor`),
/// tables of contents (Sphinx
/// `toctree-wrapper`, Docusaurus `table-of-contents`, makeinfo
/// `Contents_element` / `region-contents`), node navigation (makeinfo
/// `nav-panel`), line numbers, rustdoc's version and source links
/// (`out-of-band`, `srclink`) and its collapse toggles (`hideme`),
/// Doxygen's breadcrumbs in a title (`ingroups`), the previous/next card
/// of Hugo's Doks theme (`page-nav`).
const SKIP_CLASSES: &[&str] = &[
    "headerlink",
    "hash-link",
    "header-anchor",
    "permalink",
    "copiable-anchor",
    "Contents_element",
    "region-contents",
    "nav-panel",
    "ingroups",
    "out-of-band",
    "srclink",
    "hideme",
    "toctree-wrapper",
    "table-of-contents",
    "theme-doc-toc-mobile",
    "theme-doc-toc-desktop",
    "linenos",
    "lineno",
    "sphinxsidebar",
    "related",
    "breadcrumbs",
    "md-sidebar",
    "md-source-file",
    "rightside",
    "page-nav",
];

/// ARIA roles of page furniture.
const SKIP_ROLES: &[&str] = &[
    "navigation",
    "search",
    "banner",
    "contentinfo",
    "complementary",
];

/// `<aside>` classes that mark content (footnotes, reST topics) rather
/// than a sidebar.
const CONTENT_ASIDE_CLASSES: &[&str] = &[
    "footnote",
    "footnote-list",
    "topic",
    "sidebar",
    "citation",
    "admonition",
];

const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "ul",
    "ol",
    "li",
    "dl",
    "dt",
    "dd",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "blockquote",
    "figure",
    "figcaption",
    "hr",
    "details",
    "summary",
    "aside",
    "header",
    "caption",
    "address",
    "center",
];

/// Deepest element nesting a page may have (a browser's parser caps it at
/// 512; documentation pages stay far below): a deeper page is refused
/// with `import.page_too_deep`, since the extraction below walks the tree
/// recursively and the HTML parser's work grows with depth squared.
pub const MAX_NESTING: usize = 256;

/// The language tag of a page's root element (`lang`, else `xml:lang`),
/// lowercased with `_` read as `-` (`en`, `pt-br`, `zh-cn`); `None` when
/// there is none or it is not a tag (letters, digits and `-`, starting
/// with a letter).
pub fn page_language(html: &Element) -> Option<String> {
    let raw = html.attr("lang").or_else(|| html.attr("xml:lang"))?;
    let tag = raw.trim().replace('_', "-").to_ascii_lowercase();
    let valid = (2..=35).contains(&tag.len())
        && tag.starts_with(|c: char| c.is_ascii_alphabetic())
        && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    valid.then_some(tag)
}

/// Parses a page; `import.page_too_deep` for one nested deeper than
/// `MAX_NESTING`.
pub fn parse_page(html: &str) -> Result<Page> {
    // Before parsing, to bound the parser's own work; after, on the tree
    // itself, to bound the walks.
    if tag_nesting(html) > MAX_NESTING {
        return Err(too_deep());
    }
    let doc = Html::parse_document(html);
    if tree_depth(&doc) > MAX_NESTING {
        return Err(too_deep());
    }
    let root = doc.root_element();
    let mut page = Page {
        html_title: first_element(root, &|e| e.name() == "title")
            .map(|t| normalize_ws(&t.text().collect::<String>()))
            .filter(|t| !t.is_empty()),
        lang: page_language(root.value()),
        ..Page::default()
    };
    for meta in root
        .descendent_elements()
        .filter(|e| e.value().name() == "meta")
    {
        let v = meta.value();
        let content = v.attr("content").unwrap_or("").to_ascii_lowercase();
        if v.attr("name")
            .is_some_and(|n| n.eq_ignore_ascii_case("robots"))
            && content.contains("noindex")
        {
            page.skip = Some(Skip::NoIndex);
        }
        if v.attr("http-equiv")
            .is_some_and(|n| n.eq_ignore_ascii_case("refresh"))
            && content.contains("url=")
        {
            page.skip = Some(Skip::Redirect);
        }
    }
    let tables: Vec<ElementRef> = root
        .descendent_elements()
        .filter(|e| e.value().name() == "table" && has_class(e.value(), "indextable"))
        .collect();
    if !tables.is_empty() {
        page.skip = Some(Skip::SiteIndex);
        for t in tables {
            index_entries(t, &mut page.index_entries);
        }
    }
    if page.skip.is_some() {
        page.title = page.html_title.clone().unwrap_or_default();
        return Ok(page);
    }
    let content = main_content(root);
    let mut w = Walker::new();
    w.root = content.value();
    w.walk(content);
    w.finish();
    page.listing = w.listing;
    page.listing.line_anchors = content
        .descendent_elements()
        .filter(|d| {
            let v = d.value();
            v.id()
                .or_else(|| v.attr("name"))
                .is_some_and(is_line_anchor)
        })
        .count();
    page.listing.lines = w
        .units
        .iter()
        .map(|u| u.text.lines().filter(|l| !l.trim().is_empty()).count())
        .sum();
    if page.listing.is_source() {
        page.skip = Some(Skip::SourceListing);
    } else if page.listing.is_listing() {
        page.skip = Some(Skip::Listing);
        listing_entries(content, &mut page.index_entries);
        // What a listing says besides its entries is its own text: the
        // entries go to the pages they name.
        for &(unit, start, end) in w.entry_spans.iter().rev() {
            w.units[unit].text.replace_range(start..end, "");
        }
        for u in &mut w.units {
            u.text = tidy_lines(&u.text);
        }
    }
    page.units = w.units;
    page.anchors = w.anchors;
    page.first_paragraph = w.first_paragraph;
    page.title = page
        .units
        .iter()
        .find(|u| u.kind == UnitKind::Section && u.level == 1)
        .map(|u| u.title.clone())
        .or_else(|| page.html_title.clone())
        .or_else(|| {
            page.units
                .iter()
                .find(|u| u.kind == UnitKind::Section)
                .map(|u| u.title.clone())
        })
        .unwrap_or_default();
    Ok(page)
}

fn too_deep() -> Error {
    Error::new(
        "import.page_too_deep",
        format!("elements are nested more than {MAX_NESTING} deep"),
    )
}

/// Elements without content (never open).
const VOID_TAGS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen", "frame",
];

/// Elements whose end tag may be left out: a second one closes the first,
/// so they do not nest without an element counted here between them.
const OPTIONAL_END_TAGS: &[&str] = &[
    "p", "li", "dt", "dd", "option", "optgroup", "rb", "rt", "rtc", "rp", "tr", "td", "th",
    "thead", "tbody", "tfoot", "colgroup", "caption", "html", "head", "body",
];

/// Elements whose content is text up to their end tag.
const RAW_TEXT_TAGS: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
];

/// How deep the tags of `html` nest, estimated from the text alone in one
/// pass (a stack of open tags; an end tag closes the innermost matching
/// one and those inside it, as the parser does), stopping as soon as it
/// passes [`MAX_NESTING`].
fn tag_nesting(html: &str) -> usize {
    let b = html.as_bytes();
    let find = |from: usize, pat: &[u8]| -> Option<usize> {
        b.get(from..)?
            .windows(pat.len())
            .position(|w| w.eq_ignore_ascii_case(pat))
            .map(|i| from + i)
    };
    let mut stack: Vec<String> = Vec::new();
    let mut deepest = 0;
    let mut i = 0;
    while let Some(lt) = b[i..].iter().position(|&c| c == b'<').map(|p| i + p) {
        if b[lt..].starts_with(b"<!--") {
            i = find(lt + 4, b"-->").map_or(b.len(), |e| e + 3);
            continue;
        }
        let closing = b.get(lt + 1) == Some(&b'/');
        let start = lt + 1 + usize::from(closing);
        let len = b[start..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        let Some(gt) = b[start..]
            .iter()
            .position(|&c| c == b'>')
            .map(|p| start + p)
        else {
            break;
        };
        i = gt + 1;
        if len == 0 || !b[start].is_ascii_alphabetic() {
            continue;
        }
        let name = html[start..start + len].to_ascii_lowercase();
        if closing {
            if let Some(at) = stack.iter().rposition(|t| *t == name) {
                stack.truncate(at);
            }
        } else if RAW_TEXT_TAGS.contains(&name.as_str()) {
            let end = format!("</{name}");
            i = find(i, end.as_bytes()).unwrap_or(b.len());
        } else if !(b[gt - 1] == b'/'
            || VOID_TAGS.contains(&name.as_str())
            || OPTIONAL_END_TAGS.contains(&name.as_str()))
        {
            stack.push(name);
            deepest = deepest.max(stack.len());
            if deepest > MAX_NESTING {
                break;
            }
        }
    }
    deepest
}

/// How deep the parsed tree's elements nest (an iterative traversal).
fn tree_depth(doc: &Html) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for edge in doc.tree.root().traverse() {
        match edge {
            ego_tree::iter::Edge::Open(n) if n.value().is_element() => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ego_tree::iter::Edge::Close(n) if n.value().is_element() => depth -= 1,
            _ => {}
        }
    }
    deepest
}

fn first_element<'a>(
    root: ElementRef<'a>,
    pred: &dyn Fn(&Element) -> bool,
) -> Option<ElementRef<'a>> {
    root.descendent_elements().find(|e| pred(e.value()))
}

fn has_class(e: &Element, class: &str) -> bool {
    e.classes().any(|c| c == class)
}

/// The element holding the page's main content.
fn main_content(root: ElementRef<'_>) -> ElementRef<'_> {
    let found = first_element(root, &|e| e.attr("data-pagefind-body").is_some())
        .or_else(|| first_element(root, &|e| e.attr("role") == Some("main")))
        .or_else(|| first_element(root, &|e| e.name() == "main"))
        .or_else(|| first_element(root, &|e| e.name() == "body"))
        .unwrap_or(root);
    let mut articles = found
        .descendent_elements()
        .filter(|e| e.value().name() == "article");
    match (articles.next(), articles.next()) {
        (Some(a), None) => a,
        _ => found,
    }
}

/// Words that name page furniture when a class is made of them.
const FURNITURE_CLASS_WORDS: &[&str] =
    &["navbar", "navigation", "navheader", "navfooter", "footer"];

/// A navigation bar's or footer's class in any naming scheme (`navbar`,
/// `t-navbar`, `site_navbar`, gtk-doc's `navigation` table, DocBook XSL's
/// `navheader` / `navfooter`, `md-footer`, gtk-doc's `footer`, ...): links
/// to other pages and colophons, not content, that would otherwise make a
/// short page look like a listing.
fn is_navbar_class(class: &str) -> bool {
    class.split(['-', '_']).any(|part| {
        FURNITURE_CLASS_WORDS
            .iter()
            .any(|w| part.eq_ignore_ascii_case(w))
    })
}

/// Whether an element (and its subtree) stays out of the index.
fn skipped(e: &Element) -> bool {
    let name = e.name();
    if SKIP_TAGS.contains(&name) {
        return true;
    }
    if IGNORE_ATTRIBUTES.iter().any(|a| e.attr(a).is_some()) {
        return true;
    }
    if e.attr("aria-hidden") == Some("true") {
        return true;
    }
    if e.attr("role").is_some_and(|r| SKIP_ROLES.contains(&r)) {
        return true;
    }
    if e.classes()
        .any(|c| SKIP_CLASSES.contains(&c) || is_navbar_class(c))
    {
        return true;
    }
    if name == "aside"
        && e.attr("role") != Some("note")
        && !e.classes().any(|c| CONTENT_ASIDE_CLASSES.contains(&c))
    {
        return true;
    }
    false
}

/// Link relations of page-to-page navigation (`<a rel="next">`).
const NAVIGATION_RELS: &[&str] = &[
    "next", "prev", "previous", "up", "top", "start", "first", "last", "contents", "index",
];

/// Most words outside links a navigation bar has (`Next:`, `Up:`), and
/// at most one a link.
const NAVIGATION_MAX_OTHER_WORDS: usize = 12;

/// Most elements a navigation bar holds.
const NAVIGATION_MAX_ELEMENTS: usize = 64;

/// Whether a block holds only page-to-page navigation: links that all
/// carry a navigation relation (Texinfo's `Next: … Previous: … Up: …`
/// panel, a pager) and no more words around them than links.
fn is_relation_navigation(e: ElementRef<'_>) -> bool {
    if !matches!(
        e.value().name(),
        "div" | "p" | "table" | "tr" | "td" | "ul" | "ol" | "li"
    ) {
        return false;
    }
    let mut links = 0;
    for (seen, a) in e.descendent_elements().enumerate() {
        // A bar is small; the bound keeps this check cheap on every block.
        if seen >= NAVIGATION_MAX_ELEMENTS {
            return false;
        }
        if a.value().name() != "a" || a.value().attr("href").is_none() {
            continue;
        }
        let navigates = a
            .value()
            .attr("rel")
            .is_some_and(|r| r.split_whitespace().any(|r| NAVIGATION_RELS.contains(&r)));
        if !navigates {
            return false;
        }
        links += 1;
    }
    if links == 0 {
        return false;
    }
    // Words with a letter outside the links: a bar labels each link with
    // one (`Next:`, `Up:`); prose around a `rel="next"` link has more.
    let lettered = |t: &str| {
        t.split_whitespace()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .count()
    };
    let link_words: usize = e
        .descendent_elements()
        .filter(|d| d.value().name() == "a")
        .map(|a| lettered(&inline_text(a)))
        .sum();
    lettered(&inline_text(e)).saturating_sub(link_words) <= links.min(NAVIGATION_MAX_OTHER_WORDS)
}

/// The heading level of an element: `<h1>`-`<h6>`, or an ARIA heading
/// (`role="heading" aria-level="2"`).
///
/// Doxygen's `div.headertitle` is not taken as a heading: its member-list
/// pages (`*-members.html`, most too short to be listings) would then be
/// titled with their class's name and outrank the class's own page.
fn heading_level(e: &Element) -> Option<u8> {
    if let Some(level) = is_heading(e.name()) {
        return Some(level);
    }
    (e.attr("role") == Some("heading")).then(|| {
        e.attr("aria-level")
            .and_then(|l| l.trim().parse::<u8>().ok())
            .unwrap_or(2)
            .clamp(1, 6)
    })
}

fn is_heading(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// Characters that take no room: generators put them in permalink
/// markers (VitePress, Docusaurus `&ZeroWidthSpace;`) and as line-break
/// hints; they are not words.
fn is_zero_width(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}'
    )
}

/// Collapses runs of whitespace into single spaces, drops zero-width
/// characters, and trims.
pub fn normalize_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        let start = out.len();
        if start > 0 {
            out.push(' ');
        }
        let word = out.len();
        if w.contains(is_zero_width) {
            out.extend(w.chars().filter(|c| !is_zero_width(*c)));
        } else {
            out.push_str(w);
        }
        if out.len() == word {
            out.truncate(start);
        }
    }
    out
}

/// Visible text of an element, honouring the skip rules.
fn inline_text(e: ElementRef<'_>) -> String {
    fn collect(e: ElementRef<'_>, out: &mut String) {
        for child in e.children() {
            match child.value() {
                Node::Text(t) => out.push_str(t),
                Node::Element(el) if !skipped(el) => {
                    if let Some(ce) = ElementRef::wrap(child) {
                        if is_permalink_marker(ce) {
                            continue;
                        }
                        if el.name() == "br" || is_drawn_separator(ce) {
                            out.push(' ');
                        }
                        collect(ce, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut s = String::new();
    collect(e, &mut s);
    normalize_ws(&s)
}

/// A heading that is only a link to another page: no id of its own (it
/// is not a place on this page; the caller checks the anchors before it
/// and around it), and all of its text the text of one link to another
/// file of the site, to the file itself: a heading linking to a place in
/// another file is a way back (texi2html's to its table of contents).
fn is_pointer_heading(e: ElementRef<'_>, title: &str) -> bool {
    if e.value().id().is_some()
        || e.descendants()
            .filter_map(ElementRef::wrap)
            .any(|d| d.value().id().is_some() || d.value().attr("name").is_some())
    {
        return false;
    }
    let mut links = e
        .descendants()
        .filter_map(ElementRef::wrap)
        .filter(|d| d.value().name() == "a" && d.value().attr("href").is_some());
    match (links.next(), links.next()) {
        (Some(a), None) => {
            let href = a.value().attr("href").unwrap_or_default();
            is_site_link(href) && !href.contains(['#', '?']) && inline_text(a) == title
        }
        _ => false,
    }
}

/// An empty element with a class (`<span class="sep"></span>` between
/// the parts of `Gsk·BlurNode·get_radius`): what it shows, stylesheets
/// draw, and it parts the words on either side as the page shows them.
/// `<wbr>` is a break opportunity inside a word, not a separator.
fn is_drawn_separator(e: ElementRef<'_>) -> bool {
    let el = e.value();
    el.name() != "wbr"
        && el.attr("class").is_some_and(|c| !c.trim().is_empty())
        && !e.children().any(|c| {
            c.value().is_element() || c.value().as_text().is_some_and(|t| !t.trim().is_empty())
        })
}

/// Marks a generator puts in a heading to link to it (`#`, `¶`, `§`,
/// a link symbol), when no class tells them apart.
const PERMALINK_GLYPHS: &[char] = &['#', '¶', '§', '🔗', '⚓', '\u{FE0E}', '\u{FE0F}'];

/// A link to an anchor of the page whose text is only permalink glyphs
/// (`<a href="#usage">#</a>`): a marker, not words of the heading.
fn is_permalink_marker(e: ElementRef<'_>) -> bool {
    e.value().name() == "a" && e.value().attr("href").is_some_and(|h| h.starts_with('#')) && {
        let text: String = e.text().collect();
        let mut glyphs = text
            .chars()
            .filter(|c| !c.is_whitespace() && !is_zero_width(*c))
            .peekable();
        glyphs.peek().is_some() && glyphs.all(|c| PERMALINK_GLYPHS.contains(&c))
    }
}

/// Whether a name is one identifier (letters, digits, `_`, `$`; not
/// starting with a digit).
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The name of the API item an element id names, in the forms API
/// generators write: `KIND.NAME` (rustdoc: `method.insert`,
/// `structfield.start`, `variant.Some`, and `method.into_iter-1` for a
/// repeated one), `NAME(PARAMS)` (Javadoc methods:
/// `abbreviate(java.lang.String,int)`) or the bare name (Javadoc fields:
/// `SPACE`). Whether the element defines it is for its markup to say
/// ([`Walker::shows_item`]): most ids that fit are section slugs.
fn item_name(id: &str) -> Option<&str> {
    let base = id.split_once('(').map_or(id, |(name, _)| name);
    let base = match base.split_once('.') {
        Some((kind, rest)) if !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_lowercase()) => {
            rest
        }
        Some(_) => return None,
        None => base,
    };
    let base = match base.rsplit_once('-') {
        Some((name, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => base,
    };
    is_identifier(base).then_some(base)
}

/// Classes of the elements API generators write a member's signature in:
/// rustdoc's `code-header` headings, Javadoc's `member-signature`.
const SIGNATURE_CLASSES: &[&str] = &["code-header", "member-signature"];

/// Whether `e` shows `name` as a word of code: in a signature
/// ([`SIGNATURE_CLASSES`]) or, with `code_too`, a `<code>` (itself or
/// inside).
fn shows_in_code(e: ElementRef<'_>, name: &str, code_too: bool) -> bool {
    std::iter::once(e)
        .chain(e.descendent_elements())
        .filter(|d| {
            let v = d.value();
            v.classes().any(|c| SIGNATURE_CLASSES.contains(&c)) || (code_too && v.name() == "code")
        })
        .any(|d| {
            inline_text(d)
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .any(|w| w == name)
        })
}

/// Words API generators title an item's page with, before its path
/// (rustdoc `Struct std::collections::HashMap`, Javadoc `Class
/// StringUtils`).
const API_PAGE_KINDS: &[&str] = &[
    "Struct",
    "Enum",
    "Trait",
    "Union",
    "Type",
    "Primitive",
    "Class",
    "Interface",
    "Record",
    "Annotation",
    "Exception",
];

/// The item an API page documents, from its title (`Struct
/// std::collections::HashMap` → `std::collections::HashMap`, `Class
/// Pair<L,R>` → `Pair`), when the title is a kind word and a path.
fn api_page_item(title: &str) -> Option<&str> {
    let mut words = title.split_whitespace();
    let kind = words.next()?;
    let path = words.last()?;
    let path = path.split_once('<').map_or(path, |(p, _)| p);
    let is_path = path
        .split("::")
        .flat_map(|p| p.split('.'))
        .all(is_identifier);
    (API_PAGE_KINDS.contains(&kind) && is_path).then_some(path)
}

/// The anchor an element holds for what it shows when it has no id of
/// its own: `<dt><a name="opt-count"></a>--count</dt>` (older
/// generators), `<dt><code id="...">`. Links are not anchors.
fn inner_anchor<'a>(e: ElementRef<'a>) -> Option<&'a str> {
    e.descendent_elements()
        .filter(|d| !skipped(d.value()))
        .find_map(|d| {
            let v = d.value();
            if v.name() == "a" {
                if v.attr("href").is_some() {
                    return None;
                }
                v.id().or_else(|| v.attr("name"))
            } else {
                v.id()
            }
        })
}

/// Whether an element holds a link to another page or site (a link to
/// an anchor of the same page is a permalink).
fn links_out(e: ElementRef<'_>) -> bool {
    e.descendent_elements().any(|d| {
        d.value().name() == "a"
            && !skipped(d.value())
            && d.value().attr("href").is_some_and(|h| !h.starts_with('#'))
    })
}

/// A `<pre>` of at least this many lines and anchors is plain text with
/// tagged terms, not code ([`Walker::anchored_text`]).
const TEXT_PRE_MIN_LINES: usize = 20;
const TEXT_PRE_MIN_ANCHORS: usize = 3;

/// Words at most in a table cell that names what its row defines.
const MAX_ROW_NAME_WORDS: usize = 6;

/// The name a table row defines and its anchor: a row of a function,
/// parameter or option table, anchored (`<tr id>`, or an anchor in its
/// first cell), whose first cell is a short name and which has a cell
/// describing it. Header rows and rows of one cell define nothing.
fn defined_by_row<'a>(tr: ElementRef<'a>) -> Option<(String, &'a str)> {
    let cells: Vec<ElementRef<'a>> = tr
        .child_elements()
        .filter(|c| matches!(c.value().name(), "td" | "th") && !skipped(c.value()))
        .collect();
    let first = *cells.first()?;
    if cells.len() < 2 || cells.iter().all(|c| c.value().name() == "th") {
        return None;
    }
    let id = tr
        .value()
        .id()
        .or_else(|| first.value().id().or_else(|| inner_anchor(first)))?;
    // A name is shown as one (code, bold): a plain first cell is a type
    // or a label (Doxygen's `void` column), a linked one points at the
    // definition elsewhere.
    let shown: String = first
        .descendent_elements()
        .filter(|d| ROW_NAME_TAGS.contains(&d.value().name()))
        .map(|d| inline_text(d))
        .collect::<Vec<_>>()
        .join(" ");
    let links = links_out(first);
    let name = inline_text(first);
    let words = name.split_whitespace().count();
    (!links
        && words > 0
        && words <= MAX_ROW_NAME_WORDS
        && name.chars().any(char::is_alphabetic)
        && shown.split_whitespace().count() * 2 >= words)
        .then_some((name, id))
}

/// Elements that show a table cell's text as a name.
const ROW_NAME_TAGS: &[&str] = &["code", "tt", "kbd", "samp", "var", "b", "strong"];

fn has_heading_inside(e: ElementRef<'_>) -> bool {
    e.descendent_elements()
        .any(|d| heading_level(d.value()).is_some())
}

/// The name a `<dt>` defines: the qualified name when the id spells it
/// (`json.JSONDecoder.decode` for a method shown as `decode`), else the
/// displayed name (`sig-prename` + `sig-name`), else the `<dt>`'s text.
fn definition_name(dt: ElementRef<'_>, id: &str) -> (String, Option<String>) {
    let part = |classes: &[&str]| -> String {
        dt.descendent_elements()
            .filter(|d| d.value().classes().any(|c| classes.contains(&c)))
            .map(|d| inline_text(d))
            .next()
            .unwrap_or_default()
    };
    let name = part(&["sig-name", "descname"]);
    let prename = part(&["sig-prename", "descclassname"]);
    if name.is_empty() {
        let text = inline_text(dt);
        let short: String = text
            .split(['(', '\u{b6}'])
            .next()
            .unwrap_or("")
            .trim()
            .chars()
            .take(120)
            .collect();
        return (short, None);
    }
    let shown = format!("{prename}{name}");
    let is_path = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        && id.ends_with(&name);
    // Sphinx's C domain prefixes ids with "c."; the shown name is the name.
    if is_path && !id.starts_with("c.") && id.len() > shown.len() {
        (id.to_string(), Some(shown).filter(|s| s != id))
    } else {
        (shown, None)
    }
}

/// Reads a Sphinx index table: each `<li>` is a term with its links;
/// nested lists refine the term (`Java` → `Java language`) or qualify it
/// (`join()` → `(bytes method)`, same term).
fn index_entries(table: ElementRef<'_>, out: &mut Vec<IndexEntry>) {
    fn item(li: ElementRef<'_>, parent: Option<&str>, out: &mut Vec<IndexEntry>) {
        let mut label = String::new();
        let mut hrefs = Vec::new();
        let mut nested = Vec::new();
        for child in li.children() {
            match child.value() {
                Node::Text(t) if hrefs.is_empty() => label.push_str(t),
                Node::Element(el) => {
                    let Some(ce) = ElementRef::wrap(child) else {
                        continue;
                    };
                    match el.name() {
                        "a" => {
                            if let Some(h) = el.attr("href") {
                                if hrefs.is_empty() && normalize_ws(&label).is_empty() {
                                    label = inline_text(ce);
                                }
                                hrefs.push(h.to_string());
                            }
                        }
                        "ul" | "dl" => nested.push(ce),
                        _ if hrefs.is_empty() => label.push_str(&inline_text(ce)),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        let label = normalize_ws(&label);
        let label = label.trim_end_matches(',').trim();
        let term = match parent {
            Some(p) if label.starts_with('(') || label.is_empty() => p.to_string(),
            Some(p) => format!("{p} {label}"),
            None => label.to_string(),
        };
        if !hrefs.is_empty() && !term.is_empty() {
            out.push(IndexEntry {
                term: term.clone(),
                hrefs,
            });
        }
        for ul in nested {
            for sub in ul.child_elements().filter(|c| c.value().name() == "li") {
                item(sub, Some(&term), out);
            }
        }
    }
    for td in table.descendent_elements().filter(|e| {
        matches!(e.value().name(), "td")
            && e.parent()
                .and_then(|p| p.parent())
                .and_then(ElementRef::wrap)
                .is_some_and(|t| {
                    t.value().name() == "table"
                        || t.parent()
                            .and_then(ElementRef::wrap)
                            .is_some_and(|tt| tt.value().name() == "table")
                })
    }) {
        // genindex: <td><ul><li>...; modindex: <td><a href><code>name</code></a></td>
        let mut found_list = false;
        for ul in td.child_elements().filter(|c| c.value().name() == "ul") {
            found_list = true;
            for li in ul.child_elements().filter(|c| c.value().name() == "li") {
                item(li, None, out);
            }
        }
        if !found_list {
            for a in td.child_elements().filter(|c| c.value().name() == "a") {
                if let Some(h) = a.value().attr("href") {
                    let term = inline_text(a);
                    if !term.is_empty() {
                        out.push(IndexEntry {
                            term,
                            hrefs: vec![h.to_string()],
                        });
                    }
                }
            }
        }
    }
}

/// Most words a link text may have to be taken as a term ("see the
/// chapter on ..." is a sentence, not a name).
const MAX_TERM_WORDS: usize = 8;

/// Reads a listing page: each in-site link whose text names something
/// (has a letter, at most [`MAX_TERM_WORDS`] words) is a term for what
/// it points to.
fn listing_entries(content: ElementRef<'_>, out: &mut Vec<IndexEntry>) {
    fn walk(e: ElementRef<'_>, out: &mut Vec<IndexEntry>) {
        for c in e.child_elements() {
            let el = c.value();
            if skipped(el) {
                continue;
            }
            if el.name() == "a" {
                if let Some(h) = el.attr("href").filter(|h| is_site_link(h)) {
                    let term = inline_text(c);
                    if term.chars().any(char::is_alphabetic)
                        && term.split_whitespace().count() <= MAX_TERM_WORDS
                    {
                        out.push(IndexEntry {
                            term,
                            hrefs: vec![h.to_string()],
                        });
                    }
                }
                continue;
            }
            walk(c, out);
        }
    }
    walk(content, out);
}

/// `text` without blank lines left where lines were taken out: at most
/// one blank line between paragraphs, none at the ends.
fn tidy_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// Walks the main content and cuts it into units.
struct Walker {
    units: Vec<Unit>,
    /// Units open for text: the section, then nested definitions.
    stack: Vec<usize>,
    /// (level, title) of the open headings.
    headings: Vec<(u8, String)>,
    anchors: HashMap<String, usize>,
    /// Ids seen since the last text: they belong to what comes next.
    pending_ids: Vec<String>,
    first_paragraph: Option<String>,
    /// Whitespace seen but not yet written.
    space: bool,
    /// The content root's element (by address), where anchor lookups stop.
    root: *const Element,
    listing: Listing,
    /// Inside an in-site link (its words count as link text).
    in_link: bool,
    /// The text line being written: links and words outside links.
    line_links: usize,
    /// Where the text line being written starts: (unit, byte offset).
    line_start: Option<(usize, usize)>,
    /// The text lines counted as entries: (unit, start, end) in its text.
    entry_spans: Vec<(usize, usize, usize)>,
    line_other_words: usize,
    line_words: usize,
    /// Characters of the line's words.
    line_chars: usize,
    /// Whether the last line counted was an entry.
    last_line_entry: bool,
    /// Inside a `<dd>` glossing an entry: its lines are part of the entry.
    in_gloss: bool,
    /// The level of the open heading when an item header that is not a
    /// heading opened it ([`Walker::item_header_level`]).
    open_item_header: Option<u8>,
}

impl Walker {
    fn new() -> Self {
        Walker {
            units: vec![Unit {
                kind: UnitKind::Intro,
                title: String::new(),
                aliases: vec![],
                anchor: None,
                level: 1,
                headings: vec![],
                text: String::new(),
                code: vec![],
                index_terms: vec![],
                copy: false,
            }],
            stack: vec![0],
            headings: vec![],
            anchors: HashMap::new(),
            pending_ids: vec![],
            first_paragraph: None,
            space: false,
            root: std::ptr::null(),
            listing: Listing::default(),
            in_link: false,
            line_links: 0,
            line_start: None,
            entry_spans: Vec::new(),
            line_other_words: 0,
            line_words: 0,
            line_chars: 0,
            last_line_entry: false,
            in_gloss: false,
            open_item_header: None,
        }
    }

    fn current(&mut self) -> &mut Unit {
        let i = *self.stack.last().expect("the walker always has a unit");
        &mut self.units[i]
    }

    fn flush_ids(&mut self) {
        let i = *self.stack.last().expect("the walker always has a unit");
        for id in std::mem::take(&mut self.pending_ids) {
            self.anchors.entry(id).or_insert(i);
        }
    }

    fn push_text(&mut self, s: &str) {
        if s.chars().all(|c| c.is_whitespace() || is_zero_width(c)) {
            if !s.is_empty() {
                self.space = true;
            }
            return;
        }
        self.flush_ids();
        let lead = s.starts_with(char::is_whitespace);
        let trail = s.ends_with(char::is_whitespace);
        let words = normalize_ws(s);
        let n = words.split_whitespace().count();
        if self.line_start.is_none() {
            let unit = *self.stack.last().expect("the walker always has a unit");
            self.line_start = Some((unit, self.units[unit].text.len()));
        }
        self.line_words += n;
        self.line_chars += words.chars().filter(|c| !c.is_whitespace()).count();
        if !self.in_link {
            self.line_other_words += n;
        }
        let space = self.space || lead;
        let u = self.current();
        if space && !u.text.is_empty() && !u.text.ends_with([' ', '\n']) {
            u.text.push(' ');
        }
        u.text.push_str(&words);
        self.space = trail;
    }

    /// Ends the text line being written, counting it as an entry when
    /// it is a link with little else ([`Listing`]). Not counted: a letter
    /// dividing an index (`A`, `B`, ...: one word of at most
    /// [`DIVIDER_MAX_CHARS`] characters without a link), and the lines of
    /// a `<dd>` glossing an entry (Javadoc's `index-all`: the linked
    /// member, then its first sentence), which belong to that entry.
    fn end_line(&mut self) {
        let divider =
            self.line_words == 1 && self.line_chars <= DIVIDER_MAX_CHARS && self.line_links == 0;
        if self.line_words > 0 && !divider && !self.in_gloss {
            self.listing.text_lines += 1;
            self.last_line_entry =
                self.line_links > 0 && self.line_other_words <= ENTRY_MAX_OTHER_WORDS;
            if self.last_line_entry {
                self.listing.entry_lines += 1;
                if let Some((unit, start)) = self.line_start {
                    let end = self.units[unit].text.len();
                    self.entry_spans.push((unit, start, end));
                }
            }
        }
        self.line_start = None;
        self.line_links = 0;
        self.line_other_words = 0;
        self.line_words = 0;
        self.line_chars = 0;
    }

    fn block_break(&mut self) {
        self.end_line();
        let u = self.current();
        if !u.text.is_empty() && !u.text.ends_with("\n\n") {
            let t = u.text.trim_end_matches([' ', '\n']).len();
            u.text.truncate(t);
            u.text.push_str("\n\n");
        }
        self.space = false;
    }

    fn line_break(&mut self) {
        self.end_line();
        let u = self.current();
        if !u.text.is_empty() && !u.text.ends_with('\n') {
            let t = u.text.trim_end_matches(' ').len();
            u.text.truncate(t);
            u.text.push('\n');
        }
        self.space = false;
    }

    fn open_unit(&mut self, kind: UnitKind, title: String, mut anchor: Option<String>, level: u8) {
        let headings = self.headings.iter().map(|(_, t)| t.clone()).collect();
        // A heading with nothing under it before a definition it names
        // (makeinfo's `<h4 class="subheading">gnutls_init</h4>` over the
        // `<dl class="def">` of `Function: int gnutls_init`) is the
        // definition's heading, not a section of its own: alone, its few
        // words would outrank every page that says more about them. (A
        // heading over several definitions, `Functions`, names none of
        // them and stays.)
        if let Some(bare) = self.units.last().filter(|u| {
            u.kind == UnitKind::Section
                && !u.copy
                && u.code.is_empty()
                && u.index_terms.is_empty()
                && kind == UnitKind::Definition
                && title.contains(u.title.as_str())
                && u.text.trim() == format!("{} {}", "#".repeat(u.level as usize), u.title)
        }) {
            if let Some(a) = bare.anchor.clone() {
                anchor.get_or_insert(a);
            }
            // The anchors that named it name what takes its place (its index).
            self.units.pop();
            self.stack.retain(|&i| i < self.units.len());
        }
        let idx = self.units.len();
        let anchor = anchor.or_else(|| self.pending_ids.first().cloned());
        for id in std::mem::take(&mut self.pending_ids) {
            self.anchors.entry(id).or_insert(idx);
        }
        if let Some(a) = &anchor {
            self.anchors.insert(a.clone(), idx);
        }
        let text = match kind {
            UnitKind::Section => format!("{} {}\n\n", "#".repeat(level as usize), title),
            _ => String::new(),
        };
        self.units.push(Unit {
            kind,
            title,
            aliases: vec![],
            anchor,
            level,
            headings,
            text,
            code: vec![],
            index_terms: vec![],
            copy: false,
        });
        self.stack.push(idx);
        self.space = false;
    }

    fn walk(&mut self, e: ElementRef<'_>) {
        for child in e.children() {
            match child.value() {
                Node::Text(t) => self.push_text(t),
                Node::Element(el) => {
                    if let Some(ce) = ElementRef::wrap(child) {
                        self.element(ce, el);
                    }
                }
                _ => {}
            }
        }
    }

    fn element(&mut self, e: ElementRef<'_>, el: &Element) {
        let name = el.name();
        if skipped(el) || (name == "header" && !has_heading_inside(e)) {
            return;
        }
        if let Some(level) = heading_level(el) {
            self.heading(e, el, level);
            self.open_item_header = None;
            return;
        }
        if let Some(level) = self.item_header_level(e) {
            self.heading(e, el, level);
            self.open_item_header = Some(level);
            return;
        }
        // `<a name>` is the id of older generators (texi2html, gtk-doc).
        let id = el
            .id()
            .or_else(|| (name == "a").then(|| el.attr("name")).flatten());
        if let Some(id) = id {
            self.pending_ids.push(id.to_string());
        }
        if is_relation_navigation(e) {
            return;
        }
        if is_drawn_separator(e) {
            self.push_text(" ");
            return;
        }
        match name {
            "a" if !self.in_link && el.attr("href").is_some_and(is_site_link) => {
                self.listing.links += 1;
                self.line_links += 1;
                self.in_link = true;
                self.walk(e);
                self.in_link = false;
            }
            "div" if has_class(el, "funcsynopsis") => {
                self.walk(e);
                self.function_synopsis(e);
            }
            "pre" => self.pre(e),
            "div" if el.classes().any(|c| LINE_CODE_CLASSES.contains(&c)) => self.pre(e),
            _ if code_label(e).is_some() => self.code_container(e),
            "dl" => self.definition_list(e),
            "br" => self.line_break(),
            "li" => {
                self.line_break();
                self.current().text.push_str("- ");
                self.walk(e);
                self.line_break();
            }
            "p" => {
                self.block_break();
                let i = *self.stack.last().expect("unit");
                let start = self.units[i].text.len();
                self.walk(e);
                if self.first_paragraph.is_none() && self.stack.last() == Some(&i) {
                    let para = self.units[i].text[start..].trim().to_string();
                    if para.split_whitespace().count() >= MIN_PARAGRAPH_WORDS {
                        self.first_paragraph = Some(para);
                    }
                }
                self.block_break();
            }
            "tr" if self.stack.len() == 1 => match defined_by_row(e) {
                Some((name, id)) => {
                    let level = self.headings.last().map(|(l, _)| *l).unwrap_or(1);
                    self.block_break();
                    self.open_unit(UnitKind::Definition, name, Some(id.to_string()), level);
                    self.walk(e);
                    self.block_break();
                    self.stack.truncate(1);
                }
                None => {
                    self.block_break();
                    self.walk(e);
                    self.block_break();
                }
            },
            "td" | "th" => {
                self.push_text(" ");
                self.walk(e);
                self.push_text(" ");
            }
            // An image inside a link is an icon (a logo, a "next" arrow):
            // its alt text names the link's target, not the page's content.
            "img" if !self.in_link => {
                if let Some(alt) = el.attr("alt") {
                    self.push_text(&format!(" {alt} "));
                }
            }
            _ if BLOCK_TAGS.contains(&name) => {
                self.block_break();
                self.walk(e);
                self.block_break();
            }
            _ => self.walk(e),
        }
    }

    fn heading(&mut self, e: ElementRef<'_>, el: &Element, level: u8) {
        let title = inline_text(e);
        if title.is_empty() {
            if let Some(id) = el.id() {
                self.pending_ids.push(id.to_string());
            }
            return;
        }
        if !self.headings.is_empty()
            && self.pending_ids.is_empty()
            && is_pointer_heading(e, &title)
            && self.owning_ancestor_id(e).is_none()
        {
            // An entry of a list of other pages, set as a heading (gi-docgen's
            // `<h6><a href="method.BlurNode.get_radius.html">gsk_blur_node_get_radius</a></h6>`
            // over a method's one-line summary, once per method on its
            // class page and on each subclass's): the page it points to is
            // where that name is defined, so here it is a line of the
            // listing's text, not a section named by it.
            self.block_break();
            self.push_text(&title);
            self.block_break();
            return;
        }
        // A heading closes open definitions and sections of its level.
        self.stack.truncate(1);
        while self.headings.last().is_some_and(|(l, _)| *l >= level) {
            self.headings.pop();
        }
        // An anchor inside the heading (`<h2><a id=..>`) names it before
        // any enclosing element does. DocBook XSL writes it as XHTML
        // `<a id=".."/>`, which an HTML parser leaves open: empty copies of
        // that `<a>` (same id) then wrap what follows, up to the next
        // heading's own anchor, which is the one holding its text.
        // Ids of skipped furniture (rustdoc's `<button id="copy-path">`)
        // name nothing.
        fn inner_ids<'a>(e: ElementRef<'a>, out: &mut Vec<(&'a str, bool)>) {
            for d in e.child_elements().filter(|d| !skipped(d.value())) {
                if let Some(id) = d.value().id().or_else(|| d.value().attr("name")) {
                    out.push((id, !inline_text(d).is_empty()));
                }
                inner_ids(d, out);
            }
        }
        let mut ids = Vec::new();
        inner_ids(e, &mut ids);
        let inner_id = ids
            .iter()
            .find(|(_, has_text)| *has_text)
            .or(ids.first())
            .map(|(id, _)| id.to_string());
        let anchor = el
            .id()
            .map(str::to_string)
            .or(inner_id)
            .or_else(|| self.owning_ancestor_id(e))
            .or_else(|| self.pending_ids.first().cloned());
        self.stack.truncate(0);
        let item = anchor
            .as_deref()
            .and_then(item_name)
            .filter(|n| self.shows_item(e, n, &title, anchor.as_deref()))
            .map(str::to_string);
        match item {
            Some(name) => self.open_item(&name, title, anchor, level),
            None => {
                self.open_unit(UnitKind::Section, title.clone(), anchor, level);
                self.headings.push((level, title));
            }
        }
    }

    /// Opens the unit of an API item's heading (rustdoc's signature,
    /// Javadoc's member name): a definition named by its path, as a
    /// Sphinx `<dt id>` is, its heading kept as the first line of its
    /// text and, as every heading is, one of its names (a signature,
    /// `start: Idx`).
    fn open_item(&mut self, name: &str, title: String, anchor: Option<String>, level: u8) {
        let mut names = self.item_names(name);
        if !names.contains(&title) {
            names.push(title.clone());
        }
        let qualified = names[0].clone();
        self.open_unit(UnitKind::Definition, qualified.clone(), anchor, level);
        let u = self.current();
        u.aliases = names[1..].to_vec();
        u.text = format!("{} {}\n\n", "#".repeat(level as usize), title);
        self.headings.push((level, qualified));
    }

    /// The level of an item header that is not a heading: an element with
    /// an item's id ([`item_name`]) holding a permalink to itself and the
    /// item's name in code (rustdoc's struct fields,
    /// `<span id="structfield.start"><a href="#structfield.start"></a><code>start: Idx</code></span>`):
    /// one level below the open heading, the level of the item header
    /// before it when that one is open (fields are siblings).
    fn item_header_level(&self, e: ElementRef<'_>) -> Option<u8> {
        let id = e.value().id()?;
        let name = item_name(id)?;
        let self_link = format!("#{id}");
        let permalink = e
            .child_elements()
            .any(|c| c.value().name() == "a" && c.value().attr("href") == Some(self_link.as_str()));
        if !permalink || has_heading_inside(e) || !shows_in_code(e, name, true) {
            return None;
        }
        let top = self.headings.last().map(|(l, _)| *l);
        Some(match (top, self.open_item_header) {
            (Some(l), Some(item)) if l == item => l,
            (Some(l), _) => (l + 1).min(6),
            (None, _) => 2,
        })
    }

    /// Whether a heading anchored at an item id shows the item `name` as
    /// code: in the heading itself (rustdoc's `h4.code-header`, a
    /// `<code>`), or in a signature ([`SIGNATURE_CLASSES`]) of the element
    /// the heading opens (Javadoc's `section.detail` holds the `<h3>` and
    /// the `div.member-signature`). A bare-name id must also be the
    /// heading's whole text (Javadoc's `<h3>SPACE</h3>`; rustdoc's
    /// `<section id="impl">` heads `impl<T> Option<T>`). A heading whose id
    /// merely spells its words (`<h3 id="site_name">site_name</h3>`) names
    /// a section.
    fn shows_item(&self, h: ElementRef<'_>, name: &str, title: &str, id: Option<&str>) -> bool {
        let bare = id.is_some_and(|id| !id.contains(['.', '(']));
        if bare && title != name {
            return false;
        }
        if shows_in_code(h, name, true) {
            return true;
        }
        let mut cur = h.parent().and_then(ElementRef::wrap);
        while let Some(a) = cur {
            if a.value().id().is_some() {
                return shows_in_code(a, name, false);
            }
            if std::ptr::eq(a.value(), self.root) {
                return false;
            }
            cur = a.parent().and_then(ElementRef::wrap);
        }
        false
    }

    /// The names of an item defined on the page: its path first (the
    /// page's item, `std::collections::HashMap` or `StringUtils`, then the
    /// member), then the member's own name and, for a `::` path, the
    /// member under the last part of the page's item (`HashMap::insert`),
    /// as readers write them.
    fn item_names(&self, name: &str) -> Vec<String> {
        let owner = self
            .headings
            .first()
            .filter(|(level, _)| *level == 1)
            .and_then(|(_, title)| api_page_item(title));
        let Some(owner) = owner else {
            return vec![name.to_string()];
        };
        if owner.contains("::") {
            let last = owner.rsplit("::").next().unwrap_or(owner);
            let mut names = vec![format!("{owner}::{name}"), name.to_string()];
            if last != owner {
                names.push(format!("{last}::{name}"));
            }
            names
        } else {
            vec![format!("{owner}.{name}"), name.to_string()]
        }
    }

    /// A DocBook function synopsis (`div.funcsynopsis`, in refentries
    /// and sections alike): the functions it declares (`b.fsfunc`) are
    /// names the open unit defines.
    fn function_synopsis(&mut self, e: ElementRef<'_>) {
        let names: Vec<String> = e
            .descendent_elements()
            .filter(|d| has_class(d.value(), "fsfunc"))
            .map(|d| inline_text(d))
            .filter(|n| is_identifier(n))
            .collect();
        let u = self.current();
        for n in names {
            if u.title != n && !u.aliases.contains(&n) {
                u.aliases.push(n);
            }
        }
    }

    /// The id of the nearest enclosing element that this heading opens
    /// (nothing indexed comes before it there), up to the content root:
    /// `<section id="method.new"><a class="src">source</a><h4>` is anchored
    /// at `method.new`, as the link is not indexed.
    fn owning_ancestor_id(&self, h: ElementRef<'_>) -> Option<String> {
        /// Whether `h` comes in `e` before any indexed text or heading.
        fn opens(e: ElementRef<'_>, h: ElementRef<'_>) -> Option<bool> {
            for child in e.children() {
                match child.value() {
                    Node::Text(t) if !t.trim().is_empty() => return Some(false),
                    Node::Element(el) => {
                        let Some(ce) = ElementRef::wrap(child) else {
                            continue;
                        };
                        if ce == h {
                            return Some(true);
                        }
                        if skipped(el) {
                            continue;
                        }
                        if heading_level(el).is_some() {
                            return Some(false);
                        }
                        if let Some(found) = opens(ce, h) {
                            return Some(found);
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        let mut cur = h.parent().and_then(ElementRef::wrap);
        while let Some(a) = cur {
            if opens(a, h) != Some(true) {
                return None;
            }
            if let Some(id) = a.value().id() {
                return Some(id.to_string());
            }
            if std::ptr::eq(a.value(), self.root) {
                return None;
            }
            cur = a.parent().and_then(ElementRef::wrap);
        }
        None
    }

    /// A code container (`div.language-sh`) holding a `<pre>` and a label
    /// naming its language (VitePress `<span class="lang">sh</span>`): the
    /// label is not text of the page.
    fn code_container(&mut self, e: ElementRef<'_>) {
        let label = code_label(e).unwrap_or_default();
        self.block_break();
        for child in e.children() {
            match child.value() {
                Node::Text(t) => self.push_text(t),
                Node::Element(el) => {
                    let Some(ce) = ElementRef::wrap(child) else {
                        continue;
                    };
                    let is_label = !ce.descendent_elements().any(|d| d.value().name() == "pre")
                        && inline_text(ce).eq_ignore_ascii_case(&label);
                    if !is_label {
                        self.element(ce, el);
                    }
                }
                _ => {}
            }
        }
        self.block_break();
    }

    /// A code block: a `<pre>`, or a block of one element per line
    /// ([`LINE_CODE_CLASSES`]).
    fn pre(&mut self, e: ElementRef<'_>) {
        if e.value().name() == "pre" && self.anchored_text(e) {
            return;
        }
        fn raw(e: ElementRef<'_>, out: &mut String) {
            for child in e.children() {
                match child.value() {
                    Node::Text(t) => out.push_str(t),
                    Node::Element(el) => {
                        if el.name() == "br" {
                            out.push('\n');
                        } else if !skipped(el) {
                            if let Some(ce) = ElementRef::wrap(child) {
                                raw(ce, out);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut content = String::new();
        if e.value().name() == "pre" {
            raw(e, &mut content);
        } else {
            // One child element per line; the source's whitespace between
            // them is not code.
            for line in e.child_elements().filter(|c| !skipped(c.value())) {
                raw(line, &mut content);
                content.push('\n');
            }
        }
        let content = content.trim_matches('\n').trim_end().to_string();
        if content.trim().is_empty() {
            return;
        }
        self.flush_ids();
        let language = code_language(e);
        self.block_break();
        let fence = if content.contains("```") {
            "````"
        } else {
            "```"
        };
        let u = self.current();
        u.text.push_str(&format!(
            "{fence}{}\n{content}\n{fence}\n\n",
            language.as_deref().unwrap_or("")
        ));
        u.code.push(Code { language, content });
    }

    /// A `<pre>` that is a page of plain text (help turned into HTML)
    /// rather than code: no language, at least [`TEXT_PRE_MIN_LINES`]
    /// lines and [`TEXT_PRE_MIN_ANCHORS`] anchors (`<a name>`, ids) inside.
    /// Each anchor starts a definition named by the anchor's text (the
    /// tagged term) or its id; anchors with no text between them name the
    /// same one. Returns whether `e` was read so.
    fn anchored_text(&mut self, e: ElementRef<'_>) -> bool {
        enum Piece {
            /// Text; `true` when it is an anchor's own (the tagged term).
            Text(String, bool),
            /// An anchor's id and the text it shows.
            Anchor(String, String),
        }
        fn pieces(e: ElementRef<'_>, tag: bool, out: &mut Vec<Piece>) {
            for child in e.children() {
                match child.value() {
                    Node::Text(t) => out.push(Piece::Text(t.to_string(), tag)),
                    Node::Element(el) if !skipped(el) => {
                        let Some(ce) = ElementRef::wrap(child) else {
                            continue;
                        };
                        if el.name() == "br" {
                            out.push(Piece::Text("\n".into(), tag));
                            continue;
                        }
                        let id = match el.name() {
                            "a" if el.attr("href").is_none() => el.id().or_else(|| el.attr("name")),
                            "a" => None,
                            _ => el.id(),
                        }
                        // Line numbers (`l00012`) are not tags.
                        .filter(|id| !is_line_anchor(id));
                        if let Some(id) = id {
                            out.push(Piece::Anchor(id.to_string(), inline_text(ce)));
                        }
                        pieces(ce, tag || id.is_some(), out);
                    }
                    _ => {}
                }
            }
        }
        if code_language(e).is_some() {
            return false;
        }
        let mut all = Vec::new();
        pieces(e, false, &mut all);
        let anchors = all
            .iter()
            .filter(|p| matches!(p, Piece::Anchor(..)))
            .count();
        let lines: usize = all
            .iter()
            .map(|p| match p {
                Piece::Text(t, _) => t.matches('\n').count(),
                Piece::Anchor(..) => 0,
            })
            .sum();
        if anchors < TEXT_PRE_MIN_ANCHORS || lines < TEXT_PRE_MIN_LINES {
            return false;
        }
        self.block_break();
        let level = self.headings.last().map(|(l, _)| *l).unwrap_or(1);
        let depth = self.stack.len();
        // Whether the definition on top has text of its own yet, and
        // whether its title is a bare id (a named tag then replaces it).
        let mut opened: Option<bool> = None;
        let mut untitled = false;
        for piece in all {
            match piece {
                Piece::Anchor(id, shown) => {
                    let name =
                        shown.trim_matches(|c: char| "*|'`".contains(c) || c.is_whitespace());
                    let named =
                        !name.is_empty() && name.split_whitespace().count() <= MAX_ROW_NAME_WORDS;
                    let name = if named { name.to_string() } else { id.clone() };
                    if opened == Some(false) {
                        let i = *self.stack.last().expect("unit");
                        self.anchors.entry(id).or_insert(i);
                        let u = &mut self.units[i];
                        if untitled && named {
                            let old = std::mem::replace(&mut u.title, name);
                            u.aliases.push(old);
                            untitled = false;
                        } else if u.title != name {
                            u.aliases.push(name);
                        }
                    } else {
                        // The line the tag ends (`Editing files  *edit-files*`)
                        // is its heading: it moves into the new definition.
                        let prev = *self.stack.last().expect("unit");
                        let text = &mut self.units[prev].text;
                        let cut = text.rfind('\n').map_or(0, |i| i + 1);
                        let line = text.split_off(cut);
                        self.end_line();
                        self.stack.truncate(depth);
                        self.open_unit(UnitKind::Definition, name, Some(id), level);
                        let line = line.trim();
                        if !line.is_empty() {
                            self.current().text.push_str(line);
                            self.space = true;
                        }
                        opened = Some(false);
                        untitled = !named;
                    }
                }
                Piece::Text(t, tag) => {
                    for (n, line) in t.split('\n').enumerate() {
                        if n > 0 {
                            self.line_break();
                        }
                        self.push_text(line);
                        if opened.is_some() && !tag && !line.trim().is_empty() {
                            opened = Some(true);
                        }
                    }
                }
            }
        }
        self.stack.truncate(depth.max(1));
        self.block_break();
        true
    }

    fn definition_list(&mut self, e: ElementRef<'_>) {
        let dl_classes: Vec<&str> = e.value().classes().collect();
        let notes = dl_classes
            .iter()
            .any(|c| matches!(*c, "footnote" | "citation"));
        let level = self.headings.last().map(|(l, _)| *l).unwrap_or(1);
        let depth = self.stack.len();
        // Whether the unit on top was opened by this list's last <dt id>.
        let mut open = false;
        let mut last_was_dt = false;
        // Whether the last `<dt>` was an entry line (a link, little else).
        let mut last_was_entry = false;
        self.block_break();
        for child in e.children() {
            let Some(ce) = ElementRef::wrap(child) else {
                if let Node::Text(t) = child.value() {
                    self.push_text(t);
                }
                continue;
            };
            let el = ce.value();
            if skipped(el) {
                continue;
            }
            // A term that links elsewhere (a "see also" list) refers to
            // a definition; only its own id makes it one.
            let anchor = el
                .id()
                .or_else(|| (!links_out(ce)).then(|| inner_anchor(ce)).flatten());
            match (el.name(), anchor) {
                ("dt", Some(id)) if !notes => {
                    let (name, shown) = definition_name(ce, id);
                    if name.chars().any(char::is_alphabetic) {
                        if open && last_was_dt {
                            // Another signature of the same definition.
                            let i = *self.stack.last().expect("unit");
                            self.anchors.entry(id.to_string()).or_insert(i);
                            let u = &mut self.units[i];
                            u.aliases.push(name);
                            u.aliases.extend(shown);
                        } else {
                            self.stack.truncate(depth);
                            self.open_unit(UnitKind::Definition, name, Some(id.to_string()), level);
                            if let Some(s) = shown {
                                self.current().aliases.push(s);
                            }
                            open = true;
                        }
                        self.line_break();
                        self.walk(ce);
                        self.block_break();
                        last_was_dt = true;
                        continue;
                    }
                    self.last_line_entry = false;
                    self.element(ce, el);
                    last_was_entry = self.last_line_entry;
                    last_was_dt = false;
                    continue;
                }
                ("dt", None) => {
                    self.last_line_entry = false;
                    self.element(ce, el);
                    last_was_entry = self.last_line_entry;
                    last_was_dt = false;
                    continue;
                }
                ("dd", _) if last_was_entry => {
                    let outer = std::mem::replace(&mut self.in_gloss, true);
                    self.element(ce, el);
                    self.in_gloss = outer;
                }
                _ => self.element(ce, el),
            }
            last_was_entry = false;
            last_was_dt = false;
        }
        self.stack.truncate(depth.max(1));
        self.block_break();
    }

    fn finish(&mut self) {
        self.end_line();
        for u in &mut self.units {
            u.text = u.text.trim().to_string();
        }
        // Ids after the last text belong to the last unit.
        self.stack.truncate(1);
        let last = self.units.len() - 1;
        for id in std::mem::take(&mut self.pending_ids) {
            self.anchors.entry(id).or_insert(last);
        }
        // makeinfo's index entries live on in their anchors' ids
        // (`<span id="index-NO_005fMAIL_005fWARNING">`): a page's own
        // index terms, there even when the site's index page is not.
        let mut terms: Vec<(usize, &str, String)> = self
            .anchors
            .iter()
            .filter_map(|(id, &i)| Some((i, id.as_str(), makeinfo_index_term(id)?)))
            .collect();
        terms.sort();
        for (i, _, term) in terms {
            let u = &mut self.units[i];
            let lower = term.to_lowercase();
            if u.title.to_lowercase() != lower
                && !u.index_terms.iter().any(|t| t.to_lowercase() == lower)
            {
                u.index_terms.push(term);
            }
        }
    }
}

/// The index term a makeinfo anchor id spells (`index-BAUD_002c-use-of`
/// → `BAUD, use of`; `index-local-1`, the second entry for `local` →
/// `local`): Texinfo writes `-` for a space and `_XXXX` (hex) for any
/// other character but a letter or digit. None for other ids, or ids that
/// spell no word (Sphinx's `index-3`).
fn makeinfo_index_term(id: &str) -> Option<String> {
    let mut rest = id.strip_prefix("index-")?;
    if let Some((head, n)) = rest.rsplit_once('-') {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            rest = head;
        }
    }
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '-' => out.push(' '),
            '_' => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)?;
                out.push(char::from_u32(code)?);
            }
            c if c.is_alphanumeric() => out.push(c),
            _ => return None,
        }
    }
    let out = normalize_ws(&out);
    out.chars().any(char::is_alphabetic).then_some(out)
}

/// Classes of blocks that hold code one element per line, without a
/// `<pre>` (Doxygen's `div.fragment` of `div.line`).
const LINE_CODE_CLASSES: &[&str] = &["fragment"];

/// Language names a generator writes as a bare class of `<pre>` or
/// `<code>` (rustdoc `<pre class="rust">`).
const LANGUAGE_CLASSES: &[&str] = &[
    "rust",
    "python",
    "c",
    "cpp",
    "java",
    "javascript",
    "typescript",
    "bash",
    "sh",
    "shell",
    "console",
    "json",
    "yaml",
    "toml",
    "xml",
    "html",
    "css",
    "sql",
    "go",
    "ruby",
    "perl",
    "php",
    "kotlin",
    "swift",
    "haskell",
    "lua",
    "scala",
    "makefile",
    "diff",
    "ini",
];

/// The language suffix of an element that wraps a `<pre>` as a code
/// container (`div.language-sh`), when it has one.
fn code_label(e: ElementRef<'_>) -> Option<String> {
    let el = e.value();
    if el.name() == "pre" || el.name() == "code" {
        return None;
    }
    let lang = el.classes().find_map(|c| {
        ["language-", "highlight-"]
            .iter()
            .find_map(|p| c.strip_prefix(p))
            .filter(|l| !l.is_empty())
    })?;
    e.child_elements()
        .any(|c| c.value().name() == "pre")
        .then(|| lang.to_string())
}

/// The language of a `<pre>`, from its classes or those of the enclosing
/// elements up to three levels (Sphinx `highlight-python3`, `language-rust`,
/// `lang-js`, Pandoc `sourceCode python`, `data-lang`), else a bare
/// language name among the classes of the `<pre>` or its `<code>`
/// (rustdoc `rust`).
pub fn code_language(pre: ElementRef<'_>) -> Option<String> {
    code_language_prefixed(pre).or_else(|| {
        let own = pre
            .descendent_elements()
            .filter(|c| c.value().name() == "code")
            .take(1)
            .chain([pre]);
        own.flat_map(|c| c.value().classes())
            .find(|c| LANGUAGE_CLASSES.contains(c))
            .and_then(normalize_language)
    })
}

fn code_language_prefixed(pre: ElementRef<'_>) -> Option<String> {
    // The `<code>` may sit in a nested `<pre>` (mdBook's playground
    // `<pre><pre class="playground"><code class="language-rust">`).
    let mut candidates: Vec<ElementRef<'_>> = pre
        .descendent_elements()
        .filter(|c| c.value().name() == "code")
        .take(1)
        .collect();
    candidates.push(pre);
    let mut up = pre.parent().and_then(ElementRef::wrap);
    for _ in 0..3 {
        let Some(p) = up else { break };
        candidates.push(p);
        up = p.parent().and_then(ElementRef::wrap);
    }
    for c in candidates {
        let el = c.value();
        for attr in ["data-lang", "data-language"] {
            if let Some(l) = el.attr(attr).filter(|l| !l.is_empty()) {
                return normalize_language(l);
            }
        }
        let classes: Vec<&str> = el.attr("class").unwrap_or("").split_whitespace().collect();
        for (i, class) in classes.iter().enumerate() {
            for prefix in ["highlight-", "language-", "lang-"] {
                if let Some(l) = class.strip_prefix(prefix) {
                    return normalize_language(l);
                }
            }
            if *class == "sourceCode" {
                if let Some(l) = classes.get(i + 1) {
                    return normalize_language(l);
                }
            }
        }
    }
    None
}

/// Maps generator-specific language names onto the engine's names.
fn normalize_language(l: &str) -> Option<String> {
    let l = l.trim().to_ascii_lowercase();
    let mapped = match l.as_str() {
        "" => return None,
        // Sphinx: "default" is Python 3 with a fallback; consoles are Python.
        "default" | "pycon" | "python3" | "ipython" | "ipython3" | "py3" => "python",
        "none" | "nohighlight" | "plain" => "text",
        other => other,
    };
    Some(gitsense_engine::model::canonical_language(mapped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_names_prefer_the_qualified_id() {
        let p = parse_page(
            r#"<html><body><div role="main"><h1 id="t">T</h1>
            <dl class="py class"><dt id="json.JSONDecoder">class <span class="sig-prename">json.</span><span class="sig-name">JSONDecoder</span></dt>
            <dd><p>Decoder.</p>
              <dl class="py method"><dt id="json.JSONDecoder.decode"><span class="sig-name">decode</span>(s)</dt><dd><p>Decode s.</p></dd></dl>
              <p>After the method.</p>
            </dd></dl></div></body></html>"#,
        ).unwrap();
        let titles: Vec<&str> = p.units.iter().map(|u| u.title.as_str()).collect();
        assert_eq!(
            titles,
            ["", "T", "json.JSONDecoder", "json.JSONDecoder.decode"]
        );
        assert!(p.units[2].text.contains("After the method."));
        assert!(!p.units[3].text.contains("After the method."));
        assert_eq!(p.anchors["json.JSONDecoder.decode"], 3);
    }

    #[test]
    fn empty_styled_elements_part_words_as_the_page_shows_them() {
        let p = parse_page(
            r#"<main><h1><a href="index.html">Gsk</a><span class="sep"></span><a href="class.BlurNode.html">BlurNode</a><span class="sep"></span>get_radius</h1>
            <p>See Gsk<span class="sep"> </span>BlurNode, one<wbr>word and <span></span>glued<span></span>text.</p></main>"#,
        ).unwrap();
        assert_eq!(p.units[1].title, "Gsk BlurNode get_radius");
        assert!(
            p.units[1]
                .text
                .contains("See Gsk BlurNode, oneword and gluedtext."),
            "{}",
            p.units[1].text
        );
    }

    #[test]
    fn a_heading_that_only_links_to_another_page_is_a_line_of_its_section() {
        let p = parse_page(
            r##"<main><h1>GskBlurNode</h1><h4 id="methods">Instance methods</h4>
            <div><h6><a href="method.BlurNode.get_radius.html">gsk_blur_node_get_radius</a></h6><div><p>Retrieves the blur radius.</p></div></div>
            <h6 id="own"><a href="other.html">kept_as_a_heading</a></h6><p>Own text.</p>
            <h6><a href="#here">also_kept</a></h6><p>Here.</p></main>"##,
        ).unwrap();
        let titles: Vec<&str> = p.units.iter().map(|u| u.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "",
                "GskBlurNode",
                "Instance methods",
                "kept_as_a_heading",
                "also_kept"
            ]
        );
        assert!(
            p.units[2].text.contains("gsk_blur_node_get_radius"),
            "{}",
            p.units[2].text
        );
        assert!(p.units[2].text.contains("Retrieves the blur radius."));
    }

    #[test]
    fn a_bare_heading_over_the_definition_it_names_is_its_heading() {
        let p = parse_page(
            r#"<main><h1>API reference</h1><h4 class="subheading">gnutls_init</h4>
            <dl class="def"><dt id="index-gnutls_005finit"><span class="category">Function: </span>int <strong>gnutls_init</strong> (gnutls_session_t * session)</dt><dd><p>Initializes a session.</p></dd></dl>
            <h4>Functions</h4>
            <dl class="def"><dt id="index-gnutls_005fdeinit"><span class="category">Function: </span>void <strong>gnutls_deinit</strong> ()</dt><dd><p>Frees it.</p></dd></dl></main>"#,
        ).unwrap();
        let titles: Vec<&str> = p.units.iter().map(|u| u.title.as_str()).collect();
        assert!(!titles.contains(&"gnutls_init"), "{titles:?}");
        assert!(titles.contains(&"Functions"), "{titles:?}");
        let def = p
            .units
            .iter()
            .position(|u| u.title.contains("gnutls_init"))
            .unwrap();
        assert_eq!(p.units[def].kind, UnitKind::Definition);
        assert!(p.units[def].text.contains("Initializes a session."));
        assert_eq!(p.anchors["index-gnutls_005finit"], def);
    }

    #[test]
    fn makeinfo_index_anchors_spell_their_terms() {
        assert_eq!(
            makeinfo_index_term("index-NO_005fMAIL_005fWARNING").as_deref(),
            Some("NO_MAIL_WARNING")
        );
        assert_eq!(
            makeinfo_index_term("index-BAUD_002c-use-of").as_deref(),
            Some("BAUD, use of")
        );
        assert_eq!(
            makeinfo_index_term("index-local-1").as_deref(),
            Some("local")
        );
        assert_eq!(makeinfo_index_term("index-3"), None);
        assert_eq!(makeinfo_index_term("index-bad_00zz"), None);
        assert_eq!(makeinfo_index_term("section-1"), None);
        let p = parse_page(
            r#"<main><h2>Options</h2><p><span id="index-AUTO_005fMENU"></span><span id="index-Options-1"></span>Menus are shown.</p></main>"#,
        ).unwrap();
        assert_eq!(p.units[1].index_terms, ["AUTO_MENU"]);
    }

    #[test]
    fn section_ids_become_heading_anchors() {
        let p = parse_page(
            r##"<main><section id="usage"><span id="index-0"></span><h2>Usage<a class="headerlink" href="#usage">¶</a></h2><p>Text <span id="index-1"></span>here.</p></section></main>"##,
        ).unwrap();
        let u = &p.units[1];
        assert_eq!(u.title, "Usage");
        assert_eq!(u.anchor.as_deref(), Some("usage"));
        assert_eq!(p.anchors["index-0"], 1);
        assert_eq!(p.anchors["index-1"], 1);
        assert!(!u.text.contains('¶'));
    }

    #[test]
    fn a_heading_takes_the_id_of_the_element_it_opens() {
        let p = parse_page(
            r#"<main><h1 id="top">Struct Span</h1>
            <section id="method.call_site" class="method"><a class="src rightside" href="x">source</a><h4 class="code-header">pub fn call_site() -> Span</h4></section>
            <div id="wrapper"><p>Text first.</p><h2>Later heading</h2></div></main>"#,
        ).unwrap();
        let anchors: Vec<Option<&str>> = p.units.iter().map(|u| u.anchor.as_deref()).collect();
        assert_eq!(anchors, [None, Some("top"), Some("method.call_site"), None]);
        assert_eq!(p.anchors["method.call_site"], 2);
        assert!(!p.units[1].text.contains("source"));
    }

    #[test]
    fn languages_come_from_generator_classes() {
        let p = parse_page(
            r#"<main><div class="highlight-pycon notranslate"><div class="highlight"><pre>&gt;&gt;&gt; 1</pre></div></div>
            <pre><code class="language-rs">fn main() {}</code></pre><pre class="sourceCode haskell">x</pre><pre>plain</pre></main>"#,
        ).unwrap();
        let langs: Vec<Option<&str>> = p.units[0]
            .code
            .iter()
            .map(|c| c.language.as_deref())
            .collect();
        assert_eq!(langs, [Some("python"), Some("rust"), Some("haskell"), None]);
    }

    #[test]
    fn a_heading_takes_its_own_anchor_before_copies_of_an_unclosed_one() {
        // XHTML `<a id/>` read as HTML: the first `<a>` stays open and
        // its copies wrap the next heading.
        let p = parse_page(
            r#"<main><div class="section"><h2><a id="first"/>First</h2><p>One.</p>
            <div class="section"><h3><a id="second"/>Second</h3><p>Two.</p></div></div></main>"#,
        )
        .unwrap();
        let anchors: Vec<Option<&str>> = p.units.iter().map(|u| u.anchor.as_deref()).collect();
        assert_eq!(anchors, [None, Some("first"), Some("second")]);
    }

    #[test]
    fn navigation_by_link_relation_and_code_labels_are_not_text() {
        let p = parse_page(
            r##"<body><div class="header"><p>Next: <a href="b.html" rel="next">Bee</a>, Up: <a href="index.html" rel="up">Top</a></p></div>
            <h1 id="a">Aye</h1><p>See <a href="b.html" rel="next">the next node</a> for more about hives and honey.</p>
            <div class="language-sh"><button class="copy"></button><span class="lang">sh</span><pre><code>ls</code></pre></div>
            <div class="fragment"><div class="line">int a;</div>
            <div class="line">int b;</div></div></body>"##,
        )
        .unwrap();
        let text: String = p.units.iter().map(|u| u.text.as_str()).collect();
        assert!(!text.contains("Next:") && !text.contains("Bee"), "{text}");
        assert!(text.contains("See the next node for more"), "{text}");
        assert!(!text.lines().any(|l| l == "sh"), "{text}");
        let code: Vec<(Option<&str>, &str)> = p.units[1]
            .code
            .iter()
            .map(|c| (c.language.as_deref(), c.content.as_str()))
            .collect();
        assert_eq!(code, [(Some("bash"), "ls"), (None, "int a;\nint b;")]);
    }

    #[test]
    fn index_letters_and_glosses_of_entries_do_not_count_as_text_lines() {
        let entries: String = (0..24)
            .map(|i| {
                format!(
                    r#"<dt><a href="p{i}.html#m">member{i}()</a> - Method in class Thing</dt>
                    <dd><div class="block">Does the {i}th thing with every argument it is given.</div></dd>"#
                )
            })
            .collect();
        let html = format!("<main><h1>Index</h1><h2>A</h2><p>B</p><dl>{entries}</dl></main>");
        let p = parse_page(&html).unwrap();
        assert_eq!(p.listing.entry_lines, 24);
        assert_eq!(p.listing.text_lines, 24);
        assert_eq!(p.skip, Some(Skip::Listing));
    }

    #[test]
    fn item_ids_name_items_in_the_forms_api_generators_write() {
        for (id, name) in [
            ("method.insert", Some("insert")),
            ("method.into_iter-1", Some("into_iter")),
            ("structfield.start", Some("start")),
            ("abbreviate(java.lang.String,int)", Some("abbreviate")),
            ("SPACE", Some("SPACE")),
            ("impl-1", Some("impl")),
            ("g-hash-table-new.parameters", None),
            ("module-json", None),
            ("mkdocs.plugins.event_priority", None),
            ("<init>()", None),
        ] {
            assert_eq!(item_name(id), name, "{id}");
        }
    }

    #[test]
    fn headings_define_items_only_when_they_show_the_name_as_code() {
        let p = parse_page(
            r##"<main><h1>Struct demo::Span</h1>
            <h2 id="fields">Fields</h2>
            <span id="structfield.lo" class="structfield"><a href="#structfield.lo" class="anchor"></a><code>lo: u32</code></span><p>Low end.</p>
            <span id="structfield.hi" class="structfield"><a href="#structfield.hi" class="anchor"></a><code>hi: u32</code></span><p>High end.</p>
            <h2 id="implementations">Implementations</h2>
            <section id="impl"><h3 class="code-header">impl Span</h3></section>
            <section id="method.len"><h4 class="code-header">pub fn len(&amp;self) -&gt; u32</h4></section><p>Length.</p>
            <h3 id="site_name">site_name</h3><p>A plain heading.</p>
            <h3 id="usage.notes">Usage notes</h3></main>"##,
        )
        .unwrap();
        let got: Vec<(UnitKind, &str, u8)> = p.units[2..]
            .iter()
            .map(|u| (u.kind, u.title.as_str(), u.level))
            .collect();
        assert_eq!(
            got,
            [
                (UnitKind::Section, "Fields", 2),
                (UnitKind::Definition, "demo::Span::lo", 3),
                (UnitKind::Definition, "demo::Span::hi", 3),
                (UnitKind::Section, "Implementations", 2),
                (UnitKind::Section, "impl Span", 3),
                (UnitKind::Definition, "demo::Span::len", 4),
                (UnitKind::Section, "site_name", 3),
                (UnitKind::Section, "Usage notes", 3),
            ]
        );
        assert_eq!(
            p.units[7].aliases,
            ["len", "Span::len", "pub fn len(&self) -> u32"]
        );
        assert!(p.units[7].text.starts_with("#### pub fn len(&self) -> u32"));
    }

    #[test]
    fn function_synopses_name_what_their_section_defines() {
        let p = parse_page(
            r#"<body><div class="section"><h3 class="title"><a name="start"></a>Starting</h3>
            <div class="funcsynopsis"><table><tr><td><code class="funcdef">int <b class="fsfunc">pam_start</b>(</code></td></tr></table>
            <table><tr><td><code class="funcdef">int <b class="fsfunc">pam_start_confdir</b>(</code></td></tr></table></div>
            <p>Starts a transaction.</p></div></body>"#,
        )
        .unwrap();
        let u = &p.units[1];
        assert_eq!(u.title, "Starting");
        assert_eq!(u.aliases, ["pam_start", "pam_start_confdir"]);
        assert!(u.text.contains("int pam_start("));
    }

    #[test]
    fn line_anchors_are_numbers_with_a_line_prefix() {
        for id in ["l00012", "L7", "12", "line-3", "n40"] {
            assert!(is_line_anchor(id), "{id}");
        }
        for id in ["index-3", "section-2", "abc", "l", "g-hash-table-new"] {
            assert!(!is_line_anchor(id), "{id}");
        }
    }

    #[test]
    fn index_tables_yield_terms_with_their_links() {
        let p = parse_page(
            r#"<body><table class="indextable"><tr><td><ul>
            <li><a href="a.html#join">join() (str method)</a><ul><li><a href="b.html#x">(bytes method)</a></li></ul></li>
            <li>Java<ul><li><a href="c.html#index-3">language</a></li></ul></li>
            </ul></td></tr></table></body>"#,
        ).unwrap();
        assert_eq!(p.skip, Some(Skip::SiteIndex));
        let got: Vec<(&str, &str)> = p
            .index_entries
            .iter()
            .map(|e| (e.term.as_str(), e.hrefs[0].as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("join() (str method)", "a.html#join"),
                ("join() (str method)", "b.html#x"),
                ("Java language", "c.html#index-3")
            ]
        );
    }
}
