//! `gitsense-search site` end to end on a small mdBook-style site: the
//! index published inside it, the module copied beside it, excluded pages
//! absent, and the printed lines naming files that exist.

#[path = "../../../tests/common/mod.rs"]
mod common;
mod run;
use run::cli;
use serde_json::Value;
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>{title} - The Book</title></head><body>\
         <nav id=\"sidebar\">sidebar</nav><main>{body}</main></body></html>"
    )
}

/// A site with a current chapter, a code example, and stub pages of an old
/// edition that mention the same words.
const CHAPTER: &str = "<h1 id=\"using-box\">Using <code>Box&lt;T&gt;</code> to Point to Data on the Heap</h1>\
     <p>Boxes allow you to store data on the heap rather than the stack; ownership moves with the box.</p>\
     <h2 id=\"recursive-types\">Enabling Recursive Types</h2>\
     <p>A cons list needs indirection.</p>\
     <pre><code class=\"language-rust\">fn main() { let b = Box::new(5); println!(\"b = {b}\"); }</code></pre>";

fn site(root: &Path) {
    write(root, "ch15-01-box.html", &page("Using Box<T>", CHAPTER));
    write(
        root,
        "first-edition/box.html",
        &page(
            "Box",
            "<h1 id=\"box\">Box</h1><p>The first edition of the book is no longer distributed; stubpage ownership box.</p>",
        ),
    );
    // The whole book on one page: a copy of every chapter.
    write(root, "print.html", &page("The Book", CHAPTER));
    write(
        root,
        "appendix/stub.html",
        &page(
            "Stub",
            "<h1 id=\"stub\">Stub</h1><p>appendixstub ownership</p>",
        ),
    );
}

fn module(dir: &Path) {
    for f in [
        "index.js",
        "worker.js",
        "gitsense_search_bg.wasm",
        "index.d.ts",
        "ui.js",
    ] {
        write(dir, f, &format!("// {f}"));
    }
}

fn search(index: &Path, query: &str, mode: &str) -> Value {
    let o = cli(&[
        "search",
        index.to_str().unwrap(),
        query,
        "--mode",
        mode,
        "--per-page",
        "50",
    ]);
    assert!(
        o.status.success(),
        "{query}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn site_publishes_the_index_and_module_and_prints_lines_naming_real_files() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("book");
    site(&root);
    module(&t.path().join("pkg"));
    let pkg = t.path().join("pkg");
    let args = [
        "site",
        root.to_str().unwrap(),
        "--base-url",
        "https://example.org/book/",
        "--exclude",
        "first-edition/**",
        "--exclude",
        "appendix/*.HTML",
        "--pkg",
        pkg.to_str().unwrap(),
        "--quiet",
    ];
    let o = cli(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // print.html is left out by the importer already (a copy of every
    // chapter, found in its text); the old edition by the glob.
    assert!(err.contains("left out 2 page(s)"), "{err}");
    let lines = String::from_utf8(o.stdout).unwrap();

    // Every site path the lines name exists under the site root.
    let named: Vec<&str> = lines
        .split(['"', '\''])
        .filter(|s| s.starts_with("/book/"))
        .collect();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    assert_eq!(named.len(), 2, "{lines}");
    for p in &named {
        let file = root.join(p.trim_start_matches("/book/"));
        assert!(
            file.is_file(),
            "{p} is printed but {} does not exist",
            file.display()
        );
    }
    assert!(named.contains(&"/book/_gitsense/pkg/ui.js"));
    assert!(named.contains(&"/book/_gitsense/manifest.json"));

    // The published index: excluded pages absent, the kept page found by a
    // half-typed word in box mode, its results linkable.
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(root.join("_gitsense/manifest.json")).unwrap())
            .unwrap();
    // The index as a reader's full download gets it (the site keeps no
    // raw copy: range reads go to the packed file).
    assert!(manifest.get("rawFile").is_none(), "{manifest}");
    // (The packed file, inflated page by page with the lengths that end
    // the hot file, as the browser module does.)
    let m = gitsense_publish::Manifest::parse(&manifest.to_string()).unwrap();
    assert_eq!(m.compression, gitsense_publish::COMPRESSION_PAGES);
    let dir = root.join("_gitsense");
    let mut hot = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(
            &std::fs::read(dir.join(m.hot_file.as_deref().unwrap())).unwrap()[..],
        ),
        &mut hot,
    )
    .unwrap();
    let offsets = gitsense_publish::packed_offsets_in_hot(&m, &hot).unwrap();
    let packed = std::fs::read(dir.join(&m.file)).unwrap();
    let mut bytes = Vec::new();
    for w in offsets.windows(2) {
        let page = &packed[w[0] as usize..w[1] as usize];
        if page.len() as u64 == m.page_size {
            bytes.extend_from_slice(page);
        } else {
            std::io::Read::read_to_end(&mut flate2::read::DeflateDecoder::new(page), &mut bytes)
                .unwrap();
        }
    }
    assert_eq!(bytes.len() as u64, m.size);
    let raw = root.join("downloaded.gsx");
    std::fs::write(&raw, bytes).unwrap();
    assert_eq!(
        search(&raw, "stubpage", "strict")["totalCounts"]["messages"],
        0
    );
    assert_eq!(
        search(&raw, "appendixstub", "strict")["totalCounts"]["messages"],
        0
    );
    let r = search(&raw, "in:messages msg-type:doc-section owne", "box");
    let urls: Vec<&str> = r["results"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["messages_meta_url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        ["https://example.org/book/ch15-01-box.html#using-box"]
    );
    let m = &r["results"]["messages"][0];
    assert!(m["messages_meta_title"]
        .as_str()
        .unwrap()
        .contains("Box<T>"));
    assert!(m["messages_title_html"]
        .as_str()
        .unwrap()
        .contains("Box&lt;T&gt;"));
    let code = search(&raw, "in:code-blocks Box::new", "box");
    assert_eq!(
        code["results"]["codeBlocks"][0]["code_blocks_meta_url"],
        "https://example.org/book/ch15-01-box.html#recursive-types"
    );

    // The UI's longer snippets: --snippet-tokens widens them, within 1..=64.
    let words = |extra: &[&str]| -> usize {
        let mut args = vec!["search", raw.to_str().unwrap(), "in:messages heap"];
        args.extend_from_slice(extra);
        let o = cli(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        r["results"]["messages"][0]["messages_content_snippet"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count()
    };
    assert!(words(&["--snippet-tokens", "30"]) > words(&[]));
    let bad = cli(&[
        "search",
        raw.to_str().unwrap(),
        "heap",
        "--snippet-tokens",
        "65",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("options.bad_snippet_tokens"));

    // A second run does not index its own output and gives the same index.
    let again = cli(&args);
    assert!(again.status.success());
    let manifest2: Value =
        serde_json::from_slice(&std::fs::read(root.join("_gitsense/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest2["revision"], manifest["revision"]);
}

#[test]
fn site_without_the_module_or_with_a_bad_glob_fails_with_a_code() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("book");
    site(&root);
    let empty = t.path().join("nothing");
    std::fs::create_dir_all(&empty).unwrap();
    let o = cli(&[
        "site",
        root.to_str().unwrap(),
        "--pkg",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("site.no_module"));
    module(&t.path().join("pkg"));
    let pkg = t.path().join("pkg");
    let o = cli(&[
        "site",
        root.to_str().unwrap(),
        "--pkg",
        pkg.to_str().unwrap(),
        "--exclude",
        "[",
        "-q",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("import.bad_glob"));
    let o = cli(&[
        "build",
        "--chat-export",
        "x.json",
        "--exclude",
        "a",
        "--out",
        "x.gsx",
    ]);
    assert_eq!(o.status.code(), Some(2));
}
