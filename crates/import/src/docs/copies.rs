//! Sections that copy other pages of the same site.
//!
//! Sites ship the same text more than once: a single-page edition of the
//! manual beside its chapters (mdBook's `print.html`, a makeinfo or
//! DocBook "one big page"), a page holding a whole API, a quick reference
//! quoting the pages it summarises, the same page under two paths. A copy
//! holds every word of every page it copies, so a search judged per page
//! puts it first for any query; users do not exclude it by hand.
//!
//! Duplication is read from the text, not from file names: each unit's
//! words are cut into overlapping shingles of [`SHINGLE`] words, and a
//! sample of them (those whose hash is `0 mod` [`SAMPLE`], the same
//! sample on every page) is looked up in the other pages. Shingles on more
//! than [`MAX_COPIES`] pages are the site's furniture (licence lines,
//! "edit this page", a phrase every API entry repeats), neither a copy nor
//! a unit's own text: they are not counted.
//!
//! Which of two pages sharing a text is the copy: the one that shares
//! text with more other pages (a single-page edition shares with every
//! chapter; a chapter only with it), then the longer, then the deeper
//! path, then the later one. A unit is a copy when at least [`COPIED`] of its sampled shingles
//! are on its page's originals: pages sharing at least [`MIN_SHARED`]
//! sampled shingles (or whole short units) with it and ranking before it.
//! A unit too short to sample is a copy when its whole text is a unit of
//! an original. Copied units are not
//! indexed; a page all of whose units are copies is left out
//! ([`Skip::Copy`]); what only the copy holds stays searchable.

use super::extract::{Page, Skip, Unit, UnitKind};
use std::collections::{HashMap, HashSet};

/// Words per shingle.
const SHINGLE: usize = 8;
/// One shingle in `SAMPLE` is compared.
const SAMPLE: u64 = 4;
/// A shingle on more pages than this is furniture, not a copy.
const MAX_COPIES: usize = 5;
/// Sampled shingles two pages must share to count as sharing text.
const MIN_SHARED: u32 = 4;
/// The share of a unit's sampled shingles found on pages ranked before
/// its own that makes it a copy.
const COPIED: f64 = 0.65;
/// The share of the smaller page's sampled shingles two pages must
/// share for a short unit alike on both to be a copy.
const CONTAINED: f64 = 0.5;
/// A unit with fewer sampled shingles than this is judged by its whole
/// text; one with fewer words than [`SHINGLE`] is never a copy.
const MIN_SAMPLED: usize = 3;

/// What [`mark`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Copies {
    /// Units marked as copies (on pages still indexed).
    pub units: usize,
    /// Pages left out as wholly copied.
    pub pages: usize,
}

/// Marks the units of `pages` that copy another page (`Unit::copy`), and
/// the pages that are nothing but copies (`Skip::Copy`). `paths[i]` is
/// page `i`'s path in the site. Pages already skipped take no part.
pub fn mark(pages: &mut [Page], paths: &[String]) -> Copies {
    let live: Vec<bool> = pages.iter().map(|p| p.skip.is_none()).collect();
    // Per unit: its sampled shingles, or its whole-text hash when short.
    let mut units: Vec<Vec<UnitPrint>> = Vec::with_capacity(pages.len());
    // (shingle, page) once per page holding it; whole texts separately.
    let mut postings: Vec<(u64, u32)> = Vec::new();
    let mut wholes: Vec<(u64, u32)> = Vec::new();
    // Distinct sampled shingles per page.
    let mut sizes: Vec<u32> = Vec::with_capacity(pages.len());
    for (i, p) in pages.iter().enumerate() {
        let prints: Vec<UnitPrint> = if live[i] {
            p.units.iter().map(UnitPrint::of).collect()
        } else {
            Vec::new()
        };
        let start = postings.len();
        for u in &prints {
            match u {
                UnitPrint::Sampled(s) => postings.extend(s.iter().map(|&h| (h, i as u32))),
                UnitPrint::Whole(h) => wholes.push((*h, i as u32)),
                UnitPrint::Short => {}
            }
        }
        postings[start..].sort_unstable();
        dedup_from(&mut postings, start);
        sizes.push((postings.len() - start) as u32);
        units.push(prints);
    }
    postings.sort_unstable();
    wholes.sort_unstable();
    wholes.dedup();

    // Shingle → the pages holding it (furniture left out), and the
    // number of shingles each pair of pages shares.
    let mut holders: HashMap<u64, Vec<u32>> = HashMap::new();
    let mut shared: HashMap<(u32, u32), u32> = HashMap::new();
    // Shingles of the site's furniture: left out of a unit's share too.
    let mut furniture: HashSet<u64> = HashSet::new();
    for group in postings.chunk_by(|a, b| a.0 == b.0) {
        if group.len() > MAX_COPIES {
            furniture.insert(group[0].0);
        }
        if group.len() < 2 || group.len() > MAX_COPIES {
            continue;
        }
        let on: Vec<u32> = group.iter().map(|&(_, p)| p).collect();
        for (n, &a) in on.iter().enumerate() {
            for &b in &on[n + 1..] {
                *shared.entry((a, b)).or_insert(0) += 1;
            }
        }
        holders.insert(group[0].0, on);
    }
    let mut whole_holders: HashMap<u64, Vec<u32>> = HashMap::new();
    for group in wholes.chunk_by(|a, b| a.0 == b.0) {
        if group.len() < 2 || group.len() > MAX_COPIES {
            continue;
        }
        let on: Vec<u32> = group.iter().map(|&(_, p)| p).collect();
        for (n, &a) in on.iter().enumerate() {
            for &b in &on[n + 1..] {
                *shared.entry((a, b)).or_insert(0) += 1;
            }
        }
        whole_holders.insert(group[0].0, on);
    }
    if shared.is_empty() {
        return Copies::default();
    }
    let mut partners = vec![0usize; pages.len()];
    for (&(a, b), &n) in &shared {
        if n >= MIN_SHARED {
            partners[a as usize] += 1;
            partners[b as usize] += 1;
        }
    }
    // The order in which pages count as originals: fewest partners, then
    // least text, then shallowest path, then path order.
    let key = |i: usize| {
        (
            partners[i],
            sizes[i],
            paths[i].matches('/').count(),
            paths[i].as_str(),
        )
    };
    // Page `q` is an original of page `p`: the two share text, and `q`
    // comes first in that order.
    let original = |q: u32, p: usize| {
        let pair = (q.min(p as u32), q.max(p as u32));
        q as usize != p
            && shared.get(&pair).is_some_and(|&n| n >= MIN_SHARED)
            && key(q as usize) < key(p)
    };
    // ... and most of one of the two is in the other (a short unit alike
    // on two pages is a copy only then: options such as `-h` read the
    // same in every tool's page).
    let contained = |q: u32, p: usize| {
        let pair = (q.min(p as u32), q.max(p as u32));
        let smaller = sizes[q as usize].min(sizes[p]);
        shared
            .get(&pair)
            .is_some_and(|&n| f64::from(n) >= CONTAINED * f64::from(smaller))
    };

    // Each page's titles (its own and its units') as words. A copy keeps
    // its original's headings, perhaps after more words (`Function: int
    // gnutls_init` for `gnutls_init ()`); an API entry documented alike
    // under two names (`email.message.Message.get_all`,
    // `email.message.EmailMessage.get_all`) is two entries.
    let titles: Vec<Vec<Vec<u64>>> = pages
        .iter()
        .map(|p| {
            std::iter::once(title_words(&p.title))
                .chain(p.units.iter().map(|u| title_words(&u.title)))
                .filter(|t| !t.is_empty())
                .collect()
        })
        .collect();
    let titled = |q: u32, title: &[u64]| {
        titles[q as usize]
            .iter()
            .any(|t| ends(title, t) || ends(t, title))
    };

    let mut found = Copies::default();
    for (i, prints) in units.iter().enumerate() {
        if !live[i] {
            continue;
        }
        let mut copied = vec![false; prints.len()];
        let mut sources: Vec<HashSet<u32>> = vec![HashSet::new(); prints.len()];
        let mut unit_titles: Vec<Vec<u64>> = Vec::with_capacity(prints.len());
        for (u, print) in prints.iter().enumerate() {
            let unit = &pages[i].units[u];
            let title = title_words(if unit.title.trim().is_empty() {
                &pages[i].title
            } else {
                &unit.title
            });
            let from = &mut sources[u];
            copied[u] = match print {
                UnitPrint::Sampled(s) => {
                    let mut hits = 0usize;
                    for on in s.iter().filter_map(|h| holders.get(h)) {
                        let mut hit = false;
                        for &q in on.iter().filter(|&&q| original(q, i)) {
                            hit = true;
                            from.insert(q);
                        }
                        hits += usize::from(hit);
                    }
                    let own = s.iter().filter(|h| !furniture.contains(h)).count();
                    own >= MIN_SAMPLED && hits as f64 >= COPIED * own as f64
                }
                UnitPrint::Whole(h) => {
                    if let Some(on) = whole_holders.get(h) {
                        from.extend(on.iter().filter(|&&q| original(q, i) && contained(q, i)));
                    }
                    !from.is_empty()
                }
                UnitPrint::Short => false,
            } && !title.is_empty()
                && from.iter().any(|&q| titled(q, &title));
            unit_titles.push(title);
        }
        // A heading with no text of its own (`#### gnutls_init` before the
        // definition it introduces) goes with the copy it heads, when its
        // original has that heading too.
        for u in (0..prints.len().saturating_sub(1)).rev() {
            if !copied[u]
                && copied[u + 1]
                && matches!(prints[u], UnitPrint::Short)
                && !unit_titles[u].is_empty()
                && sources[u + 1].iter().any(|&q| titled(q, &unit_titles[u]))
            {
                copied[u] = true;
            }
        }
        let page = &mut pages[i];
        let indexed = |u: &Unit| u.kind != UnitKind::Intro || !u.text.is_empty();
        let copies = copied.iter().filter(|&&c| c).count();
        if copies == 0 {
            continue;
        }
        if page
            .units
            .iter()
            .zip(&copied)
            .all(|(u, &c)| c || !indexed(u))
        {
            page.skip = Some(Skip::Copy);
            found.pages += 1;
            continue;
        }
        for (u, c) in page.units.iter_mut().zip(copied) {
            if c && indexed(u) {
                u.copy = true;
                found.units += 1;
            }
        }
    }
    found
}

/// A unit's fingerprint.
enum UnitPrint {
    /// Its sampled shingles, sorted and distinct.
    Sampled(Vec<u64>),
    /// The hash of its whole text (too few shingles to sample).
    Whole(u64),
    /// Fewer words than a shingle: never judged a copy.
    Short,
}

impl UnitPrint {
    fn of(u: &Unit) -> UnitPrint {
        let words: Vec<u64> = u
            .text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| fnv(w.to_lowercase().as_bytes(), FNV_OFFSET))
            .collect();
        if words.len() < SHINGLE {
            return UnitPrint::Short;
        }
        let mut sampled: Vec<u64> = words
            .windows(SHINGLE)
            .map(|w| w.iter().fold(FNV_OFFSET, |h, &x| fnv(&x.to_le_bytes(), h)))
            .filter(|h| h % SAMPLE == 0)
            .collect();
        sampled.sort_unstable();
        sampled.dedup();
        if sampled.len() < MIN_SAMPLED {
            UnitPrint::Whole(
                words
                    .iter()
                    .fold(FNV_OFFSET, |h, &x| fnv(&x.to_le_bytes(), h)),
            )
        } else {
            UnitPrint::Sampled(sampled)
        }
    }
}

/// A title as compared: its words, lower-cased, hashed, in order.
fn title_words(t: &str) -> Vec<u64> {
    t.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| fnv(w.to_lowercase().as_bytes(), FNV_OFFSET))
        .collect()
}

/// Whether `a` ends `b` (`gnutls_init ()` ends `Function: int gnutls_init`).
fn ends(a: &[u64], b: &[u64]) -> bool {
    b.ends_with(a)
}

/// Removes repeats from the sorted tail `v[start..]`.
fn dedup_from(v: &mut Vec<(u64, u32)>, start: usize) {
    let mut tail = v.split_off(start);
    tail.dedup();
    v.append(&mut tail);
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: stable across runs and platforms, so the same site always
/// gives the same index.
fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of sections, each `(heading, text)`.
    fn page(units: &[(&str, &str)]) -> Page {
        Page {
            units: units
                .iter()
                .map(|(title, t)| Unit {
                    kind: UnitKind::Section,
                    title: title.to_string(),
                    aliases: Vec::new(),
                    anchor: None,
                    level: 2,
                    headings: Vec::new(),
                    text: t.to_string(),
                    code: Vec::new(),
                    index_terms: Vec::new(),
                    copy: false,
                })
                .collect(),
            ..Page::default()
        }
    }

    /// `n` words of prose distinct to `seed`.
    fn prose(seed: &str, n: usize) -> String {
        (0..n)
            .map(|i| format!("{seed}{}", i * 7919 % 1009))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn paths(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_single_page_edition_loses_what_it_copies_and_keeps_its_own() {
        let (a, b, c) = (prose("alpha", 120), prose("beta", 90), prose("gamma", 200));
        let own = prose("preface", 60);
        let mut pages = vec![
            page(&[("Alpha", &a)]),
            page(&[("Beta", &b), ("Gamma", &c)]),
            page(&[
                ("Preface", &own),
                ("Alpha", &a),
                ("Beta", &b),
                ("Gamma", &c),
            ]),
        ];
        let found = mark(&mut pages, &paths(&["one.html", "two.html", "print.html"]));
        assert_eq!(found, Copies { units: 3, pages: 0 });
        let flags: Vec<bool> = pages[2].units.iter().map(|u| u.copy).collect();
        assert_eq!(flags, [false, true, true, true]);
        assert!(pages[..2].iter().all(|p| p.units.iter().all(|u| !u.copy)));
    }

    #[test]
    fn of_two_identical_pages_the_deeper_one_is_left_out() {
        let t = prose("same", 80);
        let mut pages = vec![page(&[("Intro", &t)]), page(&[("Intro", &t)])];
        let found = mark(&mut pages, &paths(&["v2/guide/intro.html", "intro.html"]));
        assert_eq!(found, Copies { units: 0, pages: 1 });
        assert_eq!(pages[0].skip, Some(Skip::Copy));
        assert_eq!(pages[1].skip, None);
    }

    #[test]
    fn shared_furniture_and_a_quoted_sentence_are_not_copies() {
        let footer = prose("licence", 30);
        let quote = prose("quoted", 12);
        let mut pages: Vec<Page> = (0..8)
            .map(|n| {
                let mut body = prose(&format!("p{n}x"), 100);
                if n < 2 {
                    body = format!("{body} {quote}");
                }
                page(&[("Body", &body), ("Licence", &footer)])
            })
            .collect();
        let names: Vec<String> = (0..8).map(|n| format!("p{n}.html")).collect();
        assert_eq!(mark(&mut pages, &names), Copies::default());
    }

    #[test]
    fn the_same_text_under_another_name_is_not_a_copy() {
        // An API documented alike on two pages, under two names.
        let t = prose("returns", 60);
        let mut pages = vec![
            page(&[("Message.get_all", &t), ("Message.keys", &prose("k", 40))]),
            page(&[
                ("EmailMessage.get_all", &t),
                ("EmailMessage.keys", &prose("k", 40)),
            ]),
        ];
        assert_eq!(
            mark(&mut pages, &paths(&["a.html", "b.html"])),
            Copies::default()
        );
    }

    #[test]
    fn a_heading_over_a_copied_entry_goes_with_it_and_furniture_counts_for_neither() {
        // A manual repeating API entries: each under a heading of the
        // name, as `Function: int NAME`, with a phrase every entry shares
        // (furniture: on more pages than a copy would be).
        let shared = "returns zero on success and a negative error code otherwise";
        let entries: Vec<(String, String)> = (0..7)
            .map(|n| {
                (
                    format!("fn_{n} ()"),
                    format!("{} {shared}", prose(&format!("e{n}x"), 40)),
                )
            })
            .collect();
        let mut all = vec![page(&[("Preface", &prose("own", 60))])];
        for (t, x) in &entries {
            all.push(page(&[(t, x)]));
        }
        let manual_units: Vec<(String, String)> = entries
            .iter()
            .flat_map(|(t, x)| {
                let name = t.trim_end_matches(" ()").to_string();
                [
                    (name.clone(), String::new()),
                    (format!("Function: int {name}"), x.clone()),
                ]
            })
            .collect();
        let refs: Vec<(&str, &str)> = manual_units
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        all[0].units.extend(page(&refs).units);
        let names: Vec<String> = std::iter::once("manual.html".to_string())
            .chain((0..7).map(|n| format!("api/f{n}.html")))
            .collect();
        let found = mark(&mut all, &names);
        assert_eq!(
            found,
            Copies {
                units: 14,
                pages: 0
            }
        );
        assert!(!all[0].units[0].copy, "the manual's own preface stays");
    }

    #[test]
    fn short_sections_copy_by_their_whole_text() {
        let short = "The answer is forty two and that is all there is to say";
        let (x, y) = (prose("x", 50), prose("y", 50));
        let mut pages = vec![
            page(&[("Answer", short), ("X", &x)]),
            page(&[("Y", &y), ("Answer", short)]),
            page(&[("Answer", short), ("X", &x), ("Y", &y)]),
        ];
        let found = mark(&mut pages, &paths(&["a.html", "b.html", "all.html"]));
        assert_eq!(found.pages, 1, "{found:?}");
        assert_eq!(pages[2].skip, Some(Skip::Copy));
    }
}
