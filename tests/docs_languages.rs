//! A documentation site shipped as it is: translations side by side
//! (`en/`, `fr/`, each page's `<html lang>`), untranslated pages linked
//! into a translation's directory. Every page stays searchable; the
//! reader's language comes first (the site's own by default), and a file
//! reached under several paths is one page.

use gitsense_engine::{Engine, Highlight, SearchOptions};
use gitsense_import::{self as import, docs::DocsOptions};
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn page(lang: Option<&str>, title: &str, body: &str) -> String {
    let attr = lang.map(|l| format!(" lang=\"{l}\"")).unwrap_or_default();
    format!(
        "<!DOCTYPE html><html{attr}><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><main><h1>{title}</h1><p>{body}</p></main></body></html>"
    )
}

/// English pages (the site's language: most pages), a French
/// translation of the directive's page that, word for word, matches the
/// query better, and an untranslated page linked into `fr/`.
fn site(root: &Path, with_lang: bool) {
    let (en, fr) = if with_lang {
        (Some("en"), Some("fr"))
    } else {
        (None, None)
    };
    write(
        root,
        "en/core.html",
        &page(
            en,
            "KeepAlive Directive",
            "Enables persistent connections. Syntax: KeepAlive On|Off.",
        ),
    );
    write(
        root,
        "en/install.html",
        &page(
            en,
            "Compiling and Installing",
            "Download the sources, configure, build and install the server.",
        ),
    );
    write(
        root,
        "en/vhosts.html",
        &page(
            en,
            "Virtual Hosts",
            "Several sites on one machine, each with its own name and configuration.",
        ),
    );
    write(
        root,
        "fr/core.html",
        &page(
            fr,
            "Directive KeepAlive",
            "KeepAlive active les connexions persistantes. KeepAlive On, KeepAlive Off: KeepAlive.",
        ),
    );
    #[cfg(unix)]
    std::os::unix::fs::symlink("../en/install.html", root.join("fr/install.html")).unwrap();
}

fn build(root: &Path, out: &Path) -> Vec<String> {
    let (_, report) = import::build_with(out, "docs:test".into(), |w| {
        import::docs::import(root, &DocsOptions::default(), w, &import::no_progress())
    })
    .expect("the site imports");
    report.warnings
}

/// The pages of the messages a search returns, best first.
fn pages(e: &Engine, q: &str, lang: Option<&str>) -> Vec<String> {
    let opts = SearchOptions {
        per_page: Some(20),
        highlight: Highlight::None,
        lang: lang.map(str::to_string),
        ..SearchOptions::default()
    };
    let r = e.search(&format!("{q} in:messages"), &opts).unwrap();
    let mut out: Vec<String> = Vec::new();
    for m in &r.results.messages {
        let p = m.meta["messages_meta_file_path"]
            .as_str()
            .unwrap()
            .to_string();
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_reader_s_language_comes_first_and_every_translation_stays_searchable() {
    let dir = tempfile::tempdir().unwrap();
    // Without languages named, the French page matches best.
    let plain = dir.path().join("plain");
    site(&plain, false);
    let plain_index = dir.path().join("plain.gsx");
    build(&plain, &plain_index);
    let e = Engine::open(&plain_index).unwrap();
    assert_eq!(
        pages(&e, "KeepAlive", None),
        ["fr/core.html", "en/core.html"]
    );

    let shipped = dir.path().join("shipped");
    site(&shipped, true);
    let index = dir.path().join("shipped.gsx");
    build(&shipped, &index);
    let e = Engine::open(&index).unwrap();
    // The site's language (English: most pages) first, the French page
    // after it; French first for a French reader (`fr-FR` is French), and
    // an unknown language reads as the site's.
    assert_eq!(
        pages(&e, "KeepAlive", None),
        ["en/core.html", "fr/core.html"]
    );
    assert_eq!(
        pages(&e, "KeepAlive", Some("en")),
        ["en/core.html", "fr/core.html"]
    );
    assert_eq!(
        pages(&e, "KeepAlive", Some("fr-FR")),
        ["fr/core.html", "en/core.html"]
    );
    assert_eq!(
        pages(&e, "KeepAlive", Some("de")),
        ["en/core.html", "fr/core.html"]
    );
    // Words only a translation holds still find it first.
    assert_eq!(pages(&e, "connexions persistantes", None), ["fr/core.html"]);
    // The JS API's option.
    let opts: SearchOptions = serde_json::from_str(r#"{"lang": "fr"}"#).unwrap();
    assert_eq!(opts.lang.as_deref(), Some("fr"));
}

#[cfg(unix)]
#[test]
fn a_file_reached_under_several_paths_is_one_page_where_it_lives() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    site(&root, true);
    // A hard link too: the same file under a third name.
    std::fs::hard_link(root.join("en/vhosts.html"), root.join("fr/vhosts.html")).unwrap();
    let index = dir.path().join("site.gsx");
    let warnings = build(&root, &index);
    assert!(
        warnings
            .iter()
            .any(|w| w
                == "left out 2 pages: the same file as another page (a symbolic or hard link)"),
        "{warnings:?}"
    );
    let e = Engine::open(&index).unwrap();
    assert_eq!(
        pages(&e, "configure build install", None),
        ["en/install.html"]
    );
    // Of two hard links, neither a symbolic link: the first path.
    assert_eq!(pages(&e, "virtual hosts machine", None), ["en/vhosts.html"]);
}

#[test]
fn a_regional_tag_is_its_language() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    write(
        &root,
        "a.html",
        &page(Some("en"), "Alpha", "alpha words here"),
    );
    write(
        &root,
        "b.html",
        &page(Some("en-GB"), "Beta", "beta words here"),
    );
    write(
        &root,
        "c.html",
        &page(Some("EN"), "Gamma", "gamma words here"),
    );
    let index = dir.path().join("site.gsx");
    build(&root, &index);
    let conn = rusqlite::Connection::open(&index).unwrap();
    let langs: Option<String> = conn
        .query_row(
            "SELECT value FROM index_meta WHERE key = ?1",
            [gitsense_engine::langs::META_KEY],
            |r| r.get(0),
        )
        .ok();
    // `en-gb` is a tag of its own, recorded; `EN` is `en`.
    assert_eq!(langs.as_deref(), Some("en;en-gb:3"));
    // English of either tag is the reader's language: nothing demoted
    // (equal matches, in page order).
    let e = Engine::open(&index).unwrap();
    assert_eq!(
        pages(&e, "words here", None),
        ["a.html", "b.html", "c.html"]
    );
    assert_eq!(
        pages(&e, "words here", Some("en-GB")),
        ["a.html", "b.html", "c.html"]
    );
}
