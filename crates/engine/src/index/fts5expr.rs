//! FTS5 `MATCH` without SQLite: the expressions the planner writes
//! (`crate::plan`), evaluated over an [`Fts5File`].
//!
//! In: an FTS5 expression of quoted strings (each a phrase, tokenized as
//! the table tokenizes; a `*` after one makes its last token a prefix),
//! `AND`, `OR`, `NOT`, parentheses and phrases side by side (an implicit
//! `AND`). Out: the rows it matches, in rowid order, and for each the
//! phrase hits FTS5's `xInst` reports (phrase, column, token offset, in
//! position order), and each phrase's row count (`xQueryPhrase`): what
//! ranking and snippets read.
//!
//! Precedence is FTS5's: `NOT` binds tightest, then `AND`, then `OR`.
//! A phrase's hits count for a row only when every expression node
//! between it and the root matches that row, as in FTS5, where a node
//! that does not match sits on a later row (so `a OR (b AND c)` reports
//! no hit of `b` in a row holding `a` and `b` but not `c`).
//!
//! Anything else FTS5 accepts (bare words, column filters, `NEAR`, `^`,
//! `+`, a phrase with no token) is `reader.unsupported`: the caller asks
//! SQLite.

use super::doclists::Tokenizer;
use super::fts5file::{Fts5File, Posting};
use super::pagevfs::PageSource;
use super::unicode61;
use crate::error::{Error, Result};
use std::rc::Rc;

/// A phrase of the expression: its tokens, the last one a prefix or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    pub tokens: Vec<Vec<u8>>,
    pub prefix: bool,
}

/// An expression node. `AND` and `OR` hold every operand of a run of
/// the same operator (FTS5 flattens `(a AND b) AND c` alike); `NOT` is
/// binary.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Phrase(usize),
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>, Box<Node>),
}

impl Node {
    /// `left op right`, flattened as `fts5ExprAddChildren` does.
    fn join(and: bool, left: Node, right: Node) -> Node {
        let mut children = Vec::new();
        for n in [left, right] {
            match (and, n) {
                (true, Node::And(c)) | (false, Node::Or(c)) => children.extend(c),
                (_, other) => children.push(other),
            }
        }
        if and {
            Node::And(children)
        } else {
            Node::Or(children)
        }
    }
}

/// A parsed expression.
///
/// ```
/// use gitsense_engine::index::fts5expr::Expr;
/// use gitsense_engine::index::{fts5file::Fts5File, sqlfile::SqlFile};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let file = SqlFile::open(std::fs::read(&path)?)?;
/// let fts = Fts5File::open(&file, "fts_messages")?;
/// let expr = Expr::parse(r#"("retry" OR "retries") NOT "payment""#, "fts_messages")?;
/// let found = expr.evaluate(&fts)?;
/// assert!(!found.rows().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    root: Node,
    phrases: Vec<Phrase>,
}

fn unsupported(what: &str) -> Error {
    Error::new(
        "reader.unsupported",
        format!("the full-text expression has {what}"),
    )
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Lexeme {
    Str(String, bool),
    And,
    Or,
    Not,
    Open,
    Close,
}

fn lex(s: &str) -> Result<Vec<Lexeme>> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '(' => out.push(Lexeme::Open),
            ')' => out.push(Lexeme::Close),
            '"' => {
                let mut text = String::new();
                loop {
                    match chars.next() {
                        None => return Err(unsupported("an unterminated string")),
                        Some((_, '"')) if chars.peek().map(|&(_, c)| c) == Some('"') => {
                            chars.next();
                            text.push('"');
                        }
                        Some((_, '"')) => break,
                        Some((_, c)) => text.push(c),
                    }
                }
                // FTS5 allows space before the `*`.
                while chars.peek().is_some_and(|&(_, c)| c.is_whitespace()) {
                    chars.next();
                }
                let star = chars.peek().map(|&(_, c)| c) == Some('*');
                if star {
                    chars.next();
                }
                out.push(Lexeme::Str(text, star));
            }
            _ => {
                let rest = &s[i..];
                let word_len = rest
                    .find(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '"')
                    .unwrap_or(rest.len());
                let word = &rest[..word_len];
                out.push(match word {
                    "AND" => Lexeme::And,
                    "OR" => Lexeme::Or,
                    "NOT" => Lexeme::Not,
                    _ => return Err(unsupported("a bare word or operator")),
                });
                for _ in word.chars().skip(1) {
                    chars.next();
                }
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    lexemes: &'a [Lexeme],
    at: usize,
    tokenizer: Tokenizer,
    phrases: Vec<Phrase>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Lexeme> {
        self.lexemes.get(self.at)
    }

    fn or(&mut self) -> Result<Node> {
        let mut left = self.and()?;
        while self.peek() == Some(&Lexeme::Or) {
            self.at += 1;
            left = Node::join(false, left, self.and()?);
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node> {
        let mut left = self.not()?;
        while self.peek() == Some(&Lexeme::And) {
            self.at += 1;
            left = Node::join(true, left, self.not()?);
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Node> {
        let mut left = self.primary()?;
        while self.peek() == Some(&Lexeme::Not) {
            self.at += 1;
            left = Node::Not(Box::new(left), Box::new(self.primary()?));
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<Node> {
        match self.peek().cloned() {
            Some(Lexeme::Open) => {
                self.at += 1;
                let inner = self.or()?;
                if self.peek() != Some(&Lexeme::Close) {
                    return Err(unsupported("unbalanced parentheses"));
                }
                self.at += 1;
                if matches!(self.peek(), Some(Lexeme::Str(..) | Lexeme::Open)) {
                    return Err(unsupported("a group beside another term"));
                }
                Ok(inner)
            }
            Some(Lexeme::Str(..)) => {
                // Phrases side by side: an implicit AND (FTS5's exprlist).
                let mut node = self.phrase()?;
                while let Some(Lexeme::Str(..)) = self.peek() {
                    node = Node::join(true, node, self.phrase()?);
                }
                if self.peek() == Some(&Lexeme::Open) {
                    return Err(unsupported("a group beside another term"));
                }
                Ok(node)
            }
            _ => Err(unsupported("an operator without an operand")),
        }
    }

    fn phrase(&mut self) -> Result<Node> {
        let Some(Lexeme::Str(text, prefix)) = self.peek().cloned() else {
            return Err(unsupported("an operator without an operand"));
        };
        self.at += 1;
        let mut tokens = Vec::new();
        let push = |t: &[u8], _: usize, _: usize| tokens.push(t.to_vec());
        match self.tokenizer {
            Tokenizer::Words => unicode61::words(text.as_bytes(), push),
            Tokenizer::Trigram => unicode61::trigrams(text.as_bytes(), push),
        }
        if tokens.is_empty() {
            return Err(unsupported("a phrase without a token"));
        }
        self.phrases.push(Phrase { tokens, prefix });
        Ok(Node::Phrase(self.phrases.len() - 1))
    }
}

impl Expr {
    /// Parses an expression for FTS table `fts_table` (its tokenizer).
    pub fn parse(expr: &str, fts_table: &str) -> Result<Expr> {
        let lexemes = lex(expr)?;
        let mut p = Parser {
            lexemes: &lexemes,
            at: 0,
            tokenizer: super::doclists::tokenizer_of(fts_table),
            phrases: Vec::new(),
        };
        let root = p.or()?;
        if p.at != lexemes.len() {
            return Err(unsupported("text after its end"));
        }
        Ok(Expr {
            root,
            phrases: p.phrases,
        })
    }

    /// The phrases, in FTS5's order (as they appear).
    pub fn phrases(&self) -> &[Phrase] {
        &self.phrases
    }

    /// Reads the doclists of the expression's terms from `fts`.
    pub fn load<S: PageSource>(&self, fts: &Fts5File<'_, S>) -> Result<Loaded> {
        self.load_with(&mut |token, prefix| Ok(Rc::new(postings_of(fts, token, prefix)?)))
    }

    /// [`Expr::load`] with each token's rows from `fetch(token, prefix)`
    /// (a caller that keeps them between expressions).
    pub fn load_with(&self, fetch: &mut PostingsOf<'_>) -> Result<Loaded> {
        let mut lists = Vec::with_capacity(self.phrases.len());
        for p in &self.phrases {
            let last = p.tokens.len() - 1;
            let mut terms = Vec::with_capacity(p.tokens.len());
            for (i, t) in p.tokens.iter().enumerate() {
                terms.push(fetch(t, i == last && p.prefix)?);
            }
            lists.push(terms);
        }
        Ok(Loaded {
            root: self.root.clone(),
            lists,
        })
    }

    /// Runs the expression over `fts` ([`Expr::load`], then
    /// [`Loaded::matches`]).
    pub fn evaluate<S: PageSource>(&self, fts: &Fts5File<'_, S>) -> Result<Matches> {
        Ok(self.load(fts)?.matches())
    }

    /// The number of tokens of each phrase (`xPhraseSize`).
    pub fn phrase_sizes(&self) -> Vec<usize> {
        self.phrases.iter().map(|p| p.tokens.len()).collect()
    }
}

/// Where [`Expr::load_with`] gets a token's rows: `(token, prefix)`.
pub type PostingsOf<'a> = dyn FnMut(&[u8], bool) -> Result<Rc<Vec<Posting>>> + 'a;

/// The rows holding `token` (every token it starts, for a prefix), one
/// posting per row.
pub fn postings_of<S: PageSource>(
    fts: &Fts5File<'_, S>,
    token: &[u8],
    prefix: bool,
) -> Result<Vec<Posting>> {
    if prefix {
        Ok(merge_prefixed(fts.prefixed(token)?))
    } else {
        fts.postings(token)
    }
}

/// An expression with its terms' doclists read, to run once over every
/// row or once per row.
#[derive(Debug, Clone)]
pub struct Loaded {
    root: Node,
    /// Per phrase, per token, the rows holding it.
    lists: Vec<Vec<Rc<Vec<Posting>>>>,
}

impl Loaded {
    /// Every row the expression matches, with its hits.
    pub fn matches(&self) -> Matches {
        let mut run = Run::new(self);
        let mut rows = Vec::new();
        let mut instances = Vec::new();
        run.first(run.root);
        while run.nodes[run.root].nomatch && !run.nodes[run.root].eof {
            run.next(run.root, None);
        }
        while !run.nodes[run.root].eof {
            let rowid = run.nodes[run.root].rowid;
            rows.push(rowid);
            instances.push(run.instances(rowid));
            loop {
                run.next(run.root, None);
                if !run.nodes[run.root].nomatch || run.nodes[run.root].eof {
                    break;
                }
            }
        }
        let phrase_rows = run.phrase_rows();
        Matches {
            rows,
            instances,
            phrase_rows,
        }
    }

    /// The hits of one row as a `MATCH` constrained to that rowid sees them
    /// (what `snippet()` reads: FTS5 starts its iteration at the row, so
    /// its nodes can stand elsewhere than in a scan of every row); `None`
    /// when the expression does not match the row.
    pub fn row_hits(&self, rowid: i64) -> Option<Vec<Inst>> {
        let mut run = Run::new(self);
        let root = run.root;
        // `sqlite3Fts5ExprFirst(iFirst = iLast = rowid)`.
        run.first(root);
        if !run.nodes[root].eof && run.nodes[root].rowid < rowid {
            run.next(root, Some(rowid));
        }
        while run.nodes[root].nomatch && !run.nodes[root].eof {
            run.next(root, None);
        }
        let node = &run.nodes[root];
        if node.eof || node.rowid != rowid {
            return None;
        }
        Some(run.instances(rowid))
    }
}

/// One term's doclist being walked (`Fts5IndexIter`).
struct TermIter {
    list: Rc<Vec<Posting>>,
    at: usize,
}

impl TermIter {
    fn eof(&self) -> bool {
        self.at >= self.list.len()
    }

    fn rowid(&self) -> i64 {
        self.list.get(self.at).map_or(i64::MAX, |p| p.rowid)
    }

    fn positions(&self) -> &[u64] {
        self.list.get(self.at).map_or(&[], |p| &p.positions)
    }

    /// `sqlite3Fts5IterNext` (`from` None) or `sqlite3Fts5IterNextFrom`:
    /// on at least one row, then to the first at `from` or later.
    fn next(&mut self, from: Option<i64>) {
        loop {
            self.at += 1;
            match from {
                Some(f) if !self.eof() && self.rowid() < f => {}
                _ => return,
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A phrase of one token (`FTS5_TERM`).
    Term,
    /// A phrase of several (`FTS5_STRING`).
    Phrase,
    And,
    Or,
    Not,
}

/// A node's iteration state (`Fts5ExprNode`).
struct State {
    kind: Kind,
    children: Vec<usize>,
    phrase: usize,
    rowid: i64,
    eof: bool,
    nomatch: bool,
}

/// A phrase's iteration state (`Fts5ExprPhrase`).
struct PhraseState {
    terms: Vec<TermIter>,
    /// Its hits in the row its node is on (FTS5's `poslist`).
    poslist: Vec<u64>,
    node: usize,
}

/// FTS5's evaluation of an expression (`fts5_expr.c`, ascending rowids),
/// ported step by step: which phrases report hits for a row depends on
/// where each node stands, not only on what the row holds.
struct Run {
    nodes: Vec<State>,
    phrases: Vec<PhraseState>,
    root: usize,
}

impl Run {
    fn new(loaded: &Loaded) -> Run {
        let phrases = loaded
            .lists
            .iter()
            .map(|terms| PhraseState {
                terms: terms
                    .iter()
                    .map(|list| TermIter {
                        list: Rc::clone(list),
                        at: 0,
                    })
                    .collect(),
                poslist: Vec::new(),
                node: 0,
            })
            .collect();
        let mut run = Run {
            nodes: Vec::new(),
            phrases,
            root: 0,
        };
        run.root = run.add(&loaded.root);
        run
    }

    fn add(&mut self, node: &Node) -> usize {
        let (kind, children, phrase) = match node {
            Node::Phrase(i) => {
                let kind = if self.phrases[*i].terms.len() == 1 {
                    Kind::Term
                } else {
                    Kind::Phrase
                };
                (kind, Vec::new(), *i)
            }
            Node::And(c) => (Kind::And, c.iter().map(|n| self.add(n)).collect(), 0),
            Node::Or(c) => (Kind::Or, c.iter().map(|n| self.add(n)).collect(), 0),
            Node::Not(a, b) => (Kind::Not, vec![self.add(a), self.add(b)], 0),
        };
        self.nodes.push(State {
            kind,
            children,
            phrase,
            rowid: 0,
            eof: false,
            nomatch: false,
        });
        let id = self.nodes.len() - 1;
        if matches!(kind, Kind::Term | Kind::Phrase) {
            self.phrases[phrase].node = id;
        }
        id
    }

    /// `fts5ExprNodeFirst`.
    fn first(&mut self, n: usize) {
        self.nodes[n].eof = false;
        self.nodes[n].nomatch = false;
        match self.nodes[n].kind {
            Kind::Term | Kind::Phrase => {
                let p = self.nodes[n].phrase;
                for t in &mut self.phrases[p].terms {
                    t.at = 0;
                }
                if self.phrases[p].terms.iter().any(TermIter::eof) {
                    self.nodes[n].eof = true;
                }
            }
            kind => {
                let children = self.nodes[n].children.clone();
                let mut eofs = 0;
                for &c in &children {
                    self.first(c);
                    eofs += usize::from(self.nodes[c].eof);
                }
                self.nodes[n].rowid = self.nodes[children[0]].rowid;
                match kind {
                    Kind::And if eofs > 0 => self.set_eof(n),
                    Kind::Or if eofs == children.len() => self.set_eof(n),
                    Kind::Not => self.nodes[n].eof = self.nodes[children[0]].eof,
                    _ => {}
                }
            }
        }
        self.test(n);
    }

    /// `fts5ExprNodeTest`.
    fn test(&mut self, n: usize) {
        if self.nodes[n].eof {
            return;
        }
        match self.nodes[n].kind {
            Kind::Term => self.test_term(n),
            Kind::Phrase => self.test_phrase(n),
            Kind::And => self.test_and(n),
            Kind::Or => self.test_or(n),
            Kind::Not => self.test_not(n),
        }
    }

    /// `fts5ExprNodeNext`: `from` is `iFrom` when `bFromValid`.
    fn next(&mut self, n: usize, from: Option<i64>) {
        match self.nodes[n].kind {
            Kind::Term => {
                let p = self.nodes[n].phrase;
                self.phrases[p].terms[0].next(from);
                if self.phrases[p].terms[0].eof() {
                    self.nodes[n].eof = true;
                    self.nodes[n].nomatch = false;
                } else {
                    self.test_term(n);
                }
            }
            Kind::Phrase => {
                self.nodes[n].nomatch = false;
                let p = self.nodes[n].phrase;
                self.phrases[p].terms[0].next(from);
                self.nodes[n].eof = self.phrases[p].terms[0].eof();
                if !self.nodes[n].eof {
                    self.test_phrase(n);
                }
            }
            Kind::And => {
                let c = self.nodes[n].children[0];
                self.next(c, from);
                self.test_and(n);
            }
            Kind::Or => {
                let last = self.nodes[n].rowid;
                for c in self.nodes[n].children.clone() {
                    let child = &self.nodes[c];
                    if !child.eof && (child.rowid == last || from.is_some_and(|f| child.rowid < f))
                    {
                        self.next(c, from);
                    }
                }
                self.test_or(n);
            }
            Kind::Not => {
                let c = self.nodes[n].children[0];
                self.next(c, from);
                self.test_not(n);
            }
        }
    }

    /// `fts5ExprSetEof`.
    fn set_eof(&mut self, n: usize) {
        self.nodes[n].eof = true;
        self.nodes[n].nomatch = false;
        for c in self.nodes[n].children.clone() {
            self.set_eof(c);
        }
    }

    /// `fts5ExprNodeZeroPoslist`.
    fn zero_poslists(&mut self, n: usize) {
        match self.nodes[n].kind {
            Kind::Term | Kind::Phrase => {
                let p = self.nodes[n].phrase;
                self.phrases[p].poslist.clear();
            }
            _ => {
                for c in self.nodes[n].children.clone() {
                    self.zero_poslists(c);
                }
            }
        }
    }

    /// `fts5ExprNodeTest_TERM`.
    fn test_term(&mut self, n: usize) {
        let p = self.nodes[n].phrase;
        let t = &self.phrases[p].terms[0];
        let (rowid, positions) = (t.rowid(), t.positions().to_vec());
        self.nodes[n].rowid = rowid;
        self.nodes[n].nomatch = positions.is_empty();
        self.phrases[p].poslist = positions;
    }

    /// `fts5ExprNodeTest_STRING`: every term on one row, then the phrase's
    /// hits there (`fts5ExprPhraseIsMatch`).
    fn test_phrase(&mut self, n: usize) {
        let p = self.nodes[n].phrase;
        let mut last = self.phrases[p].terms[0].rowid();
        loop {
            let mut all = true;
            for t in &mut self.phrases[p].terms {
                if t.rowid() == last {
                    continue;
                }
                all = false;
                // `fts5ExprAdvanceto`.
                if last > t.rowid() {
                    t.next(Some(last));
                    if t.eof() {
                        self.nodes[n].eof = true;
                        return;
                    }
                }
                last = t.rowid();
            }
            if all {
                break;
            }
        }
        self.nodes[n].rowid = last;
        let terms = &self.phrases[p].terms;
        let rest: Vec<&[u64]> = terms[1..].iter().map(TermIter::positions).collect();
        let hits: Vec<u64> = phrase_starts(terms[0].positions(), &rest).collect();
        self.nodes[n].nomatch = hits.is_empty();
        self.phrases[p].poslist = hits;
    }

    /// `fts5ExprNodeTest_AND`.
    fn test_and(&mut self, n: usize) {
        let mut last = self.nodes[n].rowid;
        let children = self.nodes[n].children.clone();
        loop {
            self.nodes[n].nomatch = false;
            let mut all = true;
            for &c in &children {
                if last > self.nodes[c].rowid {
                    self.next(c, Some(last));
                }
                if self.nodes[c].eof {
                    self.set_eof(n);
                    all = true;
                    break;
                } else if last != self.nodes[c].rowid {
                    all = false;
                    last = self.nodes[c].rowid;
                }
                if self.nodes[c].nomatch {
                    self.nodes[n].nomatch = true;
                }
            }
            if all {
                break;
            }
        }
        if self.nodes[n].nomatch && n != self.root {
            self.zero_poslists(n);
        }
        self.nodes[n].rowid = last;
    }

    /// `fts5NodeCompare`: at EOF is last.
    fn compare(&self, a: usize, b: usize) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let (a, b) = (&self.nodes[a], &self.nodes[b]);
        if b.eof {
            return Ordering::Less;
        }
        if a.eof {
            return Ordering::Greater;
        }
        a.rowid.cmp(&b.rowid)
    }

    /// `fts5ExprNodeTest_OR`.
    fn test_or(&mut self, n: usize) {
        let children = &self.nodes[n].children;
        let mut best = children[0];
        for &c in &children[1..] {
            let cmp = self.compare(best, c);
            if cmp.is_gt() || (cmp.is_eq() && !self.nodes[c].nomatch) {
                best = c;
            }
        }
        let (rowid, eof, nomatch) = (
            self.nodes[best].rowid,
            self.nodes[best].eof,
            self.nodes[best].nomatch,
        );
        let node = &mut self.nodes[n];
        node.rowid = rowid;
        node.eof = eof;
        node.nomatch = nomatch;
    }

    /// `fts5ExprNodeTest_NOT`.
    fn test_not(&mut self, n: usize) {
        let (a, b) = (self.nodes[n].children[0], self.nodes[n].children[1]);
        while !self.nodes[a].eof {
            let mut cmp = self.compare(a, b);
            if cmp.is_gt() {
                let from = self.nodes[a].rowid;
                self.next(b, Some(from));
                cmp = self.compare(a, b);
            }
            if cmp.is_ne() || self.nodes[b].nomatch {
                break;
            }
            self.next(a, None);
        }
        let (rowid, eof, nomatch) = (
            self.nodes[a].rowid,
            self.nodes[a].eof,
            self.nodes[a].nomatch,
        );
        let node = &mut self.nodes[n];
        node.rowid = rowid;
        node.eof = eof;
        node.nomatch = nomatch;
        if eof {
            self.zero_poslists(b);
        }
    }

    /// The hits `xInst` lists on the root's row: of each phrase whose
    /// node stands on it (`sqlite3Fts5ExprPoslist`), by position, phrases
    /// in order at one position.
    fn instances(&self, rowid: i64) -> Vec<Inst> {
        let mut out: Vec<Inst> = Vec::new();
        for (i, p) in self.phrases.iter().enumerate() {
            let node = &self.nodes[p.node];
            if node.eof || node.rowid != rowid {
                continue;
            }
            out.extend(
                p.poslist
                    .iter()
                    .map(|&pos| (i, (pos >> 32) as u32, pos as u32)),
            );
        }
        out.sort_unstable_by_key(|&(phrase, col, off)| (col, off, phrase));
        out
    }

    /// Rows holding each phrase (`xQueryPhrase`: the phrase alone).
    fn phrase_rows(&self) -> Vec<usize> {
        self.phrases
            .iter()
            .map(|p| {
                if p.terms.len() == 1 {
                    return p.terms[0].list.len();
                }
                let (first, rest) = p.terms.split_first().expect("a phrase has a token");
                first
                    .list
                    .iter()
                    .filter(|row| {
                        // The row's positions of the other tokens; a row
                        // missing one does not hold the phrase.
                        let rest: Option<Vec<&[u64]>> = rest
                            .iter()
                            .map(|t| {
                                let j =
                                    t.list.binary_search_by_key(&row.rowid, |q| q.rowid).ok()?;
                                Some(&t.list[j].positions[..])
                            })
                            .collect();
                        rest.is_some_and(|rest| {
                            phrase_starts(&row.positions, &rest).next().is_some()
                        })
                    })
                    .count()
            })
            .collect()
    }
}

/// The positions of a phrase's first token (`first`) that its other
/// tokens (`rest[k]` holding token `k + 1`'s positions) follow one by one:
/// where the phrase starts.
fn phrase_starts<'a>(first: &'a [u64], rest: &'a [&'a [u64]]) -> impl Iterator<Item = u64> + 'a {
    first.iter().copied().filter(move |&pos| {
        rest.iter()
            .enumerate()
            .all(|(k, t)| t.binary_search(&(pos + k as u64 + 1)).is_ok())
    })
}

/// The doclists of every term of a prefix as one: per row, the positions
/// of all of them, in order.
fn merge_prefixed(terms: Vec<(Vec<u8>, Vec<Posting>)>) -> Vec<Posting> {
    let mut rows: std::collections::BTreeMap<i64, Vec<u64>> = std::collections::BTreeMap::new();
    for (_, list) in terms {
        for p in list {
            rows.entry(p.rowid).or_default().extend(p.positions);
        }
    }
    rows.into_iter()
        .map(|(rowid, mut positions)| {
            positions.sort_unstable();
            positions.dedup();
            Posting { rowid, positions }
        })
        .collect()
}

/// What an expression matched (see the module docs).
#[derive(Debug, Clone)]
pub struct Matches {
    rows: Vec<i64>,
    instances: Vec<Vec<Inst>>,
    phrase_rows: Vec<usize>,
}

/// A phrase hit of a row: (phrase, column, token offset).
pub type Inst = (usize, u32, u32);

impl Matches {
    /// The rows matched, ascending.
    pub fn rows(&self) -> &[i64] {
        &self.rows
    }

    /// Rows holding phrase `i` anywhere (`xQueryPhrase`'s count).
    pub fn phrase_rows(&self, i: usize) -> usize {
        self.phrase_rows.get(i).copied().unwrap_or(0)
    }

    /// The hits of a matched row, as FTS5's `xInst` lists them: by
    /// position, phrases in order at one position (empty for a row not
    /// matched).
    pub fn instances(&self, rowid: i64) -> &[Inst] {
        match self.rows.binary_search(&rowid) {
            Ok(i) => &self.instances[i],
            Err(_) => &[],
        }
    }
}
