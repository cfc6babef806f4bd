//! meta-search: `meta:FIELD:TYPE=VALUE` and `meta:FIELD:TYPE!=VALUE` over
//! a message's analyzer metadata (`meta.extracted_metadata` of GitSense
//! analyzer messages: `purpose`, `keywords`, `is_compliant`, ...).
//!
//! In: the text after `meta:`, read by [`MetaFilter::parse`]. Out: a SQL
//! condition on the message's metadata JSON through [`META_FUNCTION`]
//! (registered by [`register`]), the filter itself a bound parameter (its
//! JSON): the browser's SQLite has no JSON functions, so the comparison
//! runs here, in Rust, on each candidate row.

use crate::error::{Error, Result};
use rusqlite::functions::FunctionFlags;
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The SQL function `gs_meta(metadata_json, filter_json)`: 1 when the
/// metadata satisfies the filter.
pub(crate) const META_FUNCTION: &str = "gs_meta";

/// Most values one filter compares with.
const MAX_VALUES: usize = 32;

/// The JSON type a filter compares as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MetaType {
    String,
    Number,
    Boolean,
    Array,
}

/// One `meta:` filter (`searchCriteria.metaFilters` shows it as read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MetaFilter {
    /// The metadata key.
    pub(crate) field: String,
    #[serde(rename = "type")]
    pub(crate) kind: MetaType,
    /// `!=`: the field is present with the type and matches none of the
    /// values (for `&&`: not all of them).
    pub(crate) not_equal: bool,
    /// The values compared with (`||`: any of them; `&&`: all of them).
    pub(crate) values: Vec<Value>,
    /// `&&` (arrays only): every value must be among the array's.
    pub(crate) all: bool,
}

impl MetaFilter {
    /// Reads `FIELD:TYPE=VALUE` (or `!=`); `VALUE` may list alternatives
    /// with `||`, and for arrays required values with `&&`. Errors point
    /// into the query from `at`, where the text starts.
    pub(crate) fn parse(text: &str, at: usize) -> Result<MetaFilter> {
        let err = |offset: usize, msg: String| Error::at("query.bad_meta", msg, at + offset);
        let chars = |s: &str| s.chars().count();
        let Some(eq) = text.find('=') else {
            return Err(err(
                0,
                format!("meta:{text} needs FIELD:TYPE=VALUE or FIELD:TYPE!=VALUE"),
            ));
        };
        let not_equal = text[..eq].ends_with('!');
        let left = &text[..eq - usize::from(not_equal)];
        let value_text = &text[eq + 1..];
        let value_at = chars(&text[..eq + 1]);
        let (field, kind_text) = match left.split_once(':') {
            Some((f, k)) => (f, Some(k)),
            None => (left, None),
        };
        let valid_field = !field.is_empty()
            && chars(field) <= 64
            && field
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_field {
            return Err(err(
                0,
                format!("'{field}' is not a metadata field (letters, digits, '_' and '-')"),
            ));
        }
        let kind = match kind_text.map(str::to_ascii_lowercase).as_deref() {
            None | Some("string") => MetaType::String,
            Some("number") => MetaType::Number,
            Some("boolean") => MetaType::Boolean,
            Some("array") => MetaType::Array,
            Some(other) => {
                return Err(err(
                    chars(field) + 1,
                    format!("meta type '{other}' is unknown; use string, number, boolean or array"),
                ))
            }
        };
        let (parts, all): (Vec<&str>, bool) =
            match (value_text.contains("||"), value_text.contains("&&")) {
                (true, true) => return Err(err(
                    value_at,
                    "a meta: value lists alternatives with || or required values with &&, not both"
                        .into(),
                )),
                (false, true) => (value_text.split("&&").collect(), true),
                _ => (value_text.split("||").collect(), false),
            };
        if all && kind != MetaType::Array {
            return Err(err(
                value_at,
                "&& (all of these values) applies to array fields".into(),
            ));
        }
        if parts.len() > MAX_VALUES {
            return Err(err(
                value_at,
                format!("a meta: filter compares with at most {MAX_VALUES} values"),
            ));
        }
        let mut values = Vec::new();
        let mut offset = value_at;
        for part in parts {
            let v = part.trim();
            if v.is_empty() {
                return Err(err(offset, "a meta: value is empty".into()));
            }
            values.push(match kind {
                MetaType::String => Value::String(v.to_string()),
                MetaType::Array => match v.parse::<f64>() {
                    Ok(n) if n.is_finite() => serde_json::json!(n),
                    _ => Value::String(v.to_string()),
                },
                MetaType::Number => match v.parse::<f64>() {
                    Ok(n) if n.is_finite() => serde_json::json!(n),
                    _ => return Err(err(offset, format!("'{v}' is not a number"))),
                },
                MetaType::Boolean => match v.to_ascii_lowercase().as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => return Err(err(offset, format!("'{v}' is not true or false"))),
                },
            });
            offset += chars(part) + 2;
        }
        Ok(MetaFilter {
            field: field.to_string(),
            kind,
            not_equal,
            values,
            all,
        })
    }

    /// The SQL condition on a message's metadata JSON (`meta_sql`) and its
    /// one parameter.
    pub(crate) fn condition(&self, meta_sql: &str) -> (String, Vec<SqlValue>) {
        let spec = serde_json::to_string(self).unwrap_or_default();
        (
            format!("{META_FUNCTION}({meta_sql}, ?)"),
            vec![SqlValue::Text(spec)],
        )
    }

    /// Whether a message's metadata satisfies the filter.
    pub(crate) fn matches(&self, meta: &Value) -> bool {
        let Some(v) = meta.get(&self.field) else {
            return false;
        };
        let hit = match (self.kind, v) {
            (MetaType::String, Value::String(s)) => self.values.iter().any(|want| same(want, v, s)),
            (MetaType::Number, Value::Number(n)) => {
                let n = n.as_f64();
                self.values.iter().any(|w| w.as_f64() == n)
            }
            (MetaType::Boolean, Value::Bool(b)) => {
                self.values.iter().any(|w| w.as_bool() == Some(*b))
            }
            (MetaType::Array, Value::Array(items)) => {
                let holds = |want: &Value| items.iter().any(|item| element_equals(want, item));
                if self.all {
                    self.values.iter().all(holds)
                } else {
                    self.values.iter().any(holds)
                }
            }
            // Present with another type: neither equal nor unequal.
            _ => return false,
        };
        hit != self.not_equal
    }
}

/// A string value against a wanted one: case-insensitive, with `*` and
/// `?` wildcards.
fn same(want: &Value, _v: &Value, s: &str) -> bool {
    want.as_str()
        .is_some_and(|w| wildcard_match(&w.to_lowercase(), &s.to_lowercase()))
}

fn element_equals(want: &Value, item: &Value) -> bool {
    match (want, item) {
        (Value::String(w), Value::String(s)) => {
            wildcard_match(&w.to_lowercase(), &s.to_lowercase())
        }
        (Value::Number(w), Value::Number(n)) => w.as_f64() == n.as_f64(),
        (Value::Number(w), Value::String(s)) => s.trim().parse::<f64>().ok() == w.as_f64(),
        _ => false,
    }
}

/// `*` any run, `?` one character, everything else itself: a two-pointer
/// walk with one backtrack point (at most pattern × text steps, no
/// recursion).
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Registers [`META_FUNCTION`] on a connection; each statement reads its
/// filter once.
pub(crate) fn register(conn: &Connection) -> Result<()> {
    conn.create_scalar_function(
        META_FUNCTION,
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let filter =
                ctx.get_or_create_aux(1, |v| -> std::result::Result<MetaFilter, BoxError> {
                    Ok(serde_json::from_str(v.as_str()?)?)
                })?;
            let meta: Option<Value> = match ctx.get_raw(0).as_str_or_null() {
                Ok(Some(text)) => serde_json::from_str(text).ok(),
                _ => None,
            };
            Ok(meta.is_some_and(|m| filter.matches(&m)))
        },
    )
    .map_err(|e| {
        Error::new(
            "index.open_failed",
            format!("registering {META_FUNCTION}: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(text: &str) -> MetaFilter {
        MetaFilter::parse(text, 0).unwrap()
    }

    #[test]
    fn each_type_compares_as_its_json_type() {
        let m = json!({"purpose": "Handles User login", "n": 3, "ok": false,
                       "keywords": ["auth", "session", "JWT"]});
        assert!(f("purpose:string=*user login").matches(&m));
        assert!(!f("purpose:string=user").matches(&m));
        assert!(f("purpose:string!=user").matches(&m));
        assert!(f("n:number=3").matches(&m) && f("n:number=1||3").matches(&m));
        assert!(f("ok:boolean=false").matches(&m) && !f("ok:boolean!=false").matches(&m));
        assert!(f("keywords:array=jwt").matches(&m));
        assert!(f("keywords:array=x||session").matches(&m));
        assert!(f("keywords:array=auth&&session").matches(&m));
        assert!(!f("keywords:array=auth&&x").matches(&m));
        assert!(f("keywords:array!=x").matches(&m));
        // Absent, or present with another type: neither = nor !=.
        assert!(!f("missing:string!=x").matches(&m));
        assert!(!f("n:string!=x").matches(&m));
    }

    #[test]
    fn bad_filters_point_at_their_part() {
        let at = |t: &str| MetaFilter::parse(t, 10).unwrap_err().position;
        assert_eq!(at("purpose"), Some(10));
        assert_eq!(at("a.b:string=x"), Some(10));
        assert_eq!(at("n:colour=x"), Some(12));
        assert_eq!(at("n:number=1||two"), Some(22));
        assert_eq!(at("ok:boolean=yes"), Some(21));
        assert_eq!(at("k:string=a&&b"), Some(19));
        assert_eq!(at("k:array=a&&b||c"), Some(18));
        assert_eq!(at("k:array="), Some(18));
    }

    #[test]
    fn wildcards_match_without_recursion() {
        assert!(wildcard_match("a*c?e", "abbbcde"));
        assert!(!wildcard_match("a*c?e", "abbbce"));
        let text = "a".repeat(10_000);
        assert!(!wildcard_match(&format!("{}b", "*a".repeat(50)), &text));
    }

    #[test]
    fn meta_filter_reads_arrays_and_points_errors_into_the_query() -> crate::Result<()> {
        use crate::meta::{MetaFilter, MetaType};
        let f = MetaFilter::parse("keywords:array=auth&&session", 0)?;
        assert_eq!((f.kind, f.all, f.values.len()), (MetaType::Array, true, 2));
        let e = MetaFilter::parse("violation_count:number=many", 5).unwrap_err();
        assert_eq!((e.code.as_str(), e.position), ("query.bad_meta", Some(28)));
        Ok(())
    }
}
