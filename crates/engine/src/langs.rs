//! The languages of a documentation site's pages, for sites that ship
//! their translations side by side (`en/`, `fr/`, `ko/` of one manual).
//!
//! A translation holds the names of the pages it translates (directives,
//! functions, options are not translated), so a query for a name finds
//! every language's page, in no useful order. Pagefind searches one
//! language per index; here every page stays searchable, and the pages
//! in the reader's language come first: ranks of the others are
//! multiplied by [`DEMOTED`], far below any match in the reader's
//! language.
//!
//! The importer names each page's language (`<html lang>`); the index
//! writer records them in `index_meta` under [`META_KEY`] when a site has
//! pages of two languages or more ([`PageLanguages::encode`]): the
//! language of most pages (the site's own) and the pages of every other,
//! as ranges of chat ids. Pages without a language count as the site's.
//! A search prefers the language its options name (`lang`, which the
//! drop-in UI sets to its page's `<html lang>`), else the site's.

use std::collections::{BTreeMap, HashSet};

/// The `index_meta` key of a site's page languages.
pub const META_KEY: &str = "page_languages";

/// What the rank of a match on a page in another language than the
/// reader's is multiplied by (ranks are negative BM25 scores, lower is
/// better): matches in the reader's language score above 1e-6, so they
/// all come first, and the others keep their order among themselves.
pub const DEMOTED: f64 = 1e-9;

/// The languages of a site's pages: the site's own, and the pages (chat
/// ids) of each other language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageLanguages {
    /// The language of most pages (lowercase tag, `en`).
    pub main: String,
    /// Every other language with its pages, as inclusive id ranges in
    /// ascending order, by language.
    pub others: BTreeMap<String, Vec<(i64, i64)>>,
}

/// The pages a search ranks below the rest ([`PageLanguages::demoted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Demoted {
    pages: HashSet<i64>,
    /// `pages` are the ones kept (the reader's language is not the
    /// site's: every other page, the site's own included, is demoted).
    listed_kept: bool,
}

impl Demoted {
    /// Whether the page (chat) `id` ranks below the reader's language.
    pub fn contains(&self, id: i64) -> bool {
        self.pages.contains(&id) != self.listed_kept
    }
}

/// Whether tags `a` and `b` name one language: equal, or equal before
/// the first `-` (`en-us` and `en`).
fn same_language(a: &str, b: &str) -> bool {
    let primary = |t: &str| t.split('-').next().unwrap_or("").to_string();
    a == b || primary(a) == primary(b)
}

impl PageLanguages {
    /// The languages of `pages` (chat id, language tag); `None` unless
    /// there are two or more. The site's language is the one of most
    /// pages (on a tie, the first in tag order).
    pub fn of(pages: &[(i64, String)]) -> Option<PageLanguages> {
        let mut by_lang: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
        for (id, lang) in pages {
            by_lang.entry(lang.as_str()).or_default().push(*id);
        }
        if by_lang.len() < 2 {
            return None;
        }
        let main = by_lang
            .iter()
            .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.0.cmp(a.0)))
            .map(|(l, _)| l.to_string())?;
        let others = by_lang
            .into_iter()
            .filter(|(l, _)| *l != main)
            .map(|(l, mut ids)| {
                ids.sort_unstable();
                ids.dedup();
                let mut ranges: Vec<(i64, i64)> = Vec::new();
                for id in ids {
                    match ranges.last_mut() {
                        Some((_, end)) if *end + 1 == id => *end = id,
                        _ => ranges.push((id, id)),
                    }
                }
                (l.to_string(), ranges)
            })
            .collect();
        Some(PageLanguages { main, others })
    }

    /// The text `index_meta` holds: the site's language, then each other
    /// language and its ranges, `en;fr:3-9,12;ko:20-31`.
    pub fn encode(&self) -> String {
        let mut out = self.main.clone();
        for (lang, ranges) in &self.others {
            out.push(';');
            out.push_str(lang);
            out.push(':');
            let parts: Vec<String> = ranges
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                })
                .collect();
            out.push_str(&parts.join(","));
        }
        out
    }

    /// The inverse of [`PageLanguages::encode`]; `None` for text it did
    /// not write (then no page is demoted).
    pub fn decode(text: &str) -> Option<PageLanguages> {
        let mut parts = text.split(';');
        let main = parts.next().filter(|m| !m.is_empty())?.to_string();
        let mut others = BTreeMap::new();
        for part in parts {
            let (lang, list) = part.split_once(':')?;
            let mut ranges = Vec::new();
            for r in list.split(',') {
                let (a, b) = r.split_once('-').unwrap_or((r, r));
                let (a, b) = (a.parse::<i64>().ok()?, b.parse::<i64>().ok()?);
                if b < a {
                    return None;
                }
                ranges.push((a, b));
            }
            others.insert(lang.to_string(), ranges);
        }
        Some(PageLanguages { main, others })
    }

    /// The pages a search preferring language `lang` (the site's when
    /// `None`, or when no page is in it) ranks below the others; `None`
    /// when that demotes nothing.
    pub fn demoted(&self, lang: Option<&str>) -> Option<Demoted> {
        let wanted = lang
            .map(|l| l.trim().replace('_', "-").to_ascii_lowercase())
            .filter(|l| !l.is_empty());
        let ids = |ranges: &Vec<(i64, i64)>| -> Vec<i64> {
            ranges.iter().flat_map(|&(a, b)| a..=b).collect()
        };
        let site = wanted
            .as_deref()
            .is_none_or(|w| same_language(w, &self.main));
        if !site {
            let wanted = wanted.as_deref().unwrap_or_default();
            let kept: HashSet<i64> = self
                .others
                .iter()
                .filter(|(l, _)| same_language(l, wanted))
                .flat_map(|(_, r)| ids(r))
                .collect();
            if !kept.is_empty() {
                return Some(Demoted {
                    pages: kept,
                    listed_kept: true,
                });
            }
        }
        // The site's language (asked for, or the fallback): every page
        // of another language that is not the one asked for either.
        let pages: HashSet<i64> = self
            .others
            .iter()
            .filter(|(l, _)| !same_language(l, &self.main))
            .flat_map(|(_, r)| ids(r))
            .collect();
        (!pages.is_empty()).then_some(Demoted {
            pages,
            listed_kept: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> PageLanguages {
        let mut pages: Vec<(i64, String)> = (1..=5).map(|i| (i, "en".to_string())).collect();
        pages.extend([3 + 10, 11, 12, 20].iter().map(|&i| (i, "fr".to_string())));
        pages.push((30, "pt-br".into()));
        PageLanguages::of(&pages).unwrap()
    }

    #[test]
    fn the_site_language_is_that_of_most_pages_and_the_rest_round_trips_as_ranges() {
        let s = site();
        assert_eq!(s.main, "en");
        assert_eq!(s.encode(), "en;fr:11-13,20;pt-br:30");
        assert_eq!(PageLanguages::decode(&s.encode()), Some(s));
        // One language: nothing to record.
        assert_eq!(
            PageLanguages::of(&[(1, "en".into()), (2, "en".into())]),
            None
        );
        // A tie goes to the first tag.
        assert_eq!(
            PageLanguages::of(&[(1, "fr".into()), (2, "de".into())])
                .unwrap()
                .main,
            "de"
        );
        for bad in ["", "en;fr", "en;fr:a", "en;fr:5-2"] {
            assert_eq!(PageLanguages::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_reader_s_language_comes_first_and_the_site_s_is_the_default() {
        let s = site();
        let by_default = s.demoted(None).unwrap();
        assert!(!by_default.contains(1) && by_default.contains(12) && by_default.contains(30));
        // `en-US` is English; an unknown language reads as the site's.
        for lang in ["en", "EN-us", "xx"] {
            assert_eq!(s.demoted(Some(lang)).as_ref(), Some(&by_default), "{lang}");
        }
        let fr = s.demoted(Some("fr")).unwrap();
        assert!(fr.contains(1) && !fr.contains(11) && !fr.contains(20) && fr.contains(30));
        // Pages with no language recorded are the site's.
        assert!(fr.contains(99) && !by_default.contains(99));
        let pt = s.demoted(Some("pt_BR")).unwrap();
        assert!(!pt.contains(30) && pt.contains(1));
    }
}
