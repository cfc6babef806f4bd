#!/usr/bin/env node
// A small static server for the demo, the browser tests and benchmarks.
//
//   node www/serve.mjs [--root DIR] [--port 8080] [--host 127.0.0.1]
//                      [--latency MS] [--bandwidth BYTES_PER_S] [--shared-bandwidth]
//                      [--no-range] [--no-compress] [--gzip-ranges] [--no-content-length]
//
// Like a static host it answers revalidations with 304 (ETag) and gzips
// HTML, CSS, JS, JSON and wasm for clients that accept it (never the index
// files: the .gz is already compressed and the raw index is read by
// range). Besides, it can add latency to every response, cap the
// bandwidth (per response, or for all responses together as one link
// does), ignore Range headers, gzip range answers or leave out
// Content-Length (servers lazy loading must detect), refuse paths (the
// socket is destroyed, as when the network is down), and count requests:
//   GET  /__server/stats   → { total, byPath: { "/path": n }, bytes,
//                              bytesByPath: { "/path": n }, ranges: n }
//   POST /__server/reset   → zero the counters
// Range requests get 206 partial content (the lazy-loading work reads the
// raw index this way). Imported as a module, startServer() gives tests
// the same server in-process.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
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

/**
 * Starts the server. Options: root, port (0 = any), host, latencyMs,
 * bandwidth (bytes/s, 0 = unlimited), sharedBandwidth (the cap is for all
 * responses together, as on one link; default: per response), range
 * (default true), compress (gzip text and wasm, default true), gzipRanges
 * (gzip 206 bodies too, default false), contentLength (default true), block (an
 * array of RegExp or strings matched against the path: such requests are
 * dropped), dropFirst ({ match, count }: the next `count` requests whose
 * path matches are dropped, then they pass; count goes down as they are),
 * stall (like block, but the request is never answered: the client must
 * give up; closing the server ends it), immutable (RegExp list matched against the path: those files
 * are cached for a year; default: content-addressed index files),
 * headers (added to every response), quiet.
 * Returns { url, port, options, stats(), reset(), close() };
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
    compress: opts.compress !== false,
    gzipRanges: opts.gzipRanges === true,
    contentLength: opts.contentLength !== false,
    block: opts.block || [],
    dropFirst: opts.dropFirst || null,
    stall: opts.stall || [],
    immutable: opts.immutable || [/\/index-[0-9a-f]{16}\.[^/]*$/],
    headers: opts.headers || {},
    quiet: opts.quiet ?? true,
  };
  const zero = () => ({ total: 0, byPath: {}, bytes: 0, bytesByPath: {}, ranges: 0 });
  let counters = zero();
  const gzipCache = new Map(); // file → { etag, body }
  const bodyCache = new Map(); // file → { version, body }
  let linkFreeAt = 0; // with sharedBandwidth: when the link has sent what it was given

  const send = async (res, status, headers, body, start = 0, end = body ? body.length : 0) => {
    if (!options.contentLength) delete headers['content-length'];
    res.writeHead(status, { ...options.headers, ...headers });
    if (!body) return res.end();
    const where = res.req ? decodeURIComponent(new URL(res.req.url, 'http://localhost').pathname) : '';
    const count = (n) => {
      counters.bytes += n;
      counters.bytesByPath[where] = (counters.bytesByPath[where] || 0) + n;
    };
    if (!options.bandwidth) {
      count(end - start);
      return res.end(body.subarray(start, end));
    }
    // Bandwidth cap: 20 slices per second (100 on a shared link, so that
    // responses take turns in small steps).
    const slice = Math.max(1, Math.floor(options.bandwidth / (options.sharedBandwidth ? 100 : 20)));
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
        count(piece.length);
        res.write(piece);
        await sleep(50);
      }
    }
    res.end();
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const pathname = decodeURIComponent(url.pathname);
    if (pathname === '/__server/stats') {
      return send(res, 200, { 'content-type': TYPES['.json'], 'cache-control': 'no-store' }, Buffer.from(JSON.stringify(counters)));
    }
    if (pathname === '/__server/reset' && req.method === 'POST') {
      counters = zero();
      return send(res, 204, {});
    }
    counters.total++;
    counters.byPath[pathname] = (counters.byPath[pathname] || 0) + 1;
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

    let file = path.join(options.root, pathname);
    if (!file.startsWith(options.root)) return send(res, 403, { 'content-type': 'text/plain' }, Buffer.from('forbidden'));
    try {
      if (fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    } catch {
      // handled below
    }
    let body;
    let stat;
    try {
      // Files are kept in memory until they change (range requests would
      // otherwise read a whole index per page).
      stat = fs.statSync(file, { bigint: true });
      const version = `${stat.size}-${stat.mtimeNs}-${stat.ino}`;
      const cached = bodyCache.get(file);
      if (cached && cached.version === version) body = cached.body;
      else {
        body = await fs.promises.readFile(file);
        bodyCache.set(file, { version, body });
      }
      stat = fs.statSync(file);
    } catch {
      return send(res, 404, { 'content-type': 'text/plain' }, Buffer.from(`not found: ${pathname}`));
    }
    const ext = path.extname(file);
    const etag = `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
    // Revalidation answers 304, as static hosts do, so a repeat visit does
    // not download the module again.
    if (req.headers['if-none-match'] === etag) {
      return send(res, 304, { etag, 'cache-control': 'no-cache' });
    }
    const headers = {
      'content-type': TYPES[ext] || 'application/octet-stream',
      // Content-addressed files never change; everything else is
      // revalidated so a new build or manifest shows at once.
      'cache-control': options.immutable.some((re) => re.test(pathname)) ? 'public, max-age=31536000, immutable' : 'no-cache',
      'last-modified': stat.mtime.toUTCString(),
      etag,
    };
    if (options.range) headers['accept-ranges'] = 'bytes';
    if (req.method === 'HEAD') {
      headers['content-length'] = body.length;
      return send(res, 200, headers);
    }
    const range = options.range && req.headers.range && /^bytes=(\d*)-(\d*)$/.exec(req.headers.range);
    if (range) {
      let start = range[1] === '' ? body.length - Number(range[2]) : Number(range[1]);
      let end = range[1] === '' || range[2] === '' ? body.length - 1 : Number(range[2]);
      end = Math.min(end, body.length - 1);
      if (start < 0) start = 0;
      if (start > end || start >= body.length) {
        return send(res, 416, { 'content-range': `bytes */${body.length}` });
      }
      counters.ranges++;
      headers['content-range'] = `bytes ${start}-${end}/${body.length}`;
      if (options.gzipRanges) {
        const gz = zlib.gzipSync(body.subarray(start, end + 1));
        headers['content-encoding'] = 'gzip';
        headers['content-length'] = gz.length;
        return send(res, 206, headers, gz);
      }
      headers['content-length'] = end - start + 1;
      return send(res, 206, headers, body, start, end + 1);
    }
    if (options.compress && COMPRESSIBLE.has(ext) && /\bgzip\b/.test(req.headers['accept-encoding'] || '')) {
      let cached = gzipCache.get(file);
      if (!cached || cached.etag !== etag) {
        cached = { etag, body: zlib.gzipSync(body, { level: 9 }) };
        gzipCache.set(file, cached);
      }
      body = cached.body;
      headers['content-encoding'] = 'gzip';
      headers.vary = 'accept-encoding';
    }
    headers['content-length'] = body.length;
    return send(res, 200, headers, body);
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const port = server.address().port;
  return {
    url: `http://${options.host}:${port}/`,
    port,
    options,
    stats: () => JSON.parse(JSON.stringify(counters)),
    reset: () => {
      counters = zero();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parseArgs(argv) {
  const o = { root: 'www/dist', port: 8080, quiet: false };
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
    else if (a === '--no-compress') o.compress = false;
    else if (a === '--gzip-ranges') o.gzipRanges = true;
    else if (a === '--no-content-length') o.contentLength = false;
    else if (a === '--quiet') o.quiet = true;
    else if (a === '--help' || a === '-h') {
      console.log('usage: node www/serve.mjs [--root DIR] [--port N] [--host H] [--latency MS] [--bandwidth BYTES_PER_S] [--shared-bandwidth] [--no-range] [--no-compress] [--gzip-ranges] [--no-content-length] [--quiet]');
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
      console.error(`error: cannot listen on ${o.host || '127.0.0.1'}:${o.port}: ${e.message}`);
      process.exit(1);
    },
  );
}
