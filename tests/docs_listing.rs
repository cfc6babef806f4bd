//! Listing pages of real documentation sites: told apart from the pages
//! they point to by their shape, never returned as results, and their
//! links read as terms of the sections they point to.
//!
//! The pages are those of Debian's documentation packages that
//! `bench/sites.py --fetch-only` unpacks under `target/sites/` (as
//! `./build.sh test` does): Doxygen (Eigen), gtk-doc (GLib), MediaWiki
//! (cppreference), Javadoc (Commons Lang), rustdoc (the standard library),
//! Texinfo (gettext's texi2html manual); and Sphinx's (the Python docs,
//! from `python3.11-doc`).

use gitsense_engine::{Engine, Highlight, SearchOptions};
use gitsense_import::docs::{self, parse_page, DocsOptions, Skip};
use gitsense_import::{self as import};
use std::path::{Path, PathBuf};

mod common;
use common::corpus;

/// The unpacked package's site root, or `None` (the test skips) when it
/// is missing and `GITSENSE_REQUIRE_CORPORA` is unset.
fn site(pkg: &str, root: &str) -> Option<PathBuf> {
    corpus(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/sites")
            .join(pkg)
            .join(root),
        "./build.sh test fetches it: python3 bench/sites.py --fetch-only",
    )
}

fn eigen() -> Option<PathBuf> {
    site("libeigen3-doc", "usr/share/doc/libeigen3-dev/html")
}

fn glib() -> Option<PathBuf> {
    site("libglib2.0-doc", "usr/share/gtk-doc/html")
}

fn cppreference() -> Option<PathBuf> {
    site(
        "cppreference-doc-en-html",
        "usr/share/cppreference/doc/html",
    )
}

fn commons_lang() -> Option<PathBuf> {
    site(
        "libcommons-lang3-java-doc",
        "usr/share/doc/libcommons-lang3-java/api",
    )
}

fn rust_std() -> Option<PathBuf> {
    site("rust-doc", "usr/share/doc/rust-doc/html/std")
}

fn gettext() -> Option<PathBuf> {
    site("gettext-doc", "usr/share/doc/gettext")
}

fn python() -> Option<PathBuf> {
    corpus(
        PathBuf::from("/usr/share/doc/python3.11/html"),
        "./build.sh test installs python3.11-doc",
    )
}

fn skip_of(root: &Path, rel: &str) -> Option<Skip> {
    let html = std::fs::read_to_string(root.join(rel)).unwrap();
    parse_page(&html).unwrap().skip
}

#[test]
fn index_member_and_symbol_lists_of_three_generators_are_listings() {
    if let Some(root) = eigen() {
        assert_eq!(
            skip_of(&root, "classEigen_1_1ArrayBase-members.html"),
            Some(Skip::Listing)
        );
        assert_eq!(skip_of(&root, "modules.html"), Some(Skip::Listing));
    }
    if let Some(root) = glib() {
        assert_eq!(
            skip_of(&root, "glib/api-index-full.html"),
            Some(Skip::Listing)
        );
        assert_eq!(
            skip_of(&root, "gobject/api-index-full.html"),
            Some(Skip::Listing)
        );
    }
    if let Some(root) = cppreference() {
        assert_eq!(
            skip_of(&root, "en/cpp/symbol_index.html"),
            Some(Skip::Listing)
        );
    }
}

#[test]
fn back_of_book_and_all_items_indexes_of_four_more_generators_are_listings() {
    if let Some(root) = python() {
        // Sphinx's genindex and module index: read as index tables.
        for rel in ["genindex-A.html", "genindex-all.html", "py-modindex.html"] {
            assert_eq!(skip_of(&root, rel), Some(Skip::SiteIndex), "{rel}");
        }
    }
    if let Some(root) = commons_lang() {
        // Each entry is a linked member and, in a <dd>, its first sentence.
        assert_eq!(skip_of(&root, "index-all.html"), Some(Skip::Listing));
    }
    if let Some(root) = rust_std() {
        assert_eq!(skip_of(&root, "all.html"), Some(Skip::Listing));
    }
    if let Some(root) = gettext() {
        // texi2html index nodes: entries under letter dividers.
        for rel in ["gettext_21.html", "gettext_22.html"] {
            assert_eq!(skip_of(&root, rel), Some(Skip::Listing), "{rel}");
        }
    }
}

#[test]
fn the_reference_pages_those_indexes_point_to_stay_pages() {
    if let Some(root) = python() {
        assert_eq!(skip_of(&root, "library/json.html"), None);
    }
    if let Some(root) = commons_lang() {
        for rel in [
            "org/apache/commons/lang3/StringUtils.html",
            "org/apache/commons/lang3/package-summary.html",
        ] {
            assert_eq!(skip_of(&root, rel), None, "{rel}");
        }
    }
    if let Some(root) = rust_std() {
        for rel in [
            "collections/struct.HashMap.html",
            "collections/index.html",
            "vec/struct.Vec.html",
        ] {
            assert_eq!(skip_of(&root, rel), None, "{rel}");
        }
    }
    if let Some(root) = gettext() {
        for rel in ["gettext_10.html", "gettext_1.html", "FAQ.html"] {
            assert_eq!(skip_of(&root, rel), None, "{rel}");
        }
    }
}

#[test]
fn a_javadoc_index_names_the_members_it_lists_and_is_never_a_result() {
    let Some(root) = commons_lang() else { return };
    let files = [
        "index-all.html",
        "org/apache/commons/lang3/StringUtils.html",
        "org/apache/commons/lang3/CharUtils.html",
    ];
    let page = parse_page(&std::fs::read_to_string(root.join("index-all.html")).unwrap()).unwrap();
    assert!(page
        .index_entries
        .iter()
        .any(|e| e.term.starts_with("abbreviateMiddle")
            && e.hrefs[0].ends_with(
                "StringUtils.html#abbreviateMiddle(java.lang.String,java.lang.String,int)"
            )));
    let Imported {
        engine: e,
        warnings,
        ..
    } = import_pages(&root, &files, &DocsOptions::default());
    assert!(
        warnings.iter().any(|w| w.starts_with("attached ")),
        "{warnings:?}"
    );
    for q in ["abbreviateMiddle", "isAsciiAlphanumeric", "StringUtils"] {
        let found = pages(&e, q);
        assert!(!found.is_empty(), "{q}");
        assert!(
            found.iter().all(|p| p != "index-all.html"),
            "{q}: {found:?}"
        );
    }
    assert_eq!(
        pages(&e, "abbreviateMiddle").first().map(String::as_str),
        Some("org/apache/commons/lang3/StringUtils.html")
    );
}

#[test]
fn source_code_listings_are_left_out() {
    let Some(root) = eigen() else { return };
    for rel in ["ArrayBase_8h_source.html", "Matrix_8h_source.html"] {
        assert_eq!(skip_of(&root, rel), Some(Skip::SourceListing), "{rel}");
    }
}

#[test]
fn reference_and_prose_pages_stay_pages() {
    if let Some(root) = eigen() {
        for rel in [
            "classEigen_1_1ArrayBase.html",
            "classEigen_1_1Matrix.html",
            "group__TutorialMatrixClass.html",
        ] {
            assert_eq!(skip_of(&root, rel), None, "{rel}");
        }
    }
    if let Some(root) = glib() {
        for rel in [
            "glib/glib-Hash-Tables.html",
            "gobject/gobject-The-Base-Object-Type.html",
        ] {
            assert_eq!(skip_of(&root, rel), None, "{rel}");
        }
    }
    if let Some(root) = cppreference() {
        for rel in [
            "en/cpp/container/vector.html",
            "en/cpp/numeric/random.html",
            "en/cpp/algorithm/sort.html",
        ] {
            assert_eq!(skip_of(&root, rel), None, "{rel}");
        }
    }
}

/// An imported site: the engine, the import's warnings, and the
/// directory holding the index file.
struct Imported {
    engine: Engine,
    warnings: Vec<String>,
    _dir: tempfile::TempDir,
}

/// Copies `files` of `root` into a fresh site and imports it.
fn import_pages(root: &Path, files: &[&str], opts: &DocsOptions) -> Imported {
    let site = tempfile::tempdir().unwrap();
    for rel in files {
        let dst = site.path().join(rel);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(root.join(rel), dst).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.gsx");
    let (_, report) = import::build_with(&path, "docs:test".into(), |w| {
        docs::import(site.path(), opts, w, &import::no_progress())
    })
    .expect("the site imports");
    Imported {
        engine: Engine::open(&path).unwrap(),
        warnings: report.warnings,
        _dir: dir,
    }
}

/// The page paths of the first messages a query finds.
fn pages(e: &Engine, q: &str) -> Vec<String> {
    let r = e
        .search(
            &format!("{q} in:messages"),
            &SearchOptions {
                highlight: Highlight::None,
                include_content: false,
                per_page: Some(20),
                ..SearchOptions::default()
            },
        )
        .unwrap();
    r.results
        .messages
        .iter()
        .filter_map(|m| m.meta.get("messages_meta_file_path"))
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_symbol_index_is_never_a_result_and_names_the_sections_it_points_to() {
    let Some(root) = glib() else { return };
    let files = ["glib/api-index-full.html", "glib/glib-Hash-Tables.html"];
    let Imported {
        engine: e,
        warnings,
        ..
    } = import_pages(&root, &files, &DocsOptions::default());
    assert!(
        warnings.iter().any(|w| w.contains("listing pages")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("attached ")),
        "{warnings:?}"
    );
    let found = pages(&e, "g_hash_table_new_full");
    assert_eq!(
        found.first().map(String::as_str),
        Some("glib/glib-Hash-Tables.html")
    );
    for q in ["g_hash_table_new_full", "GHashTable", "g_str_hash"] {
        assert!(
            pages(&e, q).iter().all(|p| p != "glib/api-index-full.html"),
            "{q}"
        );
    }
}

#[test]
fn a_member_list_s_names_become_keywords_of_the_members_it_lists() {
    let Some(root) = eigen() else { return };
    let files = [
        "classEigen_1_1ArrayBase-members.html",
        "classEigen_1_1ArrayBase.html",
        "ArrayBase_8h_source.html",
    ];
    let with = import_pages(&root, &files, &DocsOptions::default());
    let without = import_pages(
        &root,
        &files,
        &DocsOptions {
            use_site_index: false,
            ..DocsOptions::default()
        },
    );
    // Sections carrying terms of the member list, among those naming
    // the class.
    let with_terms = |e: &Engine| -> usize {
        let r = e
            .search(
                "ArrayBase in:messages",
                &SearchOptions {
                    include_content: false,
                    per_page: Some(500),
                    ..SearchOptions::default()
                },
            )
            .unwrap();
        r.results
            .messages
            .iter()
            .filter(|m| m.meta.contains_key("messages_meta_index_terms"))
            .count()
    };
    assert!(with_terms(&with.engine) > 0);
    assert_eq!(with_terms(&without.engine), 0);
    for e in [&with.engine, &without.engine] {
        let found = pages(e, "ArrayBase");
        assert_eq!(
            found.first().map(String::as_str),
            Some("classEigen_1_1ArrayBase.html")
        );
        // The member list is still a page of the site: only its own
        // sentence ("the complete list of members for ArrayBase") is
        // indexed, never its entries, and it comes after the class.
        assert!(
            found.iter().all(|p| p == "classEigen_1_1ArrayBase.html"
                || p == "classEigen_1_1ArrayBase-members.html"),
            "{found:?}"
        );
    }
}
