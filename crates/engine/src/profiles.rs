//! GitSense search profiles, built into the crate from `profiles/*.json`
//! (copies of the GitSense profile files). A profile presets targets,
//! scope, filters, not-null filters, the per-target limit and the sort.

use crate::query::ast::{Field, Filter, FilterValue, Scope, SortField, SortKey, Target};
use serde_json::Value;

const SOURCES: &[(&str, &str)] = &[
    ("all.default", include_str!("../profiles/all.default.json")),
    (
        "chats.default",
        include_str!("../profiles/chats.default.json"),
    ),
    (
        "messages.default",
        include_str!("../profiles/messages.default.json"),
    ),
    (
        "code-blocks.default",
        include_str!("../profiles/code-blocks.default.json"),
    ),
    (
        "tiny-overview-query-optimization",
        include_str!("../profiles/tiny-overview-query-optimization.json"),
    ),
    (
        "short-overview-query-optimization",
        include_str!("../profiles/short-overview-query-optimization.json"),
    ),
    (
        "direct-search-query-optimization",
        include_str!("../profiles/direct-search-query-optimization.json"),
    ),
    (
        "context-builder-search-filter",
        include_str!("../profiles/context-builder-search-filter.json"),
    ),
    ("git-nav", include_str!("../profiles/git-nav.json")),
    ("meta-search", include_str!("../profiles/meta-search.json")),
    (
        "meta-insights",
        include_str!("../profiles/meta-insights.json"),
    ),
    ("meta-raw", include_str!("../profiles/meta-raw.json")),
];

/// Limit used when a profile sets none.
pub(crate) const DEFAULT_LIMIT: u64 = 25;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Profile {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) targets: Vec<Target>,
    pub(crate) scope: Scope,
    pub(crate) filters: Vec<Filter>,
    pub(crate) limit: u64,
    pub(crate) sort: Vec<SortKey>,
    /// The order of a search without words (`emptySearchSortBy.chats`),
    /// when the profile gives one.
    pub(crate) empty_sort: Vec<SortKey>,
}

pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(|(n, _)| *n)
}

pub fn exists(name: &str) -> bool {
    SOURCES.iter().any(|(n, _)| *n == name)
}

/// Loads a built-in profile by name (parsed once per process: every
/// search plans with one).
pub(crate) fn get(name: &str) -> Option<Profile> {
    static PARSED: std::sync::OnceLock<Vec<Profile>> = std::sync::OnceLock::new();
    let parsed = PARSED.get_or_init(|| {
        SOURCES
            .iter()
            .map(|(n, src)| {
                let v: Value = serde_json::from_str(src).expect("built-in profiles are valid JSON");
                from_json(n, &v)
            })
            .collect()
    });
    let i = SOURCES.iter().position(|(n, _)| *n == name)?;
    parsed.get(i).cloned()
}

fn field_of(key: &str) -> Option<Field> {
    Some(match key {
        "messages.type" | "msg-type" | "message.type" => Field::MsgType,
        "chats.type" | "chat.type" | "chat-type" => Field::ChatType,
        "messages.meta.file_path" | "git-path" => Field::GitPath,
        "lang" | "code_blocks.language" => Field::Lang,
        "messages.role" | "role" => Field::Role,
        _ => return None,
    })
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => vec![],
    }
}

fn from_json(name: &str, v: &Value) -> Profile {
    let d = &v["defaults"];
    let targets: Vec<Target> = strings(&d["targets"])
        .iter()
        .filter_map(|t| match t.as_str() {
            "chats" => Some(Target::Chats),
            "messages" => Some(Target::Messages),
            "code-blocks" => Some(Target::CodeBlocks),
            _ => None,
        })
        .collect();
    let scope = match d["scope"].as_str().unwrap_or("all-chats") {
        "current-chat" => Scope::CurrentChat,
        "current-chat-and-branches" => Scope::CurrentChatAndBranches,
        "connected-chats" => Scope::ConnectedChats,
        _ => Scope::AllChats,
    };
    let mut filters = Vec::new();
    if let Value::Object(m) = &d["filters"] {
        for (k, val) in m {
            if let Some(field) = field_of(k) {
                filters.push(Filter {
                    field,
                    value: FilterValue::AnyOf(strings(val)),
                    negated: false,
                });
            }
        }
    }
    for (key, value) in [
        ("nullFilters", FilterValue::Null),
        ("notNullFilters", FilterValue::NotNull),
    ] {
        for k in strings(&d[key]) {
            if let Some(field) = field_of(&k) {
                filters.push(Filter {
                    field,
                    value: value.clone(),
                    negated: false,
                });
            }
        }
    }
    let limit = d["pagination"]["limit"]
        .as_u64()
        .filter(|l| *l > 0)
        .unwrap_or(DEFAULT_LIMIT);
    let sort = sort_keys(&d["sortBy"]);
    let empty_sort = sort_keys(&v["emptySearchSortBy"]["chats"]);
    Profile {
        name: name.to_string(),
        description: v["description"].as_str().unwrap_or("").to_string(),
        targets: if targets.is_empty() {
            Target::ALL.to_vec()
        } else {
            targets
        },
        scope,
        filters,
        limit,
        sort,
        empty_sort,
    }
}

/// A profile's `sortBy`-shaped list; fields it does not know are left out.
fn sort_keys(v: &Value) -> Vec<SortKey> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| {
                    let field = match s["field"].as_str()? {
                        "fts_rank" => SortField::FtsRank,
                        "chats.name" | "name" => SortField::Name,
                        f if f.ends_with("updated_at") => SortField::UpdatedAt,
                        f if f.ends_with("created_at") => SortField::CreatedAt,
                        _ => return None,
                    };
                    Some(SortKey {
                        field,
                        descending: s["direction"].as_str() == Some("desc"),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_profile_loads() {
        for n in names() {
            let p = get(n).unwrap();
            assert!(!p.targets.is_empty(), "{n}");
        }
    }

    #[test]
    fn tiny_overview_profile_restricts_to_overviews_in_git_chats() {
        let p = get("tiny-overview-query-optimization").unwrap();
        assert_eq!(p.targets, vec![Target::Messages]);
        assert_eq!(p.limit, 200);
        assert!(p.filters.iter().any(|f| f.field == Field::MsgType));
        assert!(p.filters.iter().any(|f| f.field == Field::ChatType));
        assert!(p
            .filters
            .iter()
            .any(|f| f.field == Field::GitPath && f.value == FilterValue::NotNull));
    }

    #[test]
    fn overview_profile_limits_five_per_target() {
        assert_eq!(get("all.default").unwrap().limit, 5);
        assert_eq!(get("messages.default").unwrap().limit, 25);
    }
}
