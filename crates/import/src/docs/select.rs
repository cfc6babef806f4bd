//! Which pages of a site are indexed: `--include` and `--exclude` globs
//! over page paths relative to the site root (`book/old/*.html`,
//! `**/print.html`). `*` and `?` stay within one path segment, `**`
//! crosses segments, `{a,b}` alternates; matching ignores ASCII case
//! (sites are served from case-insensitive file systems too).

use gitsense_engine::error::{Error, Result};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The pages a build keeps: those matching an include glob (every page
/// when there is none) and no exclude glob.
#[derive(Debug, Clone, Default)]
pub struct PageFilter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl PageFilter {
    /// Compiles the globs; a malformed one is an `import.bad_glob` error
    /// naming it.
    ///
    /// ```
    /// use gitsense_import::docs::PageFilter;
    /// let f = PageFilter::new(&[], &["old/**".to_string()]).unwrap();
    /// assert!(f.keeps("guide/intro.html") && !f.keeps("old/v1/intro.html"));
    /// assert_eq!(PageFilter::new(&["[".into()], &[]).unwrap_err().code, "import.bad_glob");
    /// ```
    pub fn new(include: &[String], exclude: &[String]) -> Result<PageFilter> {
        Ok(PageFilter {
            include: set(include)?,
            exclude: set(exclude)?,
        })
    }

    /// Whether the page at `rel` (relative to the site root, `/`-separated)
    /// is indexed.
    pub fn keeps(&self, rel: &str) -> bool {
        self.include.as_ref().is_none_or(|s| s.is_match(rel))
            && !self.exclude.as_ref().is_some_and(|s| s.is_match(rel))
    }

    /// True when no glob was given.
    pub fn is_everything(&self) -> bool {
        self.include.is_none() && self.exclude.is_none()
    }
}

fn set(globs: &[String]) -> Result<Option<GlobSet>> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let pattern = g.trim_start_matches("./");
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .case_insensitive(true)
            .build()
            .map_err(|e| {
                Error::new(
                    "import.bad_glob",
                    format!("'{g}' is not a glob: {}", e.kind()),
                )
            })?;
        b.add(glob);
    }
    b.build()
        .map(Some)
        .map_err(|e| Error::new("import.bad_glob", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(include: &[&str], exclude: &[&str]) -> PageFilter {
        let v = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        PageFilter::new(&v(include), &v(exclude)).unwrap()
    }

    #[test]
    fn a_star_stays_in_its_segment_and_two_cross_them() {
        let x = f(&[], &["old/*.html"]);
        assert!(!x.keeps("old/a.html"));
        assert!(x.keeps("old/sub/a.html"));
        let x = f(&[], &["**/print.html"]);
        assert!(!x.keeps("print.html") && !x.keeps("book/print.html"));
    }

    #[test]
    fn includes_narrow_and_excludes_win() {
        let x = f(&["book/**"], &["book/old/**"]);
        assert!(x.keeps("book/ch1.html"));
        assert!(!x.keeps("guide/ch1.html"));
        assert!(!x.keeps("book/old/ch1.html"));
        assert!(f(&[], &[]).keeps("anything.md"));
    }
}
