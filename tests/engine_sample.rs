//! The engine against the real GitSense sample database: counts equal the
//! GitSense backend's, hierarchy and branches are right, every filter,
//! scope and profile changes what comes back, paging covers every match
//! once, and errors are structured.

mod common;
use common::*;
use gitsense_engine::{Highlight, SearchOptions};
use std::collections::HashSet;

#[test]
fn single_keyword_counts_equal_the_gitsense_backend() {
    let e = sample_engine();
    assert_eq!(counts(&search(&e, "payment")), (1, 46, 0));
    assert_eq!(counts(&search(&e, "authentication")).1, 88);
    assert_eq!(counts(&search(&e, "\"secure payments\"")), (1, 28, 0));
    assert_eq!(counts(&search(&e, "'secure payments'")), (1, 28, 0));
    assert_eq!(counts(&search(&e, "in:chats README")), (5, 0, 0));
}

#[test]
fn counts_of_searches_sorted_by_rank_equal_count_star() {
    // Sorted by rank, a target's count is the number of rows its ranking
    // scored; sorted otherwise, it is a count(*) of its own. Both must
    // agree, on every page, past the last one too. (Code blocks, which
    // the sample has none of: tests/chat_export.rs.)
    let e = sample_engine();
    let queries = [
        "payment",
        "authentication token",
        "\"secure payments\"",
        "pay*",
        "payment OR refund",
        "payment -refund",
        "(payment OR refund) -payment",
        "stripe lang:js",
        "auth* -test msg-type:git-blob",
        "payment role:assistant",
        "payment in:messages git-path:backend/src/payment/*",
        "payment xyzzyq", // no row has both: the any-term fallback
        "PayVault option:case-sensitive",
    ];
    for q in queries {
        for page in [1, 2, 40] {
            let opts = SearchOptions {
                page,
                ..Default::default()
            };
            let ranked = search_with(&e, q, opts.clone());
            let other = search_with(&e, &format!("{q} sort:updated_at:desc"), opts);
            assert_eq!(counts(&ranked), counts(&other), "{q}, page {page}");
            assert_eq!(
                ranked.search_criteria["matchMode"], other.search_criteria["matchMode"],
                "{q}"
            );
            if page == 1 {
                assert!(counts(&ranked) != (0, 0, 0), "{q} finds nothing");
            }
        }
    }
}

#[test]
fn answers_are_the_same_when_phrase_counts_come_from_the_cache() {
    // A connection counts the rows of a phrase once (for its IDF), then
    // takes the count from its cache: every later search that has the
    // phrase, in any expression, must rank exactly as a fresh engine.
    let queries = [
        "payment",
        "payment refund",
        "refund",
        "payment OR refund",
        "payment -refund",
        "refund -payment",
        "pay*",
        "\"secure payments\"",
        "secure payments",
        "payments",
        "payment in:messages sort:updated_at:desc",
    ];
    let warm = sample_engine();
    for q in queries {
        search(&warm, q);
    }
    for q in queries {
        let fresh = sample_engine();
        assert_eq!(
            as_json(&search(&warm, q)),
            as_json(&search(&fresh, q)),
            "{q}"
        );
    }
}

#[test]
fn pagination_fields_follow_the_contract() {
    let e = sample_engine();
    let r = search(&e, "payment");
    // all.default: five per target.
    assert_eq!(r.results.chats.len(), 1);
    assert_eq!(r.results.messages.len(), 5);
    assert_eq!(r.total_results_returned, 6);
    assert_eq!(r.pagination.results_per_page, 6);
    assert_eq!(r.pagination.total_results, 47);
    assert_eq!(r.pagination.current_page, 1);
    assert_eq!(r.pagination.total_pages, 10); // ceil(46 / 5)
}

#[test]
fn chat_paths_and_branch_names_come_from_the_hierarchy() {
    let e = sample_engine();
    let r = search(&e, "chat-id:25 in:chats");
    let c = &r.results.chats[0];
    assert_eq!(c.chats_name.as_deref(), Some("deploy.sh"));
    assert_eq!(
        c.chat_path.as_deref(),
        Some("Repositories -> Tutorial -> secure-payments -> main -> scripts -> deploy.sh")
    );
    let r = search(&e, "chat-id:25 in:messages");
    assert!(!r.results.messages.is_empty());
    for m in &r.results.messages {
        assert_eq!(m.messages_branch_name.as_deref(), Some("main"));
        assert_eq!(m.result_chat_id, 25);
        assert_eq!(m.chat_path, c.chat_path);
    }
    // A chat outside any git tree has no branch.
    let r = search(&e, "chat-type:regular in:messages");
    assert!(r
        .results
        .messages
        .iter()
        .all(|m| m.messages_branch_name.is_none()));
}

#[test]
fn message_meta_is_real_json_with_arrays_kept() {
    let e = sample_engine();
    let r = search(&e, "msg-type:tiny-overview payment");
    let m = &r.results.messages[0];
    let v = serde_json::to_value(m).unwrap();
    assert!(v["messages_meta_keywords"].is_array(), "{v}");
    assert!(v["messages_meta_purpose"].is_string());
    assert!(v["messages_meta_file_path"].is_string());
    assert_eq!(v["messages_meta_git_repo"], "Tutorial/secure-payments");
}

#[test]
fn every_filter_restricts_what_comes_back() {
    let e = sample_engine();
    let all = search(&e, "payment in:messages");
    let total = all.total_counts.messages;

    let r = search(&e, "payment in:messages chat-id:56");
    assert!(r.total_counts.messages > 0 && r.total_counts.messages < total);
    assert!(r.results.messages.iter().all(|m| m.messages_chat_id == 56));

    let r = search(&e, "payment name:readme");
    assert!(r.total_counts.chats + r.total_counts.messages > 0);
    assert!(r.total_counts.messages < total);
    let readme = search(&e, "in:chats name:readme");
    assert!(readme.results.chats.iter().all(|c| c
        .chats_name
        .as_deref()
        .unwrap()
        .to_lowercase()
        .contains("readme")));

    let r = search(&e, "payment msg-id:221");
    assert_eq!(counts(&r), (0, 1, 0));
    assert_eq!(r.results.messages[0].messages_id, 221);

    let r = search(&e, "payment in:messages git-path:backend/src/payment/*");
    assert!(r.total_counts.messages > 0 && r.total_counts.messages < total);
    for m in &r.results.messages {
        let p = m.meta["messages_meta_file_path"].as_str().unwrap();
        assert!(p.starts_with("backend/src/payment/"), "{p}");
    }
    // A plain directory path matches the files below it.
    let dir = search(&e, "payment in:messages git-path:backend/src/payment");
    assert_eq!(dir.total_counts.messages, r.total_counts.messages);

    let r = search(&e, "payment msg-type:tiny-overview");
    assert!(r.total_counts.messages > 0 && r.total_counts.messages < total);
    assert!(r
        .results
        .messages
        .iter()
        .all(|m| m.messages_type.as_deref() == Some("tiny-overview::file-content::default")));

    let r = search(&e, "payment chat-type:git-blob in:messages");
    assert!(r.total_counts.messages > 0 && r.total_counts.messages < total);

    let js = search(&e, "payment lang:javascript in:messages");
    let md = search(&e, "payment lang:md in:messages");
    assert!(js.total_counts.messages > 0 && md.total_counts.messages > 0);
    assert!(js.total_counts.messages + md.total_counts.messages <= total);

    let sys = search(&e, "role:system in:messages");
    let user = search(&e, "role:user in:messages");
    assert!(sys
        .results
        .messages
        .iter()
        .all(|m| m.messages_role.as_deref() == Some("system")));
    assert!(user
        .results
        .messages
        .iter()
        .all(|m| m.messages_role.as_deref() == Some("user")));
    assert_ne!(sys.total_counts.messages, user.total_counts.messages);

    let r = search(&e, "payment in:messages repo:Tutorial/secure-payments");
    assert!(r.total_counts.messages > 0 && r.total_counts.messages < total);
    assert_eq!(
        counts(&search(&e, "payment repo:nobody/nothing")),
        (0, 0, 0)
    );

    // Comma lists are any-of, and so is a key repeated.
    let both = search(&e, "payment in:messages chat-id:56,25");
    let one = search(&e, "payment in:messages chat-id:56");
    let other = search(&e, "payment in:messages chat-id:25");
    assert_eq!(
        both.total_counts.messages,
        one.total_counts.messages + other.total_counts.messages
    );
    assert_eq!(
        search(&e, "payment in:messages chat-id:56 chat-id:25")
            .total_counts
            .messages,
        both.total_counts.messages
    );
}

#[test]
fn null_filters_split_the_matches() {
    let e = sample_engine();
    let total = search(&e, "payment in:messages").total_counts.messages;
    let null = search(&e, "payment in:messages git-path:null")
        .total_counts
        .messages;
    let not_null = search(&e, "payment in:messages git-path:not_null")
        .total_counts
        .messages;
    assert!(null > 0 && not_null > 0);
    assert_eq!(null + not_null, total);
}

#[test]
fn repeated_filters_of_one_key_accumulate_as_gitsense_does() {
    let e = sample_engine();
    let each = |q: &str| counts(&search(&e, q));
    let js = each("in:messages lang:javascript");
    let md = each("in:messages lang:markdown");
    assert!(js.1 > 0 && md.1 > 0);
    let repeated = each("in:messages lang:javascript lang:markdown");
    assert_eq!(repeated, each("in:messages lang:javascript,markdown"));
    assert_eq!(repeated.1, js.1 + md.1, "a message has one language");
    // Negated, both are left out either way.
    let all = each("in:messages").1;
    assert_eq!(
        each("in:messages -lang:javascript -lang:markdown").1,
        all - js.1 - md.1
    );
    // Filters of different keys still all apply.
    let both = each("in:messages lang:javascript role:assistant").1;
    assert!(both > 0 && both < js.1);
    // Repeats are bounded as one list is.
    let many: Vec<String> = (0..65).map(|i| format!("chat-id:{i}")).collect();
    let err = e
        .search(&many.join(" "), &SearchOptions::default())
        .unwrap_err();
    assert_eq!(err.code, "query.too_complex");
    let enough: Vec<String> = (0..64).map(|i| format!("chat-id:{i}")).collect();
    assert!(e
        .search(&enough.join(" "), &SearchOptions::default())
        .is_ok());
}

#[test]
fn negated_filters_exclude() {
    let e = sample_engine();
    let total = search(&e, "payment in:messages").total_counts.messages;
    let blob = search(&e, "payment in:messages chat-type:git-blob")
        .total_counts
        .messages;
    let not_blob = search(&e, "payment in:messages -chat-type:git-blob")
        .total_counts
        .messages;
    assert_eq!(blob + not_blob, total);
}

#[test]
fn scopes_follow_the_current_chat() {
    let e = sample_engine();
    let opts = |id| SearchOptions {
        current_chat_id: Some(id),
        ..Default::default()
    };
    // current-chat: chat 56 only.
    let r = search_with(&e, "payment in:messages scope:current-chat", opts(56));
    assert!(r.total_counts.messages > 0);
    assert!(r.results.messages.iter().all(|m| m.messages_chat_id == 56));
    // current-chat-and-branches from the branch chat (23): everything below it.
    let below = search_with(
        &e,
        "payment in:messages scope:current-chat-and-branches",
        opts(23),
    );
    let whole = search(&e, "payment in:messages").total_counts.messages;
    assert!(below.total_counts.messages > r.total_counts.messages);
    assert!(below.total_counts.messages <= whole);
    assert!(below.results.messages.iter().all(|m| m
        .chat_path
        .as_deref()
        .unwrap()
        .starts_with("Repositories -> Tutorial -> secure-payments -> main")));
    // connected-chats from a leaf: the whole root tree (root 1).
    let connected = search_with(&e, "payment in:messages scope:connected-chats", opts(25));
    assert!(connected.total_counts.messages >= below.total_counts.messages);
    assert!(connected.results.messages.iter().all(|m| m
        .chat_path
        .as_deref()
        .unwrap()
        .starts_with("Repositories")));
    let everything = search_with(&e, "payment in:messages scope:all-chats", opts(25));
    assert_eq!(everything.total_counts.messages, whole);
    assert!(
        connected.total_counts.messages < whole,
        "chats outside the tree exist"
    );
}

#[test]
fn scope_errors_are_structured() {
    let e = sample_engine();
    let err = e
        .search("x scope:current-chat", &SearchOptions::default())
        .unwrap_err();
    assert_eq!(err.code, "options.current_chat_required");
    let err = e
        .search(
            "x scope:current-chat",
            &SearchOptions {
                current_chat_id: Some(999_999),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.code, "options.unknown_chat");
}

#[test]
fn profiles_preset_targets_filters_and_limits() {
    let e = sample_engine();
    let r = search(&e, "profile:tiny-overview-query-optimization payment");
    assert_eq!(r.total_counts.chats, 0);
    assert!(r.total_counts.messages > 5, "limit 200, not 5");
    assert_eq!(r.results.messages.len() as u64, r.total_counts.messages);
    assert!(r
        .results
        .messages
        .iter()
        .all(|m| m.messages_type.as_deref() == Some("tiny-overview::file-content::default")));
    // The profile's empty search lists all 40 tiny overviews.
    let r = search(&e, "profile:tiny-overview-query-optimization");
    assert_eq!(r.total_counts.messages, 40);
    // One target: that target's default profile, 25 per page.
    let r = search(&e, "in:messages authentication");
    assert_eq!(r.results.messages.len(), 25);
    assert_eq!(r.search_criteria["profile"], "messages.default");
    let r = search(&e, "authentication");
    assert_eq!(r.results.messages.len(), 5);
    assert_eq!(r.search_criteria["profile"], "all.default");
    let r = search(&e, "profile:short-overview-query-optimization payment");
    assert_eq!(counts(&r), (0, 0, 0), "the sample has no short overviews");
}

#[test]
fn sort_orders_results() {
    let e = sample_engine();
    let opts = SearchOptions {
        per_page: Some(50),
        ..Default::default()
    };
    let r = search_with(&e, "payment in:messages sort:updated_at:desc", opts.clone());
    let dates: Vec<String> = r
        .results
        .messages
        .iter()
        .map(|m| {
            m.messages_updated_at
                .clone()
                .or(m.messages_created_at.clone())
                .unwrap_or_default()
        })
        .collect();
    let mut sorted = dates.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(dates, sorted);
    let r = search_with(&e, "payment in:messages", opts.clone());
    let ranks: Vec<f64> = r.results.messages.iter().map(|m| m.fts_rank).collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "fts_rank ascending");
    assert!(ranks.iter().all(|r| *r < 0.0));
    let r = search_with(&e, "in:chats readme sort:name:desc", opts);
    let names: Vec<String> = r
        .results
        .chats
        .iter()
        .map(|c| c.chats_name.clone().unwrap().to_lowercase())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(names, sorted);
}

#[test]
fn boolean_logic_really_works() {
    let e = sample_engine();
    let m = |q: &str| {
        search(&e, &format!("in:messages {q}"))
            .total_counts
            .messages
    };
    let a = m("payment");
    let b = m("refund");
    let ab = m("payment refund");
    assert!(ab > 0 && ab < a && ab <= b);
    assert_eq!(m("payment AND refund"), ab);
    assert_eq!(m("payment OR refund"), a + b - ab);
    assert_eq!(m("payment -refund"), a - ab);
    assert_eq!(m("payment NOT refund"), a - ab);
    assert_eq!(m("(payment OR refund) -payment"), b - ab);
    assert!(
        m("pay*") > a,
        "prefix matches payments, payment, payload..."
    );
    let total = search(&e, "in:messages role:assistant,user,system")
        .total_counts
        .messages;
    assert_eq!(m("-payment"), total - a);
}

#[test]
fn case_sensitive_option_checks_the_case() {
    let e = sample_engine();
    let m = |q: &str| {
        search(&e, &format!("in:messages {q}"))
            .total_counts
            .messages
    };
    let any = m("payvault");
    let exact = m("PayVault option:case-sensitive");
    let lower = m("payvault option:case-sensitive");
    assert!(any > 0 && exact > 0);
    assert!(exact <= any && lower < any);
}

#[test]
fn all_terms_falls_back_to_any_term_and_says_so() {
    let e = sample_engine();
    let r = search(&e, "payment xyzzyquux");
    assert!(r.total_counts.messages > 0);
    assert_eq!(r.search_criteria["matchMode"], "any-term");
    assert_eq!(r.search_criteria["fallback"]["to"], "any-term");
    let r = search(&e, "payment refund");
    assert_eq!(r.search_criteria["matchMode"], "all-terms");
    assert!(r.search_criteria.get("fallback").is_none());
}

#[test]
fn paging_covers_every_match_exactly_once() {
    let e = sample_engine();
    let q = "payment OR authentication";
    let first = search_with(
        &e,
        q,
        SearchOptions {
            per_page: Some(7),
            ..Default::default()
        },
    );
    let pages = first.pagination.total_pages;
    assert!(pages > 3);
    let mut seen = HashSet::new();
    let mut chats = HashSet::new();
    for page in 1..=pages {
        let r = search_with(
            &e,
            q,
            SearchOptions {
                page,
                per_page: Some(7),
                ..Default::default()
            },
        );
        assert_eq!(r.pagination.current_page, page);
        for m in &r.results.messages {
            assert!(
                seen.insert(m.messages_id),
                "message {} seen twice",
                m.messages_id
            );
        }
        for c in &r.results.chats {
            assert!(chats.insert(c.chats_id));
        }
    }
    assert_eq!(seen.len() as u64, first.total_counts.messages);
    assert_eq!(chats.len() as u64, first.total_counts.chats);
    // Past the last page: empty, not an error.
    let r = search_with(
        &e,
        q,
        SearchOptions {
            page: pages + 1,
            per_page: Some(7),
            ..Default::default()
        },
    );
    assert_eq!(r.total_results_returned, 0);
}

#[test]
fn cursors_walk_the_pages_and_go_stale_with_the_index() {
    let e = sample_engine();
    let q = "authentication";
    let r1 = search_with(
        &e,
        q,
        SearchOptions {
            per_page: Some(10),
            ..Default::default()
        },
    );
    let cursor = r1.next_cursor.clone().expect("more pages");
    let r2 = search_with(
        &e,
        q,
        SearchOptions {
            cursor: Some(cursor.clone()),
            ..Default::default()
        },
    );
    assert_eq!(r2.pagination.current_page, 2);
    let ids1: HashSet<i64> = r1.results.messages.iter().map(|m| m.messages_id).collect();
    assert!(r2
        .results
        .messages
        .iter()
        .all(|m| !ids1.contains(&m.messages_id)));
    // The same cursor on an index of other content is stale.
    let other = fixture_engine();
    let err = other
        .search(
            q,
            &SearchOptions {
                cursor: Some(cursor),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.code, "stale_cursor");
    let err = e
        .search(
            q,
            &SearchOptions {
                cursor: Some("zz".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.code, "cursor.invalid");
}

#[test]
fn snippets_are_html_safe_by_default_and_raw_on_request() {
    let e = sample_engine();
    let r = search(&e, "payment in:messages");
    let s = r.results.messages[0]
        .messages_content_snippet
        .clone()
        .unwrap();
    assert!(
        s.contains("<mark>") && s.to_lowercase().contains("<mark>payment</mark>"),
        "{s}"
    );
    let without_marks = s.replace("<mark>", "").replace("</mark>", "");
    assert!(!without_marks.contains('<'), "text is escaped: {s}");
    let r = search_with(
        &e,
        "payment in:messages",
        SearchOptions {
            highlight: Highlight::Raw,
            ..Default::default()
        },
    );
    let s = r.results.messages[0]
        .messages_content_snippet
        .clone()
        .unwrap();
    assert!(s.contains("<GSC>") && s.contains("</GSC>"), "{s}");
}

#[test]
fn query_errors_are_structured_never_raw() {
    let e = sample_engine();
    for (q, code) in [
        ("", "query.empty"),
        ("\"open", "query.unbalanced_quote"),
        ("bogus:1 x", "query.unknown_filter"),
        ("(a", "query.unbalanced_paren"),
        ("a OR", "query.dangling_operator"),
        ("a OR -b", "query.unsupported_negation"),
        ("in:nowhere", "query.bad_value"),
        ("profile:nope", "query.unknown_profile"),
        ("sort:color", "query.bad_value"),
    ] {
        let err = e.search(q, &SearchOptions::default()).unwrap_err();
        assert_eq!(err.code, code, "{q:?}: {err}");
        assert!(!err.message.is_empty());
    }
    let err = e
        .search(
            "x",
            &SearchOptions {
                page: 0,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.code, "options.bad_page");
    let err = e
        .search(
            "x",
            &SearchOptions {
                per_page: Some(0),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.code, "options.bad_per_page");
}

#[test]
fn index_of_another_format_version_is_refused() {
    let src = sample_index();
    let copy = temp_dir().join("old-version.gsx");
    std::fs::copy(&src, &copy).unwrap();
    {
        let c = rusqlite_conn(&copy);
        c.execute(
            "UPDATE index_meta SET value = '999' WHERE key = 'format_version'",
            [],
        )
        .unwrap();
    }
    let err = gitsense_engine::Engine::open(&copy).err().unwrap();
    assert_eq!(err.code, "index.version_mismatch");
    let err = gitsense_engine::Engine::open(&sample_db()).err().unwrap();
    assert_eq!(err.code, "index.not_an_index");
    let junk = temp_dir().join("junk.gsx");
    std::fs::write(&junk, b"this is not sqlite at all, just text").unwrap();
    let err = gitsense_engine::Engine::open(&junk).err().unwrap();
    assert!(err.code.starts_with("index."), "{err}");
    let err = gitsense_engine::Engine::open(&temp_dir().join("missing.gsx"))
        .err()
        .unwrap();
    assert_eq!(err.code, "index.not_found");
}

/// Messages and code blocks keep no FTS5 `_docsize` (a lazy reader would
/// fetch a page of it per returned row for snippets); their ranking
/// records hold FTS5's token counts all the same: the same texts put
/// into FTS5 tables here, FTS5's counts agree row for row (the sample's
/// messages, the fixture's code blocks).
#[test]
fn ranking_records_hold_fts5_token_counts_without_docsize() {
    let (mut messages_seen, mut code_seen) = (0, 0);
    for (name, index) in [
        ("sample", sample_index()),
        ("fixture", fixture_index("docsize")),
    ] {
        let c = rusqlite_conn(&index);
        let tables: Vec<String> = c
            .prepare("SELECT name FROM sqlite_schema WHERE name LIKE 'fts_%_docsize' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(tables, vec!["fts_chats_docsize".to_string()], "{name}");
        let copy = temp_dir().join(format!("docsize-check-{name}.gsx"));
        std::fs::copy(&index, &copy).unwrap();
        let c = rusqlite_conn(&copy);
        c.execute_batch(
            "CREATE VIRTUAL TABLE m2 USING fts5(title, body, keywords, content='message_text', content_rowid='id',
               tokenize='unicode61 remove_diacritics 2');
             INSERT INTO m2(m2) VALUES('rebuild');
             CREATE VIRTUAL TABLE k2 USING fts5(content, content='code_text', content_rowid='id', tokenize='trigram');
             INSERT INTO k2(k2) VALUES('rebuild');",
        )
        .unwrap();
        // FTS5's own count of each row's tokens by column, read through
        // its vocabulary table (every token instance: row, column), so
        // nothing of the engine's takes part in the expected numbers.
        let token_counts = |table: &str, ids: &str, columns: &[&str]| {
            c.execute_batch(&format!(
                "CREATE VIRTUAL TABLE {table}_instances USING fts5vocab({table}, instance)"
            ))
            .unwrap();
            let mut out: std::collections::BTreeMap<i64, Vec<i64>> = c
                .prepare(&format!("SELECT id FROM {ids}"))
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, vec![0; columns.len()])))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let mut s = c
                .prepare(&format!(
                    "SELECT doc, col, count(*) FROM {table}_instances GROUP BY doc, col"
                ))
                .unwrap();
            let rows = s
                .query_map([], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })
                .unwrap();
            for row in rows {
                let (id, col, n) = row.unwrap();
                let at = columns.iter().position(|c| *c == col).unwrap();
                out.get_mut(&id).unwrap()[at] = n;
            }
            out
        };
        let records = |table: &str, cols: &[gitsense_engine::index::records::Col]| {
            let mut out = std::collections::BTreeMap::new();
            let rows: Vec<(i64, Vec<u8>)> = c
                .prepare(&format!("SELECT chunk, records FROM {table}"))
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            for (chunk, blob) in rows {
                let decoded = gitsense_engine::index::records::decode(chunk, &blob, cols).unwrap();
                for (id, f) in decoded.iter() {
                    out.insert(id, f.to_vec());
                }
            }
            out
        };
        let messages = records(
            "message_rank",
            &gitsense_engine::index::records::MESSAGE_FIELDS,
        );
        let code = records("code_rank", &gitsense_engine::index::records::CODE_FIELDS);
        for (id, sizes) in token_counts("m2", "message_text", &["title", "body", "keywords"]) {
            assert_eq!(&messages[&id][1..], &sizes[..], "{name}: message {id}");
            messages_seen += usize::from(sizes[1] > 0);
        }
        for (id, sizes) in token_counts("k2", "code_text", &["content"]) {
            assert_eq!(&code[&id][2..], &sizes[..], "{name}: code block {id}");
            code_seen += usize::from(sizes[0] > 0);
        }
    }
    assert!(
        messages_seen > 100 && code_seen > 3,
        "{messages_seen} {code_seen}"
    );
}

fn rusqlite_conn(p: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(p).unwrap()
}

#[test]
fn deleted_and_unsearchable_rows_are_left_out() {
    // Mark a message unsearchable and delete a chat in a copy of the
    // sample database, rebuild, and check both are gone.
    let db = temp_dir().join("modified-sample.db");
    std::fs::copy(sample_db(), &db).unwrap();
    {
        let c = rusqlite_conn(&db);
        c.execute(
            "UPDATE messages SET meta = json_set(coalesce(meta, '{}'), '$.searchable', json('false')) WHERE id = 221",
            [],
        )
        .unwrap();
        c.execute("UPDATE chats SET deleted = 1 WHERE id = 25", [])
            .unwrap();
    }
    let out = temp_dir().join("modified.gsx");
    gitsense_import::build_with(&out, "t".into(), |w| {
        gitsense_import::gitsense_db::import(&db, w, &gitsense_import::no_progress())
    })
    .unwrap();
    let e = gitsense_engine::Engine::open(&out).unwrap();
    assert_eq!(counts(&search(&e, "msg-id:221")), (0, 0, 0));
    assert_eq!(counts(&search(&e, "chat-id:25")), (0, 0, 0));
    let orig = sample_engine();
    assert_eq!(counts(&search(&orig, "msg-id:221")).1, 1);
    assert!(counts(&search(&orig, "chat-id:25")).0 == 1);
}

#[test]
fn builds_are_deterministic() {
    let a = sample_engine().info().revision.clone();
    let out = temp_dir().join("again.gsx");
    let db = sample_db();
    let (stats, _) = gitsense_import::build_with(&out, "again".into(), |w| {
        gitsense_import::gitsense_db::import(&db, w, &gitsense_import::no_progress())
    })
    .unwrap();
    assert_eq!(stats.revision, a);
}

#[test]
fn code_blocks_of_a_gitsense_database_are_carried_over() {
    // The sample has no code blocks: add two to a copy, one in a message
    // that is left out, and check what the index holds.
    let db = temp_dir().join("with-code.db");
    std::fs::copy(sample_db(), &db).unwrap();
    {
        let c = rusqlite_conn(&db);
        let header = r#"{"Component":"Refund Handler","Block-UUID":"0f4e1a52-1111-4222-8333-944455556666","Parent-UUID":"N/A","Version":"1.2.3","Description":"Refunds payments","Language":"JavaScript","Created-at":"2025-06-01T00:00:00Z","Authors":"Gemini (v1.2.3)"}"#;
        c.execute(
            "INSERT INTO code_blocks(id, message_id, type, uuid, parent_uuid, component, description, language,
               hash, trimmed_hash, size, major, minor, patch, header, content, created_at, updated_at)
             VALUES (1, 221, 'code', '0f4e1a52-1111-4222-8333-944455556666', 'N/A', 'Refund Handler',
               'Refunds payments', 'javascript', 'h', 't', 40, 1, 2, 3, ?1,
               'function refundPayment(id) { return stripe.refunds.create(id); }', '2025-06-01', '2025-06-01')",
            [header],
        )
        .unwrap();
        c.execute(
            "INSERT INTO code_blocks(id, message_id, type, uuid, parent_uuid, component, description, language,
               hash, trimmed_hash, size, major, minor, patch, header, content, created_at, updated_at)
             VALUES (2, 222, 'code', 'dead-0000', NULL, 'Gone', 'd', 'python', 'h', 't', 10, 1, 0, 0, '{}',
               'def refundPayment(): pass', '2025-06-01', '2025-06-01')",
            [],
        )
        .unwrap();
        c.execute("UPDATE messages SET deleted = 1 WHERE id = 222", [])
            .unwrap();
    }
    let out = temp_dir().join("with-code.gsx");
    gitsense_import::build_with(&out, "t".into(), |w| {
        gitsense_import::gitsense_db::import(&db, w, &gitsense_import::no_progress())
    })
    .unwrap();
    let e = gitsense_engine::Engine::open(&out).unwrap();
    let r = search(&e, "in:code-blocks refundPayment");
    assert_eq!(
        r.total_counts.code_blocks, 1,
        "the block of the deleted message is left out"
    );
    let b = &r.results.code_blocks[0];
    assert_eq!(b.code_blocks_uuid, "0f4e1a52-1111-4222-8333-944455556666");
    assert_eq!(b.code_blocks_parent_uuid, None, "N/A becomes null");
    assert_eq!(
        (
            b.code_blocks_major_version,
            b.code_blocks_minor_version,
            b.code_blocks_patch_version
        ),
        (Some(1), Some(2), Some(3))
    );
    assert_eq!(
        b.code_blocks_header.as_ref().unwrap()["Component"],
        "Refund Handler"
    );
    assert_eq!(b.meta["code_blocks_meta_description"], "Refunds payments");
    assert_eq!(b.code_blocks_message_id, 221);
    assert_eq!(b.result_chat_id, 56);
    assert_eq!(b.code_blocks_branch_name.as_deref(), Some("main"));
    assert_eq!(b.code_blocks_language.as_deref(), Some("javascript"));
    assert_eq!(
        search(&e, "in:code-blocks refundPayment lang:js")
            .total_counts
            .code_blocks,
        1
    );
    assert_eq!(
        search(&e, "in:code-blocks refundPayment lang:python")
            .total_counts
            .code_blocks,
        0
    );
}

#[test]
fn invalid_utf8_in_a_gitsense_database_is_repaired_with_a_warning() {
    // One message stored as a BLOB that is not UTF-8, one as TEXT with a
    // Latin-1 byte, in a copy of the sample database.
    let db = temp_dir().join("bad-bytes.db");
    std::fs::copy(sample_db(), &db).unwrap();
    {
        let c = rusqlite_conn(&db);
        c.execute(
            "UPDATE messages SET message = X'726566756E64FF207175657374696F6E' WHERE id = 221",
            [],
        )
        .unwrap();
        c.execute(
            "UPDATE messages SET message = CAST(X'636166E920726566756E64' AS TEXT) WHERE id = 222",
            [],
        )
        .unwrap();
    }
    let out = temp_dir().join("bad-bytes.gsx");
    let (_, report) = gitsense_import::build_with(&out, "t".into(), |w| {
        gitsense_import::gitsense_db::import(&db, w, &gitsense_import::no_progress())
    })
    .unwrap();
    assert_eq!(
        report.warnings,
        ["replaced invalid UTF-8 in 2 values with U+FFFD (the first: messages.message of row 221)"]
    );
    let c = rusqlite_conn(&out);
    let body = |id: i64| -> String {
        c.query_row("SELECT body FROM message_text WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap()
    };
    assert_eq!(body(221), "refund\u{FFFD} question");
    assert_eq!(body(222), "caf\u{FFFD} refund");
    let e = gitsense_engine::Engine::open(&out).unwrap();
    assert_eq!(counts(&search(&e, "msg-id:221 question")).1, 1);
}

#[test]
fn a_build_reports_each_finishing_step_in_order_with_its_count() {
    use gitsense_engine::index::{FinishProgress, FinishStep};
    let db = sample_db();
    let out = temp_dir().join("finish-progress.gsx");
    let mut seen: Vec<FinishProgress> = Vec::new();
    let (stats, _) = gitsense_import::build_with_progress(
        &out,
        "t".into(),
        |w| gitsense_import::gitsense_db::import(&db, w, &gitsense_import::no_progress()),
        &mut |p| seen.push(p),
    )
    .unwrap();
    let mut steps: Vec<FinishStep> = seen.iter().map(|p| p.step).collect();
    steps.dedup();
    assert_eq!(
        steps,
        [
            FinishStep::Derive,
            FinishStep::Revision,
            FinishStep::FullText,
            FinishStep::RankingRecords,
            FinishStep::Compact
        ]
    );
    let total = |step| seen.iter().find(|p| p.step == step).unwrap().total;
    assert_eq!(
        total(FinishStep::RankingRecords),
        stats.messages + stats.code_blocks
    );
    assert!(total(FinishStep::Revision) > stats.chats + stats.messages);
    assert!(seen.iter().all(|p| p.done <= p.total || p.total == 0));
    // The same index as a build that reports nothing.
    assert_eq!(stats.revision, sample_engine().info().revision);
}
