//! English morphology for query words: a word → the other inflections of
//! it worth searching for (`connections` → `connection`, `connecting`,
//! `connected`, ...).
//!
//! The index keeps words as written (`unicode61`), so identifiers match
//! exactly and prefix searches see real words; stemming happens on the
//! query side only. A word's variants are the forms built from its
//! Snowball English stem with common English suffixes that stem back to
//! the same stem: real inflections, checked by the stemmer, never a
//! prefix match (`new` does not find `newline`). The planner searches a
//! word OR its variants and ranks a variant's hits below the word's own
//! ([`VARIANT_WEIGHT`]), so an exact match still comes first.
//!
//! The stemmer is pure Rust (`rust-stemmers`), so the native and the
//! browser builds expand a word the same way.

use rust_stemmers::{Algorithm, Stemmer};
use std::sync::OnceLock;

/// How much a hit of a variant counts against a hit of the word itself
/// (it multiplies the variant's IDF in ranking): enough to find sections
/// the typed form misses, little enough that a heading in another
/// inflection does not outrank the exact name.
pub(crate) const VARIANT_WEIGHT: f64 = 0.25;

/// Most variants searched for one word (the shortest first).
pub(crate) const MAX_VARIANTS: usize = 16;

/// Shortest word that is expanded: shorter words are mostly names and
/// particles whose stems conflate unrelated words.
pub(crate) const MIN_WORD_CHARS: usize = 4;

/// What may follow a word's stem for the stem to stand for the word: an
/// inflection (`connect|ed`) or the `-ion` noun of a verb
/// (`connect|ions`). When the stemmer cut more (`iter|ator`,
/// `gener|al`), its stem conflates other words, and only the word's
/// own singular or plural is searched.
const INFLECTIONS: [&str; 14] = [
    "", "e", "s", "es", "d", "ed", "ing", "ion", "ions", "ation", "ations", "y", "ies", "ied",
];

/// Endings built on a stem that stands for the word: one ending in `e`
/// (`use`), and one whose `e` the stemmer dropped or that has none
/// (`configur`, `connect`).
const E_STEM_ENDINGS: [&str; 3] = ["", "s", "d"];
const STEM_ENDINGS: [&str; 6] = ["", "s", "e", "es", "ed", "ing"];

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Whether `word` is prose a reader inflects: letters only, lower case
/// or capitalised, long enough. Identifiers (`HashMap`, `FILE`,
/// `utf8`, `json.dumps`) are searched as written.
fn is_prose_word(word: &str) -> bool {
    let mut chars = word.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    word.chars().count() >= MIN_WORD_CHARS
        && word.chars().all(|c| c.is_ascii_alphabetic())
        && first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_lowercase())
}

/// Whether the stemmer cut only an inflection off `word` (see
/// [`INFLECTIONS`]), allowing for the `e` or `y` it changed (`us|ing`,
/// `librar|ies`) and a doubled consonant (`run|ning`).
fn stands_for(stem: &str, word: &str) -> bool {
    let rest = word.strip_prefix(stem).or_else(|| {
        let cut = stem.strip_suffix('e').or_else(|| stem.strip_suffix('i'))?;
        word.strip_prefix(cut)
    });
    let Some(rest) = rest else {
        return false;
    };
    let undoubled = match (rest.chars().next(), stem.chars().last()) {
        (Some(a), Some(b)) if a == b && doubles(stem).is_some() => &rest[a.len_utf8()..],
        _ => rest,
    };
    INFLECTIONS.contains(&rest) || INFLECTIONS.contains(&undoubled)
}

/// The plural of a singular noun, the singular of a plural
/// (`connections` ↔ `connection`, `classes` ↔ `class`, `libraries` ↔
/// `library`).
fn other_number(word: &str) -> String {
    let sibilant = |w: &str| ["s", "x", "z", "ch", "sh"].iter().any(|e| w.ends_with(e));
    if let Some(w) = word.strip_suffix("ies") {
        format!("{w}y")
    } else if let Some(w) = word.strip_suffix("es").filter(|w| sibilant(w)) {
        w.to_string()
    } else if let Some(w) = word.strip_suffix('s').filter(|w| !w.ends_with('s')) {
        w.to_string()
    } else if sibilant(word) {
        format!("{word}es")
    } else if word.ends_with('y')
        && !word.ends_with("ay")
        && !word.ends_with("ey")
        && !word.ends_with("oy")
    {
        format!("{}ies", &word[..word.len() - 1])
    } else {
        format!("{word}s")
    }
}

/// The consonant a stem doubles before `-ed` and `-ing` (`run` →
/// `running`, `format` → `formatted`): one ending consonant, vowel,
/// consonant, the last not `w`, `x` or `y`.
fn doubles(stem: &str) -> Option<char> {
    let b: Vec<char> = stem.chars().collect();
    let vowel = |c: char| "aeiou".contains(c);
    match b[..] {
        [.., x, y, z] if !vowel(x) && vowel(y) && !vowel(z) && !"wxy".contains(z) => Some(z),
        _ => None,
    }
}

/// The other inflections of `word` to search for, lower case, shortest
/// first, at most [`MAX_VARIANTS`]; empty for a word that is not prose.
pub(crate) fn variants(word: &str) -> Vec<String> {
    if !is_prose_word(word) {
        return Vec::new();
    }
    let word = word.to_ascii_lowercase();
    let stemmer = stemmer();
    let stem = stemmer.stem(&word).into_owned();
    let mut found: Vec<String> = Vec::new();
    let mut consider = |candidate: String| {
        if candidate != word
            && candidate.len() >= 3
            && !found.contains(&candidate)
            && stemmer.stem(&candidate) == stem
        {
            found.push(candidate);
        }
    };
    if !word.ends_with("ing") && !word.ends_with("ed") {
        consider(other_number(&word));
    }
    if stands_for(&stem, &word) {
        match stem.strip_suffix('i') {
            // `librari` → `library`, `libraries`.
            Some(s) => {
                for ending in ["y", "ies", "ied", "ying"] {
                    consider(format!("{s}{ending}"));
                }
            }
            None => {
                let endings: &[&str] = match stem.strip_suffix('e') {
                    Some(s) => {
                        consider(format!("{s}ing"));
                        &E_STEM_ENDINGS
                    }
                    None => &STEM_ENDINGS,
                };
                for ending in endings {
                    consider(format!("{stem}{ending}"));
                }
                if let Some(last) = doubles(&stem) {
                    consider(format!("{stem}{last}ed"));
                    consider(format!("{stem}{last}ing"));
                }
            }
        }
    }
    found.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    found.truncate(MAX_VARIANTS);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_of_a_word_stem_back_to_it() {
        let v = variants("connections");
        for w in [
            "connect",
            "connection",
            "connecting",
            "connected",
            "connects",
        ] {
            assert!(v.contains(&w.to_string()), "{w} in {v:?}");
        }
        assert!(variants("running").contains(&"run".to_string()));
        assert!(variants("configure").contains(&"configured".to_string()));
        assert!(variants("libraries").contains(&"library".to_string()));
        assert!(variants("using").contains(&"used".to_string()));
        assert!(variants("format").contains(&"formatting".to_string()));
        for v in variants("connections") {
            assert_eq!(stemmer().stem(&v), "connect");
        }
    }

    #[test]
    fn identifiers_short_words_and_non_ascii_are_not_expanded() {
        for w in [
            "HashMap",
            "FILE",
            "utf8",
            "os.path",
            "snake_case",
            "use",
            "",
            "café",
        ] {
            assert!(variants(w).is_empty(), "{w}");
        }
        assert!(
            !variants("Threads").is_empty(),
            "a capitalised word is prose"
        );
    }

    #[test]
    fn a_stem_that_cut_more_than_an_inflection_gives_only_the_other_number() {
        // Snowball stems `iterator` to `iter`, a different word.
        assert_eq!(variants("iterator"), vec!["iterators".to_string()]);
    }

    #[test]
    fn variants_are_bounded_and_shortest_first() {
        for w in ["international", "organization", "connections", "functions"] {
            let v = variants(w);
            assert!(v.len() <= MAX_VARIANTS);
            assert!(v.windows(2).all(|p| p[0].len() <= p[1].len()), "{v:?}");
        }
    }

    #[test]
    fn variants_are_other_inflections_of_prose_words_only() {
        use crate::morphology::variants;
        let v = variants("connections");
        assert!(v.contains(&"connection".to_string()));
        assert!(v.contains(&"connecting".to_string()));
        assert!(!v.contains(&"connections".to_string()));
        // Identifiers are searched as written.
        assert!(variants("HashMap").is_empty());
        assert!(variants("utf8").is_empty());
    }
}
