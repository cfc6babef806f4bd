//! GitSense's git-nav on the real GitSense sample database: browsing
//! owners → repositories → branches → trees → files lists exactly the
//! chats the hierarchy holds (checked with SQL on the database the index
//! was built from), sorted by name, with the profile's default page size;
//! bad keys are structured errors with positions.

mod common;
use common::*;
use gitsense_engine::SearchOptions;
use rusqlite::Connection;

/// Names of live chats matching `condition`, sorted as the profile sorts
/// (name ignoring case, then id).
fn sql_names(condition: &str) -> Vec<String> {
    let conn = Connection::open(sample_db()).unwrap();
    let mut s = conn
        .prepare(&format!(
            "SELECT name FROM chats c WHERE c.deleted = 0 AND {condition} ORDER BY name COLLATE NOCASE, id"
        ))
        .unwrap();
    s.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn listed(q: &str) -> Vec<String> {
    let r = search_with(&sample_engine(), q, SearchOptions::default());
    assert_eq!(
        r.total_counts.messages + r.total_counts.code_blocks,
        0,
        "{q}"
    );
    assert_eq!(
        r.total_counts.chats,
        r.results.chats.len() as u64,
        "{q}: one page"
    );
    r.results
        .chats
        .iter()
        .map(|c| c.chats_name.clone().unwrap_or_default())
        .collect()
}

#[test]
fn the_profile_lists_repositories_by_name_on_one_default_page() {
    let r = search(&sample_engine(), "profile:git-nav");
    assert_eq!(r.search_criteria["options"]["perPage"], 1000);
    let names: Vec<String> = r
        .results
        .chats
        .iter()
        .map(|c| c.chats_name.clone().unwrap())
        .collect();
    assert_eq!(names, sql_names("c.type = 'git-repo'"));
    assert!(r
        .results
        .chats
        .iter()
        .all(|c| c.chats_type.as_deref() == Some("git-repo")));
}

#[test]
fn each_level_lists_the_chats_below_the_one_named() {
    assert_eq!(
        listed("git-owner:*"),
        sql_names("c.type = 'git-repo-owner'")
    );
    assert_eq!(
        listed("profile:git-nav git-owner:tutorial"),
        sql_names("c.type = 'git-repo' AND c.parent_id = 21")
    );
    assert_eq!(
        listed("git-repository:Tutorial/secure-payments"),
        sql_names("c.type = 'git-ref' AND c.parent_id = 22")
    );
    assert_eq!(
        listed("git-repository:Tutorial/secure-payments git-branch:*"),
        sql_names("c.type = 'git-ref' AND c.parent_id = 22")
    );
    let top = listed("git-repository:tutorial/SECURE-PAYMENTS git-branch:main");
    assert_eq!(top, sql_names("c.parent_id = 23"));
    assert!(top.len() >= 4, "{top:?}");
    assert_eq!(listed("git-ls-tree-id:36"), sql_names("c.parent_id = 36"));
    // Words narrow a listing by name.
    assert_eq!(listed("git-ls-tree-id:36 auth"), ["auth"]);
    // Nothing is listed for names that do not exist.
    assert!(listed("git-repository:Tutorial/nope").is_empty());
}

#[test]
fn bad_git_nav_keys_are_structured_errors_with_positions() {
    let e = sample_engine();
    for (q, code, at) in [
        ("git-branch:main", "query.bad_value", 11),
        ("x git-repository:pay-vault", "query.bad_value", 17),
        ("git-repository:a/b/c", "query.bad_value", 15),
        ("git-ls-tree-id:abc", "query.bad_value", 15),
        ("git-owner:a/b", "query.bad_value", 10),
        ("-git-owner:Tutorial", "query.bad_negation", 0),
    ] {
        let err = e.search(q, &SearchOptions::default()).unwrap_err();
        assert_eq!((err.code.as_str(), err.position), (code, Some(at)), "{q}");
    }
}
