//! Code-like text as people type it into a search: command-line flags
//! (`--onto`), calls and chains (`super().__init__`, `new
//! Date().toISOString`), dotted member names (`Files.append`). It is
//! searched, never refused; a flag is not a double negation; a dotted
//! name finds the rows holding its words even apart, those holding it
//! whole first. On the real sample database and on documentation pages
//! built from the real text of MkDocs' and Python's documentation.

mod common;
use common::*;
use gitsense_engine::{Engine, SearchOptions, SearchResults};
use gitsense_import as import;
use gitsense_import::docs::DocsOptions;

fn expression(r: &SearchResults) -> String {
    as_json(r)["searchCriteria"]["expression"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn message_ids(r: &SearchResults) -> Vec<i64> {
    as_json(r)["results"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["messages_id"].as_i64().unwrap())
        .collect()
}

#[test]
fn a_double_dash_word_is_a_flag_to_find_not_a_double_negation() {
    let e = sample_engine();
    // deploy.sh runs `npm ci --production`; the flag is searched as typed.
    let r = search(&e, "npm --production");
    assert_eq!(expression(&r), "npm \"--production\"");
    assert!(counts(&r).1 > 0);
    assert_eq!(counts(&r), counts(&search(&e, "npm production")));
    // Read as `-(-exclude)`, a negated term alone kept the any-term
    // fallback away and nothing was found; as a flag it is a word.
    let r = search(&e, "gsc --exclude");
    assert!(counts(&r).1 > 0, "{}", expression(&r));
    // A single dash still excludes.
    let without = search(&e, "npm -production");
    assert_eq!(expression(&without), "npm -production");
    assert!(counts(&without).1 < counts(&search(&e, "npm")).1);
}

#[test]
fn calls_and_chains_are_searched_and_never_an_error() {
    let e = sample_engine();
    for q in [
        "super().__init__",
        "new Date().toISOString",
        "Date().getTime()",
        "toUpperCase().trim",
        "fn main()",
        "main ()",
        "()",
        "f(a, b)",
        "res.status(500).json",
        "console.log(",
    ] {
        e.search(q, &SearchOptions::default())
            .unwrap_or_else(|err| panic!("{q}: {}", err.code));
    }
    // logger.js writes `new Date().toISOString()`.
    let r = search(&e, "new Date().toISOString");
    assert_eq!(expression(&r), "new \"Date().toISOString\"");
    assert!(message_ids(&r).contains(&170), "{:?}", message_ids(&r));
}

/// Real sections of MkDocs' API reference (`dev-guide/api.html`) and of
/// Python's data model and dataclasses pages, as Markdown.
const MKDOCS_API: &str = "# API reference

The main entry point to the API is through Events that are received by plugins. These events' descriptions link back to this page.

## mkdocs.structure.files.Files

A collection of File objects.

### `__iter__() -> Iterator[File]`

### `__len__() -> int`

### `__contains__(path: str) -> bool`

### src_paths() -> Dict[str, File] property

### src_uris() -> Dict[str, File] property

### get_file_from_path(path: str) -> Optional[File]

### append(file: File) -> None

Append file to Files collection.

### remove(file: File) -> None

Remove file from Files collection.

## mkdocs.livereload.LiveReloadServer

### watch(path: str, func: Optional[Callable[[], None]] = None, recursive: bool = True) -> None

Add the 'path' to watched paths, call the function and reload when any file changes under it.
";

const PYTHON_DATAMODEL: &str = "# Data model

## `object.__init__(self[, ...])`

Called after the instance has been created (by `__new__()`), but before it is returned to the caller. The arguments are those passed to the class constructor expression. If a base class has an `__init__()` method, the derived class's `__init__()` method, if any, must explicitly call it to ensure proper initialization of the base class part of the instance; for example: `super().__init__([args...])`.

Because `__new__()` and `__init__()` work together in constructing objects (`__new__()` to create it, and `__init__()` to customize it), no non-`None` value may be returned by `__init__()`; doing so will cause a `TypeError` to be raised at runtime.

## `object.__init_subclass__(cls)`

This method is called whenever the containing class is subclassed. cls is then the new subclass. If defined as a normal instance method, this method is implicitly converted to a class method.

Keyword arguments which are given to a new class are passed to the parent's class `__init_subclass__`. For compatibility with other classes using `__init_subclass__`, one should take out the needed keyword arguments and pass the others over to the base class, as in:

```python
class Philosopher:
    def __init_subclass__(cls, /, default_name, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.default_name = default_name

class AustralianPhilosopher(Philosopher, default_name=\"Bruce\"):
    pass
```

The default implementation `object.__init_subclass__` does nothing, but raises an error if it is called with any arguments.
";

fn docs_site() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    write_file(&root, "dev-guide/api.md", MKDOCS_API);
    write_file(&root, "reference/datamodel.md", PYTHON_DATAMODEL);
    let out = dir.path().join("site.gsx");
    import::build_with(&out, "docs:test".into(), |w| {
        import::docs::import(&root, &DocsOptions::default(), w, &import::no_progress())
    })
    .expect("the site imports");
    let e = Engine::open(&out).unwrap();
    (dir, e)
}

fn docs_search(e: &Engine, q: &str) -> SearchResults {
    e.search(
        q,
        &SearchOptions {
            per_page: Some(20),
            ..SearchOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn a_dotted_member_name_finds_the_member_documented_under_its_class() {
    let (_dir, e) = docs_site();
    // `Files` and `append` are never written together: the class is one
    // heading, its method another below it.
    let r = docs_search(&e, "Files.append");
    assert_eq!(
        section_titles(&r).first().map(String::as_str),
        Some("append(file: File) -> None"),
        "{:?}",
        section_titles(&r)
    );
    let r = docs_search(&e, "mkdocs.livereload.LiveReloadServer.watch");
    assert!(
        section_titles(&r).iter().any(|t| t.starts_with("watch(")),
        "{:?}",
        section_titles(&r)
    );
    // Written whole, the name's section still comes first.
    let r = docs_search(&e, "mkdocs.structure.files.Files");
    assert_eq!(
        section_titles(&r).first().map(String::as_str),
        Some("mkdocs.structure.files.Files")
    );
    // When no page holds every word, the pages holding some are shown,
    // as for words typed apart.
    let r = docs_search(&e, "Files.xyzzy");
    assert_eq!(as_json(&r)["searchCriteria"]["matchMode"], "any-term");
    assert!(counts(&r).1 > 0);
}

fn message_texts(r: &SearchResults) -> Vec<String> {
    as_json(r)["results"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["messages_content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn rows_holding_an_identifier_as_typed_come_before_rows_holding_only_its_words() {
    let (_dir, e) = docs_site();
    // The index reads `__init__` as `init` and `super().__init__` as the
    // words `super().__init_subclass__` holds too.
    for (q, typed) in [
        ("__init__", "__init__"),
        ("super().__init__", "super().__init__"),
    ] {
        let texts = message_texts(&docs_search(&e, q));
        let holds: Vec<bool> = texts.iter().map(|t| t.contains(typed)).collect();
        assert!(
            holds.contains(&true) && holds.contains(&false),
            "{q}: {holds:?}"
        );
        assert!(
            holds.windows(2).all(|w| w[0] || !w[1]),
            "{q}: rows holding {typed} first: {holds:?}"
        );
    }
    // Pages are slices of that one order.
    let all = message_ids(&docs_search(&e, "__init__"));
    let mut paged = Vec::new();
    for page in 1..=all.len().div_ceil(2) as u64 {
        let r = e
            .search(
                "__init__",
                &SearchOptions {
                    per_page: Some(2),
                    page,
                    ..SearchOptions::default()
                },
            )
            .unwrap();
        paged.extend(message_ids(&r));
    }
    assert_eq!(paged, all);
}
