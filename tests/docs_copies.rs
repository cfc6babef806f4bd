//! Sites as they are shipped hold copies of their own pages: a manual
//! both chapter by chapter and on one page, the same page under two
//! paths. A copy never comes before the page it copies, and what only
//! the copy holds is still found.
//!
//! The real site is Debian's `debian-policy` package, unpacked under
//! `target/sites/` by `python3 bench/sites.py --fetch-only` (as
//! `./build.sh test` does): its Perl and menu sub-policies ship both as
//! chapters (`perl-policy.html/ch-*.html`) and as one page
//! (`perl-policy-1.html`). A missing package skips its test with a
//! message, or fails it under `GITSENSE_REQUIRE_CORPORA=1`.

use gitsense_engine::{Engine, Highlight, SearchOptions};
use gitsense_import::docs::{self, DocsOptions};
use gitsense_import::{self as import};
use std::path::{Path, PathBuf};

mod common;
use common::corpus;

fn site(pkg: &str, rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/sites")
        .join(pkg)
        .join(rel);
    corpus(
        p,
        &format!("python3 bench/sites.py --fetch-only unpacks {pkg}; ./build.sh test runs it"),
    )
}

/// The site imported with default options (as shipped), opened, and the
/// import's warnings.
fn index_site(dir: &Path, site: &Path) -> (Engine, Vec<String>) {
    let path = dir.join("site.gsx");
    let (_, report) = import::build_with(&path, format!("docs:{}", site.display()), |w| {
        docs::import(site, &DocsOptions::default(), w, &import::no_progress())
    })
    .unwrap();
    (Engine::open(&path).unwrap(), report.warnings)
}

/// The pages of a query's messages, best first, each once.
fn pages(e: &Engine, query: &str) -> Vec<String> {
    let r = e
        .search(
            &format!("{query} in:messages"),
            &SearchOptions {
                highlight: Highlight::None,
                per_page: Some(30),
                ..SearchOptions::default()
            },
        )
        .unwrap();
    let mut seen = Vec::new();
    for m in &r.results.messages {
        if let Some(p) = m
            .meta
            .get("messages_meta_file_path")
            .and_then(|v| v.as_str())
        {
            if !seen.iter().any(|s| s == p) {
                seen.push(p.to_string());
            }
        }
    }
    seen
}

#[test]
fn a_single_page_edition_never_comes_before_its_chapters() {
    let Some(dir) = site("debian-policy", "usr/share/doc/debian-policy") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (e, warnings) = index_site(tmp.path(), &dir);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("sections that copy other pages")),
        "{warnings:?}"
    );
    // Each query names a section of one chapter; the one-page edition
    // holds the same section word for word.
    for (query, chapter) in [
        ("Script Magic", "perl-policy.html/ch-programs.html"),
        (
            "perl vendor installation",
            "perl-policy.html/ch-module_packages.html",
        ),
        (
            "architecture independent modules",
            "perl-policy.html/ch-module_packages.html",
        ),
        (
            "embedded perl dependencies",
            "perl-policy.html/ch-embed.html",
        ),
        ("site directories", "perl-policy.html/ch-site.html"),
        ("preferred menu structure", "menu-policy.html/ch2.html"),
    ] {
        let found = pages(&e, query);
        assert_eq!(
            found.first().map(String::as_str),
            Some(chapter),
            "{query}: {found:?}"
        );
        let chapter_at = found.iter().position(|p| p == chapter).unwrap();
        for copy in ["perl-policy-1.html", "menu-policy-1.html"] {
            if let Some(at) = found.iter().position(|p| p == copy) {
                assert!(at > chapter_at, "{query}: {found:?}");
            }
        }
    }
    // The one-page edition is still a page of the index: what it alone
    // holds (its title page) is found.
    assert!(
        pages(&e, "Debian Perl Policy git-path:perl-policy-1.html")
            .iter()
            .any(|p| p == "perl-policy-1.html"),
        "the one-page edition is left out entirely"
    );
}

#[test]
fn an_api_documented_alike_under_two_names_keeps_both_entries() {
    // Python's email package documents `EmailMessage` and the legacy
    // `Message` with the same words for many methods: two entries, not a
    // copy.
    let Some(dir) = corpus(
        PathBuf::from("/usr/share/doc/python3.11/html"),
        "./build.sh test installs python3.11-doc",
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    std::fs::create_dir_all(site.join("library")).unwrap();
    for page in ["email.message.html", "email.compat32-message.html"] {
        std::fs::copy(
            dir.join("library").join(page),
            site.join("library").join(page),
        )
        .unwrap();
    }
    let (e, _) = index_site(tmp.path(), &site);
    for (query, page) in [
        ("EmailMessage.get_all", "library/email.message.html"),
        ("Message.get_all", "library/email.compat32-message.html"),
    ] {
        let found = pages(&e, query);
        assert_eq!(
            found.first().map(String::as_str),
            Some(page),
            "{query}: {found:?}"
        );
    }
}

#[test]
fn a_manual_on_one_page_never_comes_before_the_api_reference_it_repeats() {
    // gnutls-doc ships its whole manual on one page, whose appendix
    // documents every function again (makeinfo `Function: int NAME`
    // entries under a `NAME` heading), beside gtk-doc's API reference
    // (`NAME ()`), in the same words in another order.
    let Some(dir) = site("gnutls-doc", "usr/share/doc/gnutls-doc") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (e, _) = index_site(tmp.path(), &dir);
    for (function, page) in [
        (
            "gnutls_x509_crt_get_serial",
            "api-reference/gnutls-x509.html",
        ),
        (
            "gnutls_session_set_verify_cert",
            "api-reference/gnutls-gnutls.html",
        ),
        (
            "gnutls_pkcs11_token_get_ptr",
            "api-reference/gnutls-pkcs11.html",
        ),
    ] {
        let found = pages(&e, function);
        assert_eq!(
            found.first().map(String::as_str),
            Some(page),
            "{function}: {found:?}"
        );
    }
    // The manual's own chapters stay: its prose is found on it.
    let found = pages(&e, "X.509 certificate parsing example");
    assert_eq!(
        found.first().map(String::as_str),
        Some("html/gnutls.html"),
        "{found:?}"
    );
}
