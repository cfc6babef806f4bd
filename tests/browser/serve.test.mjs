// The static server (www/serve.mjs) as a process, the way the demo and a
// user start it: it compresses files on their first request (not at
// start), keeps what it compressed, honours --no-brotli / --no-compress /
// --precompress, and keeps requests inside its root (malformed paths get
// 400 and the server goes on; `..` segments, encoded or not, and symlinks
// out of the root are refused). Paths are sent raw (http.request), as
// fetch would normalize them. Runs in Node; no browser.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

const SERVE = new URL('../../www/serve.mjs', import.meta.url);

let dir; // holds site/ (the root) and siblings that must stay out of reach
let site;
const PAGES = 120;

/** Text that compresses as prose does: words from a small vocabulary, in an order no two files share. */
function prose(seed, bytes) {
  const words = ['search', 'index', 'query', 'page', 'result', 'token', 'module', 'python', 'asyncio', 'queue', 'socket', 'buffer', 'stream', 'thread'];
  let x = seed * 2654435761 + 1;
  const out = [];
  let n = 0;
  while (n < bytes) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const w = words[x % words.length];
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ');
}

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-serve-'));
  // The root is named so that a sibling's name starts with it: a string
  // prefix check would take /…/A2secret for a path under /…/A2.
  site = path.join(dir, 'A2');
  fs.mkdirSync(path.join(site, 'docs'), { recursive: true });
  for (let i = 0; i < PAGES; i++) {
    fs.writeFileSync(path.join(site, 'docs', `page${i}.html`), `<!doctype html><title>${i}</title><p>${prose(i, 16_000)}</p>`);
  }
  fs.writeFileSync(path.join(site, 'big.js'), `// ${prose(PAGES, 2_000_000)}\n`);
  fs.writeFileSync(path.join(site, 'index.html'), '<!doctype html><title>home</title>');
  fs.writeFileSync(path.join(site, 'here.txt'), 'inside');
  fs.symlinkSync(path.join(site, 'here.txt'), path.join(site, 'alias.txt'));

  fs.mkdirSync(path.join(dir, 'A2secret'));
  fs.writeFileSync(path.join(dir, 'A2secret', 's.txt'), 'sibling secret');
  fs.mkdirSync(path.join(dir, 'outside'));
  fs.writeFileSync(path.join(dir, 'outside', 'o.txt'), 'outside secret');
  fs.writeFileSync(path.join(dir, 'outside', 'index.html'), 'outside index');
  fs.symlinkSync(path.join(dir, 'outside', 'o.txt'), path.join(site, 'out.txt'));
  fs.symlinkSync(path.join(dir, 'outside'), path.join(site, 'outdir'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Starts `node www/serve.mjs --root site --port 0 ...args`; resolves once it listens. */
function serve(args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVE.pathname, '--root', site, '--port', '0', '--quiet', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /at http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m) resolve({ port: Number(m[1]), child, stderr: () => err });
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${err}`)));
  });
}

function stop(server) {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) return resolve();
    server.child.once('exit', resolve);
    server.child.kill();
  });
}

/** GET with `rawPath` sent exactly as given; resolves to { status, headers, body }. */
function get(server, rawPath, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path: rawPath, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const compressedCache = async (server) => JSON.parse((await get(server, '/__server/stats')).body).compressed;

test('the server starts without compressing anything, compresses a file on its first request, and answers the second from what it kept', async () => {
  const server = await serve();
  try {
    const { limit, ...start } = await compressedCache(server);
    assert.ok(limit > 0);
    assert.deepEqual(start, { entries: 0, bytes: 0, runs: 0 }, 'nothing compressed before a request');
    const file = fs.readFileSync(path.join(site, 'big.js'));
    const first = await get(server, '/big.js', { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(first.status, 200);
    assert.equal(first.headers['content-encoding'], 'br');
    assert.equal(Number(first.headers['content-length']), first.body.length);
    assert.ok(zlib.brotliDecompressSync(first.body).equals(file), 'the body decompresses to the file');
    const kept = await compressedCache(server);
    assert.deepEqual([kept.entries, kept.bytes, kept.runs], [1, first.body.length, 1], 'one body kept: the one asked for');
    const second = await get(server, '/big.js', { 'accept-encoding': 'gzip, deflate, br' });
    assert.ok(second.body.equals(first.body), 'the second answer is the same bytes');
    assert.deepEqual(await compressedCache(server), kept, 'not compressed again');
    // A client without brotli gets gzip of the same file, kept beside it.
    const gz = await get(server, '/big.js', { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(zlib.gunzipSync(gz.body).equals(file));
    assert.deepEqual([(await compressedCache(server)).entries, (await compressedCache(server)).runs], [2, 2]);
  } finally {
    await stop(server);
  }
});

test('requests arriving together for a file not yet compressed share one compression', async () => {
  const server = await serve();
  try {
    const answers = await Promise.all([1, 2, 3].map(() => get(server, '/docs/page7.html', { 'accept-encoding': 'br' })));
    for (const a of answers) assert.ok(a.body.equals(answers[0].body));
    assert.equal(zlib.brotliDecompressSync(answers[0].body).toString(), fs.readFileSync(path.join(site, 'docs', 'page7.html'), 'utf8'));
    const cache = await compressedCache(server);
    assert.deepEqual([cache.entries, cache.runs], [1, 1]);
  } finally {
    await stop(server);
  }
});

test('--no-brotli answers gzip and compresses nothing in brotli, --no-compress nothing at all', async () => {
  let server = await serve(['--no-brotli']);
  try {
    assert.equal((await compressedCache(server)).entries, 0);
    const a = await get(server, '/docs/page3.html', { 'accept-encoding': 'br, gzip' });
    assert.equal(a.headers['content-encoding'], 'gzip');
    assert.equal(zlib.gunzipSync(a.body).toString(), fs.readFileSync(path.join(site, 'docs', 'page3.html'), 'utf8'));
    assert.equal((await compressedCache(server)).entries, 1);
  } finally {
    await stop(server);
  }
  server = await serve(['--no-compress']);
  try {
    const a = await get(server, '/docs/page3.html', { 'accept-encoding': 'br, gzip' });
    assert.equal(a.headers['content-encoding'], undefined);
    assert.ok(a.body.equals(fs.readFileSync(path.join(site, 'docs', 'page3.html'))));
    assert.equal((await compressedCache(server)).entries, 0);
  } finally {
    await stop(server);
  }
});

test('--precompress compresses every compressible file before listening, in the encodings answered with', async () => {
  const server = await serve(['--precompress', '--no-brotli']);
  try {
    const files = PAGES + 2; // the pages, big.js, index.html (not the .txt files, nor the symlinks)
    const warmed = await compressedCache(server);
    assert.deepEqual([warmed.entries, warmed.runs], [files, files], 'gzip only: one body per file');
    const a = await get(server, '/docs/page5.html', { 'accept-encoding': 'br, gzip' });
    assert.equal(a.headers['content-encoding'], 'gzip');
    assert.deepEqual(await compressedCache(server), warmed, 'answered from what was compressed');
  } finally {
    await stop(server);
  }
});

test('an in-process server started with precompress answers its first request from the cache', async () => {
  const { startServer, compressedCacheStats } = await import(SERVE.href);
  const before = compressedCacheStats();
  const server = await startServer({ root: path.join(site, 'docs'), port: 0, brotli: true, precompress: true });
  try {
    const warmed = compressedCacheStats();
    assert.equal(warmed.entries - before.entries, PAGES * 2, 'brotli and gzip of every page');
    const r = await fetch(`${server.url}page1.html`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(r.headers.get('content-encoding'), 'br');
    assert.equal(await r.text(), fs.readFileSync(path.join(site, 'docs', 'page1.html'), 'utf8'));
    assert.deepEqual(compressedCacheStats(), warmed, 'not compressed again');
  } finally {
    await server.close();
  }
});

test('the cache keeps at most --compress-cache bytes, the least recently used out, and no body over a quarter of it', async () => {
  const br = { 'accept-encoding': 'br' };
  const page = (i) => `/docs/page${i}.html`;
  // Room for about four pages' bodies.
  const one = zlib.brotliCompressSync(fs.readFileSync(path.join(site, 'docs', 'page0.html')), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  const server = await serve(['--compress-cache', String(Math.round(one * 4.5))]);
  try {
    for (let i = 0; i < 10; i++) assert.equal((await get(server, page(i), br)).status, 200);
    const full = await compressedCache(server);
    assert.equal(full.runs, 10);
    assert.ok(full.bytes <= full.limit, `${full.bytes} <= ${full.limit}`);
    assert.ok(full.entries >= 3 && full.entries <= 5, `${full.entries} entries`);
    const oldest = 10 - full.entries;
    await get(server, page(oldest), br);
    assert.equal((await compressedCache(server)).runs, 10, 'the oldest page kept is answered from the cache');
    await get(server, page(10), br);
    assert.equal((await compressedCache(server)).runs, 11);
    await get(server, page(oldest), br);
    assert.equal((await compressedCache(server)).runs, 11, 'a page asked for again is let go last');
    await get(server, page(0), br);
    assert.equal((await compressedCache(server)).runs, 12, 'the first page was let go, and is compressed again');
    // big.js compresses to more than a quarter of the cache: compressed
    // per request and never kept, so it does not flush the pages.
    const kept = await compressedCache(server);
    const a = await get(server, '/big.js', br);
    const b = await get(server, '/big.js', br);
    assert.ok(a.body.equals(b.body));
    assert.ok(a.body.length > kept.limit / 4);
    const after = await compressedCache(server);
    assert.deepEqual([after.runs, after.entries, after.bytes], [kept.runs + 2, kept.entries, kept.bytes]);
  } finally {
    await stop(server);
  }
});

test('a malformed path gets 400 and the server goes on answering', async () => {
  const server = await serve();
  try {
    for (const bad of ['/%E0%A4%A', '/%', '/docs/%zz.html', '/here%00.txt', '/%00']) {
      const r = await get(server, bad);
      assert.equal(r.status, 400, bad);
    }
    const ok = await get(server, '/here.txt');
    assert.deepEqual([ok.status, ok.body.toString()], [200, 'inside']);
  } finally {
    await stop(server);
  }
});

test('paths out of the root are refused, however the dots are spelled', async () => {
  const server = await serve();
  try {
    const escapes = [
      '/..%2fA2secret/s.txt',
      '/..%2FA2secret%2Fs.txt',
      '/%2e%2e%2fA2secret/s.txt',
      '/docs/..%2f..%2fA2secret/s.txt',
      '/../A2secret/s.txt',
      '/docs/../../A2secret/s.txt',
      '/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
      '/..%2foutside/o.txt',
    ];
    for (const p of escapes) {
      const r = await get(server, p);
      assert.ok(r.status === 403 || r.status === 404, `${p}: ${r.status}`);
      assert.doesNotMatch(r.body.toString(), /sibling secret|outside secret|root:/, p);
    }
    // Names that merely start with dots stay allowed.
    fs.writeFileSync(path.join(site, '..dots.txt'), 'dots');
    const dots = await get(server, '/..dots.txt');
    assert.deepEqual([dots.status, dots.body.toString()], [200, 'dots']);
  } finally {
    await stop(server);
  }
});

test('a symlink out of the root is refused, one inside it is followed', async () => {
  const server = await serve();
  try {
    for (const p of ['/out.txt', '/outdir/o.txt', '/outdir/', '/outdir']) {
      const r = await get(server, p);
      assert.equal(r.status, 403, p);
      assert.doesNotMatch(r.body.toString(), /outside (secret|index)/, p);
    }
    const alias = await get(server, '/alias.txt');
    assert.deepEqual([alias.status, alias.body.toString()], [200, 'inside']);
  } finally {
    await stop(server);
  }
});

test('a FIFO in the root is not served and does not wedge the server', async () => {
  const fifo = path.join(site, 'pipe.html');
  const made = spawn('mkfifo', [fifo]);
  await new Promise((r) => made.on('exit', r));
  const server = await serve();
  try {
    // More requests than libuv has threads: a blocking open of each would
    // leave none for the files after them.
    const answers = await Promise.all(Array.from({ length: 8 }, () => get(server, '/pipe.html')));
    assert.deepEqual(answers.map((a) => a.status), Array(8).fill(404));
    const ok = await get(server, '/here.txt');
    assert.deepEqual([ok.status, ok.body.toString()], [200, 'inside']);
  } finally {
    await stop(server);
    fs.rmSync(fifo);
  }
});

test('overlapping ranges are merged and too many ranges get the whole file, so an answer never outgrows the file', async () => {
  const server = await serve();
  try {
    const size = fs.statSync(path.join(site, 'big.js')).size;
    const repeated = await get(server, '/big.js', { range: `bytes=${Array(150).fill('0-').join(',')}` });
    assert.equal(repeated.status, 206);
    assert.equal(repeated.headers['content-range'], `bytes 0-${size - 1}/${size}`);
    assert.equal(repeated.body.length, size);
    const overlapping = await get(server, '/big.js', { range: 'bytes=100-199,150-299,1000-1099' });
    assert.match(overlapping.headers['content-type'], /^multipart\/byteranges/);
    const ranges = overlapping.body.toString('latin1').match(/content-range: bytes \d+-\d+/g);
    assert.deepEqual(ranges, ['content-range: bytes 100-299', 'content-range: bytes 1000-1099']);
    const many = Array.from({ length: 201 }, (_, i) => `${i * 10}-${i * 10 + 4}`).join(',');
    const whole = await get(server, '/big.js', { range: `bytes=${many}` });
    assert.equal(whole.status, 200);
    assert.equal(whole.body.length, size);
  } finally {
    await stop(server);
  }
});

test('what the server keeps stays bounded: paths counted one by one, the request log and files in memory', async () => {
  const { startServer, OTHER_PATHS } = await import(SERVE.href);
  const server = await startServer({ root: site, port: 0, compress: false, maxTrackedPaths: 20, bodyCacheBytes: 200_000 });
  const s = { port: server.port };
  try {
    for (let i = 0; i < 60; i++) assert.equal((await get(s, `/random-${i}.html`)).status, 404);
    for (let i = 0; i < 40; i++) assert.equal((await get(s, `/docs/page${i}.html`)).status, 200);
    const stats = server.stats();
    assert.equal(Object.keys(stats.byPath).length, 21);
    assert.equal(stats.byPath[OTHER_PATHS], 80);
    assert.equal(stats.total, 100);
    const bodies = server.bodies();
    assert.ok(bodies.bytes <= 200_000 && bodies.entries > 0, JSON.stringify(bodies));
  } finally {
    await server.close();
  }
});
