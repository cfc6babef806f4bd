#!/usr/bin/env node
// A small static server for the demo, the browser tests and benchmarks.
//
//   node www/serve.mjs [--root DIR] [--port 8080] [--host 127.0.0.1]
//                      [--latency MS] [--bandwidth BYTES_PER_S] [--shared-bandwidth]
//                      [--no-range] [--no-multi-range] [--no-compress] [--no-brotli] [--precompress] [--compress-cache BYTES]
//                      [--gzip-ranges] [--no-content-length] [--quiet]
//
// Like a static host it answers revalidations with 304 (ETag) and
// compresses HTML, CSS, JS, JSON and wasm for clients that accept it:
// brotli at quality 11 (as hosts serve precompressed assets; the command
// line's default, --no-brotli turns it off, in-process servers opt in),
// else gzip. Never the index files: the .gz is already compressed and the
// raw index is read by range.
//
// Compression happens on a file's first request, so the server starts at
// once on any site; that request waits for the compressor (quality 11
// takes seconds for the wasm). The compressed bodies are kept, shared by
// every server of the process, in a cache bounded by bytes (least recently
// used out first; 256 MiB, --compress-cache BYTES); a body over a quarter of it is
// compressed per request and not kept, so a few big files cannot flush
// the rest. --precompress (in-process: precompress: true, or the exported
// precompress()) compresses every compressible file of the root before
// listening, in the encodings the server would answer with, so that no
// timed request waits for the compressor: the benchmarks start their
// servers so.
//
// Paths are confined to the root: a malformed percent-encoding or a NUL
// byte gets 400; a path that resolves outside the root (by `..` segments,
// encoded or not) or a symlink whose target lies outside it, 403. Only
// regular files are served (a FIFO or device in the root is 404, checked
// on the opened file, which is opened without blocking).
//
// What it keeps is bounded, whatever clients send: ranges that overlap
// are merged (RFC 9110 allows it) and a request of more than MAX_RANGES
// gets the whole file, as Apache does; files kept in memory are bounded
// by bytes (BODY_CACHE_BYTES, least recently used out); the counters by
// path track at most MAX_TRACKED_PATHS paths (the rest are counted under
// OTHER_PATHS) and the request log keeps the last MAX_LOGGED_REQUESTS.
//
// Besides, it can add latency to every response, cap the
// bandwidth (per response, or for all responses together as one link
// does), ignore Range headers, gzip range answers or leave out
// Content-Length (servers lazy loading must detect), refuse paths (the
// socket is destroyed, as when the network is down), and count requests:
//   GET  /__server/stats   → { total, byPath: { "/path": n }, bytes,
//                              bytesByPath: { "/path": n }, ranges: n,
//                              multipart: n (multipart/byteranges answers),
//                              compressed: { entries, bytes, limit, runs }
//                              (the process's cache of compressed bodies) }
//   POST /__server/reset   → zero the counters
// Range requests get 206 partial content (the lazy-loading work reads the
// raw index this way), several ranges in one request a multipart/byteranges
// answer (--no-multi-range: the whole file, as hosts that do not support them). Imported as a module, startServer() gives tests
// the same server in-process.

import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.gz': 'application/gzip',
  '.gsx': 'application/vnd.sqlite3',
  '.md': 'text/markdown; charset=utf-8',
};

const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.wasm', '.ts', '.svg', '.md']);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Ranges of one request served as such; more gets the whole file. */
export const MAX_RANGES = 200;
/** Bytes of whole files the server keeps in memory (shared by a server's requests). */
export const BODY_CACHE_BYTES = 256 * 1024 * 1024;
/** Distinct paths the stats count one by one. */
export const MAX_TRACKED_PATHS = 10_000;
/** The key under which stats count the paths past MAX_TRACKED_PATHS. */
export const OTHER_PATHS = '(other paths)';
/** Requests the log (stats(before), log()) keeps, the newest. */
export const MAX_LOGGED_REQUESTS = 100_000;

/**
 * Ranges [[start, end], ...] (inclusive) sorted, those that overlap
 * merged into one: the bytes sent never exceed the file's size,
 * whatever the request repeats (`bytes=0-,0-,0-,...`).
 */
export function mergeRanges(parts) {
  const sorted = [...parts].sort((a, b) => a[0] - b[0]);
  const out = [];
  for (const [start, end] of sorted) {
    const last = out[out.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

/** The most bytes of compressed bodies the process keeps, unless told otherwise. */
export const COMPRESSED_CACHE_BYTES = 256 * 1024 * 1024;

// Compressed bodies, shared by every server of the process (brotli at
// quality 11 takes seconds for the wasm; a benchmark starting a server
// per visit pays it once): 'br /path' / 'gzip /path' → { etag, body },
// least recently used first. `pending` holds the compressions under way,
// so that requests arriving together for one file share one.
const compressed = { entries: new Map(), pending: new Map(), bytes: 0, runs: 0, limit: COMPRESSED_CACHE_BYTES };

/**
 * The cache of compressed bodies: { entries, bytes, limit, runs (the
 * compressions the process has run, kept or not) }.
 */
export function compressedCacheStats() {
  return { entries: compressed.entries.size, bytes: compressed.bytes, limit: compressed.limit, runs: compressed.runs };
}

const brotliCompress = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

function keep(key, etag, body) {
  const old = compressed.entries.get(key);
  if (old) {
    compressed.entries.delete(key);
    compressed.bytes -= old.body.length;
  }
  if (body.length > compressed.limit / 4) return;
  compressed.entries.set(key, { etag, body });
  compressed.bytes += body.length;
  evict();
}

const isByteCount = (n) => Number.isSafeInteger(n) && n >= 0;

/** Drops the least recently used bodies until the rest fit. */
function evict() {
  for (const [k, e] of compressed.entries) {
    if (compressed.bytes <= compressed.limit) break;
    compressed.entries.delete(k);
    compressed.bytes -= e.body.length;
  }
}

/**
 * `body` (the file's bytes, whose version is `etag`) compressed with
 * `encoding` ('br' or 'gzip'), from the cache or compressed now (off the
 * main thread: other responses go on meanwhile) and kept.
 */
async function compress(encoding, file, etag, body, gzipLevel = 9) {
  const key = encoding === 'gzip' && gzipLevel !== 9 ? `gzip-${gzipLevel} ${file}` : `${encoding} ${file}`;
  const hit = compressed.entries.get(key);
  if (hit && hit.etag === etag) {
    compressed.entries.delete(key);
    compressed.entries.set(key, hit);
    return hit.body;
  }
  const under = compressed.pending.get(key);
  if (under && under.etag === etag) return under.done;
  compressed.runs++;
  const packing =
    encoding === 'br'
      ? brotliCompress(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
      : gzip(body, { level: gzipLevel });
  const done = packing
    .then((packed) => {
      keep(key, etag, packed);
      return packed;
    })
    .finally(() => {
      if (compressed.pending.get(key)?.done === done) compressed.pending.delete(key);
    });
  compressed.pending.set(key, { etag, done });
  return done;
}

// Of a plain or a bigint fs.Stats alike.
const etagOf = (stat) => `"${Number(stat.size).toString(16)}-${Math.floor(Number(stat.mtimeMs)).toString(16)}"`;

/** Whether `p` is `root` or under it (both absolute and normalized). */
function within(root, p) {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The encodings a server with these options answers with, best first. */
const encodingsOf = (options) => (!options.compress ? [] : options.brotli ? ['br', 'gzip'] : ['gzip']);

/**
 * Compresses every compressible file under `root` (symlinks not followed)
 * in `encodings` ahead of the first request (what a host's precompressed
 * assets are), so no timed request waits for the compressor. Files too big
 * for the cache to keep are left out; if the rest do not fit either, the
 * first ones will be compressed again on request (a warning says so).
 * Resolves to { files, bytes }: the files compressed, the bytes of their
 * compressed bodies.
 */
export async function precompress(root, { encodings = ['br', 'gzip'] } = {}) {
  const files = [];
  const walk = async (dir) => {
    for (const e of await fs.promises.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && COMPRESSIBLE.has(path.extname(p))) files.push(p);
    }
  };
  await walk(path.resolve(root));
  let bytes = 0;
  let kept = 0;
  // As many files at a time as there are cores: the compressors run on
  // libuv's threads, one file each.
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const p = files[next++];
      const stat = await fs.promises.stat(p);
      if (stat.size > compressed.limit / 4) continue;
      const body = await fs.promises.readFile(p);
      kept++;
      for (const enc of encodings) bytes += (await compress(enc, p, etagOf(stat), body)).length;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, os.availableParallelism()) }, worker));
  if (bytes > compressed.limit) {
    console.warn(`warning: precompressed ${bytes} bytes under ${root}, over the cache's ${compressed.limit}: the first files will be compressed again on request`);
  }
  return { files: kept, bytes };
}

/**
 * Starts the server. Options: root, port (0 = any), host, latencyMs,
 * bandwidth (bytes/s, 0 = unlimited), sharedBandwidth (the cap is for all
 * responses together, as on one link; default: per response), range
 * (default true), multiRange (several ranges in one request get one
 * multipart/byteranges answer; default true; 'merge': one part from the
 * first byte asked for to the last; 'first': the first range only; false:
 * the whole file),
 * compress (brotli or gzip for text and wasm, default
 * true), brotli (prefer brotli where accepted, default false: quality 11
 * takes seconds for the wasm; the command line and the benchmarks turn it
 * on), gzipLevel (default 9; 6 is zlib's default, what servers that
 * compress on the fly, such as `npx serve`, use), precompress (compress every compressible file of root, in the
 * encodings answered with, before listening, default false: files are
 * compressed on their first request; the benchmarks turn it on),
 * compressCacheBytes (the most bytes of compressed bodies kept, for the
 * whole process as the cache is shared; default COMPRESSED_CACHE_BYTES), gzipRanges
 * (gzip 206 bodies too, default false), contentLength (default true), block (an
 * array of RegExp or strings matched against the path: such requests are
 * dropped), dropFirst ({ match, count }: the next `count` requests whose
 * path matches are dropped, then they pass; count goes down as they are),
 * stall (like block, but the request is never answered: the client must
 * give up; closing the server ends it), delay ([{ match, ms }]: matching
 * requests wait `ms` more before their answer), immutable (RegExp list matched against the path: those files
 * are cached for a year; default: content-addressed index files),
 * headers (added to every response), types (extension → Content-Type,
 * over the built-in ones: a host that serves the wasm as
 * application/octet-stream), quiet, bodyCacheBytes (whole files kept in
 * memory, default BODY_CACHE_BYTES), maxTrackedPaths (paths the stats
 * count one by one, default MAX_TRACKED_PATHS).
 * Returns { url, port, options, bodies(), stats(), log(), reset(), close() };
 * `options` can be changed while running.
 */
export async function startServer(opts = {}) {
  const options = {
    root: path.resolve(opts.root || '.'),
    port: opts.port ?? 8080,
    host: opts.host || '127.0.0.1',
    latencyMs: opts.latencyMs || 0,
    bandwidth: opts.bandwidth || 0,
    sharedBandwidth: opts.sharedBandwidth || false,
    range: opts.range !== false,
    multiRange: opts.multiRange !== false,
    compress: opts.compress !== false,
    brotli: opts.brotli === true,
    gzipLevel: opts.gzipLevel ?? 9,
    gzipRanges: opts.gzipRanges === true,
    contentLength: opts.contentLength !== false,
    block: opts.block || [],
    dropFirst: opts.dropFirst || null,
    stall: opts.stall || [],
    delay: opts.delay || [],
    immutable: opts.immutable || [/\/index-[0-9a-f]{16}\.[^/]*$/],
    headers: opts.headers || {},
    types: opts.types || {},
    quiet: opts.quiet ?? true,
  };
  const zero = () => ({ total: 0, byPath: {}, bytes: 0, bytesByPath: {}, ranges: 0, multipart: 0 });
  let counters = zero();
  // The key a path is counted under: itself while few paths are tracked.
  const maxPaths = opts.maxTrackedPaths ?? MAX_TRACKED_PATHS;
  const tracked = (where, map) => (Object.hasOwn(map, where) || Object.keys(map).length < maxPaths ? where : OTHER_PATHS);
  // Each request's arrival (epoch ms) and bytes sent, for stats(before).
  let requests = [];
  // file → { version, body }, least recently used first, bounded by bytes.
  const bodyCache = new Map();
  const bodyLimit = opts.bodyCacheBytes ?? BODY_CACHE_BYTES;
  let bodyCacheBytes = 0;
  const keepBody = (file, entry) => {
    const old = bodyCache.get(file);
    if (old) {
      bodyCache.delete(file);
      bodyCacheBytes -= old.body.length;
    }
    if (entry.body.length > bodyLimit / 4) return;
    bodyCache.set(file, entry);
    bodyCacheBytes += entry.body.length;
    for (const [k, e] of bodyCache) {
      if (bodyCacheBytes <= bodyLimit) break;
      bodyCache.delete(k);
      bodyCacheBytes -= e.body.length;
    }
  };
  let linkFreeAt = 0; // with sharedBandwidth: when the link has sent what it was given

  const send = async (res, status, headers, body, start = 0, end = body ? body.length : 0) => {
    if (!options.contentLength) delete headers['content-length'];
    res.writeHead(status, { ...options.headers, ...headers });
    if (!body) return res.end();
    const where = res.req ? (res.req.__path ?? res.req.url) : '';
    const entry = res.req && res.req.__entry;
    const count = (n) => {
      counters.bytes += n;
      const key = tracked(where, counters.bytesByPath);
      counters.bytesByPath[key] = (counters.bytesByPath[key] || 0) + n;
      if (entry) entry.bytes += n;
    };
    if (!options.bandwidth) {
      count(end - start);
      return res.end(body.subarray(start, end));
    }
    // Bandwidth cap: 100 slices per second; a slice leaves when its last
    // byte would have at the cap (on a shared link, responses take turns
    // in these steps).
    const slice = Math.max(1, Math.floor(options.bandwidth / 100));
    const firstAt = performance.now();
    for (let at = start; at < end; at += slice) {
      if (res.destroyed) return;
      const piece = body.subarray(at, Math.min(end, at + slice));
      if (options.sharedBandwidth) {
        const now = performance.now();
        linkFreeAt = Math.max(now, linkFreeAt) + (piece.length * 1000) / options.bandwidth;
        await sleep(linkFreeAt - now);
        if (res.destroyed) return;
        count(piece.length);
        res.write(piece);
      } else {
        // This response's own link: the piece leaves when its last byte
        // would have, the bytes so far taking their time at the cap since
        // the first one. (Written first and then waited for, as before,
        // each piece came one slice early: a response under a slice in
        // no time, the rest a slice, 50 ms at 20 slices a second, sooner.)
        await sleep(firstAt + ((at + piece.length - start) * 1000) / options.bandwidth - performance.now());
        if (res.destroyed) return;
        count(piece.length);
        res.write(piece);
      }
    }
    res.end();
  };

  // The root's real path (symlinks resolved), for `options.root` as it is.
  let realRoot = null;
  const realRootOf = async () => {
    if (!realRoot || realRoot.root !== options.root) realRoot = { root: options.root, real: await fs.promises.realpath(options.root) };
    return realRoot.real;
  };
  const text = (s) => Buffer.from(s);
  const plain = { 'content-type': 'text/plain; charset=utf-8' };

  const handle = async (req, res) => {
    // The decoded path; a request whose path cannot be decoded (or holds
    // a NUL, which no file name does) names no file.
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      return send(res, 400, plain, text('bad request: malformed path'));
    }
    if (pathname.includes('\0')) return send(res, 400, plain, text('bad request: NUL in path'));
    req.__path = pathname;
    if (pathname === '/__server/stats') {
      const body = JSON.stringify({ ...counters, compressed: compressedCacheStats() });
      return send(res, 200, { 'content-type': TYPES['.json'], 'cache-control': 'no-store' }, text(body));
    }
    if (pathname === '/__server/reset' && req.method === 'POST') {
      counters = zero();
      return send(res, 204, {});
    }
    counters.total++;
    const key = tracked(pathname, counters.byPath);
    counters.byPath[key] = (counters.byPath[key] || 0) + 1;
    req.__entry = { at: Date.now(), bytes: 0, path: pathname, range: req.headers.range || null, done: null };
    res.on('close', () => {
      req.__entry.done = Date.now();
    });
    requests.push(req.__entry);
    if (requests.length > MAX_LOGGED_REQUESTS) requests = requests.slice(-MAX_LOGGED_REQUESTS / 2);
    if (!options.quiet) console.log(`${req.method} ${req.url}${req.headers.range ? ` (${req.headers.range})` : ''}`);
    const matches = (b) => (b instanceof RegExp ? b.test(pathname) : pathname.startsWith(b));
    const drop = options.dropFirst && options.dropFirst.count > 0 && matches(options.dropFirst.match);
    if (drop) options.dropFirst.count--;
    if (drop || options.block.some(matches)) {
      req.socket.destroy();
      return;
    }
    if (options.stall.some(matches)) return;
    if (options.latencyMs) await sleep(options.latencyMs);
    const extra = options.delay.filter((d) => matches(d.match)).reduce((n, d) => n + d.ms, 0);
    if (extra) await sleep(extra);

    // Confined to the root by path segments (a string prefix would let
    // /srv/site serve /srv/site-other), then by the real path, so that a
    // symlink cannot lead out of it either.
    let file = path.join(options.root, pathname);
    if (!within(options.root, file)) return send(res, 403, plain, text('forbidden'));
    try {
      if (fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    } catch {
      // handled below
    }
    // Opened without blocking (opening a FIFO for reading otherwise waits
    // for a writer, holding one of libuv's few threads for good) and
    // checked on the handle: only a regular file is served.
    let fh;
    let stat;
    try {
      if (!within(await realRootOf(), await fs.promises.realpath(file))) return send(res, 403, plain, text('forbidden'));
      fh = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      stat = await fh.stat({ bigint: true });
      if (!stat.isFile()) throw new Error('not a regular file');
    } catch {
      await fh?.close();
      return send(res, 404, plain, text(`not found: ${pathname}`));
    }
    try {
      return await answer(req, res, file, fh, stat, pathname);
    } finally {
      await fh.close();
    }
  };

  /** Answers `req` with the regular file `file`, open as `fh`. */
  const answer = async (req, res, file, fh, stat, pathname) => {
    const size = Number(stat.size);
    // Files are kept in memory until they change (range requests would
    // otherwise read a whole index per page); a range of a big file not in
    // memory is read from disk on its own, as a static host does (loading
    // 30 MB first would delay the first range request by a few hundred ms).
    const version = `${stat.size}-${stat.mtimeNs}-${stat.ino}`;
    const cached = bodyCache.get(file);
    const inMemory = cached && cached.version === version;
    const load = async () => {
      if (inMemory) {
        keepBody(file, cached);
        return cached.body;
      }
      const whole = await fh.readFile();
      keepBody(file, { version, body: whole });
      return whole;
    };
    // The bytes of ranges [[start, end], ...] (inclusive), read at once
    // from one open file, as a static host serves them from the page cache
    // (a file opened, read and closed range by range took ~50 ms for the
    // 20 ranges of one round here, time no real host spends).
    const slices = async (ranges) => {
      if (inMemory || size <= 1_000_000) {
        const whole = await load();
        return ranges.map(([start, end]) => whole.subarray(start, end + 1));
      }
      return Promise.all(
        ranges.map(async ([start, end]) => {
          const bytes = Buffer.alloc(end - start + 1);
          await fh.read(bytes, 0, bytes.length, start);
          return bytes;
        }),
      );
    };
    const ext = path.extname(file);
    const etag = etagOf(stat);
    // Revalidation answers 304, as static hosts do, so a repeat visit does
    // not download the module again.
    if (req.headers['if-none-match'] === etag) {
      return send(res, 304, { etag, 'cache-control': 'no-cache' });
    }
    const headers = {
      'content-type': options.types[ext] || TYPES[ext] || 'application/octet-stream',
      // Content-addressed files never change; everything else is
      // revalidated so a new build or manifest shows at once.
      'cache-control': options.immutable.some((re) => re.test(pathname)) ? 'public, max-age=31536000, immutable' : 'no-cache',
      'last-modified': stat.mtime.toUTCString(),
      etag,
    };
    if (options.range) headers['accept-ranges'] = 'bytes';
    if (req.method === 'HEAD') {
      headers['content-length'] = size;
      return send(res, 200, headers);
    }
    // Range: one range gets a 206 with its bytes; several (bytes=a-b,c-d)
    // one multipart/byteranges answer, as nginx, Apache and Go's file
    // server give, or as multiRange says: one part from the first byte
    // asked for to the last (RFC 9110 lets a server merge ranges), the
    // first range only, or (false) the header ignored and the whole file
    // sent, as hosts without multipart support may.
    const spec = options.range && /^bytes=\d*-\d*(,\s*\d*-\d*)*$/.test(req.headers.range || '') ? req.headers.range : null;
    const asked = spec ? spec.slice(6).split(',') : [];
    if (spec && (asked.length === 1 || options.multiRange) && asked.length <= MAX_RANGES) {
      let parts = [];
      for (const r of asked) {
        const [, a, b] = /^\s*(\d*)-(\d*)$/.exec(r);
        const start = Math.max(0, a === '' ? size - Number(b) : Number(a));
        const end = Math.min(a === '' || b === '' ? size - 1 : Number(b), size - 1);
        if (start <= end) parts.push([start, end]);
      }
      if (!parts.length) return send(res, 416, { 'content-range': `bytes */${size}` });
      parts = mergeRanges(parts);
      counters.ranges++;
      if (options.multiRange === 'merge') parts = [[Math.min(...parts.map((p) => p[0])), Math.max(...parts.map((p) => p[1]))]];
      if (options.multiRange === 'first') parts = parts.slice(0, 1);
      let body;
      if (parts.length === 1) {
        const [start, end] = parts[0];
        headers['content-range'] = `bytes ${start}-${end}/${size}`;
        [body] = await slices([[start, end]]);
      } else {
        counters.multipart++;
        const boundary = `gitsense${Math.random().toString(16).slice(2)}`;
        const pieces = [];
        const bytes = await slices(parts);
        parts.forEach(([start, end], i) => {
          pieces.push(Buffer.from(`\r\n--${boundary}\r\ncontent-type: ${headers['content-type']}\r\ncontent-range: bytes ${start}-${end}/${size}\r\n\r\n`));
          pieces.push(bytes[i]);
        });
        pieces.push(Buffer.from(`\r\n--${boundary}--\r\n`));
        body = Buffer.concat(pieces);
        headers['content-type'] = `multipart/byteranges; boundary=${boundary}`;
      }
      if (options.gzipRanges) {
        body = zlib.gzipSync(body);
        headers['content-encoding'] = 'gzip';
      }
      headers['content-length'] = body.length;
      return send(res, 206, headers, body);
    }
    let body = await load();
    const accepts = req.headers['accept-encoding'] || '';
    const encoding = !options.compress || !COMPRESSIBLE.has(ext) ? null : options.brotli && /\bbr\b/.test(accepts) ? 'br' : /\bgzip\b/.test(accepts) ? 'gzip' : null;
    if (encoding) {
      body = await compress(encoding, file, etag, body, options.gzipLevel);
      headers['content-encoding'] = encoding;
      headers.vary = 'accept-encoding';
    }
    headers['content-length'] = body.length;
    return send(res, 200, headers, body);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      // A file unreadable or gone mid-answer: 500 if nothing was sent
      // yet, else the answer is cut short; the server goes on.
      if (!options.quiet) console.error(`${req.method} ${req.url}: ${e.message}`);
      if (res.headersSent) res.destroy();
      else send(res, 500, plain, text('internal error')).catch(() => res.destroy());
    });
  });

  if (opts.compressCacheBytes !== undefined) {
    if (!isByteCount(opts.compressCacheBytes)) throw new Error('compressCacheBytes must be a whole number of bytes');
    compressed.limit = opts.compressCacheBytes;
    evict();
  }
  if (opts.precompress) await precompress(options.root, { encodings: encodingsOf(options) });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const port = server.address().port;
  return {
    url: `http://${options.host}:${port}/`,
    port,
    options,
    // Whole files kept in memory: { entries, bytes, limit }.
    bodies: () => ({ entries: bodyCache.size, bytes: bodyCacheBytes, limit: bodyLimit }),
    // stats(before): `total` and `bytes` count only the requests that
    // arrived before `before` (epoch ms; bytes sent for them so far), e.g.
    // those a page made before its first result, not the ones it started
    // right after.
    stats: (before) => {
      const c = JSON.parse(JSON.stringify(counters));
      if (before !== undefined) {
        const early = requests.filter((r) => r.at <= before);
        c.total = early.length;
        c.bytes = early.reduce((n, r) => n + r.bytes, 0);
      }
      return c;
    },
    // Each request since the last reset: { path, range, at, done (epoch
    // ms: arrival, last byte sent or connection closed), bytes }.
    log: () => requests.map((r) => ({ ...r })),
    reset: () => {
      counters = zero();
      requests = [];
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parseArgs(argv) {
  const o = { root: 'www/dist', port: 8080, quiet: false, brotli: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--root') o.root = next();
    else if (a === '--port') o.port = Number(next());
    else if (a === '--host') o.host = next();
    else if (a === '--latency') o.latencyMs = Number(next());
    else if (a === '--bandwidth') o.bandwidth = Number(next());
    else if (a === '--shared-bandwidth') o.sharedBandwidth = true;
    else if (a === '--no-range') o.range = false;
    else if (a === '--no-multi-range') o.multiRange = false;
    else if (a === '--no-compress') o.compress = false;
    else if (a === '--no-brotli') o.brotli = false;
    else if (a === '--precompress') o.precompress = true;
    else if (a === '--compress-cache') {
      o.compressCacheBytes = Number(next());
      if (!isByteCount(o.compressCacheBytes)) throw new Error('--compress-cache must be a whole number of bytes');
    }
    else if (a === '--gzip-ranges') o.gzipRanges = true;
    else if (a === '--no-content-length') o.contentLength = false;
    else if (a === '--quiet') o.quiet = true;
    else if (a === '--help' || a === '-h') {
      console.log('usage: node www/serve.mjs [--root DIR] [--port N] [--host H] [--latency MS] [--bandwidth BYTES_PER_S] [--shared-bandwidth] [--no-range] [--no-multi-range] [--no-compress] [--no-brotli] [--precompress] [--compress-cache BYTES] [--gzip-ranges] [--no-content-length] [--quiet]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw new Error('--port must be 0..65535');
  return o;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`error: ${e.message}`);
    process.exit(2);
  }
  if (!fs.existsSync(o.root)) {
    console.error(`error: ${o.root} does not exist; run ./build.sh first`);
    process.exit(1);
  }
  startServer(o).then(
    (s) => console.log(`serving ${path.resolve(o.root)} at ${s.url}  (Ctrl+C to stop)`),
    (e) => {
      // A listen error, or (--precompress) a file that could not be read.
      console.error(`error: ${e.syscall === 'listen' ? `cannot listen on ${o.host || '127.0.0.1'}:${o.port}: ` : ''}${e.message}`);
      process.exit(1);
    },
  );
}
