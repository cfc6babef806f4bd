//! Facets (GitSense's meta-insights): value/count pairs over the records a
//! search matches.
//!
//! In: the requests (`insight-field:FIELD[:TYPE]` in the query, or the
//! `facets` search option, both read by `FacetRequest::parse`, which the
//! query language owns) and the
//! plan's per-target statements of matching ids (`TargetSql::ids_sql`).
//! Out: one [`Facet`] per request and target the field exists on, under
//! the results object's `facets` key.
//!
//! Fields of the index's filter tables (chat type, language, repository,
//! branch, role, message type, directory of the git path) are counted by
//! SQLite with `GROUP BY`; analyzer metadata fields (a message's
//! `meta.extracted_metadata`, e.g. `purpose`, `keywords`) are counted here,
//! from the metadata JSON of the matching messages, arrays value by value:
//! the browser's SQLite is built without its JSON functions. Both run under
//! the search's time budget; a facet it cut short is marked `truncated`.

use crate::error::{Error, Result};
use crate::index::schema::chats::qualified as c;
use crate::index::schema::code_blocks::qualified as b;
use crate::index::schema::message_text::qualified as t;
use crate::index::schema::messages::qualified as m;
use crate::index::schema::{chats, code_blocks, message_text, messages};
use crate::plan::{Plan, TargetSql};
use crate::query::ast::Target;
pub use crate::query::facet::FacetType;
pub(crate) use crate::query::facet::{FacetField, FacetRequest};
use const_format::formatcp;
use rusqlite::{params_from_iter, Connection};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

/// Most values one facet lists (the most frequent first); how many more
/// there are is `otherValues`.
pub const MAX_FACET_VALUES: usize = 100;

/// Most facets one search computes.
pub(crate) const MAX_FACETS: usize = 16;

/// One facet: the counts of a field's values over one target's matches.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Facet {
    /// The field as requested.
    pub field: String,
    #[serde(rename = "type")]
    pub kind: FacetType,
    /// `chats`, `messages` or `code-blocks`.
    pub target: String,
    /// Most frequent first (ties by value), at most [`MAX_FACET_VALUES`].
    pub values: Vec<FacetValue>,
    /// Distinct values left out of `values`.
    pub other_values: u64,
    /// Present (true) when the time budget stopped the counting: the
    /// counts are then those of the records reached.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub truncated: Option<bool>,
}

/// A value and the number of matching records that have it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FacetValue {
    pub value: Value,
    pub count: u64,
}

/// The requests of a search: the query's `insight-field:`s then the
/// option's, in order, duplicates dropped. `profile:meta-insights`
/// without any is an error when `strict` (the query language; a search
/// box's text is never one).
pub(crate) fn requested(
    query: &crate::query::Query,
    option: &[String],
    profile: &str,
    strict: bool,
) -> Result<Vec<FacetRequest>> {
    let mut out: Vec<FacetRequest> = query.insight_fields.clone();
    for text in option {
        out.push(FacetRequest::parse(text, None)?);
    }
    let mut seen = Vec::new();
    out.retain(|r| {
        let key = (r.field.clone(), r.kind);
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    if out.len() > MAX_FACETS {
        return Err(Error::new(
            "query.too_complex",
            format!(
                "{} facets were asked for; at most {MAX_FACETS} are counted",
                out.len()
            ),
        ));
    }
    if out.is_empty() && profile == "meta-insights" && strict {
        return Err(Error::new(
            "query.insight_field_required",
            "profile:meta-insights counts values: add insight-field:FIELD[:TYPE] (e.g. insight-field:keywords:array)",
        ));
    }
    Ok(out)
}

/// The tables a target's facet reads, and the column of its own id.
fn base(target: Target) -> (&'static str, &'static str) {
    match target {
        Target::Chats => (
            formatcp!(
                "{chats} {chats_alias}",
                chats = chats::TABLE,
                chats_alias = chats::ALIAS
            ),
            c::ID,
        ),
        Target::Messages => (
            formatcp!(
                "{messages} {messages_alias} JOIN {chats} {chats_alias} ON {c_id} = {m_chat_id}",
                messages = messages::TABLE,
                messages_alias = messages::ALIAS,
                chats = chats::TABLE,
                chats_alias = chats::ALIAS,
                c_id = c::ID,
                m_chat_id = m::CHAT_ID
            ),
            m::ID,
        ),
        Target::CodeBlocks => (
            formatcp!(
                "{code_blocks} {code_blocks_alias} JOIN {messages} {messages_alias} ON {m_id} = \
                {b_message_id} JOIN {chats} {chats_alias} ON {c_id} = {b_chat_id}",
                code_blocks = code_blocks::TABLE,
                code_blocks_alias = code_blocks::ALIAS,
                messages = messages::TABLE,
                messages_alias = messages::ALIAS,
                m_id = m::ID,
                b_message_id = b::MESSAGE_ID,
                chats = chats::TABLE,
                chats_alias = chats::ALIAS,
                c_id = c::ID,
                b_chat_id = b::CHAT_ID
            ),
            b::ID,
        ),
    }
}

/// The SQL expression of a built-in field on a target.
fn column(field: &FacetField, target: Target) -> String {
    let path = match target {
        Target::Chats => c::PATH,
        Target::Messages => m::FILE_PATH,
        Target::CodeBlocks => formatcp!(
            "coalesce({m_file_path}, {c_path})",
            m_file_path = m::FILE_PATH,
            c_path = c::PATH
        ),
    };
    match field {
        FacetField::ChatType => c::TYPE.into(),
        FacetField::Lang => match target {
            Target::Chats => c::LANGUAGE,
            Target::Messages => m::LANGUAGE,
            Target::CodeBlocks => b::LANGUAGE,
        }
        .into(),
        FacetField::Repo => c::REPO.into(),
        FacetField::Branch => c::BRANCH_NAME.into(),
        FacetField::Role => m::ROLE.into(),
        FacetField::MsgType => m::TYPE.into(),
        // rtrim(p, <p without '/'>) keeps p up to its last '/'.
        FacetField::GitPath => format!(
            "CASE WHEN {path} IS NULL OR {path} = '' THEN NULL \
             WHEN instr({path}, '/') = 0 THEN '.' \
             ELSE rtrim(rtrim({path}, replace({path}, '/', '')), '/') END"
        ),
        FacetField::Meta(_) => unreachable!("metadata facets are counted from the JSON"),
    }
}

/// Facets counted, and warnings about requests none of the searched
/// targets has.
pub(crate) struct Counted {
    pub(crate) facets: Vec<Facet>,
    pub(crate) warnings: Vec<String>,
}

/// Rows of metadata read between two looks at the time budget.
const ROWS_PER_LOOK: usize = 64;

/// Counts the requested facets over the plan's matches. `spent` says
/// whether the search's time budget is spent: a facet is then not begun,
/// a metadata count stops, and a statement SQLite's progress handler
/// stopped is not an error; each is marked truncated.
/// A field the searched targets lack is a warning, not an error: a page
/// asks for the same facets whatever the query's `in:`.
pub(crate) fn count(
    conn: &Connection,
    plan: &Plan,
    requests: &[FacetRequest],
    spent: &dyn Fn() -> bool,
) -> Result<Counted> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for req in requests {
        let mut applied = false;
        for tp in &plan.target_plans {
            if !req.applies_to(tp.target) {
                continue;
            }
            applied = true;
            let Some(sql) = &tp.sql else {
                out.push(finish(req, tp.target, Tally::default()));
                continue;
            };
            if spent() {
                let cut = Tally {
                    truncated: true,
                    ..Tally::default()
                };
                out.push(finish(req, tp.target, cut));
                continue;
            }
            let mut tally = Tally::default();
            let counted = match &req.field {
                FacetField::Meta(key) => count_meta(conn, sql, (key, req.kind), spent, &mut tally),
                field => count_column(conn, tp.target, field, sql, &mut tally),
            };
            match counted {
                Ok(()) => {}
                Err(_) if spent() => tally.truncated = true,
                Err(e) => {
                    return Err(Error::new(
                        "index.query_failed",
                        format!("counting the {} facet: {e}", req.name),
                    ))
                }
            }
            out.push(finish(req, tp.target, tally));
        }
        if !applied {
            let targets: Vec<&str> = plan.targets.iter().map(|t| t.name()).collect();
            warnings.push(format!(
                "the {} facet was not counted: it exists on {}, and this search covers {}",
                req.name,
                if matches!(req.field, FacetField::Meta(_)) {
                    "messages (analyzer metadata)"
                } else {
                    "messages and code blocks"
                },
                targets.join(", ")
            ));
        }
    }
    Ok(Counted {
        facets: out,
        warnings,
    })
}

/// Counts being gathered: value key (its JSON text) → value and count.
#[derive(Default)]
struct Tally {
    counts: HashMap<String, (Value, u64)>,
    truncated: bool,
}

impl Tally {
    fn add(&mut self, v: Value, n: u64) {
        let key = v.to_string();
        self.counts.entry(key).or_insert((v, 0)).1 += n;
    }
}

fn count_column(
    conn: &Connection,
    target: Target,
    field: &FacetField,
    sql: &TargetSql,
    tally: &mut Tally,
) -> rusqlite::Result<()> {
    let (from, id) = base(target);
    let v = column(field, target);
    let ids = &sql.ids_sql;
    let text = format!(
        "SELECT {v} AS v, count(*) FROM {from} WHERE {id} IN ({ids}) AND v IS NOT NULL AND v <> '' GROUP BY v"
    );
    let mut stmt = conn.prepare_cached(&text)?;
    let mut rows = stmt.query(params_from_iter(sql.params.iter()))?;
    while let Some(row) = rows.next()? {
        let value: String = row.get(0)?;
        let n: i64 = row.get(1)?;
        tally.add(Value::String(value), n as u64);
    }
    Ok(())
}

fn count_meta(
    conn: &Connection,
    sql: &TargetSql,
    (key, kind): (&str, FacetType),
    spent: &dyn Fn() -> bool,
    tally: &mut Tally,
) -> rusqlite::Result<()> {
    let ids = &sql.ids_sql;
    let text = format!(
        "SELECT {meta} FROM {table} {alias} WHERE {id} IN ({ids}) AND {meta} IS NOT NULL",
        meta = t::META,
        table = message_text::TABLE,
        alias = message_text::ALIAS,
        id = t::ID,
    );
    let mut stmt = conn.prepare_cached(&text)?;
    let mut rows = stmt.query(params_from_iter(sql.params.iter()))?;
    let mut seen = 0usize;
    while let Some(row) = rows.next()? {
        seen += 1;
        if seen % ROWS_PER_LOOK == 0 && spent() {
            tally.truncated = true;
            return Ok(());
        }
        let text: Option<String> = row.get(0)?;
        let Some(Value::Object(mut meta)) = text.and_then(|t| serde_json::from_str(&t).ok()) else {
            continue;
        };
        if let Some(v) = meta.remove(key) {
            for v in values_of(v, kind) {
                tally.add(v, 1);
            }
        }
    }
    Ok(())
}

/// The values one record contributes: its value when it has the asked
/// type, an array's distinct scalar values for `array` (and for no type).
fn values_of(v: Value, kind: FacetType) -> Vec<Value> {
    let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
    match (kind, v) {
        (FacetType::Array | FacetType::Any, Value::Array(items)) => {
            let mut out: Vec<Value> = Vec::new();
            for item in items.into_iter().filter(scalar) {
                if !out.contains(&item) {
                    out.push(item);
                }
            }
            out
        }
        (FacetType::Any, v) if scalar(&v) => vec![v],
        (FacetType::String, v @ Value::String(_))
        | (FacetType::Number, v @ Value::Number(_))
        | (FacetType::Boolean, v @ Value::Bool(_)) => vec![v],
        _ => Vec::new(),
    }
}

fn finish(req: &FacetRequest, target: Target, tally: Tally) -> Facet {
    let mut values: Vec<(String, Value, u64)> = tally
        .counts
        .into_iter()
        .map(|(k, (v, n))| (k, v, n))
        .collect();
    values.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let other_values = values.len().saturating_sub(MAX_FACET_VALUES) as u64;
    values.truncate(MAX_FACET_VALUES);
    Facet {
        field: req.name.clone(),
        kind: req.kind,
        target: target.name().to_string(),
        values: values
            .into_iter()
            .map(|(_, value, count)| FacetValue { value, count })
            .collect(),
        other_values,
        truncated: tally.truncated.then_some(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_and_fields_are_checked_with_positions() {
        let e = FacetRequest::parse("purpose:text", Some(10)).unwrap_err();
        assert_eq!((e.code.as_str(), e.position), ("query.bad_facet", Some(18)));
        let e = FacetRequest::parse("a.b", Some(3)).unwrap_err();
        assert_eq!((e.code.as_str(), e.position), ("query.bad_facet", Some(3)));
        let e = FacetRequest::parse("", None).unwrap_err();
        assert_eq!(e.code, "options.bad_facet");
        assert_eq!(
            FacetRequest::parse("Language", None).unwrap().field,
            FacetField::Lang
        );
    }

    #[test]
    fn arrays_count_each_distinct_value_once_per_record() {
        let v = serde_json::json!(["a", "b", "a", {"x": 1}]);
        assert_eq!(
            values_of(v.clone(), FacetType::Array),
            vec![Value::from("a"), Value::from("b")]
        );
        assert_eq!(values_of(v, FacetType::String), Vec::<Value>::new());
        assert_eq!(
            values_of(Value::from(3), FacetType::Number),
            vec![Value::from(3)]
        );
        assert_eq!(
            values_of(Value::from(true), FacetType::Any),
            vec![Value::from(true)]
        );
        assert_eq!(
            values_of(Value::from("x"), FacetType::Boolean),
            Vec::<Value>::new()
        );
    }
}
