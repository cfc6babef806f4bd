//! Each documentation generator's extraction, on real pages that
//! generator built: the main content (navigation, sidebars, footers left
//! out), the title, sections and their anchors, the names items define,
//! and code blocks with their language.
//!
//! The pages come from Debian's documentation packages, unpacked under
//! `target/sites/` by `python3 bench/sites.py --fetch-only` (as
//! `./build.sh test` does), and from `python3.11-doc`, installed by
//! `./build.sh test`. The VitePress, Docusaurus, MkDocs Material and Hugo
//! (Doks theme) pages were built by those generators (from npm and PyPI)
//! and are committed in `tests/generators/` (no package ships a site built
//! by them). A missing package skips its test with a message, or fails it
//! under `GITSENSE_REQUIRE_CORPORA=1`.

use gitsense_engine::{Engine, Highlight, SearchOptions};
use gitsense_import::docs::{self, parse_page, DocsOptions, Page, Unit, UnitKind};
use gitsense_import::{self as import};
use std::path::{Path, PathBuf};

mod common;
use common::corpus;

/// A file of an unpacked Debian package under `target/sites/PKG/`.
fn package_file(pkg: &str, rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/sites")
        .join(pkg)
        .join(rel);
    corpus(
        p,
        &format!("python3 bench/sites.py --fetch-only unpacks {pkg}; ./build.sh test runs it"),
    )
}

fn parse(path: &Path) -> Page {
    let html = std::fs::read_to_string(path).unwrap();
    parse_page(&html).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
}

/// The unit a page's anchor starts.
fn unit<'a>(p: &'a Page, anchor: &str) -> &'a Unit {
    p.units
        .iter()
        .find(|u| u.anchor.as_deref() == Some(anchor))
        .unwrap_or_else(|| {
            let anchors: Vec<_> = p.units.iter().filter_map(|u| u.anchor.as_deref()).collect();
            panic!("no unit anchored at {anchor}; anchors: {anchors:?}")
        })
}

/// The first unit with this title.
fn titled<'a>(p: &'a Page, title: &str) -> &'a Unit {
    p.units
        .iter()
        .find(|u| u.title == title)
        .unwrap_or_else(|| {
            let titles: Vec<_> = p.units.iter().map(|u| u.title.as_str()).collect();
            panic!("no unit titled {title:?}; titles: {titles:?}")
        })
}

/// Everything the page indexes as text.
fn all_text(p: &Page) -> String {
    p.units
        .iter()
        .map(|u| u.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_absent(p: &Page, furniture: &[&str]) {
    let text = all_text(p);
    for f in furniture {
        assert!(!text.contains(f), "page furniture {f:?} was indexed");
    }
}

/// The languages of the page's code blocks that hold `needle`.
fn code_languages(p: &Page, needle: &str) -> Vec<Option<String>> {
    p.units
        .iter()
        .flat_map(|u| &u.code)
        .filter(|c| c.content.contains(needle))
        .map(|c| c.language.clone())
        .collect()
}

/// The site at `site` imported into an index under `dir`, opened.
fn index_site(dir: &Path, site: &Path) -> Engine {
    let path = dir.join("site.gsx");
    import::build_with(&path, format!("docs:{}", site.display()), |w| {
        docs::import(site, &DocsOptions::default(), w, &import::no_progress())
    })
    .unwrap();
    Engine::open(&path).unwrap()
}

/// The URL of the first message a query finds.
fn first_url(e: &Engine, query: &str) -> Option<String> {
    let r = e
        .search(
            &format!("{query} in:messages"),
            &SearchOptions {
                highlight: Highlight::None,
                ..SearchOptions::default()
            },
        )
        .unwrap();
    let first = r.results.messages.first()?;
    first
        .meta
        .get("messages_meta_url")
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

#[test]
fn sphinx_api_pages_yield_sections_definitions_and_python_code() {
    let Some(path) = corpus(
        PathBuf::from("/usr/share/doc/python3.11/html/library/json.html"),
        "./build.sh test installs python3.11-doc",
    ) else {
        return;
    };
    let p = parse(&path);
    assert_eq!(p.title, "json — JSON encoder and decoder");
    let usage = unit(&p, "basic-usage");
    assert_eq!((usage.kind, usage.level), (UnitKind::Section, 2));
    assert_eq!(usage.title, "Basic Usage");
    let dumps = unit(&p, "json.dumps");
    assert_eq!(
        (dumps.kind, dumps.title.as_str()),
        (UnitKind::Definition, "json.dumps")
    );
    assert_eq!(
        dumps.headings,
        ["json — JSON encoder and decoder", "Basic Usage"]
    );
    let decode = unit(&p, "json.JSONDecoder.decode");
    assert_eq!(decode.title, "json.JSONDecoder.decode");
    assert!(decode.aliases.contains(&"decode".to_string()));
    assert!(decode
        .text
        .contains("Return the Python representation of s"));
    assert!(code_languages(&p, ">>> import json")
        .iter()
        .all(|l| l.as_deref() == Some("python")));
    assert_absent(
        &p,
        &[
            "Previous topic",
            "Next topic",
            "This Page",
            "Report a Bug",
            "Show Source",
            "Last updated on",
        ],
    );
}

#[test]
fn mkdocs_pages_and_mkdocstrings_definitions() {
    let root = "mkdocs-doc/usr/share/doc/mkdocs/html";
    let Some(config) = package_file(
        "mkdocs-doc",
        "usr/share/doc/mkdocs/html/user-guide/configuration.html",
    ) else {
        return;
    };
    let p = parse(&config);
    assert_eq!(p.title, "Configuration");
    let site_name = unit(&p, "site_name");
    assert_eq!(
        (site_name.title.as_str(), site_name.level),
        ("site_name", 3)
    );
    assert_eq!(site_name.headings, ["Configuration", "Project information"]);
    assert_eq!(
        code_languages(&p, "site_name: Marshmallow Generator"),
        [Some("yaml".to_string())]
    );
    // The bootstrap theme's navbar, its "on this page" sidebar and its
    // keyboard-shortcut and search dialogs.
    assert_absent(
        &p,
        &[
            "Keyboard Shortcuts",
            "Open this help",
            "Enter your search terms",
            "Localizing Your Theme",
            "Edit on GitHub",
            "Previous",
        ],
    );

    // mkdocstrings: an API object's heading carries its qualified name as
    // its id, the signature as its text.
    let plugins = parse(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/sites")
            .join(root)
            .join("dev-guide/plugins.html"),
    );
    let error = unit(&plugins, "mkdocs.exceptions.PluginError");
    assert_eq!(error.title, "mkdocs.exceptions.PluginError");
    assert!(error.text.contains("Bases: BuildError"));
    let priority = unit(&plugins, "mkdocs.plugins.event_priority");
    assert!(priority
        .title
        .starts_with("mkdocs.plugins.event_priority(priority: float)"));
    assert!(priority
        .code
        .iter()
        .all(|c| c.language.as_deref() == Some("python")));
    assert!(!priority.code.is_empty());
}

#[test]
fn mdbook_chapters_keep_headings_and_playground_code() {
    let Some(path) = package_file(
        "rust-doc",
        "usr/share/doc/rust-doc/html/book/ch08-03-hash-maps.html",
    ) else {
        return;
    };
    let p = parse(&path);
    let top = unit(&p, "storing-keys-with-associated-values-in-hash-maps");
    assert_eq!(
        top.title,
        "Storing Keys with Associated Values in Hash Maps"
    );
    let overwriting = unit(&p, "overwriting-a-value");
    assert_eq!(
        overwriting.headings,
        [top.title.as_str(), "Updating a Hash Map"]
    );
    assert_eq!(overwriting.level, 4);
    // `<pre><pre class="playground"><code class="language-rust">`.
    let rust = code_languages(&p, "let mut scores = HashMap::new();");
    assert!(
        !rust.is_empty() && rust.iter().all(|l| l.as_deref() == Some("rust")),
        "{rust:?}"
    );
    assert_eq!(code_languages(&p, "Yellow: 50"), [Some("text".to_string())]);
    assert_absent(
        &p,
        &[
            "Print this book",
            "Toggle Table of Contents",
            "Previous chapter",
        ],
    );
    assert!(!p
        .units
        .iter()
        .any(|u| u.title == "The Rust Programming Language"));
}

#[test]
fn rustdoc_items_are_definitions_named_by_their_path() {
    let Some(path) = package_file(
        "rust-doc",
        "usr/share/doc/rust-doc/html/std/collections/struct.HashMap.html",
    ) else {
        return;
    };
    let p = parse(&path);
    assert_eq!(p.title, "Struct std::collections::HashMap");
    // A method: `<section id="method.insert"><h4 class="code-header">`.
    let insert = unit(&p, "method.insert");
    assert_eq!(
        (insert.kind, insert.title.as_str()),
        (UnitKind::Definition, "std::collections::HashMap::insert")
    );
    assert_eq!(
        insert.aliases,
        [
            "insert",
            "HashMap::insert",
            "pub fn insert(&mut self, k: K, v: V) -> Option<V>"
        ]
    );
    assert!(
        insert
            .text
            .starts_with("#### pub fn insert(&mut self, k: K, v: V)"),
        "{}",
        insert.text
    );
    assert!(insert.headings.iter().any(|h| h == "Implementations"));
    assert!(insert
        .text
        .contains("Inserts a key-value pair into the map."));
    // An item of a trait implementation, numbered by rustdoc when the
    // name repeats; the implementation itself stays a section.
    let into_iter = unit(&p, "method.into_iter-1");
    assert_eq!(into_iter.title, "std::collections::HashMap::into_iter");
    let imp = unit(&p, "impl-IntoIterator");
    assert_eq!(imp.kind, UnitKind::Section);
    assert!(imp
        .title
        .starts_with("impl<'a, K, V, S> IntoIterator for &'a HashMap"));
    let examples = titled(&p, "Examples");
    assert!(examples
        .code
        .iter()
        .all(|c| c.language.as_deref() == Some("rust")));
    // The item declaration (`<pre class="rust struct">`).
    assert_eq!(
        code_languages(&p, "pub struct HashMap<K, V, S"),
        [Some("rust".to_string())]
    );
    assert_absent(
        &p,
        &[
            "Click or press",
            "Change settings",
            "Copy item path",
            "Expand description",
            "logo",
            "1.0.0 ·",
        ],
    );

    // Struct fields (`<span id="structfield.start">`, not headings) and
    // enum variants (`<h3 id="variant.Some"><code>`), siblings under
    // their heading; a required trait method (`tymethod.next`).
    let std = path.parent().unwrap().parent().unwrap();
    let range = parse(&std.join("ops/struct.Range.html"));
    for (anchor, title) in [
        ("structfield.start", "std::ops::Range::start"),
        ("structfield.end", "std::ops::Range::end"),
    ] {
        let field = unit(&range, anchor);
        assert_eq!(
            (field.kind, field.title.as_str()),
            (UnitKind::Definition, title)
        );
        assert_eq!(field.headings, ["Struct std::ops::Range", "Fields"]);
    }
    assert!(unit(&range, "structfield.start")
        .text
        .contains("The lower bound of the range (inclusive)."));
    let option = parse(&std.join("option/enum.Option.html"));
    let some = unit(&option, "variant.Some");
    assert_eq!(some.title, "std::option::Option::Some");
    assert_eq!(some.aliases, ["Some", "Option::Some", "Some(T)"]);
    assert_eq!(unit(&option, "impl").kind, UnitKind::Section);
    let iterator = parse(&std.join("iter/trait.Iterator.html"));
    assert_eq!(
        unit(&iterator, "tymethod.next").title,
        "std::iter::Iterator::next"
    );
}

#[test]
fn javadoc_members_are_definitions_named_by_their_class() {
    let Some(path) = package_file(
        "libcommons-lang3-java-doc",
        "usr/share/doc/libcommons-lang3-java/api/org/apache/commons/lang3/StringUtils.html",
    ) else {
        return;
    };
    let p = parse(&path);
    assert_eq!(p.title, "Class StringUtils");
    let summary = unit(&p, "method-summary");
    assert_eq!(
        (summary.kind, summary.title.as_str()),
        (UnitKind::Section, "Method Summary")
    );
    // A method: `<section class="detail" id="abbreviate(java.lang.String,int)"><h3>`
    // and its `div.member-signature`.
    let abbreviate = unit(&p, "abbreviate(java.lang.String,int)");
    assert_eq!(
        (abbreviate.kind, abbreviate.title.as_str(), abbreviate.level),
        (UnitKind::Definition, "StringUtils.abbreviate", 3)
    );
    assert_eq!(abbreviate.aliases, ["abbreviate"]);
    assert_eq!(abbreviate.headings, ["Class StringUtils", "Method Details"]);
    assert!(abbreviate
        .text
        .contains("public static String abbreviate(String str, int maxWidth)"));
    assert!(abbreviate
        .code
        .iter()
        .any(|c| c.content.contains("StringUtils.abbreviate(null, *)")));
    // A field, anchored at its bare name.
    let space = unit(&p, "SPACE");
    assert_eq!(
        (space.kind, space.title.as_str()),
        (UnitKind::Definition, "StringUtils.SPACE")
    );
    assert_absent(
        &p,
        &["Skip navigation links", "SEARCH:", "All rights reserved"],
    );

    // A generic class (`Class Pair<L,R>`), whose methods' sections carry
    // one id and their headings another (`of(L,R)`, erased on the `<h3>`).
    let pair = parse(&path.with_file_name("tuple").join("Pair.html"));
    let of = unit(&pair, "of(java.lang.Object,java.lang.Object)");
    assert_eq!(
        (of.kind, of.title.as_str()),
        (UnitKind::Definition, "Pair.of")
    );
    assert_eq!(
        pair.anchors["of(L,R)"],
        pair.anchors["of(java.lang.Object,java.lang.Object)"]
    );
}

#[test]
fn doxygen_members_titles_and_fragments() {
    let root = "usr/share/doc/libeigen3-dev/html";
    let Some(path) = package_file(
        "libeigen3-doc",
        &format!("{root}/classEigen_1_1ArrayBase.html"),
    ) else {
        return;
    };
    let p = parse(&path);
    // No `<h1>`: the `<title>` (`div.headertitle` stays text, see
    // extract::heading_level).
    assert_eq!(
        p.title,
        "Eigen: Eigen::ArrayBase< Derived > Class Template Reference"
    );
    assert_eq!(unit(&p, "details").title, "Detailed Description");
    // A member: anchored at its hashed id, its permalink marker left out.
    let matrix = unit(&p, "a3c80cf9396d233898b3faa3a67559a58");
    assert_eq!(matrix.title, "matrix()");
    assert!(matrix.text.contains("Eigen::ArrayBase< Derived >::matrix"));
    assert!(!all_text(&p).contains('◆'));
    assert_absent(&p, &["Dense matrix and array manipulation » Reference"]);

    // `div.fragment` of `div.line`: a code block, one line per element.
    let tutorial = parse(&path.with_file_name("group__TutorialArrayClass.html"));
    let code: Vec<&str> = tutorial
        .units
        .iter()
        .flat_map(|u| &u.code)
        .map(|c| c.content.as_str())
        .filter(|c| c.contains("ArrayXXf  m(2,2);"))
        .collect();
    assert!(!code.is_empty());
    assert!(
        code[0].starts_with("#include <Eigen/Dense>\n#include <iostream>\n"),
        "{:?}",
        code[0]
    );
    let text = all_text(&tutorial);
    assert!(text.contains("```\n#include <Eigen/Dense>"));
}

#[test]
fn docbook_chapters_anchor_each_section_at_its_own_id() {
    let Some(path) = package_file(
        "debian-reference-en",
        "usr/share/debian-reference/ch01.en.html",
    ) else {
        return;
    };
    let p = parse(&path);
    assert_eq!(p.title, "Chapter 1. GNU/Linux tutorials");
    // DocBook XSL writes `<h3><a id="x"/>Title</h3>`: the parser leaves
    // each `<a>` open, and its copies wrap what follows.
    for (anchor, title) in [
        ("_console_basics", "1.1. Console basics"),
        ("_the_shell_prompt", "1.1.1. The shell prompt"),
        (
            "_gui_system_administration_tools",
            "1.1.5. GUI system administration tools",
        ),
        ("_virtual_consoles", "1.1.6. Virtual consoles"),
    ] {
        assert_eq!(unit(&p, anchor).title, title);
    }
    assert_eq!(
        unit(&p, "_the_shell_prompt").headings,
        ["Chapter 1. GNU/Linux tutorials", "1.1. Console basics"]
    );
    assert!(unit(&p, "_virtual_consoles")
        .code
        .iter()
        .any(|c| c.content == "# chvt 3"));
    // `div.navheader` / `div.navfooter`.
    assert_absent(&p, &["Prev Next", "Preface Home"]);
}

#[test]
fn docbook_function_synopses_name_what_their_sections_define() {
    let Some(path) = package_file(
        "libpam-doc",
        "usr/share/doc/libpam-doc/html/adg-interface-by-app-expected.html",
    ) else {
        return;
    };
    let p = parse(&path);
    // `<div class="funcsynopsis">`: one `funcprototype-table` per
    // function, its name in `<b class="fsfunc">`.
    let start = unit(&p, "adg-pam_start");
    assert_eq!(start.title, "3.1.1. Initialization of PAM transaction");
    assert_eq!(start.aliases, ["pam_start", "pam_start_confdir"]);
    assert!(start.text.contains("int pam_start("), "{}", start.text);
    assert_eq!(unit(&p, "adg-pam_end").aliases, ["pam_end"]);
    assert!(unit(&p, "adg-pam_start-description").aliases.is_empty());

    // The names are the section's names in the index: a query of exactly
    // one finds the section declaring it first, above its subsections
    // (`DESCRIPTION`, `RETURN VALUES`) and other sections that use it.
    let dir = tempfile::tempdir().unwrap();
    let e = index_site(dir.path(), path.parent().unwrap());
    for (query, url) in [
        ("misc_conv", "adg-libpam-functions.html#adg-misc_conv"),
        (
            "pam_putenv",
            "adg-interface-by-app-expected.html#adg-pam_putenv",
        ),
        (
            "pam_getenv",
            "adg-interface-by-app-expected.html#adg-pam_getenv",
        ),
        (
            "pam_get_data",
            "mwg-expected-by-module-item.html#mwg-pam_get_data",
        ),
    ] {
        assert_eq!(first_url(&e, query).as_deref(), Some(url), "{query}");
    }
}

#[test]
fn gtk_doc_refentries_anchor_functions_and_drop_their_navigation() {
    let root = "usr/share/gtk-doc/html";
    let Some(path) = package_file(
        "libglib2.0-doc",
        &format!("{root}/glib/glib-Hash-Tables.html"),
    ) else {
        return;
    };
    let p = parse(&path);
    // A DocBook refentry: its refnamediv title, then refsect1/refsect2.
    assert_eq!(titled(&p, "Hash Tables").level, 2);
    assert_eq!(
        p.anchors.get("glib-Hash-Tables"),
        p.anchors.get("glib-Hash-Tables.top_of_page")
    );
    let new = unit(&p, "g-hash-table-new");
    assert_eq!(new.title, "g_hash_table_new ()");
    assert!(new.code.iter().any(
        |c| c.content.contains("g_hash_table_new (GHashFunc hash_func")
            || c.content.contains("g_hash_table_new (GHashFunc")
    ));
    assert_eq!(
        unit(&p, "g-hash-table-new.parameters").headings,
        ["Functions", "g_hash_table_new ()"]
    );
    assert_absent(
        &p,
        &[
            "Top | Description",
            "Home Up Prev Next",
            "Generated by GTK-Doc",
        ],
    );

    // A variablelist (varlistentry terms and their descriptions) stays in
    // its section's text, term next to description.
    let codegen = parse(
        &path
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("gio/gdbus-codegen.html"),
    );
    let options = titled(&codegen, "Options");
    assert!(
        options
            .text
            .contains("--interface-prefix org.project.Prefix."),
        "{}",
        options.text
    );
}

#[test]
fn texinfo_makeinfo_nodes_definitions_and_no_node_navigation() {
    let Some(path) = package_file("bash-doc", "usr/share/doc/bash/bashref.html") else {
        return;
    };
    let p = parse(&path);
    assert_eq!(p.title, "Bash Reference Manual");
    // Sections are anchored at their node's id, which links point to.
    let syntax = unit(&p, "Shell-Syntax");
    assert_eq!(syntax.title, "3.1 Shell Syntax");
    assert_eq!(syntax.headings, ["Bash Features", "3 Basic Shell Features"]);
    // `@item` entries of `@table` with an index entry: definitions.
    let cd = unit(&p, "index-cd");
    assert_eq!((cd.kind, cd.title.as_str()), (UnitKind::Definition, "cd"));
    assert!(cd
        .code
        .iter()
        .any(|c| c.content.starts_with("cd [-L|[-P [-e]] [-@] [directory]")));
    let posix = unit(&p, "index-POSIX");
    assert_eq!(
        (posix.kind, posix.title.as_str()),
        (UnitKind::Definition, "POSIX")
    );
    let text = all_text(&p);
    assert!(!text.contains('¶'));
    // The `Next: … Previous: … Up: …` panel of every node and the table
    // of contents.
    assert_absent(
        &p,
        &["Next: Introduction", "Previous: (dir)", "[Contents][Index]"],
    );
    assert!(!p.units.iter().any(|u| u.title == "Table of Contents"));
}

#[test]
fn texinfo_texi2html_sections_take_their_named_anchors() {
    let Some(path) = package_file("gettext-doc", "usr/share/doc/gettext/gettext_10.html") else {
        return;
    };
    let p = parse(&path);
    assert_eq!(p.title, "10. Producing Binary MO Files");
    // `<a name="msgfmt-Invocation"></a><h2>`: the node name, first.
    let invocation = unit(&p, "msgfmt-Invocation");
    assert_eq!(invocation.title, "10.1 Invoking the msgfmt Program");
    assert_eq!(p.anchors["SEC173"], p.anchors["msgfmt-Invocation"]);
    assert!(invocation
        .code
        .iter()
        .any(|c| c.content.starts_with("msgfmt [option] filename.po")));
}

#[test]
fn plain_html_headings_take_the_named_anchors_inside_them() {
    let Some(path) = package_file("gettext-doc", "usr/share/doc/gettext/FAQ.html") else {
        return;
    };
    let p = parse(&path);
    assert_eq!(p.title, "Frequently Asked Questions for GNU gettext");
    let list = unit(&p, "general_mailinglist");
    assert_eq!(
        (list.title.as_str(), list.level),
        ("Where is the mailing list?", 4)
    );
    assert_eq!(list.headings, ["Answers", "General"]);
    assert!(list.text.contains("bug-gettext@gnu.org"));
}

/// A site built by an npm generator, committed under `tests/generators/`.
fn generated_site(generator: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/generators")
        .join(generator)
        .join("site")
}

/// What the VitePress, Docusaurus and MkDocs Material sites, built from
/// the same Markdown, must all yield for their "Getting Started" page.
fn assert_getting_started(p: &Page) {
    assert_eq!(p.title, "Getting Started");
    let install = unit(p, "installation");
    assert_eq!((install.title.as_str(), install.level), ("Installation", 2));
    assert_eq!(
        unit(p, "projections").headings,
        ["Getting Started", "First chart"]
    );
    assert_eq!(
        code_languages(p, "npm install --save-dev quasar-charts"),
        [Some("bash".to_string())]
    );
    assert_eq!(
        code_languages(p, "import { render } from 'quasar-charts'"),
        [Some("javascript".to_string())]
    );
    assert!(install.text.contains("Run quasar doctor after installing"));
    let text = all_text(p);
    assert!(!text.contains('\u{200B}'));
    // Code blocks' language labels and copy buttons.
    assert!(!text.lines().any(|l| l == "sh" || l == "js"), "{text}");
    // The sidebar's and pager's link to the other page.
    assert!(!text.contains("Configuration"), "{text}");
}

#[test]
fn vitepress_pages_drop_labels_zero_width_marks_and_furniture() {
    let p = parse(&generated_site("vitepress").join("guide/getting-started.html"));
    assert_getting_started(&p);
    assert_eq!(unit(&p, "getting-started").level, 1);
    assert_absent(
        &p,
        &[
            "Skip to content",
            "On this page",
            "Next page",
            "Released under the MIT License",
            "Quasar Docs",
        ],
    );
}

#[test]
fn docusaurus_pages_keep_the_article_and_drop_the_theme_around_it() {
    let p = parse(&generated_site("docusaurus").join("guide/getting-started/index.html"));
    assert_getting_started(&p);
    assert_absent(
        &p,
        &[
            "Skip to main content",
            "On this page",
            "Next",
            "Copyright footerword",
            "Quasar Docs",
            "Guide",
        ],
    );
}

#[test]
fn mkdocs_material_pages_keep_the_article_and_drop_the_theme_around_it() {
    let p = parse(&generated_site("mkdocs-material").join("guide/getting-started.html"));
    assert_getting_started(&p);
    assert_eq!(unit(&p, "getting-started").level, 1);
    assert_absent(
        &p,
        &[
            "Skip to content",
            "Table of contents",
            "Copyright footerword",
            "Made with",
            "Quasar Docs",
            "Next",
        ],
    );
}

#[test]
fn hugo_pages_keep_the_main_column_and_drop_the_theme_around_it() {
    let p = parse(&generated_site("hugo").join("guide/getting-started.html"));
    assert_getting_started(&p);
    // Doks writes the `<h1>` from the front matter's title, in a page
    // header of its own, and each heading's permalink as `a.anchor`.
    assert_eq!(unit(&p, "installation").title, "Installation");
    assert!(!all_text(&p).lines().any(|l| l.ends_with('#')));
    // The section menu, the "On this page" outline (beside and inside
    // `<main>`), the previous/next card and the footer.
    assert_absent(&p, &["On this page", "Next", "Quasar Docs", "Guide"]);
    let tip = &unit(&p, "installation").text;
    assert!(tip.contains("Run quasar doctor after installing"), "{tip}");
}

#[test]
fn sites_built_by_vitepress_docusaurus_material_and_hugo_are_found_by_section() {
    for (generator, url) in [
        ("vitepress", "guide/configuration.html#magnitudelimit"),
        (
            "docusaurus",
            "guide/configuration/index.html#magnitudelimit",
        ),
        ("mkdocs-material", "guide/configuration.html#magnitudelimit"),
        ("hugo", "guide/configuration.html#magnitudelimit"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let e = index_site(dir.path(), &generated_site(generator));
        assert_eq!(
            first_url(&e, "magnitudeLimit").as_deref(),
            Some(url),
            "{generator}"
        );
    }
}

#[test]
fn anchored_terms_and_table_rows_define_names_a_mere_mention_does_not() {
    // gtk-doc shows a class structure's members as a table whose rows
    // are anchored and whose first cell is the member's name in code:
    // `GObjectClass.constructed`. Another page only says "constructed".
    let root = "usr/share/gtk-doc/html";
    let pages = [
        "gobject/gobject-The-Base-Object-Type.html",
        "glib/glib-String-Utility-Functions.html",
        "gio/ExampleCat.html",
    ];
    let Some(first) = package_file("libglib2.0-doc", &format!("{root}/{}", pages[0])) else {
        return;
    };
    let site = first.ancestors().nth(2).unwrap().to_path_buf();
    let p = parse(&first);
    let member = titled(&p, "constructed ()");
    assert_eq!(member.kind, UnitKind::Definition);
    assert!(member.anchor.is_some());
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("site");
    for page in pages {
        let to = copy.join(page);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(site.join(page), to).unwrap();
    }
    let e = index_site(tmp.path(), &copy);
    let url = first_url(&e, "constructed").expect("found");
    assert!(url.starts_with(pages[0]), "{url}");

    // A plain page: `<dt><a name>` terms and an anchored row of a
    // function table define; a "see also" term linking elsewhere and a
    // row whose first cell is a plain type do not.
    let p = parse_page(
        r##"<html><body><main><h1>Options</h1>
<dl><dt><a name="opt-count"></a><code>--count</code></dt><dd><p>Print a count.</p></dd>
<dt><span id="index-0"></span><a href="https://peps.python.org/pep-0008/">PEP 8</a> - Style Guide</dt><dd><p>The guide.</p></dd></dl>
<table><tr><th>Function</th><th>Description</th></tr>
<tr id="strlen"><td><code>strlen</code></td><td>The length of a string.</td></tr>
<tr id="r_a1"><td>void</td><td><a href="#a1">resize</a> (Index rows)</td></tr></table>
</main></body></html>"##,
    )
    .unwrap();
    let defined: Vec<(&str, Option<&str>)> = p
        .units
        .iter()
        .filter(|u| u.kind == UnitKind::Definition)
        .map(|u| (u.title.as_str(), u.anchor.as_deref()))
        .collect();
    assert_eq!(
        defined,
        [("--count", Some("opt-count")), ("strlen", Some("strlen"))]
    );
}

#[test]
fn gi_docgen_titles_read_as_shown_and_method_summaries_point_to_their_pages() {
    let dir = "usr/share/doc/libgtk-4-doc/gsk4";
    let Some(method) = package_file(
        "libgtk-4-doc",
        &format!("{dir}/method.BlurNode.get_radius.html"),
    ) else {
        return;
    };
    // `<a>Gsk</a><span class="sep"></span><a>BlurNode</a><span class="sep"></span>get_radius`
    let p = parse(&method);
    assert!(
        p.units.iter().any(|u| u.title == "Gsk BlurNode get_radius"),
        "{:?}",
        p.units.iter().map(|u| &u.title).collect::<Vec<_>>()
    );
    // The class page lists each method under a heading that only links to
    // the method's page: lines of its "Instance methods", not sections.
    let class = package_file("libgtk-4-doc", &format!("{dir}/class.BlurNode.html")).unwrap();
    let c = parse(&class);
    assert!(!c
        .units
        .iter()
        .any(|u| u.title == "gsk_blur_node_get_radius"));
    let methods = c
        .units
        .iter()
        .find(|u| u.title == "Instance methods")
        .expect("Instance methods");
    assert!(
        methods.text.contains("gsk_blur_node_get_radius"),
        "{}",
        methods.text
    );
}

#[test]
fn makeinfo_bare_headings_join_their_definitions_and_index_anchors_are_terms() {
    // GnuTLS's one-page manual: `<h4 class="subheading">gnutls_init</h4>`
    // over the `<dl class="def">` of `Function: int gnutls_init`.
    let Some(path) = package_file("gnutls-doc", "usr/share/doc/gnutls-doc/html/gnutls.html") else {
        return;
    };
    let p = parse(&path);
    assert!(!p
        .units
        .iter()
        .any(|u| u.title == "gnutls_init" && u.kind == UnitKind::Section));
    let def = p.anchors["index-gnutls_005finit-1"];
    assert_eq!(p.units[def].kind, UnitKind::Definition);
    assert!(
        p.units[def].title.contains("gnutls_init"),
        "{}",
        p.units[def].title
    );
    assert_eq!(p.anchors["gnutls_005finit-1"], def);
    // zsh's options: `<span id="index-AUTO_005fMENU">` is the index's
    // `AUTO_MENU` entry, a term of the section that holds it.
    let Some(options) = package_file("zsh-doc", "usr/share/doc/zsh-common/html/Options.html")
    else {
        return;
    };
    let o = parse(&options);
    let at = o.anchors["index-AUTO_005fMENU"];
    assert!(
        o.units[at].index_terms.iter().any(|t| t == "AUTO_MENU"),
        "{:?}",
        o.units[at].index_terms
    );
    assert!(o.units[at].index_terms.iter().any(|t| t == "NO_AUTO_MENU"));
}
