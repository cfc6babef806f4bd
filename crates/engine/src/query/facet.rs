//! A facet request as the query language reads it: `insight-field:FIELD[:TYPE]`
//! in a query, or the `facets` search option. [`crate::facets`] counts it.

use super::ast::Target;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Longest analyzer metadata field name accepted.
const MAX_FIELD_CHARS: usize = 64;

/// What a facet counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "name")]
pub(crate) enum FacetField {
    ChatType,
    Lang,
    Repo,
    Branch,
    Role,
    MsgType,
    /// The directory of the file path (`.` for files at the root).
    GitPath,
    /// A key of a message's analyzer metadata (`meta.extracted_metadata`).
    Meta(String),
}

/// The JSON type of the values an analyzer metadata facet counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FacetType {
    /// Scalars as they are and arrays value by value (no type given).
    Any,
    String,
    Number,
    Boolean,
    /// Array values counted one by one (a record counts once per value).
    Array,
}

/// One requested facet, as parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FacetRequest {
    pub(crate) field: FacetField,
    pub(crate) kind: FacetType,
    /// The name as written, echoed in the output.
    pub(crate) name: String,
}

/// Built-in field names (the query language's filter names where one
/// exists) and aliases.
const BUILT_IN: &[(&str, FacetField)] = &[
    ("chat-type", FacetField::ChatType),
    ("lang", FacetField::Lang),
    ("language", FacetField::Lang),
    ("repo", FacetField::Repo),
    ("repository", FacetField::Repo),
    ("branch", FacetField::Branch),
    ("role", FacetField::Role),
    ("msg-type", FacetField::MsgType),
    ("message-type", FacetField::MsgType),
    ("git-path", FacetField::GitPath),
    ("directory", FacetField::GitPath),
];

const TYPES: &[(&str, FacetType)] = &[
    ("string", FacetType::String),
    ("number", FacetType::Number),
    ("boolean", FacetType::Boolean),
    ("array", FacetType::Array),
];

impl FacetRequest {
    /// Reads `FIELD` or `FIELD:TYPE`. Errors point at `at`, where the text
    /// starts in the query (`None` for the `facets` option).
    pub(crate) fn parse(text: &str, at: Option<usize>) -> Result<FacetRequest> {
        let err = |offset: usize, msg: String| {
            let code = if at.is_some() {
                "query.bad_facet"
            } else {
                "options.bad_facet"
            };
            match at {
                Some(a) => Error::at(code, msg, a + offset),
                None => Error::new(code, msg),
            }
        };
        let (field_text, type_text) = match text.split_once(':') {
            Some((f, t)) => (f, Some(t)),
            None => (text, None),
        };
        let kind = match type_text {
            None => FacetType::Any,
            Some(t) => super::syntax::lookup(TYPES, &t.to_ascii_lowercase()).ok_or_else(|| {
                err(
                    field_text.chars().count() + 1,
                    format!("facet type '{t}' is unknown; use string, number, boolean or array"),
                )
            })?,
        };
        let lower = field_text.to_ascii_lowercase().replace('_', "-");
        if let Some(field) = BUILT_IN
            .iter()
            .find(|(w, _)| *w == lower)
            .map(|(_, f)| f.clone())
        {
            if !matches!(kind, FacetType::Any | FacetType::String) {
                return Err(err(
                    field_text.chars().count() + 1,
                    format!("{field_text} holds text; its facet type can only be string"),
                ));
            }
            return Ok(FacetRequest {
                field,
                kind: FacetType::String,
                name: field_text.to_string(),
            });
        }
        let valid = !field_text.is_empty()
            && field_text.chars().count() <= MAX_FIELD_CHARS
            && field_text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(err(
                0,
                format!(
                    "'{field_text}' is not a facet field: use one of {}, or an analyzer metadata key \
                     (letters, digits, '_' and '-', at most {MAX_FIELD_CHARS})",
                    built_in_names().join(", ")
                ),
            ));
        }
        Ok(FacetRequest {
            field: FacetField::Meta(field_text.to_string()),
            kind,
            name: field_text.to_string(),
        })
    }

    /// The targets this field exists on.
    pub(crate) fn applies_to(&self, target: Target) -> bool {
        match self.field {
            FacetField::Role | FacetField::MsgType => target != Target::Chats,
            FacetField::Meta(_) => target == Target::Messages,
            _ => true,
        }
    }
}

/// The built-in field names, without aliases.
pub(crate) fn built_in_names() -> Vec<&'static str> {
    super::syntax::canonical_words(BUILT_IN)
}

#[cfg(test)]
mod tests {
    #[test]
    fn facet_request_reads_field_and_type() -> crate::Result<()> {
        use crate::facets::{FacetField, FacetRequest, FacetType};
        let f = FacetRequest::parse("keywords:array", None)?;
        assert_eq!(
            (f.field, f.kind),
            (FacetField::Meta("keywords".into()), FacetType::Array)
        );
        assert_eq!(FacetRequest::parse("lang", None)?.field, FacetField::Lang);
        assert_eq!(
            FacetRequest::parse("lang:number", Some(7))
                .unwrap_err()
                .position,
            Some(12)
        );
        Ok(())
    }
}
