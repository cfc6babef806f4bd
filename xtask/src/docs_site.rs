//! Renders the project's own documentation as the demo's docs site (run by
//! `./build.sh`):
//!
//!   cargo run --release -p xtask --bin docs-site -- REPO_ROOT OUT_DIR
//!
//! `README.md` becomes `OUT_DIR/index.html` and each `docs/NAME.md`
//! becomes `OUT_DIR/docs/NAME.html`, through the Markdown renderer the docs
//! importer uses (`gitsense_import::docs::markdown`: GitHub-style heading
//! anchors, so `docs/guide.md#documentation-sites` links and search results
//! land on the same section). Links between those pages are rewritten from
//! `.md` to `.html`; every page gets a link back to the search page. The
//! demo index is then built from this directory and the sample database
//! (`gitsense-search build --gitsense-db ... --docs OUT_DIR`).

use gitsense_import::docs::markdown;
use std::path::{Path, PathBuf};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, out] = args.as_slice() else {
        eprintln!("usage: docs-site REPO_ROOT OUT_DIR");
        std::process::exit(2);
    };
    if let Err(e) = render_site(Path::new(root), Path::new(out)) {
        eprintln!("docs-site: {e}");
        std::process::exit(1);
    }
}

/// The Markdown sources and where each page goes, relative to the site.
fn pages(root: &Path) -> std::io::Result<Vec<(PathBuf, PathBuf)>> {
    let mut out = vec![(root.join("README.md"), PathBuf::from("index.html"))];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    docs.retain(|p| p.extension().is_some_and(|e| e == "md"));
    docs.sort();
    for p in docs {
        let name = p
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        out.push((p, PathBuf::from(format!("docs/{name}.html"))));
    }
    Ok(out)
}

fn render_site(root: &Path, out: &Path) -> Result<(), String> {
    let io = |what: &str, p: &Path, e: std::io::Error| format!("{what} {}: {e}", p.display());
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|e| io("removing", out, e))?;
    }
    let pages = pages(root).map_err(|e| io("listing", &root.join("docs"), e))?;
    for (src, rel) in &pages {
        let md = std::fs::read_to_string(src).map_err(|e| io("reading", src, e))?;
        let depth = rel.components().count() - 1;
        let html = page(&markdown::to_html(&md), depth);
        let dest = out.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap_or(out))
            .map_err(|e| io("creating", out, e))?;
        std::fs::write(&dest, html).map_err(|e| io("writing", &dest, e))?;
    }
    println!("rendered {} pages into {}", pages.len(), out.display());
    Ok(())
}

/// A rendered document with its links to other pages of the site made
/// `.html`, and a way back to the search page (`depth` directories below
/// the site root, which sits one below the demo page).
fn page(html: &str, depth: usize) -> String {
    let up = "../".repeat(depth + 1);
    let nav = format!("<nav><a href=\"{up}index.html\">Search this documentation</a></nav>");
    let html = html.replacen("<body>", &format!("<body>{nav}"), 1);
    // The page's title: its front matter's, else its first heading's.
    let title = match (html.contains("<title>"), first_heading(&html)) {
        (false, Some(h)) => format!("<title>{h}</title>"),
        _ => String::new(),
    };
    let html = html.replacen(
        "</head>",
        &format!(
            "{title}<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"></head>"
        ),
        1,
    );
    rewrite_links(&html)
}

/// The text of the first `<h1>` (already HTML-escaped, tags inside it
/// dropped).
fn first_heading(html: &str) -> Option<String> {
    let start = html.find("<h1")?;
    let open_end = start + html[start..].find('>')? + 1;
    let close = open_end + html[open_end..].find("</h1>")?;
    let mut text = String::new();
    let mut in_tag = false;
    for c in html[open_end..close].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    (!text.trim().is_empty()).then(|| text.trim().to_string())
}

/// `href="x.md"` / `href="x.md#a"` (relative) → `.html`; `README.md` is
/// the site's `index.html`.
fn rewrite_links(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find("href=\"") {
        let (head, tail) = rest.split_at(at + 6);
        out.push_str(head);
        let end = tail.find('"').unwrap_or(tail.len());
        out.push_str(&local_href(&tail[..end]));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn local_href(href: &str) -> String {
    let (path, anchor) = match href.find('#') {
        Some(i) => href.split_at(i),
        None => (href, ""),
    };
    let relative = !path.is_empty() && !path.contains("://") && !path.starts_with('/');
    match path.strip_suffix(".md") {
        Some(stem) if relative => {
            let stem = match stem.strip_suffix("README") {
                Some(dir) => format!("{dir}index"),
                None => stem.to_string(),
            };
            format!("{stem}.html{anchor}")
        }
        _ => href.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_between_markdown_pages_become_links_between_html_pages() {
        assert_eq!(local_href("docs/guide.md#a-b"), "docs/guide.html#a-b");
        assert_eq!(local_href("../README.md"), "../index.html");
        assert_eq!(local_href("js-api.md"), "js-api.html");
        assert_eq!(local_href("https://x.org/a.md"), "https://x.org/a.md");
        assert_eq!(local_href("#usage"), "#usage");
        let html = rewrite_links("<a href=\"cli.md#build\">b</a> <a href=\"/x\">c</a>");
        assert_eq!(
            html,
            "<a href=\"cli.html#build\">b</a> <a href=\"/x\">c</a>"
        );
    }

    #[test]
    fn every_page_links_back_to_the_search_page() {
        let html = page(&markdown::to_html("# Guide\n\nSee [the CLI](cli.md)."), 1);
        assert!(html.contains("<a href=\"../../index.html\">Search this documentation</a>"));
        assert!(html.contains("href=\"cli.html\""));
        assert!(html.contains("id=\"guide\""));
        assert!(html.contains("<title>Guide</title>"));
        let html = page(&markdown::to_html("# The `a*` &amp; b\n"), 0);
        assert!(html.contains("<title>The a* &amp; b</title>"), "{html}");
    }
}
