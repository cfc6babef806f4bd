//! Importer for a git repository (a working tree or a bare repository),
//! read with libgit2.
//!
//! Output: GitSense's git hierarchy, one chat per object,
//! `git-repos` ("Repositories") → `git-repo-owner` (owner) → `git-repo`
//! (name) → `git-ref` (a branch; `meta.type` `branch`, `meta.name`) →
//! `git-tree` (one per directory, nested) → `git-blob` (one per text file).
//! Files in the root directory hang directly under the `git-ref`.
//!
//! - A group named `owner/name` holds the repository chat and everything
//!   below it (`repo:` filters match it). The name comes from `--repo`, else
//!   from the URL of the `origin` remote (else the first remote): its last
//!   two path segments, `.git` removed; else from the directory: its parent
//!   directory's name as owner and its own name (without `.git`) as name.
//! - Only committed content is read: the tree of HEAD's branch, or of each
//!   branch given (local first, then remote-tracking). A detached HEAD is
//!   indexed as a ref named `HEAD` with `meta.type` `detached`.
//! - A blob chat's meta holds `path`, `name`, `language` (from the file
//!   name), `blob` (object id), `size` (bytes), `commit` (the last commit on
//!   the branch's first-parent history that changed the file: `hash`,
//!   `treeHash`, `author`, `email`, `timestamp`, `message`, `parents`) and
//!   `refContext` (`refChatId`, `refName`, `refType`). Its messages: the file
//!   text (type `git-blob`, role assistant, title = path) and two derived
//!   overviews ([`super::overview`]).
//! - Binary files (libgit2's check: a NUL byte in the first 8000 bytes),
//!   files larger than `max_file_size`, symbolic links and submodules are
//!   skipped and counted in warnings. Text that is not UTF-8 is decoded
//!   lossily (counted).
//! - Ids are assigned in a sorted depth-first walk and timestamps come from
//!   commits, so the same repository state gives the same corpus revision.

use super::overview::{Overview, SHORT_OVERVIEW, TINY_OVERVIEW};
use super::ImportReport;
use git2::{BranchType, Commit, ObjectType, Oid, Repository, Tree};
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::IndexWriter;
use gitsense_engine::model::{Chat, Group, Message};
use gitsense_engine::util::{iso8601_utc, stable_uuid};
use indicatif::ProgressBar;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Files larger than this are skipped unless `--max-file-size` says otherwise.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 20;

/// Name of the root `git-repos` chat (as in GitSense Chat).
pub const ROOT_NAME: &str = "Repositories";

/// What to import from a repository.
#[derive(Debug, Clone)]
pub struct GitOptions {
    /// Branches to index; empty = HEAD's branch.
    pub branches: Vec<String>,
    /// `owner/name` for the group; `None` = derive it.
    pub repo_name: Option<String>,
    /// Larger files are skipped.
    pub max_file_size: u64,
}

impl Default for GitOptions {
    fn default() -> Self {
        GitOptions {
            branches: Vec::new(),
            repo_name: None,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }
}

fn git_err(dir: &Path, e: git2::Error) -> Error {
    Error::new(
        "import.git",
        format!("reading the repository failed: {}", e.message()),
    )
    .with_location(dir.display().to_string())
}

/// A ref to index: its display name, kind and tip commit.
struct RefToIndex {
    name: String,
    ref_type: &'static str,
    commit: Oid,
}

fn resolve_refs(repo: &Repository, dir: &Path, opts: &GitOptions) -> Result<Vec<RefToIndex>> {
    if opts.branches.is_empty() {
        let head = repo.head().map_err(|e| {
            if e.code() == git2::ErrorCode::UnbornBranch || e.code() == git2::ErrorCode::NotFound {
                Error::new(
                    "import.empty_repository",
                    "the repository has no commits on HEAD's branch",
                )
                .with_location(dir.display().to_string())
            } else {
                git_err(dir, e)
            }
        })?;
        let commit = head.peel_to_commit().map_err(|e| git_err(dir, e))?.id();
        let (name, ref_type) = if head.is_branch() {
            (
                String::from_utf8_lossy(head.shorthand_bytes()).into_owned(),
                "branch",
            )
        } else {
            ("HEAD".to_string(), "detached")
        };
        return Ok(vec![RefToIndex {
            name,
            ref_type,
            commit,
        }]);
    }
    let mut out: Vec<RefToIndex> = Vec::new();
    for name in &opts.branches {
        if out.iter().any(|r| &r.name == name) {
            continue;
        }
        let branch = repo
            .find_branch(name, BranchType::Local)
            .or_else(|_| repo.find_branch(name, BranchType::Remote))
            .map_err(|_| {
                let mut known: Vec<String> = repo
                    .branches(None)
                    .map(|it| {
                        it.filter_map(|b| b.ok())
                            .filter_map(|(b, _)| b.name().ok().flatten().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                known.sort();
                Error::new(
                    "import.no_such_branch",
                    format!(
                        "there is no branch '{}' (branches: {})",
                        gitsense_engine::util::echo(name),
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                )
                .with_location(dir.display().to_string())
            })?;
        let commit = branch
            .get()
            .peel_to_commit()
            .map_err(|e| git_err(dir, e))?
            .id();
        out.push(RefToIndex {
            name: name.clone(),
            ref_type: "branch",
            commit,
        });
    }
    Ok(out)
}

/// `owner/name` from a remote URL: its last two path segments.
pub fn owner_and_name_from_url(url: &str) -> Option<(String, String)> {
    let trimmed = url.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
    // Drop the scheme and any user:password@ before the host.
    let rest = trimmed.split_once("://").map_or(trimmed, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let segs: Vec<&str> = rest.split(['/', ':']).filter(|s| !s.is_empty()).collect();
    if segs.len() < 2 {
        return None;
    }
    let (owner, name) = (segs[segs.len() - 2], segs[segs.len() - 1]);
    Some((owner.to_string(), name.to_string()))
}

fn owner_and_name(repo: &Repository, dir: &Path, opts: &GitOptions) -> Result<(String, String)> {
    if let Some(given) = &opts.repo_name {
        return match given.split_once('/') {
            Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/') => {
                Ok((o.to_string(), n.to_string()))
            }
            _ => Err(Error::new(
                "import.bad_repo_name",
                format!(
                    "--repo must be owner/name, got '{}'",
                    gitsense_engine::util::echo(given)
                ),
            )),
        };
    }
    let mut remotes: Vec<String> = repo
        .remotes()
        .map(|r| {
            r.iter()
                .filter_map(|n| n.ok().flatten().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    remotes.sort_by_key(|r| (r != "origin", r.clone()));
    for r in remotes {
        if let Some(url) = repo
            .find_remote(&r)
            .ok()
            .and_then(|r| r.url().ok().map(str::to_string))
        {
            if let Some(on) = owner_and_name_from_url(&url) {
                return Ok(on);
            }
        }
    }
    let base = repo.workdir().unwrap_or_else(|| repo.path());
    let base = base.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repository".into());
    let name = name.strip_suffix(".git").unwrap_or(&name).to_string();
    let owner = base
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "local".into());
    Ok((owner, name))
}

/// One entry of a ref's tree, in depth-first order with sorted names.
enum Entry {
    Dir {
        path: String,
        oid: Oid,
        depth: usize,
    },
    File {
        path: String,
        oid: Oid,
        depth: usize,
    },
    Link,
    Submodule,
    /// A directory nested deeper than [`crate::MAX_DIR_DEPTH`], not walked.
    TooDeep(String),
}

fn walk(
    repo: &Repository,
    tree: &Tree,
    prefix: &str,
    depth: usize,
    out: &mut Vec<Entry>,
) -> std::result::Result<(), git2::Error> {
    let mut entries: Vec<_> = tree.iter().collect();
    entries.sort_by(|a, b| a.name_bytes().cmp(b.name_bytes()));
    for e in entries {
        let name = String::from_utf8_lossy(e.name_bytes()).into_owned();
        let path = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        match e.kind() {
            Some(ObjectType::Tree) if depth >= crate::MAX_DIR_DEPTH => {
                out.push(Entry::TooDeep(path))
            }
            Some(ObjectType::Tree) => {
                out.push(Entry::Dir {
                    path: path.clone(),
                    oid: e.id(),
                    depth,
                });
                let sub = repo.find_tree(e.id())?;
                walk(repo, &sub, &path, depth + 1, out)?;
            }
            Some(ObjectType::Blob) if e.filemode() == 0o120000 => out.push(Entry::Link),
            Some(ObjectType::Blob) => out.push(Entry::File {
                path,
                oid: e.id(),
                depth,
            }),
            Some(ObjectType::Commit) => out.push(Entry::Submodule),
            _ => {}
        }
    }
    Ok(())
}

/// For each path, the newest commit on the first-parent history from `tip`
/// that changed it (the oldest commit reached, for paths never changed
/// since it: the root commit or a shallow clone's boundary).
fn last_changes(
    repo: &Repository,
    tip: &Commit,
    paths: &HashSet<String>,
) -> std::result::Result<HashMap<String, Oid>, git2::Error> {
    let mut unresolved: HashSet<&str> = paths.iter().map(String::as_str).collect();
    let mut found = HashMap::new();
    let mut cur = tip.clone();
    while !unresolved.is_empty() {
        let tree = cur.tree()?;
        let parent = match cur.parent(0) {
            Ok(p) => p,
            Err(_) => break,
        };
        let diff = repo.diff_tree_to_tree(Some(&parent.tree()?), Some(&tree), None)?;
        for d in diff.deltas() {
            if let Some(p) = d.new_file().path().and_then(|p| p.to_str()) {
                if unresolved.remove(p) {
                    found.insert(p.to_string(), cur.id());
                }
            }
        }
        cur = parent;
    }
    for p in unresolved {
        found.insert(p.to_string(), cur.id());
    }
    Ok(found)
}

fn commit_meta(c: &Commit) -> Value {
    let author = c.author();
    json!({
        "hash": c.id().to_string(),
        "treeHash": c.tree_id().to_string(),
        "author": String::from_utf8_lossy(author.name_bytes()),
        "email": String::from_utf8_lossy(author.email_bytes()),
        "timestamp": c.time().seconds(),
        "message": String::from_utf8_lossy(c.message_bytes()),
        "parents": c.parent_ids().map(|p| p.to_string()).collect::<Vec<_>>(),
    })
}

#[derive(Default)]
struct Skipped {
    binary: Vec<String>,
    huge: Vec<String>,
    links: usize,
    submodules: usize,
    lossy: usize,
    /// Directories past [`crate::MAX_DIR_DEPTH`].
    deep: Vec<String>,
}

fn list(paths: &[String]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .take(5)
        .map(|p| gitsense_engine::util::echo(p))
        .collect();
    let more = if paths.len() > shown.len() {
        ", ..."
    } else {
        ""
    };
    format!("{}{more}", shown.join(", "))
}

impl Skipped {
    /// One warning per kind of file left out.
    fn warnings(&self, max_file_size: u64) -> Vec<String> {
        let mut out = Vec::new();
        if !self.binary.is_empty() {
            out.push(format!(
                "skipped {} binary files ({})",
                self.binary.len(),
                list(&self.binary)
            ));
        }
        if !self.huge.is_empty() {
            out.push(format!(
                "skipped {} files larger than {} bytes ({})",
                self.huge.len(),
                max_file_size,
                list(&self.huge)
            ));
        }
        if self.links > 0 {
            out.push(format!("skipped {} symbolic links", self.links));
        }
        if self.submodules > 0 {
            out.push(format!("skipped {} submodules", self.submodules));
        }
        if !self.deep.is_empty() {
            out.push(format!(
                "skipped {} directories nested deeper than {} ({})",
                self.deep.len(),
                crate::MAX_DIR_DEPTH,
                list(&self.deep)
            ));
        }
        if self.lossy > 0 {
            out.push(format!(
                "{} files are not valid UTF-8 and were decoded lossily",
                self.lossy
            ));
        }
        out
    }
}

fn open_repository(dir: &Path) -> Result<Repository> {
    Repository::open(dir).map_err(|e| {
        Error::new(
            "import.not_a_repository",
            format!(
                "not a git repository (working tree or bare): {}",
                e.message()
            ),
        )
        .with_location(dir.display().to_string())
    })
}

/// A ref's tip commit and its tree's entries.
struct RefWalk<'r> {
    tip: Commit<'r>,
    entries: Vec<Entry>,
}

fn walk_refs<'r>(
    repo: &'r Repository,
    dir: &Path,
    refs: &[RefToIndex],
) -> Result<Vec<RefWalk<'r>>> {
    let gerr = |e: git2::Error| git_err(dir, e);
    let mut walks = Vec::new();
    for r in refs {
        let tip = repo.find_commit(r.commit).map_err(gerr)?;
        let mut entries = Vec::new();
        walk(repo, &tip.tree().map_err(gerr)?, "", 0, &mut entries).map_err(gerr)?;
        walks.push(RefWalk { tip, entries });
    }
    Ok(walks)
}

/// The group and the chats of the hierarchy above the refs.
const GROUP_ID: i64 = 1;
const ROOT_CHAT: i64 = 1;
const OWNER_CHAT: i64 = 2;
const REPO_CHAT: i64 = 3;

/// Where a ref's chats hang and what their `refContext` says.
struct RefCtx<'a> {
    r: &'a RefToIndex,
    chat: i64,
    time: String,
}

impl RefCtx<'_> {
    fn meta(&self) -> Value {
        json!({"refChatId": self.chat, "refName": self.r.name, "refType": self.r.ref_type})
    }
}

/// One import in progress: the writer, the ids handed out so far and what
/// was skipped. Chat and message ids follow the walk's order, so the same
/// repository state gives the same ids.
struct GitImport<'a> {
    repo: &'a Repository,
    dir: &'a Path,
    opts: &'a GitOptions,
    w: &'a mut IndexWriter,
    progress: &'a ProgressBar,
    repo_full: String,
    next_chat: i64,
    next_message: i64,
    skipped: Skipped,
    commit_cache: HashMap<Oid, Value>,
}

impl GitImport<'_> {
    fn gerr(&self, e: git2::Error) -> Error {
        git_err(self.dir, e)
    }

    fn take_chat_id(&mut self) -> i64 {
        let id = self.next_chat;
        self.next_chat += 1;
        id
    }

    /// `git-repos` → `git-repo-owner` → `git-repo`, dated by the newest tip.
    fn add_hierarchy(&mut self, owner: &str, name: &str, tip_time: Option<String>) -> Result<()> {
        self.w.add_group(&Group {
            id: GROUP_ID,
            name: self.repo_full.clone(),
        })?;
        let repo_full = &self.repo_full;
        let hierarchy_chat =
            |id: i64, parent: i64, t: &str, n: &str, group: Option<i64>, meta: Value| Chat {
                id,
                parent_id: parent,
                chat_type: t.into(),
                uuid: Some(stable_uuid(&format!("git:{repo_full}:{t}:{n}"))),
                name: n.into(),
                owner: None,
                group_id: group,
                created_at: tip_time.clone(),
                modified_at: tip_time.clone(),
                meta,
            };
        let root = hierarchy_chat(
            ROOT_CHAT,
            0,
            "git-repos",
            ROOT_NAME,
            None,
            json!({"type": "git-repos"}),
        );
        let owner_chat = hierarchy_chat(
            OWNER_CHAT,
            ROOT_CHAT,
            "git-repo-owner",
            owner,
            None,
            json!({"type": "git-repo-owner", "owner": owner}),
        );
        let mut repo_meta =
            json!({"type": "git-repo", "owner": owner, "name": name, "bare": self.repo.is_bare()});
        if let Some(url) = self
            .repo
            .find_remote("origin")
            .ok()
            .and_then(|r| r.url().ok().map(strip_credentials))
        {
            repo_meta["remote"] = json!(url);
        }
        let repo_chat = hierarchy_chat(
            REPO_CHAT,
            OWNER_CHAT,
            "git-repo",
            name,
            Some(GROUP_ID),
            repo_meta,
        );
        self.w.add_chat(&root)?;
        self.w.add_chat(&owner_chat)?;
        self.w.add_chat(&repo_chat)?;
        Ok(())
    }

    /// A ref's chat, then its tree in walk order.
    fn add_ref(&mut self, r: &RefToIndex, walk: &RefWalk) -> Result<()> {
        let file_paths: HashSet<String> = walk
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::File { path, .. } => Some(path.clone()),
                _ => None,
            })
            .collect();
        let changed = last_changes(self.repo, &walk.tip, &file_paths).map_err(|e| self.gerr(e))?;
        let ctx = RefCtx {
            r,
            chat: self.take_chat_id(),
            time: iso8601_utc(walk.tip.time().seconds()),
        };
        self.w.add_chat(&Chat {
            id: ctx.chat,
            parent_id: REPO_CHAT,
            chat_type: "git-ref".into(),
            uuid: Some(stable_uuid(&format!(
                "git:{}:ref:{}",
                self.repo_full, r.name
            ))),
            name: r.name.clone(),
            owner: None,
            group_id: Some(GROUP_ID),
            created_at: Some(ctx.time.clone()),
            modified_at: Some(ctx.time.clone()),
            meta: json!({"type": r.ref_type, "name": r.name, "commit": commit_meta(&walk.tip)}),
        })?;
        // Chat id of the directory at each depth of the walk.
        let mut dir_stack: Vec<i64> = vec![ctx.chat];
        for e in &walk.entries {
            match e {
                Entry::Dir { path, oid, depth } => {
                    dir_stack.truncate(depth + 1);
                    let id = self.add_dir(&ctx, path, *oid, dir_stack[*depth])?;
                    dir_stack.push(id);
                }
                Entry::File { path, oid, depth } => {
                    self.progress.inc(1);
                    dir_stack.truncate(depth + 1);
                    let commit = changed.get(path).copied().unwrap_or(walk.tip.id());
                    self.add_file(&ctx, path, *oid, commit, dir_stack[*depth])?;
                }
                Entry::Link => self.skipped.links += 1,
                Entry::Submodule => self.skipped.submodules += 1,
                Entry::TooDeep(path) => self.skipped.deep.push(path.clone()),
            }
        }
        Ok(())
    }

    /// A `git-tree` chat; returns its id.
    fn add_dir(&mut self, ctx: &RefCtx, path: &str, oid: Oid, parent: i64) -> Result<i64> {
        let id = self.take_chat_id();
        let dir_name = path.rsplit('/').next().unwrap_or(path);
        self.w.add_chat(&Chat {
            id,
            parent_id: parent,
            chat_type: "git-tree".into(),
            uuid: Some(stable_uuid(&format!(
                "git:{}:{}:tree:{path}",
                self.repo_full, ctx.r.name
            ))),
            name: dir_name.to_string(),
            owner: None,
            group_id: Some(GROUP_ID),
            created_at: Some(ctx.time.clone()),
            modified_at: Some(ctx.time.clone()),
            meta: json!({
                "type": "git-tree",
                "tree": oid.to_string(),
                "path": path,
                "name": dir_name,
                "refContext": ctx.meta(),
            }),
        })?;
        Ok(id)
    }

    /// The commit meta of `id`, read once per commit.
    fn commit(&mut self, id: Oid) -> Result<Value> {
        if let Some(c) = self.commit_cache.get(&id) {
            return Ok(c.clone());
        }
        let c = commit_meta(&self.repo.find_commit(id).map_err(|e| self.gerr(e))?);
        self.commit_cache.insert(id, c.clone());
        Ok(c)
    }

    /// A `git-blob` chat with the file's text and its two overviews, unless
    /// the file is too large or binary (counted in `skipped`).
    fn add_file(
        &mut self,
        ctx: &RefCtx,
        path: &str,
        oid: Oid,
        commit_id: Oid,
        parent: i64,
    ) -> Result<()> {
        let blob = self.repo.find_blob(oid).map_err(|e| self.gerr(e))?;
        if blob.size() as u64 > self.opts.max_file_size {
            self.skipped.huge.push(path.to_string());
            return Ok(());
        }
        if blob.is_binary() {
            self.skipped.binary.push(path.to_string());
            return Ok(());
        }
        let text = match std::str::from_utf8(blob.content()) {
            Ok(t) => t.to_string(),
            Err(_) => {
                self.skipped.lossy += 1;
                String::from_utf8_lossy(blob.content()).into_owned()
            }
        };
        let commit = self.commit(commit_id)?;
        let when = iso8601_utc(commit["timestamp"].as_i64().unwrap_or(0));
        let file_name = path.rsplit('/').next().unwrap_or(path);
        let overview = Overview::of(path, &text);
        let chat_id = self.take_chat_id();
        let mut meta = json!({
            "type": "git-blob",
            "path": path,
            "name": file_name,
            "commit": commit,
            "blob": oid.to_string(),
            "size": blob.size(),
            "refContext": ctx.meta(),
        });
        if let Some(l) = overview.language {
            meta["language"] = json!(l);
        }
        self.w.add_chat(&Chat {
            id: chat_id,
            parent_id: parent,
            chat_type: "git-blob".into(),
            uuid: Some(stable_uuid(&format!(
                "git:{}:{}:blob:{path}",
                self.repo_full, ctx.r.name
            ))),
            name: file_name.to_string(),
            owner: None,
            group_id: Some(GROUP_ID),
            created_at: Some(when.clone()),
            modified_at: Some(when.clone()),
            meta,
        })?;
        let (tiny, tiny_meta) = overview.tiny(chat_id);
        let (short, short_meta) = overview.short(chat_id);
        let entities = overview.key_entities(usize::MAX).join(" ");
        let messages = [
            ("git-blob", text, path.to_string(), Value::Null),
            (TINY_OVERVIEW, tiny, format!("{path} {entities}"), tiny_meta),
            (SHORT_OVERVIEW, short, path.to_string(), short_meta),
        ];
        for (msg_type, content, title, meta) in messages {
            self.w.add_message(&Message {
                id: self.next_message,
                chat_id,
                msg_type: msg_type.into(),
                role: "assistant".into(),
                content,
                title,
                keywords: String::new(),
                meta,
                created_at: Some(when.clone()),
                updated_at: Some(when.clone()),
            })?;
            self.next_message += 1;
        }
        Ok(())
    }
}

/// Imports the repository at `dir` into `w`.
pub fn import(
    dir: &Path,
    opts: &GitOptions,
    w: &mut IndexWriter,
    progress: &ProgressBar,
) -> Result<ImportReport> {
    let repo = open_repository(dir)?;
    let refs = resolve_refs(&repo, dir, opts)?;
    let (owner, name) = owner_and_name(&repo, dir, opts)?;
    // Every ref is walked first: the progress bar needs the file count.
    let walks = walk_refs(&repo, dir, &refs)?;
    let files: u64 = walks
        .iter()
        .map(|rw| {
            rw.entries
                .iter()
                .filter(|e| matches!(e, Entry::File { .. }))
                .count() as u64
        })
        .sum();
    progress.set_length(files);
    let tip_time = walks
        .iter()
        .map(|rw| rw.tip.time().seconds())
        .max()
        .map(iso8601_utc);

    let mut run = GitImport {
        repo: &repo,
        dir,
        opts,
        w,
        progress,
        repo_full: format!("{owner}/{name}"),
        next_chat: REPO_CHAT + 1,
        next_message: 1,
        skipped: Skipped::default(),
        commit_cache: HashMap::new(),
    };
    run.add_hierarchy(&owner, &name, tip_time)?;
    for (r, rw) in refs.iter().zip(&walks) {
        run.add_ref(r, rw)?;
    }
    let report = ImportReport {
        warnings: run.skipped.warnings(opts.max_file_size),
    };
    progress.finish_and_clear();
    Ok(report)
}

/// Removes `user:password@` from a URL before it is stored.
fn strip_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host_start = rest.find('/').unwrap_or(rest.len());
            match rest[..host_start].rfind('@') {
                Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_and_names_come_from_remote_urls() {
        let on = |u: &str| owner_and_name_from_url(u).map(|(o, n)| format!("{o}/{n}"));
        assert_eq!(
            on("https://github.com/acme/widgets.git").as_deref(),
            Some("acme/widgets")
        );
        assert_eq!(
            on("git@github.com:acme/widgets.git").as_deref(),
            Some("acme/widgets")
        );
        assert_eq!(
            on("ssh://git@host:22/acme/widgets/").as_deref(),
            Some("acme/widgets")
        );
        assert_eq!(
            on("/srv/repos/acme/widgets.git").as_deref(),
            Some("acme/widgets")
        );
        assert_eq!(on("widgets"), None);
    }

    #[test]
    fn credentials_are_removed_from_stored_urls() {
        assert_eq!(
            strip_credentials("https://user:tok@github.com/a/b.git"),
            "https://github.com/a/b.git"
        );
        assert_eq!(
            strip_credentials("git@github.com:a/b.git"),
            "git@github.com:a/b.git"
        );
    }
}
