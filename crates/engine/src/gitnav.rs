//! git-nav: browsing the git hierarchy of a GitSense index, owners →
//! repositories → branches → trees → files, with `git-owner:`,
//! `git-repository:OWNER/NAME`, `git-branch:NAME|*` and
//! `git-ls-tree-id:ID`.
//!
//! In: the keys as the parser reads them ([`GitNav::set`]). Out: one SQL
//! condition on the chats target (alias `c`), names compared ignoring
//! case and every value bound. The chats of a GitSense git import form
//! the hierarchy through `parent_id`: `git-repo-owner` → `git-repo` →
//! `git-ref` (a branch) → `git-tree` / `git-blob`.

use crate::error::{Error, Result};
use rusqlite::types::Value as SqlValue;
use serde::Serialize;

/// The git-nav keys of a query; the most specific one given decides what
/// is listed (a tree, else a branch's top level, else a repository's
/// branches, else an owner's repositories, else the owners).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GitNav {
    /// `git-owner:NAME`, or `*` for every owner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
    /// `git-repository:OWNER/NAME`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) repository: Option<(String, String)>,
    /// `git-branch:NAME`, or `*` for every branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) branch: Option<String>,
    /// `git-ls-tree-id:ID`: the chat id of a tree (or a branch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tree: Option<i64>,
    /// Where `git-branch:` was written (it needs a repository).
    #[serde(skip)]
    branch_at: Option<usize>,
}

/// The keys this module reads.
pub(crate) const KEYS: &[&str] = &[
    "git-owner",
    "git-repository",
    "git-branch",
    "git-ls-tree-id",
];

impl GitNav {
    pub(crate) fn is_empty(&self) -> bool {
        self.owner.is_none()
            && self.repository.is_none()
            && self.branch.is_none()
            && self.tree.is_none()
    }

    /// Reads one key's value (`at`: where the value starts in the query).
    pub(crate) fn set(&mut self, key: &str, value: &str, at: usize) -> Result<()> {
        let bad = |msg: String| Error::at("query.bad_value", msg, at);
        let value = value.trim();
        let name_ok = |s: &str| !s.is_empty() && !s.contains('/') && s.chars().count() <= 200;
        match key {
            "git-owner" => {
                if !name_ok(value) {
                    return Err(bad(format!(
                        "git-owner:{value} is not an owner name (or * for every owner)"
                    )));
                }
                self.owner = Some(value.to_string());
            }
            "git-repository" => match value.split_once('/') {
                Some((o, n)) if name_ok(o) && name_ok(n) && o != "*" && n != "*" => {
                    self.repository = Some((o.to_string(), n.to_string()));
                }
                _ => {
                    return Err(bad(format!(
                        "git-repository:{value} must be OWNER/NAME, e.g. git-repository:Tutorial/secure-payments"
                    )))
                }
            },
            "git-branch" => {
                if value.is_empty() || value.chars().count() > 200 {
                    return Err(bad(format!("git-branch:{value} is not a branch name (or *)")));
                }
                self.branch = Some(value.to_string());
                self.branch_at = Some(at);
            }
            "git-ls-tree-id" => {
                self.tree = Some(value.parse().map_err(|_| {
                    bad(format!("git-ls-tree-id:{value} is not a chat id (an integer)"))
                })?);
            }
            _ => return Err(bad(format!("{key}: is not a git-nav key"))),
        }
        Ok(())
    }

    /// Checks the keys together, once the whole query is read.
    pub(crate) fn check(&self) -> Result<()> {
        if let (Some(at), None, None) = (self.branch_at, &self.repository, self.tree) {
            return Err(Error::at(
                "query.bad_value",
                "git-branch: browses a repository: add git-repository:OWNER/NAME",
                at,
            ));
        }
        Ok(())
    }

    /// The condition on chats (alias `c`) listing what the keys name, and
    /// its parameters; `None` without keys.
    pub(crate) fn condition(&self) -> Option<(String, Vec<SqlValue>)> {
        let lower = |s: &str| SqlValue::Text(s.to_lowercase());
        use crate::index::schema::chats::{self, qualified as c, ID, NAME, PARENT_ID, TYPE};
        use const_format::formatcp;
        // A repository (alias r) by name, and its owner (alias o) by name.
        const REPO: &str = formatcp!(
            "SELECT r.{ID} FROM {chats} r JOIN {chats} o ON o.{ID} = r.{PARENT_ID} WHERE r.{TYPE} \
            = 'git-repo' AND lower(r.{NAME}) = ? AND o.{TYPE} = 'git-repo-owner' AND \
            lower(o.{NAME}) = ?",
            chats = chats::TABLE
        );
        if let Some(id) = self.tree {
            return Some((
                formatcp!("{c_parent_id} = ?", c_parent_id = c::PARENT_ID).into(),
                vec![SqlValue::Integer(id)],
            ));
        }
        if let Some((owner, name)) = &self.repository {
            let repo_params = vec![lower(name), lower(owner)];
            return Some(match self.branch.as_deref() {
                Some(b) if b != "*" => {
                    let mut params = vec![lower(b)];
                    params.extend(repo_params);
                    (
                        // The branch (alias b) by name, in the repository.
                        formatcp!(
                            "{c_parent_id} IN (SELECT b.{ID} FROM {chats} b WHERE b.{TYPE} = \
                            'git-ref' AND lower(b.{NAME}) = ? AND b.{PARENT_ID} IN ({REPO}))",
                            c_parent_id = c::PARENT_ID,
                            chats = chats::TABLE
                        )
                        .into(),
                        params,
                    )
                }
                _ => (
                    formatcp!(
                        "({c_type} = 'git-ref' AND {c_parent_id} IN ({REPO}))",
                        c_type = c::TYPE,
                        c_parent_id = c::PARENT_ID
                    )
                    .into(),
                    repo_params,
                ),
            });
        }
        match self.owner.as_deref() {
            Some("*") => Some((
                formatcp!("{c_type} = 'git-repo-owner'", c_type = c::TYPE).into(),
                vec![],
            )),
            Some(o) => Some((
                formatcp!(
                    "({c_type} = 'git-repo' AND {c_parent_id} IN (SELECT o.{ID} FROM {chats} o \
                    WHERE o.{TYPE} = 'git-repo-owner' AND lower(o.{NAME}) = ?))",
                    c_type = c::TYPE,
                    c_parent_id = c::PARENT_ID,
                    chats = chats::TABLE
                )
                .into(),
                vec![lower(o)],
            )),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_owner_key_lists_the_owners_repositories() -> crate::Result<()> {
        use crate::gitnav::GitNav;
        let mut nav = GitNav::default();
        nav.set("git-owner", "Tutorial", 10)?;
        let (sql, params) = nav.condition().unwrap();
        assert!(sql.contains("c.type = 'git-repo'") && params.len() == 1);
        Ok(())
    }
}
