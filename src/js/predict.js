// Lazy mode, the first query's pages before the module is ready (worker
// only; worker.js): given the query a page will run first (`open({
// firstQuery })`) and the hot pages, which pages the engine's warm-up would
// fetch in its first round (src/storage/lazy/warm.rs): the leaves of
// each FTS table's doclists for the query's words, found through the FTS
// index (`_idx`, hot) and the `_data` b-tree (its inner pages are hot), and
// the `message_names` leaf of the exact-name boost. The worker fetches them
// while the module downloads and compiles; the warm-up then finds them in
// place and its first round asks for nothing (or less).
//
// A prediction only: a page not foreseen is fetched by the warm-up as
// before, a page foreseen in vain costs its bytes. Words are read as the
// engine reads them where it matters (crates/engine/src/index/doclists.rs: lower case,
// split at what is not a letter or digit, trigrams for code blocks;
// crates/engine/src/plan.rs: common words dropped, the exact name's key); syntax this
// reader does not follow (parentheses, prefixes, filters) leaves those
// words to the warm-up. Anything unexpected in the pages (not hot, not a
// b-tree page, a record cut short) leaves that lookup out.

import { inflateRuns, rangeFetchMulti } from './lazy.js';

/** crates/engine/src/query/syntax.rs STOP_WORDS (a test keeps the two equal). */
export const STOP_WORDS = [
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'how', 'i', 'in', 'is', 'it',
  'of', 'on', 'or', 'that', 'the', 'this', 'to', 'was', 'what', 'when', 'where', 'which', 'with',
  'find', 'show', 'list', 'me', 'do', 'does', 'can',
];
/** crates/engine/src/index/mod.rs TRIGRAM_MIN_CHARS. */
const TRIGRAM_MIN_CHARS = 3;
/** crates/engine/src/index/doclists.rs MAX_LEAVES_PER_TERM. */
const MAX_LEAVES_PER_TERM = 64;
/** Pages asked for at most (a query whose words are everywhere reads much more; the warm-up then does). */
const MAX_PAGES = 256;
/** Ranges in one request at most (src/storage/lazy/mod.rs RANGES_PER_REQUEST). */
const RANGES_PER_REQUEST = 64;
const FTS_TABLES = [
  ['fts_chats', false],
  ['fts_messages', false],
  ['fts_code_blocks', true],
];
const TWO_37 = 2 ** 37;
const TWO_36 = 2 ** 36;
const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();
const NOT_WORD = /[^\p{Alphabetic}\p{N}]+/u;

/**
 * The query's words as the warm-up looks them up: `strings`, each quoted
 * string of the FTS expressions (its text), and `name`, the words of the
 * exact-name boost (null when the query is not plain words and phrases).
 * Null when the query is syntax this reader does not follow.
 */
export function queryWords(query) {
  if (typeof query !== 'string' || query.length > 1000) return null;
  const items = [];
  let plain = true;
  // As crates/engine/src/query/parser.rs reads a query: a quote (either kind) at the
  // start of a token opens a phrase that runs to the same quote; other
  // tokens run to the next space.
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let m;
  while ((m = re.exec(query))) {
    if (m[1] !== undefined || m[2] !== undefined) {
      const text = m[1] !== undefined ? m[1] : m[2];
      // The parser drops an empty phrase.
      if (text.trim()) items.push({ text, phrase: true });
      continue;
    }
    const tok = m[3];
    // A quote the parser would open (a negated phrase; a filter's quoted
    // value, below) runs past this token: not followed here.
    if (tok.includes('"') || /^-?'/.test(tok)) return null;
    if (tok.includes('(') || tok.includes(')')) return null;
    // AND is what words do anyway (the exact name still applies); OR and
    // NOT are not plain words.
    if (tok === 'AND' || tok === '&&') continue;
    if (tok === 'OR' || tok === '||' || tok === 'NOT') {
      plain = false;
      continue;
    }
    // A filter or directive (lang:js, in:chats): not words. Shaped as the
    // parser's read_directive wants it: letters (then - or _) and a colon
    // followed by a value, so `std::vec`, `http://...` and `word:` are words.
    const directive = /^-?[A-Za-z][A-Za-z_-]*:([^\s:/])/.exec(tok);
    if (directive) {
      if (directive[1] === "'") return null;
      continue;
    }
    let text = tok;
    if (text.startsWith('-') && text.length > 1) {
      plain = false;
      text = text.slice(1);
    }
    if (text.endsWith('*')) {
      // A prefix: the warm-up finds the terms it starts.
      plain = false;
      continue;
    }
    if (text) items.push({ text, phrase: false });
  }
  if (!items.length) return null;
  const name = plain ? items.map((i) => i.text).join(' ') : null;
  // Common words go when something else is left (crates/engine/src/plan.rs drop_stop_words).
  const kept = items.filter((i) => i.phrase || !STOP_WORDS.includes(i.text.toLowerCase()));
  return { strings: (kept.length ? kept : items).map((i) => i.text), name };
}

// --- SQLite's file format, for the pages at hand ----------------------------

/** A varint at `at`: [value, length]; values past 2^53 lose their low bits (no key read here gets there). */
function varint(p, at) {
  let v = 0;
  for (let n = 0; n < 8; n++) {
    const b = p[at + n];
    if (b === undefined) return null;
    v = v * 128 + (b & 0x7f);
    if (b < 0x80) return [v, n + 1];
  }
  if (p[at + 8] === undefined) return null;
  return [v * 256 + p[at + 8], 9];
}

const u16 = (p, at) => (p[at] << 8) | p[at + 1];
const u32 = (p, at) => p[at] * 0x1000000 + ((p[at + 1] << 16) | (p[at + 2] << 8) | p[at + 3]);

/** The pages at hand (1-based page number → bytes) and the file's geometry. */
function pager(hot, manifest) {
  const pages = new Map();
  const size = manifest.pageSize;
  manifest.hotPages.forEach((p, i) => pages.set(p, hot.subarray(i * size, (i + 1) * size)));
  const first = pages.get(1);
  if (!first) return null;
  // Usable bytes a page (less the bytes reserved at its end).
  const usable = size - first[20];
  return { get: (n) => pages.get(n) || null, size, usable, parsed: new Map(), inner: new Map() };
}

/** A b-tree page: its kind, cell offsets and right-most child (inner pages); parsed once. */
function btreePage(pg, n) {
  if (!pg.parsed.has(n)) pg.parsed.set(n, parseBtreePage(pg, n));
  return pg.parsed.get(n);
}

function parseBtreePage(pg, n) {
  const p = pg.get(n);
  if (!p) return null;
  const h = n === 1 ? 100 : 0;
  const type = p[h];
  if (type !== 2 && type !== 5 && type !== 10 && type !== 13) return null;
  const inner = type === 2 || type === 5;
  const count = u16(p, h + 3);
  const cells = [];
  for (let i = 0; i < count; i++) {
    const at = u16(p, h + (inner ? 12 : 8) + 2 * i);
    if (at >= p.length) return null;
    cells.push(at);
  }
  return { p, type, inner, cells, right: inner ? u32(p, h + 8) : 0 };
}

/** The local part of a cell's payload of `total` bytes (the rest overflows). */
function localSize(pg, total, table) {
  const u = pg.usable;
  const max = table ? u - 35 : Math.floor(((u - 12) * 64) / 255) - 23;
  if (total <= max) return total;
  const min = Math.floor(((u - 12) * 32) / 255) - 23;
  const k = min + ((total - min) % (u - 4));
  return k <= max ? k : min;
}

/**
 * A record's columns from its local bytes: numbers (8-byte integers as
 * BigInt), byte arrays for text and blobs, null for NULL; undefined for a
 * column past the local bytes.
 */
function record(p, at, local) {
  const end = at + local;
  const head = varint(p, at);
  if (!head || head[0] > local) return null;
  let h = at + head[1];
  let body = at + head[0];
  const out = [];
  while (h < at + head[0]) {
    const t = varint(p, h);
    if (!t) return null;
    h += t[1];
    const type = t[0];
    let len = 0;
    if (type >= 12) len = Math.floor((type - 12) / 2);
    else if (type >= 1 && type <= 6) len = [0, 1, 2, 3, 4, 6, 8][type];
    else if (type === 7) len = 8;
    if (body + len > end) {
      out.push(undefined);
      body += len;
      continue;
    }
    if (type === 0) out.push(null);
    else if (type === 8 || type === 9) out.push(type - 8);
    else if (type === 6) {
      let v = 0n;
      for (let i = 0; i < 8; i++) v = (v << 8n) | BigInt(p[body + i]);
      out.push(BigInt.asIntN(64, v));
    } else if (type >= 1 && type <= 5) {
      let v = 0;
      for (let i = 0; i < len; i++) v = v * 256 + p[body + i];
      out.push(p[body] & 0x80 ? v - 2 ** (8 * len) : v);
    } else if (type === 7) out.push(NaN);
    else out.push(p.subarray(body, body + len));
    body += len;
  }
  return out;
}

/**
 * A payload of `total` bytes starting at `at` of page `p`: the record
 * whole when its overflow pages are at hand (each: the next page's number,
 * then bytes), else its local part. Returns [bytes, start, length].
 */
function payload(pg, p, at, total, table) {
  const local = localSize(pg, total, table);
  if (local === total) return [p, at, total];
  // More than a thousand overflow pages: not a record of this index.
  if (total - local > 1024 * (pg.usable - 4)) return [p, at, local];
  const out = new Uint8Array(total);
  out.set(p.subarray(at, at + local));
  let got = local;
  let next = u32(p, at + local);
  for (let hops = 0; got < total && next !== 0 && hops < 1024; hops++) {
    const o = pg.get(next);
    if (!o) return [p, at, local];
    const n = Math.min(total - got, pg.usable - 4);
    out.set(o.subarray(4, 4 + n), got);
    got += n;
    next = u32(o, 0);
  }
  return got === total ? [out, 0, total] : [p, at, local];
}

/** An index b-tree cell's record (inner cells lead with their child). */
function indexRecord(pg, page, at) {
  const from = page.inner ? at + 4 : at;
  const size = varint(page.p, from);
  if (!size) return null;
  return record(...payload(pg, page.p, from + size[1], size[0], false));
}

/**
 * Whether page `n` may be walked next: each page once, a few thousand in
 * all (a b-tree whose pages point back at each other is not followed).
 */
function visit(seen, n) {
  if (seen.has(n) || seen.size >= 4096) return false;
  seen.add(n);
  return true;
}

/** Every record of the index b-tree rooted at `root`, in order; null when a page is not at hand. */
function scanIndex(pg, root, limit = 100000) {
  const out = [];
  const seen = new Set();
  const walk = (n, depth) => {
    const page = depth < 8 && visit(seen, n) ? btreePage(pg, n) : null;
    if (!page || page.type === 5 || page.type === 13) return false;
    for (const at of page.cells) {
      if (page.inner && !walk(u32(page.p, at), depth + 1)) return false;
      const r = indexRecord(pg, page, at);
      if (!r) return false;
      out.push(r);
      if (out.length > limit) return false;
    }
    return !page.inner || walk(page.right, depth + 1);
  };
  return walk(root, 0) ? out : null;
}

/** The rows (rowid, record) of the table b-tree rooted at `root`; null when a page is not at hand. */
function scanTable(pg, root) {
  const out = [];
  const seen = new Set();
  const walk = (n, depth) => {
    const page = depth < 8 && visit(seen, n) ? btreePage(pg, n) : null;
    if (!page || page.type === 2 || page.type === 10) return false;
    if (page.inner) {
      for (const at of page.cells) if (!walk(u32(page.p, at), depth + 1)) return false;
      return walk(page.right, depth + 1);
    }
    for (const at of page.cells) {
      const size = varint(page.p, at);
      const rowid = size && varint(page.p, at + size[1]);
      if (!rowid) return false;
      out.push(record(page.p, at + size[1] + rowid[1], localSize(pg, size[0], true)));
    }
    return true;
  };
  return walk(root, 0) ? out : null;
}

/**
 * The page a lookup descending the b-tree rooted at `root` ends on: a
 * page of kind `leaf`, or the first one not at hand (the page to fetch;
 * the inner pages are hot). `child(n, page)` picks an inner page's child
 * (undefined: give up). Null when the walk cannot be followed.
 */
function descend(pg, root, leaf, inner, child) {
  let n = root;
  for (let depth = 0; depth < 8; depth++) {
    const page = btreePage(pg, n);
    if (!page) return depth > 0 && !pg.get(n) ? n : null;
    if (page.type === leaf) return n;
    if (page.type !== inner) return null;
    n = child(n, page);
    if (n === undefined) return null;
  }
  return null;
}

/** The leaf of the table b-tree rooted at `root` a lookup of `rowid` reads. */
function tableLeaf(pg, root, rowid) {
  return descend(pg, root, 13, 5, (n, page) => {
    // An inner page's keys and children, read once; the first key at or
    // past the rowid leads down (binary search: keys ascend).
    if (!pg.inner.has(n)) {
      const keys = new Float64Array(page.cells.length);
      const children = new Float64Array(page.cells.length);
      for (let i = 0; i < page.cells.length; i++) {
        const key = varint(page.p, page.cells[i] + 4);
        if (!key) return undefined;
        keys[i] = key[0];
        children[i] = u32(page.p, page.cells[i]);
      }
      pg.inner.set(n, { keys, children });
    }
    const { keys, children } = pg.inner.get(n);
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid] < rowid) lo = mid + 1;
      else hi = mid;
    }
    return lo < keys.length ? children[lo] : page.right;
  });
}

/** The leaf of the index b-tree rooted at `root` where a lookup of an integer first column `key` (BigInt) starts. */
function indexLeaf(pg, root, key) {
  return descend(pg, root, 10, 2, (n, page) => {
    for (const at of page.cells) {
      const r = indexRecord(pg, page, at);
      if (!r || r[0] === undefined) return undefined;
      if (BigInt(r[0]) >= key) return u32(page.p, at);
    }
    return page.right;
  });
}

/** memcmp order of two byte arrays (shorter first on a tie). */
function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** The 16-bit hash fts_leaf_ends keeps of a term (crates/engine/src/index/doclists.rs term_hash). */
function termHash(key) {
  let h = 0x811c9dc5;
  for (const b of key) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return (h ^ (h >>> 16)) & 0xffff;
}

/** The FTS index keys ('0' + token) of a quoted string. */
function keysOf(text, trigram) {
  const lower = text.toLowerCase();
  let tokens;
  if (trigram) {
    const chars = Array.from(lower);
    if (chars.length < TRIGRAM_MIN_CHARS) return [];
    tokens = [];
    for (let i = 0; i + 3 <= chars.length; i++) tokens.push(chars.slice(i, i + 3).join(''));
  } else {
    tokens = lower.split(NOT_WORD).filter(Boolean);
  }
  return tokens.map((t) => {
    const b = utf8.encode(t);
    const k = new Uint8Array(b.length + 1);
    k[0] = 0x30;
    k.set(b, 1);
    return k;
  });
}

/** The `_data` rowids a MATCH of `strings` on FTS table `fts` reads (crates/engine/src/index/doclists.rs doclist_rowids_in). */
function doclistRowids(pg, roots, fts, trigram, strings, ends) {
  const idxRoot = roots.get(`${fts}_idx`);
  if (!idxRoot) return [];
  const entries = scanIndex(pg, idxRoot);
  if (!entries) return [];
  // Per segment, its (term, pgno) entries in order.
  const segs = new Map();
  for (const [segid, term, pgno] of entries) {
    if (typeof segid !== 'number' || !(term instanceof Uint8Array) || typeof pgno !== 'number') return [];
    if (!segs.has(segid)) segs.set(segid, []);
    segs.get(segid).push([term, pgno]);
  }
  const out = [];
  for (const text of strings) {
    for (const key of keysOf(text, trigram)) {
      for (const [segid, list] of segs) {
        // The last entry at or before the key, the first after it.
        let lo = 2;
        let hi = null;
        for (const [term, pgno] of list) {
          if (compareBytes(term, key) <= 0) lo = pgno;
          else {
            hi = pgno;
            break;
          }
        }
        const first = Math.floor(lo / 2);
        let last = hi === null ? first : Math.min(Math.max(Math.floor(hi / 2), first), first + MAX_LEAVES_PER_TERM - 1);
        const hashes = ends.get(`${fts} ${segid}`);
        if (last === first + 1 && hashes && hashes.length >= 2 * first && u16(hashes, 2 * (first - 1)) !== termHash(key)) last = first;
        for (let leaf = first; leaf <= last; leaf++) out.push(segid * TWO_37 + leaf);
        if (lo % 2 === 1) out.push(segid * TWO_37 + TWO_36 + first);
      }
    }
  }
  return out;
}

/** The exact-name boost's key of `words` (crates/engine/src/index/mod.rs name_key), a BigInt; null without words. */
async function nameKey(words) {
  const norm = words
    .split(NOT_WORD)
    .filter(Boolean)
    .map((w) => w.toLowerCase())
    .join(' ');
  if (!norm || typeof crypto === 'undefined' || !crypto.subtle) return null;
  const h = new Uint8Array(await crypto.subtle.digest('SHA-256', utf8.encode(norm)));
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(h[i]);
  return BigInt.asIntN(64, v);
}

/**
 * The pages (1-based, ascending) the warm-up's first round would fetch for
 * `query`, less the hot ones: `hot` is the hot file as format 1 lays it
 * out (the hot pages, then the packed file's page lengths), `manifest`
 * the parsed manifest. Resolves [] when nothing can be foreseen.
 */
export async function firstQueryPages(hot, manifest, query) {
  const words = queryWords(query);
  const pg = words && pager(hot, manifest);
  if (!pg) return [];
  const roots = new Map();
  for (const row of scanTable(pg, 1) || []) {
    if (row && row[1] instanceof Uint8Array && typeof row[3] === 'number') roots.set(utf8Text.decode(row[1]), row[3]);
  }
  // Leaf-end hashes at hand, by "fts segid".
  const ends = new Map();
  const endsRoot = roots.get('fts_leaf_ends');
  for (const row of (endsRoot && scanIndex(pg, endsRoot)) || []) {
    if (row[0] instanceof Uint8Array && typeof row[1] === 'number' && row[2] instanceof Uint8Array) ends.set(`${utf8Text.decode(row[0])} ${row[1]}`, row[2]);
  }
  const pages = new Set();
  for (const [fts, trigram] of FTS_TABLES) {
    const dataRoot = roots.get(`${fts}_data`);
    if (!dataRoot) continue;
    for (const rowid of doclistRowids(pg, roots, fts, trigram, words.strings, ends)) {
      const leaf = tableLeaf(pg, dataRoot, rowid);
      if (leaf) pages.add(leaf);
    }
  }
  const namesRoot = roots.get('message_names');
  if (words.name !== null && namesRoot) {
    const key = await nameKey(words.name);
    const leaf = key === null ? null : indexLeaf(pg, namesRoot, key);
    if (leaf) pages.add(leaf);
  }
  const wanted = [...pages].filter((n) => !pg.get(n) && n >= 1 && n <= manifest.pageCount).sort((a, b) => a - b);
  return wanted.length > MAX_PAGES ? [] : wanted;
}

/**
 * Fetches firstQueryPages() in one request (several ranges, 64 at most a
 * request; of the packed
 * file when the manifest names one), while the module loads. `value` is
 * what the page's prefetch resolved with (its `hot` as format 1 lays it
 * out, `manifest` the text, `multi`: several ranges per request work).
 * Resolves { pages (1-based), bytes (the pages, in that order), wire
 * (bytes on the wire), requests } or null; never rejects. `onAsk()`, if
 * given, is called as the request goes out (info().startup).
 */
export async function fetchFirstQueryPages(value, manifestUrl, query, timeoutMs, onAsk) {
  try {
    if (!value || !(value.hot instanceof Uint8Array) || typeof value.manifest !== 'string' || value.probe || !value.multi) return null;
    const m = JSON.parse(value.manifest);
    const size = m.pageSize;
    if (!Number.isInteger(size) || !Array.isArray(m.hotPages) || !Number.isInteger(m.pageCount)) return null;
    const pages = await firstQueryPages(value.hot, m, query);
    if (!pages.length) return null;
    // Runs of adjacent pages.
    const runs = [];
    for (const p of pages) {
      const last = runs[runs.length - 1];
      if (last && last[1] === p - 1) last[1] = p;
      else runs.push([p, p]);
    }
    const packed = typeof m.packedFile === 'string' && Number.isInteger(m.packedSize);
    const base = new URL(manifestUrl, typeof location !== 'undefined' ? location.href : undefined);
    const url = new URL(packed ? m.packedFile : m.rawFile, base).href;
    let starts;
    let ends;
    let lengths = null;
    if (packed) {
      const tail = value.hot.subarray(m.hotPages.length * size);
      if (tail.length !== 2 * m.pageCount) return null;
      const len = (i) => (tail[i] | (tail[m.pageCount + i] << 8)) + 1;
      const offsets = new Float64Array(m.pageCount + 1);
      for (let i = 0; i < m.pageCount; i++) offsets[i + 1] = offsets[i] + len(i);
      if (offsets[m.pageCount] !== m.packedSize) return null;
      starts = runs.map(([a]) => offsets[a - 1]);
      ends = runs.map(([, b]) => offsets[b] - 1);
      lengths = pages.map((p) => len(p - 1));
    } else {
      starts = runs.map(([a]) => (a - 1) * size);
      ends = runs.map(([, b]) => b * size - 1);
    }
    const total = packed ? m.packedSize : m.size;
    // At most 64 ranges a request, as the warm-up asks (Apache serves 200).
    if (onAsk) onAsk();
    const answers = await rangeFetchMulti(url, starts, ends, total, timeoutMs, RANGES_PER_REQUEST);
    const wire = answers.reduce((n, a) => n + a.length, 0);
    const out = lengths
      ? inflateRuns(
          answers,
          lengths,
          runs.map(([a, b]) => b - a + 1),
          size,
        )
      : answers;
    const bytes = new Uint8Array(pages.length * size);
    let at = 0;
    for (const run of out) {
      bytes.set(run, at);
      at += run.length;
    }
    if (at !== bytes.length) return null;
    // (Range by range when the server stopped serving several at once.)
    const requests = answers.fellBack ? runs.length : Math.ceil(runs.length / RANGES_PER_REQUEST);
    return { pages: Uint32Array.from(pages), bytes, wire, requests };
  } catch {
    return null;
  }
}
