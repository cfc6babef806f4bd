//! A Markdown source → the HTML page `super::extract` reads.
//!
//! CommonMark plus tables, strikethrough, footnotes and heading attributes
//! (`## Title {#id}`). Headings without an id get GitHub-style slugs
//! (`Getting Started` → `getting-started`, repeats `-1`, `-2`), so section
//! anchors match what mdBook, GitHub and most generators produce. A YAML
//! front matter `title:` becomes the `<title>`.

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};
use std::collections::HashMap;

/// Renders Markdown as a complete HTML document.
pub fn to_html(markdown: &str) -> String {
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut events: Vec<Event> = Parser::new_ext(markdown, opts).collect();
    let mut title = None;
    let mut in_meta = false;
    let mut used: HashMap<String, usize> = HashMap::new();
    for i in 0..events.len() {
        match &events[i] {
            Event::Start(Tag::MetadataBlock(_)) => in_meta = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_meta = false,
            Event::Text(t) if in_meta && title.is_none() => title = front_matter_title(t),
            Event::Start(Tag::Heading { id: None, .. }) => {
                let mut text = String::new();
                for e in &events[i + 1..] {
                    match e {
                        Event::End(TagEnd::Heading(_)) => break,
                        Event::Text(t) | Event::Code(t) => text.push_str(t),
                        _ => {}
                    }
                }
                let base = slug(&text);
                let n = used.entry(base.clone()).or_insert(0);
                let id = if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                };
                *n += 1;
                if let Event::Start(Tag::Heading { id: slot, .. }) = &mut events[i] {
                    *slot = Some(CowStr::from(id));
                }
            }
            Event::Start(Tag::Heading { id: Some(id), .. }) => {
                *used.entry(id.to_string()).or_insert(0) += 1;
            }
            _ => {}
        }
    }
    let mut body = String::new();
    html::push_html(&mut body, events.into_iter());
    let title = title
        .map(|t| format!("<title>{}</title>", gitsense_engine::util::escape_html(&t)))
        .unwrap_or_default();
    format!("<!DOCTYPE html><html><head><meta charset=\"utf-8\">{title}</head><body><main>{body}</main></body></html>")
}

/// `title: Some title` (optionally quoted) from a YAML front matter block.
fn front_matter_title(block: &str) -> Option<String> {
    block.lines().find_map(|l| {
        let v = l.strip_prefix("title:")?.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(v);
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// GitHub-style heading slug: lower case, punctuation dropped, spaces to
/// hyphens.
pub fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_get_github_slugs_and_front_matter_a_title() {
        let html = to_html("---\ntitle: \"The Guide\"\n---\n# Getting Started!\n\n## Usage\n\n## Usage\n\n## Custom {#here}\n");
        assert!(html.contains("<title>The Guide</title>"));
        assert!(html.contains("id=\"getting-started\""));
        assert!(html.contains("id=\"usage\""));
        assert!(html.contains("id=\"usage-1\""));
        assert!(html.contains("id=\"here\""));
    }
}
