//! The query language's guide for people and LLMs: the grammar, every
//! filter and directive with its values and an example, generated from the
//! vocabulary in [`crate::query::syntax`] plus the profile and facet names.
//! It sits above the query language, profiles and facets so none of those
//! depends on another just to be listed.

use crate::query::syntax::{
    canonical_words, DirectiveSpec, FilterSpec, DIRECTIVES, FILTERS, OPTION_WORDS, SCOPE_WORDS,
    SORT_WORDS, TARGET_WORDS,
};

/// The values a directive accepts, as the guide prints them.
pub fn directive_values(name: &str) -> String {
    match name {
        "in" => format!("{} (comma list)", canonical_words(TARGET_WORDS).join(" | ")),
        "scope" => canonical_words(SCOPE_WORDS).join(" | "),
        "profile" => crate::profiles::names().collect::<Vec<_>>().join(" | "),
        "sort" => format!(
            "field[:asc|desc][,...] with field one of {}",
            canonical_words(SORT_WORDS).join(", ")
        ),
        "option" => canonical_words(OPTION_WORDS).join(" | "),
        "insight-field" => format!(
            "FIELD[:string|number|boolean|array] (comma list) with FIELD one of {} or an analyzer metadata key",
            crate::query::facet::built_in_names().join(", ")
        ),
        _ => String::new(),
    }
}

const GRAMMAR_LINES: &[&str] = &[
    "- words: all must match (AND); `a OR b`; `-word` or `NOT word` excludes; `(a OR b)` groups; `word*` matches a prefix",
    "- phrases: `\"exact phrase\"` or `'exact phrase'`",
    "- filters: `field:value`, `field:v1,v2` (any of), `field:\"a phrase\"`, `field:null`, `field:not_null`, `-field:value` excludes; a key repeated accumulates (`lang:js lang:py` = `lang:js,py`), different keys all apply",
];

fn filter_line(f: &FilterSpec) -> String {
    let targets: Vec<&str> = f.targets.iter().map(|t| t.name()).collect();
    format!(
        "  {}: {} ({}; on {}); e.g. `{}`\n",
        f.name,
        f.help,
        f.values,
        targets.join(", "),
        f.example
    )
}

fn directive_line(d: &DirectiveSpec) -> String {
    format!(
        "  {}: {}: {}; e.g. `{}`\n",
        d.name,
        d.help,
        directive_values(d.name),
        d.example
    )
}

/// The full syntax guide (every filter and directive), generated from the
/// tables above. Every `e.g.` example in it parses (tested).
pub fn syntax_guide() -> String {
    let names: Vec<&str> = FILTERS.iter().map(|f| f.name).collect();
    let directives: Vec<&str> = DIRECTIVES.iter().map(|d| d.name).collect();
    compact_guide(&names, &directives)
}

/// A guide limited to the named filters and directives (in table order),
/// for an LLM that should use only those. Unknown names are left out.
pub(crate) fn compact_guide(filters: &[&str], directives: &[&str]) -> String {
    let mut s = String::from("Query syntax:\n");
    for l in GRAMMAR_LINES {
        s.push_str(l);
        s.push('\n');
    }
    for f in FILTERS.iter().filter(|f| filters.contains(&f.name)) {
        s.push_str(&filter_line(f));
    }
    for d in DIRECTIVES.iter().filter(|d| directives.contains(&d.name)) {
        s.push_str(&directive_line(d));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> crate::Result<crate::query::Query> {
        crate::query::parse(text, &crate::profiles::exists)
    }

    /// Every backticked example in a guide: the words after `e.g.` and the
    /// grammar examples.
    fn examples(guide: &str) -> Vec<String> {
        guide
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn every_example_in_the_guide_parses() {
        let guide = syntax_guide();
        let ex = examples(&guide);
        assert!(ex.len() >= FILTERS.len() + DIRECTIVES.len());
        for e in ex {
            // Grammar placeholders like `field:value` name no real filter;
            // everything else must parse as written.
            if e.starts_with("field:") || e.starts_with("-field:") {
                continue;
            }
            p(&e).unwrap_or_else(|err| panic!("guide example `{e}` does not parse: {err}"));
        }
    }

    #[test]
    fn compact_guide_lists_only_the_named_filters() {
        let g = compact_guide(&["git-path", "lang"], &[]);
        assert!(g.contains("git-path:") && g.contains("lang:"));
        assert!(!g.contains("block-id:") && !g.contains("scope:"));
    }
}
