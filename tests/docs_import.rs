//! The documentation-site importer: pages in the markup of several site
//! generators (written here in their real shapes), Markdown sources, and
//! pages of the real Python documentation (Debian's `python3.11-doc`,
//! which `./build.sh test` installs).

mod common;
use common::corpus;

use gitsense_engine::{Engine, Highlight, SearchOptions, SearchResults};
use gitsense_import::{self as import, docs::DocsOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};

const PYTHON_DOCS: &str = "/usr/share/doc/python3.11/html";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const SPHINX_PAGE: &str = r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8" />
<title>widgets — Widget toolkit &#8212; Demo 1.0 documentation</title>
<script src="_static/doctools.js"></script></head>
<body>
<div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3><ul><li><a href="genindex.html">relatednavword index</a></li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="module-widgets">
<span id="widgets-widget-toolkit"></span><h1><code class="xref py py-mod">widgets</code> — Widget toolkit<a class="headerlink" href="#module-widgets" title="Permalink to this heading">¶</a></h1>
<p><strong>Source code:</strong> Lib/widgets.py</p>
<p>The widgets module builds sprocket interfaces out of small composable parts that snap together.</p>
<div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span><span class="kn">import</span> <span class="nn">widgets</span>
<span class="n">widgets</span><span class="o">.</span><span class="n">render</span><span class="p">()</span>
</pre></div></div>
<section id="basic-usage">
<h2>Basic Usage<a class="headerlink" href="#basic-usage" title="Permalink to this heading">¶</a></h2>
<p>Call <span id="index-0"></span>render to draw everything.</p>
<dl class="py function">
<dt class="sig sig-object py" id="widgets.render">
<span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">render</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">target</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#widgets.render" title="Permalink to this definition">¶</a></dt>
<dd><p>Render all widgets onto <em>target</em>.</p>
<div class="highlight-pycon notranslate"><div class="highlight"><pre><span></span><span class="gp">&gt;&gt;&gt; </span><span class="n">widgets</span><span class="o">.</span><span class="n">render</span><span class="p">(</span><span class="n">screen</span><span class="p">)</span>
</pre></div></div>
</dd></dl>
<dl class="py class">
<dt class="sig sig-object py" id="widgets.Frame">
<em class="property"><span class="pre">class</span> </em><span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">Frame</span></span><a class="headerlink" href="#widgets.Frame" title="Permalink to this definition">¶</a></dt>
<dd><p>A frame holds other widgets.</p>
<dl class="py method">
<dt class="sig sig-object py" id="widgets.Frame.pack">
<span class="sig-name descname"><span class="pre">pack</span></span><span class="sig-paren">(</span><span class="sig-paren">)</span><a class="headerlink" href="#widgets.Frame.pack" title="Permalink to this definition">¶</a></dt>
<dd><p>Lay out the children of the frame.</p></dd></dl>
<p>Frames can be nested without limit.</p>
</dd></dl>
</section>
</section>
<div class="clearer"></div></div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation"><div class="sphinxsidebarwrapper"><h3>Table of Contents</h3><ul><li><a href="#">sidebartoken contents</a></li></ul></div></div>
</div>
<div class="footer">&copy; Copyright footertoken 2024.</div>
</body></html>"##;

const SPHINX_GENINDEX: &str = r##"<!DOCTYPE html><html><head><title>Index &#8212; Demo 1.0 documentation</title></head>
<body><div class="body" role="main"><h1 id="index">Index &ndash; W</h1>
<table style="width: 100%" class="indextable"><tr><td style="width: 33%; vertical-align: top;"><ul>
<li><a href="library/widgets.html#index-0">drawing, painting everything</a></li>
<li>widgets<ul><li><a href="library/widgets.html#module-widgets">module</a></li></ul></li>
</ul></td></tr></table></div></body></html>"##;

const MDBOOK_PAGE: &str = r##"<!DOCTYPE HTML>
<html lang="en" class="light" dir="ltr"><head><meta charset="UTF-8"><title>Installation - The Guide</title>
<script src="toc.js"></script></head>
<body class="sidebar-visible no-js"><div id="body-container">
<script>var path_to_root = "";</script>
<nav id="sidebar" class="sidebar" aria-label="Table of contents"><div class="sidebar-scrollbox"><ol class="chapter"><li class="chapter-item"><a href="intro.html">Introduction sidebartoken</a></li></ol></div></nav>
<div id="page-wrapper" class="page-wrapper"><div class="page">
<div id="menu-bar" class="menu-bar sticky"><div class="left-buttons"><button id="sidebar-toggle" type="button">menutoken</button></div><h1 class="menu-title">The Guide</h1></div>
<div id="content" class="content"><main>
<h1 id="installation"><a class="header" href="#installation">Installation</a></h1>
<p>Install the guide tool from crates before writing your very first chapter of the book.</p>
<h2 id="from-source"><a class="header" href="#from-source">From source</a></h2>
<pre><code class="language-console">$ cargo install guidetool
</code></pre>
<pre><code class="language-rust"><span class="boring">#![allow(unused)]
</span>fn main() { let quasar = 1; }
</code></pre>
</main>
<nav class="nav-wrapper" aria-label="Page navigation"><a rel="prev" href="intro.html" class="mobile-nav-chapters previous">prevtoken</a></nav>
</div></div></div>
<script src="elasticlunr.min.js"></script>
</div></body></html>"##;

const MDBOOK_PRINT: &str = r##"<!DOCTYPE HTML><html><head><meta name="robots" content="noindex"><title>The Guide</title></head>
<body><main><h1 id="installation">Installation</h1><p>printpagetoken duplicate of every chapter.</p></main></body></html>"##;

const MKDOCS_PAGE: &str = r##"<!doctype html><html lang="en"><head><title>Configuration - My Project</title></head><body>
<header class="md-header" data-md-component="header"><nav class="md-header__inner md-grid" aria-label="Header">headertoken</nav></header>
<div class="md-container"><main class="md-main" data-md-component="main"><div class="md-main__inner md-grid">
<div class="md-sidebar md-sidebar--primary" data-md-component="sidebar"><div class="md-sidebar__scrollwrap"><nav class="md-nav md-nav--primary">sidebartoken primary</nav></div></div>
<div class="md-sidebar md-sidebar--secondary"><nav class="md-nav md-nav--secondary" aria-label="Table of contents">toctoken</nav></div>
<div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset">
<h1 id="configuration">Configuration</h1>
<p>The project reads one YAML file that names the site, its pages and its nebula theme.</p>
<h2 id="options">Options<a class="headerlink" href="#options" title="Permanent link">&para;</a></h2>
<div class="language-yaml highlight"><pre><span></span><code><span class="nt">site_name</span><span class="p">:</span> <span class="l l-Scalar l-Scalar-Plain">nebula</span>
</code></pre></div>
</article></div></div></main>
<footer class="md-footer">footertoken</footer></div></body></html>"##;

const DOCUSAURUS_PAGE: &str = r##"<!doctype html><html lang="en"><head><title>Getting Started | Docu Site</title></head><body>
<div id="__docusaurus"><nav class="navbar navbar--fixed-top">navbartoken</nav>
<div class="main-wrapper"><div class="docsWrapper"><div class="docRoot">
<aside class="theme-doc-sidebar-container"><nav class="menu">sidebartoken</nav></aside>
<main class="docMainContainer"><div class="container"><div class="row"><div class="col docItemCol"><div class="docItemContainer">
<article><nav class="theme-doc-breadcrumbs" aria-label="Breadcrumbs">crumbtoken</nav>
<div class="theme-doc-markdown markdown"><header><h1>Getting Started</h1></header>
<p>Docu helps you publish documentation for the pulsar engine in a few minutes.</p>
<h2 class="anchor anchorWithStickyNavbar" id="install">Install<a href="#install" class="hash-link" aria-label="Direct link to Install" title="Direct link to Install">&#8203;</a></h2>
<div class="language-bash codeBlockContainer theme-code-block"><div class="codeBlockContent"><pre tabindex="0" class="prism-code language-bash codeBlock"><code class="codeBlockLines"><span class="token-line"><span class="token plain">npm install pulsar</span><br></span><span class="token-line"><span class="token plain">npx pulsar start</span><br></span></code></pre><div class="buttonGroup"><button type="button" class="clean-btn">copytoken</button></div></div></div>
</div>
<footer class="theme-doc-footer"><a href="edit">edittoken this page</a></footer></article>
<nav class="pagination-nav" aria-label="Docs pages">nexttoken</nav></div></div>
<div class="col col--3"><div class="tableOfContents"><ul class="table-of-contents table-of-contents__left-border"><li><a href="#install" class="table-of-contents__link">toctoken</a></li></ul></div></div>
</div></div></main></div></div></div>
<footer class="footer">footertoken</footer></div></body></html>"##;

const PLAIN_PAGE: &str = r##"<html><head><title>Plain page</title><script>var scripttoken = 1;</script><style>.styletoken{}</style></head>
<body><header><a href="/">headertoken logo</a></header><nav>navtoken</nav>
<h1>Plain Title</h1><p>The plain page explains how the comet scheduler orders its jobs every night.</p>
<div data-pagefind-ignore>ignoredtoken advert</div>
<div data-search-ignore="true">searchignoredtoken</div>
<p hidden>hiddentoken</p>
<h2 id="details">Details</h2><p>Comet jobs run in priority order.</p>
<footer>footertoken</footer><script>scripttoken2()</script></body></html>"##;

const REDIRECT_PAGE: &str = r##"<html><head><meta http-equiv="refresh" content="0; url=plain.html"><title>Moved</title></head><body><p>redirecttoken</p></body></html>"##;

const MARKDOWN_README: &str = "---\ntitle: Orbit Handbook\n---\n# Orbit\n\nOrbit is a launcher that schedules satellites around the moon every day.\n\n## Quick start\n\n```rust\nfn launch() -> Orbit { Orbit::new() }\n```\n\n## Quick start\n\nSecond section with the same heading.\n";

const MARKDOWN_GUIDE: &str = "# Guide\n\nThe guide walks through telemetry setup for the orbit launcher in detail.\n\n```python\nimport telemetry\n```\n";

/// A site with one page per generator style, plus Markdown sources.
fn demo_site(root: &Path) {
    write(root, "library/widgets.html", SPHINX_PAGE);
    write(root, "genindex-W.html", SPHINX_GENINDEX);
    write(root, "_static/doctools.js", "var statictoken;");
    write(root, "_sources/library/widgets.rst.txt", "sourcestoken");
    write(root, "book/installation.html", MDBOOK_PAGE);
    write(root, "book/print.html", MDBOOK_PRINT);
    write(root, "mkdocs/configuration/index.html", MKDOCS_PAGE);
    write(root, "docusaurus/getting-started.html", DOCUSAURUS_PAGE);
    write(root, "plain.html", PLAIN_PAGE);
    write(root, "old.html", REDIRECT_PAGE);
    write(root, "md/README.md", MARKDOWN_README);
    write(root, "md/guide.md", MARKDOWN_GUIDE);
    // A Markdown source next to its built page: the page wins.
    write(
        root,
        "plain.md",
        "# Plain source\n\nmarkdownduplicatetoken\n",
    );
}

struct Built {
    _dir: tempfile::TempDir,
    engine: Engine,
    revision: String,
}

fn build(site: &Path, opts: &DocsOptions) -> Built {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site.gsx");
    let (stats, _) = import::build_with(&out, "docs:test".into(), |w| {
        import::docs::import(site, opts, w, &import::no_progress())
    })
    .expect("the site imports");
    Built {
        engine: Engine::open(&out).unwrap(),
        revision: stats.revision,
        _dir: dir,
    }
}

fn demo() -> (tempfile::TempDir, Built) {
    let site = tempfile::tempdir().unwrap();
    demo_site(site.path());
    let opts = DocsOptions {
        base_url: Some("https://docs.example.org/v1".into()),
        ..DocsOptions::default()
    };
    let b = build(site.path(), &opts);
    (site, b)
}

fn search(e: &Engine, q: &str) -> SearchResults {
    e.search(
        q,
        &SearchOptions {
            per_page: Some(100),
            highlight: Highlight::None,
            ..SearchOptions::default()
        },
    )
    .unwrap_or_else(|err| panic!("query {q:?} failed: {err}"))
}

fn meta<'a>(m: &'a serde_json::Map<String, Value>, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or("")
}

fn total(r: &SearchResults) -> u64 {
    r.total_counts.chats + r.total_counts.messages + r.total_counts.code_blocks
}

#[test]
fn every_page_becomes_a_git_blob_chat_under_its_site_and_directories() {
    let (_site, b) = demo();
    let r = search(&b.engine, "in:chats chat-type:git-blob");
    let mut pages: Vec<(String, String)> = r
        .results
        .chats
        .iter()
        .map(|c| {
            (
                meta(&c.meta, "chats_meta_path").to_string(),
                c.chats_name.clone().unwrap_or_default(),
            )
        })
        .collect();
    pages.sort();
    assert_eq!(
        pages,
        [
            ("book/installation.html", "Installation"),
            ("docusaurus/getting-started.html", "Getting Started"),
            ("library/widgets.html", "widgets — Widget toolkit"),
            ("md/guide.html", "Guide"),
            ("md/index.html", "Orbit"),
            ("mkdocs/configuration/index.html", "Configuration"),
            ("plain.html", "Plain Title"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    let widgets = r
        .results
        .chats
        .iter()
        .find(|c| meta(&c.meta, "chats_meta_path") == "library/widgets.html")
        .unwrap();
    assert_eq!(meta(&widgets.meta, "chats_meta_kind"), "doc-page");
    assert_eq!(
        meta(&widgets.meta, "chats_meta_url"),
        "https://docs.example.org/v1/library/widgets.html"
    );
    assert_eq!(meta(&widgets.meta, "chats_meta_language"), "html");
    // The site title is the suffix the page titles share, when one does;
    // here every generator names its own site, so the root index decides.
    assert!(widgets
        .chat_path
        .as_deref()
        .unwrap()
        .ends_with(" -> library -> widgets — Widget toolkit"));
    let dirs = search(&b.engine, "in:chats chat-type:git-tree");
    let mut names: Vec<String> = dirs
        .results
        .chats
        .iter()
        .filter_map(|c| c.chats_name.clone())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "book",
            "configuration",
            "docusaurus",
            "library",
            "md",
            "mkdocs"
        ]
    );
    let md = search(&b.engine, "in:chats git-path:md/index.html");
    assert_eq!(
        meta(&md.results.chats[0].meta, "chats_meta_language"),
        "markdown"
    );
}

#[test]
fn sections_become_messages_with_anchored_urls() {
    let (_site, b) = demo();
    let r = search(
        &b.engine,
        "in:messages \"Basic Usage\" msg-type:doc-section",
    );
    let m = &r.results.messages[0];
    assert_eq!(meta(&m.meta, "messages_meta_title"), "Basic Usage");
    assert_eq!(meta(&m.meta, "messages_meta_anchor"), "basic-usage");
    assert_eq!(
        meta(&m.meta, "messages_meta_url"),
        "https://docs.example.org/v1/library/widgets.html#basic-usage"
    );
    assert_eq!(
        meta(&m.meta, "messages_meta_file_path"),
        "library/widgets.html"
    );
    assert_eq!(
        m.meta["messages_meta_headings"],
        serde_json::json!(["widgets — Widget toolkit"])
    );
    // The module heading takes the id of its section, not of the span.
    let h1 = search(&b.engine, "in:messages sprocket msg-type:doc-section");
    assert_eq!(
        meta(&h1.results.messages[0].meta, "messages_meta_anchor"),
        "module-widgets"
    );
    // mdBook, MkDocs, Docusaurus and Markdown headings keep their ids.
    for (q, url) in [
        ("guidetool", "book/installation.html#from-source"),
        ("site_name", "mkdocs/configuration/index.html#options"),
        ("pulsar install", "docusaurus/getting-started.html#install"),
        ("launch", "md/index.html#quick-start"),
        ("\"Second section\"", "md/index.html#quick-start-1"),
    ] {
        let r = search(&b.engine, &format!("in:messages msg-type:doc-section {q}"));
        let got: Vec<&str> = r
            .results
            .messages
            .iter()
            .map(|m| meta(&m.meta, "messages_meta_url"))
            .collect();
        // The section holding every word first; with the words spread over
        // a page, its other sections follow (all terms judged per page).
        assert_eq!(
            got.first().copied(),
            Some(format!("https://docs.example.org/v1/{url}").as_str()),
            "query {q}: {got:?}"
        );
    }
}

#[test]
fn api_definitions_are_messages_of_their_own_with_qualified_names() {
    let (_site, b) = demo();
    let r = search(&b.engine, "in:messages msg-type:doc-definition");
    let mut names: Vec<&str> = r
        .results
        .messages
        .iter()
        .map(|m| meta(&m.meta, "messages_meta_title"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["widgets.Frame", "widgets.Frame.pack", "widgets.render"]
    );
    let pack = search(&b.engine, "in:messages widgets.Frame.pack");
    let m = &pack.results.messages[0];
    assert_eq!(meta(&m.meta, "messages_meta_anchor"), "widgets.Frame.pack");
    // The method's text is its own; the class keeps what follows it.
    let content = m.messages_content.as_deref().unwrap();
    assert!(content.contains("Lay out the children"));
    assert!(!content.contains("nested without limit"));
    let frame = search(&b.engine, "in:messages \"nested without limit\"");
    assert_eq!(
        meta(&frame.results.messages[0].meta, "messages_meta_title"),
        "widgets.Frame"
    );
}

#[test]
fn code_blocks_keep_the_language_their_generator_names() {
    let (_site, b) = demo();
    let r = search(&b.engine, "in:code-blocks");
    let mut langs: Vec<(String, String)> = r
        .results
        .code_blocks
        .iter()
        .map(|c| {
            (
                meta(&c.meta, "code_blocks_meta_file_path").to_string(),
                c.code_blocks_language.clone().unwrap_or_default(),
            )
        })
        .collect();
    langs.sort();
    assert_eq!(
        langs,
        [
            ("book/installation.html", "console"),
            ("book/installation.html", "rust"),
            ("docusaurus/getting-started.html", "bash"),
            ("library/widgets.html", "python"),
            ("library/widgets.html", "python"),
            ("md/guide.html", "python"),
            ("md/index.html", "rust"),
            ("mkdocs/configuration/index.html", "yaml"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // Docusaurus writes a line per <span> and <br>: lines survive.
    let npm = search(&b.engine, "in:code-blocks lang:bash pulsar");
    assert_eq!(
        npm.results.code_blocks[0].code_blocks_content.as_deref(),
        Some("npm install pulsar\nnpx pulsar start")
    );
    // mdBook's hidden lines are still part of the code.
    let rust = search(&b.engine, "in:code-blocks lang:rs quasar");
    assert!(rust.results.code_blocks[0]
        .code_blocks_content
        .as_deref()
        .unwrap()
        .starts_with("#![allow(unused)]"));
}

#[test]
fn navigation_sidebars_headers_footers_and_scripts_are_not_indexed() {
    let (_site, b) = demo();
    for token in [
        "relatednavword",
        "sidebartoken",
        "footertoken",
        "menutoken",
        "prevtoken",
        "headertoken",
        "toctoken",
        "navbartoken",
        "crumbtoken",
        "copytoken",
        "edittoken",
        "nexttoken",
        "navtoken",
        "scripttoken",
        "scripttoken2",
        "styletoken",
        "statictoken",
        "sourcestoken",
        "Permalink",
    ] {
        assert_eq!(total(&search(&b.engine, token)), 0, "{token} was indexed");
    }
    // ... while the content next to them is.
    for token in [
        "sprocket",
        "guidetool",
        "nebula",
        "pulsar",
        "comet",
        "satellites",
    ] {
        assert!(total(&search(&b.engine, token)) > 0, "{token} is missing");
    }
}

#[test]
fn ignore_markers_noindex_redirects_and_shadowed_sources_are_honoured() {
    let (_site, b) = demo();
    for token in [
        "ignoredtoken",
        "searchignoredtoken",
        "hiddentoken",
        "printpagetoken",
        "redirecttoken",
        "markdownduplicatetoken",
    ] {
        assert_eq!(total(&search(&b.engine, token)), 0, "{token} was indexed");
    }
}

#[test]
fn each_page_gets_a_tiny_and_a_short_overview() {
    let (_site, b) = demo();
    let tiny = search(
        &b.engine,
        "in:messages msg-type:tiny-overview::file-content::default git-path:library/widgets.html",
    );
    let m = &tiny.results.messages[0];
    assert_eq!(
        meta(&m.meta, "messages_meta_purpose"),
        "The widgets module builds sprocket interfaces out of small composable parts that snap together."
    );
    assert_eq!(
        m.meta["messages_meta_keywords"],
        serde_json::json!(["Basic Usage"])
    );
    assert_eq!(
        m.meta["messages_meta_key_entities"],
        serde_json::json!(["widgets.render", "widgets.Frame", "widgets.Frame.pack"])
    );
    let short = search(
        &b.engine,
        "in:messages msg-type:short-overview git-path:library/widgets.html",
    );
    assert!(short.results.messages[0]
        .messages_content
        .as_deref()
        .unwrap()
        .contains("## Outline\n\n- Basic Usage"));
    // GitSense's stage-2 profile looks only at git chat types: it finds pages.
    let p = search(
        &b.engine,
        "profile:tiny-overview-query-optimization telemetry",
    );
    assert_eq!(
        p.results
            .messages
            .iter()
            .map(|m| meta(&m.meta, "messages_meta_file_path"))
            .collect::<Vec<_>>(),
        ["md/guide.html"]
    );
}

#[test]
fn the_site_index_points_terms_at_sections() {
    let (site, b) = demo();
    // "painting" appears nowhere in the page; the index entry sends it to
    // the section holding `index-0`.
    let r = search(&b.engine, "in:messages painting");
    assert_eq!(
        meta(&r.results.messages[0].meta, "messages_meta_anchor"),
        "basic-usage"
    );
    assert_eq!(
        r.results.messages[0].meta["messages_meta_index_terms"],
        serde_json::json!(["drawing, painting everything"])
    );
    let without = build(
        site.path(),
        &DocsOptions {
            use_site_index: false,
            ..DocsOptions::default()
        },
    );
    assert_eq!(total(&search(&without.engine, "painting")), 0);
}

#[test]
fn headings_and_names_outrank_body_mentions() {
    let site = tempfile::tempdir().unwrap();
    let filler = "Unrelated prose about rivers and mountains fills this paragraph. ".repeat(60);
    write(
        site.path(),
        "pooling.html",
        &format!("<main><h1>Database guide</h1><h2 id=\"cp\">Connection pooling</h2><p>{filler}</p><p>{filler}</p></main>"),
    );
    write(
        site.path(),
        "faq.html",
        "<main><h1>FAQ</h1><h2 id=\"q\">Short answers</h2><p>Connection pooling is covered elsewhere.</p></main>",
    );
    write(
        site.path(),
        "api.html",
        r#"<main><h1>Numbers</h1><dl class="c function"><dt id="c.PyNumber_Float"><span class="sig-name descname">PyNumber_Float</span>(o)</dt><dd><p>Like float.</p></dd></dl>
        <dl class="py class"><dt id="float"><span class="sig-name descname">float</span>(x)</dt><dd><p>Return a floating point number constructed from a number or string x, with a long explanation of its many rules and special cases that goes on.</p></dd></dl></main>"#,
    );
    let b = build(site.path(), &DocsOptions::default());
    let r = search(&b.engine, "in:messages connection pooling");
    // The long section titled with the words beats the short mention.
    assert_eq!(
        meta(&r.results.messages[0].meta, "messages_meta_anchor"),
        "cp"
    );
    assert!(r
        .results
        .messages
        .iter()
        .any(|m| meta(&m.meta, "messages_meta_anchor") == "q"));
    let f = search(&b.engine, "in:messages float");
    assert_eq!(
        meta(&f.results.messages[0].meta, "messages_meta_anchor"),
        "float"
    );
}

#[test]
fn queries_with_filters_return_docs_content() {
    let (_site, b) = demo();
    // lang: on chats is the page's file language, on code blocks the code's.
    let md = search(&b.engine, "in:chats lang:markdown");
    assert_eq!(md.total_counts.chats, 2);
    let py = search(&b.engine, "in:code-blocks lang:python");
    assert_eq!(py.total_counts.code_blocks, 3);
    assert!(py
        .results
        .code_blocks
        .iter()
        .all(|c| c.code_blocks_language.as_deref() == Some("python")));
    // git-path: with wildcards and directory prefixes.
    let lib = search(&b.engine, "in:messages git-path:library");
    assert!(lib.total_counts.messages >= 5);
    assert!(lib
        .results
        .messages
        .iter()
        .all(|m| meta(&m.meta, "messages_meta_file_path") == "library/widgets.html"));
    let glob = search(&b.engine, "in:chats git-path:*/index.html");
    assert_eq!(glob.total_counts.chats, 2);
    // chat-type: the site root and its directories.
    let root = search(&b.engine, "in:chats chat-type:git-repo");
    assert_eq!(root.total_counts.chats, 1);
    assert_eq!(
        meta(&root.results.chats[0].meta, "chats_meta_kind"),
        "doc-site"
    );
    // role: documentation is written by the site, as assistant messages.
    assert!(
        search(&b.engine, "in:messages role:assistant sprocket")
            .total_counts
            .messages
            > 0
    );
    assert_eq!(
        search(&b.engine, "in:messages role:user sprocket")
            .total_counts
            .messages,
        0
    );
    // in:code-blocks searches code only.
    let code = search(&b.engine, "in:code-blocks render");
    assert!(code.total_counts.code_blocks >= 2);
    assert_eq!(code.total_counts.messages, 0);
}

#[test]
fn the_same_site_always_gives_the_same_revision() {
    let a = tempfile::tempdir().unwrap();
    demo_site(a.path());
    let first = build(a.path(), &DocsOptions::default());
    let second = build(a.path(), &DocsOptions::default());
    assert_eq!(first.revision, second.revision);
    // A copy written later (other file times, other order of creation).
    let b = tempfile::tempdir().unwrap();
    demo_site(b.path());
    assert_eq!(
        build(b.path(), &DocsOptions::default()).revision,
        first.revision
    );
    // ... and a change shows.
    write(
        b.path(),
        "plain.html",
        &PLAIN_PAGE.replace("comet", "meteor"),
    );
    assert_ne!(
        build(b.path(), &DocsOptions::default()).revision,
        first.revision
    );
}

fn import_error(site: &Path) -> (gitsense_engine::Error, PathBuf) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("x.gsx");
    let err = import::build_with(&out, "docs:test".into(), |w| {
        import::docs::import(site, &DocsOptions::default(), w, &import::no_progress())
    })
    .unwrap_err();
    // Nothing half-written is left behind.
    let left: Vec<_> = std::fs::read_dir(out_dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    (err, out)
}

#[test]
fn bad_input_is_a_structured_error_with_its_path() {
    // A dangling link is one page left out with a warning, not a failure.
    let site = tempfile::tempdir().unwrap();
    demo_site(site.path());
    let broken = site.path().join("library/broken.html");
    std::os::unix::fs::symlink(site.path().join("nowhere.html"), &broken).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let (_, report) = import::build_with(&out_dir.path().join("x.gsx"), "docs:test".into(), |w| {
        import::docs::import(
            site.path(),
            &DocsOptions::default(),
            w,
            &import::no_progress(),
        )
    })
    .unwrap();
    assert!(report
        .warnings
        .contains(&"skipped library/broken.html: a dangling symbolic link".to_string()));

    let missing = site.path().join("no-such-dir");
    let (err, _) = import_error(&missing);
    assert_eq!(err.code, "import.not_found");
    assert_eq!(err.location.as_deref(), Some(missing.to_str().unwrap()));

    let empty = tempfile::tempdir().unwrap();
    write(empty.path(), "notes.txt", "not a page");
    let (err, _) = import_error(empty.path());
    assert_eq!(err.code, "import.empty_source");
}

#[test]
fn the_cli_builds_docs_with_a_base_url_and_reports_errors_with_paths() {
    let bin = &common::cli_bin();
    let site = tempfile::tempdir().unwrap();
    demo_site(site.path());
    let out = site.path().join("out/site.gsx");
    let run = std::process::Command::new(bin)
        .args(["build", "--quiet", "--docs"])
        .arg(site.path())
        .arg("--out")
        .arg(&out)
        .args(["--base-url", "https://docs.example.org/"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let q = std::process::Command::new(bin)
        .arg("search")
        .arg(&out)
        .args(["widgets.render in:messages", "--per-page", "1"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!(
        v["results"]["messages"][0]["messages_meta_url"],
        "https://docs.example.org/library/widgets.html#widgets.render"
    );
    let missing = site.path().join("gone");
    let bad = std::process::Command::new(bin)
        .args(["build", "--quiet", "--docs"])
        .arg(&missing)
        .arg("--out")
        .arg(site.path().join("x.gsx"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("import.not_found"), "{stderr}");
    assert!(stderr.contains(missing.to_str().unwrap()), "{stderr}");
    // --base-url belongs to --docs: a usage error without it.
    let usage = std::process::Command::new(bin)
        .args([
            "build",
            "--gitsense-db",
            "x.db",
            "--base-url",
            "https://x.org/",
        ])
        .args(["--out", "y.gsx"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

/// The real Python documentation (Debian's `python3.11-doc`, which
/// `./build.sh test` installs); `None` where it is not installed, so a
/// plain `cargo test` on another system still runs the rest.
fn python_docs() -> Option<PathBuf> {
    // A page it must hold: a partly removed install counts as missing.
    corpus(
        PathBuf::from(PYTHON_DOCS).join("library/json.html"),
        "./build.sh test installs python3.11-doc",
    )
    .map(|_| PathBuf::from(PYTHON_DOCS))
}

#[test]
fn real_python_docs_pages_are_found_by_api_name_index_term_and_title() {
    let Some(docs) = python_docs() else { return };
    let site = tempfile::tempdir().unwrap();
    for rel in [
        "library/json.html",
        "library/os.path.html",
        "library/uu.html",
        "library/shlex.html",
        "genindex-J.html",
    ] {
        let dst = site.path().join(rel);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(docs.join(rel), dst).unwrap();
    }
    let b = build(
        site.path(),
        &DocsOptions {
            base_url: Some("https://docs.python.org/3.11/".into()),
            ..DocsOptions::default()
        },
    );
    let first_url = |q: &str| {
        let r = search(&b.engine, &format!("{q} in:messages"));
        meta(&r.results.messages[0].meta, "messages_meta_url").to_string()
    };
    assert_eq!(
        first_url("json.dumps"),
        "https://docs.python.org/3.11/library/json.html#json.dumps"
    );
    assert_eq!(
        first_url("os.path.join"),
        "https://docs.python.org/3.11/library/os.path.html#os.path.join"
    );
    assert_eq!(
        first_url("shlex.join"),
        "https://docs.python.org/3.11/library/shlex.html#shlex.join"
    );
    // An index entry: "Jansen, Jack" → uu (the page credits him).
    assert!(first_url("Jansen, Jack").starts_with("https://docs.python.org/3.11/library/uu.html"));
    assert_eq!(
        first_url("\"Encoders and Decoders\""),
        "https://docs.python.org/3.11/library/json.html#encoders-and-decoders"
    );
    // The site name comes from the shared <title> suffix.
    let root = search(&b.engine, "in:chats chat-type:git-repo");
    assert_eq!(
        root.results.chats[0].chats_name.as_deref(),
        Some("Python 3.11.2 documentation")
    );
    // Sphinx's highlight classes give languages.
    let py = search(&b.engine, "in:code-blocks lang:python json.dumps");
    assert!(py.total_counts.code_blocks > 0);
    // Navigation of the real theme is left out.
    assert_eq!(total(&search(&b.engine, "\"Quick search\"")), 0);
    assert_eq!(total(&search(&b.engine, "\"Previous topic\"")), 0);
}

/// What readers type into a search box, keystroke by keystroke: never an
/// error, and sensible results on the demo site.
#[test]
fn search_box_text_is_never_an_error_and_finds_what_is_being_typed() {
    let (_site, b) = demo();
    let boxed = |q: &str| {
        b.engine
            .search(
                q,
                &SearchOptions {
                    mode: gitsense_engine::plan::QueryMode::Box,
                    per_page: Some(20),
                    ..SearchOptions::default()
                },
            )
            .unwrap_or_else(|e| panic!("box mode refused {q:?}: {e}"))
    };
    let urls = |q: &str| -> Vec<String> {
        boxed(&format!("in:messages msg-type:doc-section {q}"))
            .results
            .messages
            .iter()
            .map(|m| meta(&m.meta, "messages_meta_url").to_string())
            .collect()
    };
    let install = "https://docs.example.org/v1/book/installation.html#from-source";
    // Half-typed words find the word being typed.
    for q in [
        "guideto",
        "guidetoo",
        "\"guidetool",
        "(guidetool",
        "fn main() quas",
    ] {
        assert!(urls(q).contains(&install.to_string()), "{q}: {:?}", urls(q));
    }
    // Code-like and unfinished text, operators at the ends: answers.
    for q in [
        "'static",
        "fn main()",
        "\"borrow",
        "foo OR",
        "-",
        "AND",
        "OR",
        "NOT",
        "a (",
        ")",
        "\"",
        "'",
        "lang:",
        "lang:rust,",
        "chat-id:x",
        "scope:current-chat guide",
        "Vec<T>",
        "std::vec::Vec",
        "x -",
        "option:regex",
        "&&",
        "\"a\" \"b",
        "NEAR(",
        "*",
        "**",
    ] {
        boxed(q);
    }
    // Nothing to search: nothing found (the query language would list all).
    for q in ["", "   ", "-", "()", "-guidetool"] {
        assert_eq!(total(&boxed(q)), 0, "{q:?}");
    }
    // Filters typed whole still apply.
    let r = boxed("lang:rust quasa");
    assert!(r
        .results
        .code_blocks
        .iter()
        .all(|c| c.code_blocks_language.as_deref() == Some("rust")));
    assert!(!r.results.code_blocks.is_empty());
    // The strict default still refuses what it cannot read.
    let strict = b
        .engine
        .search("fn main()", &SearchOptions::default())
        .unwrap_err();
    assert_eq!(strict.code, "query.empty_group");
}

/// A search box's list shows longer snippets than the results object's
/// default: `snippetTokens` widens a message's snippet around its matches,
/// within FTS5's bound.
#[test]
fn snippet_tokens_widen_a_message_snippet_and_are_bounded() {
    let (_site, b) = demo();
    let words = |tokens: Option<u32>| -> Vec<usize> {
        b.engine
            .search(
                "in:messages msg-type:doc-section guidetool",
                &SearchOptions {
                    snippet_tokens: tokens,
                    ..SearchOptions::default()
                },
            )
            .unwrap()
            .results
            .messages
            .iter()
            .map(|m| {
                let s = m.messages_content_snippet.as_deref().unwrap_or_default();
                assert!(s.contains("<mark>"), "{s}");
                s.split_whitespace().count()
            })
            .collect()
    };
    let short = words(None);
    let long = words(Some(30));
    assert!(!short.is_empty() && short.len() == long.len());
    assert!(
        short.iter().zip(&long).any(|(s, l)| l > s),
        "{short:?} {long:?}"
    );
    assert!(long.iter().all(|&n| n <= 30 + 4), "{long:?}");
    for bad in [0, 65] {
        let e = b
            .engine
            .search(
                "guidetool",
                &SearchOptions {
                    snippet_tokens: Some(bad),
                    ..SearchOptions::default()
                },
            )
            .unwrap_err();
        assert_eq!(e.code, "options.bad_snippet_tokens");
    }
}

/// A page of a site whose theme puts the site's name in every page's
/// `<h1>` and marks headings with a bare `#` link.
fn banner_page(title: &str, section: &str, token: &str) -> String {
    format!(
        r##"<!DOCTYPE html><html><head><title>{title} | Acme Docs</title></head>
<body><main><h1 id="top">Acme Docs</h1>
<p>Introduction to {title} with enough words to be a paragraph of its own here.</p>
<h2 id="{token}">{section}<a href="#{token}">#</a></h2><p>{token} explained.</p>
</main></body></html>"##
    )
}

#[test]
fn a_site_name_in_every_h1_is_not_the_page_title_and_heading_marks_are_not_words() {
    let site = tempfile::tempdir().unwrap();
    for (file, title, section, token) in [
        (
            "install.html",
            "Installing",
            "Requirements",
            "requirementstoken",
        ),
        (
            "config.html",
            "Configuration",
            "Config files",
            "configfilestoken",
        ),
        (
            "deploy.html",
            "Deploying",
            "Static hosts",
            "statichoststoken",
        ),
    ] {
        write(site.path(), file, &banner_page(title, section, token));
    }
    let b = build(site.path(), &DocsOptions::default());
    let r = search(&b.engine, "chat-type:git-blob in:chats");
    let mut names: Vec<String> = r
        .results
        .chats
        .iter()
        .filter_map(|c| c.chats_name.clone())
        .collect();
    names.sort();
    assert_eq!(names, ["Configuration", "Deploying", "Installing"]);
    let r = search(&b.engine, "configfilestoken in:messages");
    let m = r.results.messages.first().expect("a section is found");
    assert_eq!(meta(&m.meta, "messages_meta_title"), "Config files");
    // The intro under the banner heading is titled by its page.
    let r = search(&b.engine, "Introduction Deploying in:messages");
    let m = r.results.messages.first().expect("the intro is found");
    assert_eq!(meta(&m.meta, "messages_meta_title"), "Deploying");
}

#[test]
fn a_reference_page_full_of_links_is_still_found_by_its_own_text() {
    // Python's "C API Stability" page lists every function of the stable
    // ABI as links (a listing by its shape), after pages of prose that
    // nothing else holds.
    let Some(docs) = python_docs() else { return };
    let site = tempfile::tempdir().unwrap();
    for page in ["c-api/stable.html", "c-api/init.html", "whatsnew/3.3.html"] {
        let to = site.path().join(page);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(docs.join(page), to).unwrap();
    }
    let b = build(site.path(), &DocsOptions::default());
    for q in ["Limited API", "Py_LIMITED_API", "limited API caveats"] {
        let r = search(&b.engine, &format!("{q} in:messages"));
        let first = r.results.messages.first().expect("found");
        assert_eq!(
            meta(&first.meta, "messages_meta_file_path"),
            "c-api/stable.html",
            "{q}"
        );
    }
    // Its entries are not its text: a function it only lists is found on
    // the page documenting it.
    let r = search(&b.engine, "PyEval_InitThreads in:messages");
    assert!(r
        .results
        .messages
        .iter()
        .all(|m| meta(&m.meta, "messages_meta_file_path") != "c-api/stable.html"));
    assert!(!r.results.messages.is_empty());
}

#[test]
fn a_page_of_plain_text_in_one_pre_is_cut_at_its_tags() {
    // Help text turned into HTML: one <pre>, tags as anchors. Each tag
    // starts a definition named by the tag (several tags on one line name
    // the same one); the rest of the tag's line is its heading.
    let mut lines = vec![
        "<!DOCTYPE html><html><head><title>recover help</title></head><body><pre>".to_string(),
        "Recovery after a crash            <a name=\"crash-recovery\">*crash-recovery*</a>".into(),
    ];
    lines.extend((0..8).map(|i| format!("General words about recovering, line {i} of them.")));
    lines.push("<a name=\"usr_11\"></a><a name=\"swap-file\">*swap-file*</a> <a name=\"swapfile\">*swapfile*</a>".into());
    lines.push("A swap file keeps your changes so that a recovery is possible.".into());
    lines.extend((0..8).map(|i| format!("More about the file of changes, line {i}.")));
    lines.push("Using the tags                    <a name=\"tagsrch\">*tagsrch*</a>".into());
    lines.extend((0..4).map(|i| format!("Jumping around, line {i}.")));
    lines.push("</pre></body></html>".into());
    let site = tempfile::tempdir().unwrap();
    write(site.path(), "recover.html", &lines.join("\n"));
    write(
        site.path(),
        "mentions.html",
        "<html><head><title>Mentions</title></head><body><main><h1>Mentions</h1>\
         <p>A swapfile, the swapfile, swapfile again: see swap-file.</p></main></body></html>",
    );
    let b = build(site.path(), &DocsOptions::default());
    let r = search(&b.engine, "swapfile in:messages");
    let first = r.results.messages.first().expect("found");
    assert_eq!(meta(&first.meta, "messages_meta_file_path"), "recover.html");
    assert_eq!(meta(&first.meta, "messages_meta_title"), "swap-file");
    assert_eq!(meta(&first.meta, "messages_meta_anchor"), "usr_11");
    let r = search(&b.engine, "crash-recovery in:messages");
    let first = r.results.messages.first().expect("found");
    assert_eq!(meta(&first.meta, "messages_meta_title"), "crash-recovery");
    assert!(first
        .messages_content
        .as_deref()
        .is_some_and(|c| c.starts_with("Recovery after a crash *crash-recovery*")));
    // Nothing of the page is a code block.
    let r = search(&b.engine, "recovering in:code-blocks");
    assert_eq!(r.total_counts.code_blocks, 0);
}
