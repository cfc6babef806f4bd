// Several ranges per request (src/js/lazy.js): the multipart/byteranges
// parser, and rangesFetch / rangeFetchMulti / probeRanges against the test
// server (www/serve.mjs) in each of its modes. Runs in Node (fetch and
// AbortController as in the browser); the browser path is lazy.test.mjs.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { startServer } from '../../www/serve.mjs';
import { parseByteranges, rangesFetch, rangeFetchMulti, probeRanges } from '../../src/js/lazy.js';

const enc = (s) => Buffer.from(s, 'latin1');

function multipart(boundary, parts, { close = true } = {}) {
  const pieces = [enc('preamble ignored')];
  for (const [start, bytes, total] of parts) {
    pieces.push(enc(`\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes ${start}-${start + bytes.length - 1}/${total}\r\n\r\n`), bytes);
  }
  if (close) pieces.push(enc(`\r\n--${boundary}--\r\n`));
  return new Uint8Array(Buffer.concat(pieces));
}

test('parts are cut by their Content-Range, even when the data holds the boundary', () => {
  const boundary = 'XYZ';
  const tricky = enc('aa\r\n--XYZ\r\nbb');
  const body = multipart(boundary, [
    [10, tricky, 1000],
    [500, enc('tail'), 1000],
  ]);
  const parts = parseByteranges(body, boundary, 'u');
  assert.equal(parts.length, 2);
  assert.deepEqual([parts[0].start, parts[0].end, parts[0].total], [10, 10 + tricky.length - 1, '1000']);
  assert.equal(Buffer.from(parts[0].bytes).toString('latin1'), tricky.toString('latin1'));
  assert.equal(Buffer.from(parts[1].bytes).toString('latin1'), 'tail');
});

test('malformed multipart bodies are refused with lazy.range_unsupported', () => {
  const cases = [
    ['no boundary', enc('just bytes')],
    ['no closing boundary', multipart('B', [[0, enc('abcd'), 9]], { close: false })],
    ['a part cut short', multipart('B', [[0, enc('abcd'), 9]]).subarray(0, 70)],
    ['no Content-Range', enc('\r\n--B\r\nContent-Type: x\r\n\r\nabcd\r\n--B--\r\n')],
    ['no blank line after the headers', enc('\r\n--B\r\nContent-Range: bytes 0-3/9')],
  ];
  for (const [what, body] of cases) {
    assert.throws(() => parseByteranges(new Uint8Array(body), 'B', 'u'), (e) => e.code === 'lazy.range_unsupported', what);
  }
});

let dir;
let server;
let file;
let url;
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-ranges-'));
  file = Buffer.alloc(64 * 1024);
  for (let i = 0; i < file.length; i++) file[i] = (i * 7 + (i >> 8)) & 0xff;
  fs.writeFileSync(path.join(dir, 'index-0123456789abcdef.gsx'), file);
  server = await startServer({ root: dir, port: 0 });
  url = `${server.url}index-0123456789abcdef.gsx`;
});
after(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const STARTS = [0, 4096, 20000, 65000];
const ENDS = [99, 8191, 20000, 65535];
const expected = STARTS.map((s, i) => file.subarray(s, ENDS[i] + 1));

for (const mode of [true, 'merge', 'first', false]) {
  test(`rangeFetchMulti returns each range's bytes (server multiRange: ${mode})`, async () => {
    Object.assign(server.options, { multiRange: mode, gzipRanges: false });
    server.reset();
    const probe = await probeRanges(url, file.length, 5000);
    const multi = mode === true || mode === 'merge';
    assert.deepEqual(probe, { probe: null, multi });
    server.reset();
    const got = await rangeFetchMulti(url, STARTS, ENDS, file.length, 5000, 3);
    assert.equal(got.length, STARTS.length);
    got.forEach((bytes, i) => assert.ok(Buffer.from(bytes).equals(expected[i]), `range ${i}`));
    const stats = server.stats();
    // Requests of at most 3 ranges: [3 ranges] + [1 range]; without
    // multi-range support the 3-range request is asked again one by one.
    assert.equal(stats.total, multi ? 2 : 1 + 1 + 3, JSON.stringify(stats));
    assert.equal(got.fellBack, !multi);
    assert.equal(stats.multipart, mode === true ? 1 : 0);
  });
}

test('rangesFetch refuses a compressed or foreign answer', async () => {
  Object.assign(server.options, { multiRange: true, gzipRanges: true });
  await assert.rejects(rangesFetch(url, [0, 10], [1, 11], file.length, 5000), (e) => e.code === 'lazy.range_unsupported');
  Object.assign(server.options, { gzipRanges: false });
  // The manifest announces another size: another version of the file.
  await assert.rejects(rangesFetch(url, [0, 10], [1, 11], file.length + 1, 5000), (e) => e.code === 'lazy.version_mismatch');
  // Without multi-range support: a clear code, so the caller asks range by range.
  server.options.multiRange = false;
  await assert.rejects(rangesFetch(url, [0, 10], [1, 11], file.length, 5000), (e) => e.code === 'lazy.multi_range_unsupported');
  server.options.multiRange = true;
});

test('probeRanges says why a server without ranges cannot be read lazily', async () => {
  Object.assign(server.options, { range: false, multiRange: true });
  const probe = await probeRanges(url, file.length, 5000);
  server.options.range = true;
  assert.equal(probe.multi, false);
  assert.equal(probe.probe.code, 'lazy.range_unsupported');
  assert.match(probe.probe.message, /ignored the Range header/);
});

test('a multipart answer the parser cannot read is asked again range by range', async () => {
  // LF line endings instead of CRLF: no part can be found.
  const bad = http.createServer((req, res) => {
    const spec = req.headers.range || '';
    if (spec.includes(',')) {
      res.writeHead(206, { 'content-type': 'multipart/byteranges; boundary=B' });
      return res.end('\n--B\ncontent-range: bytes 0-1/65536\n\nxx\n--B--\n');
    }
    const [, a, b] = /^bytes=(\d+)-(\d+)$/.exec(spec);
    const bytes = file.subarray(Number(a), Number(b) + 1);
    res.writeHead(206, { 'content-range': `bytes ${a}-${b}/${file.length}`, 'content-length': bytes.length });
    res.end(bytes);
  });
  await new Promise((resolve) => bad.listen(0, '127.0.0.1', resolve));
  try {
    const where = `http://127.0.0.1:${bad.address().port}/index.gsx`;
    const got = await rangeFetchMulti(where, STARTS, ENDS, file.length, 5000, 64);
    assert.equal(got.fellBack, true);
    got.forEach((bytes, i) => assert.ok(Buffer.from(bytes).equals(expected[i]), `range ${i}`));
  } finally {
    await new Promise((resolve) => bad.close(resolve));
  }
});

// The test server's bandwidth cap (what the lazy benchmark and tests
// throttle with): a response's last byte comes no sooner than its size
// takes at the cap, small ones included.
for (const shared of [false, true]) {
  test(`the bandwidth cap holds back a response until its bytes could have arrived (${shared ? 'shared link' : 'per response'})`, async () => {
    Object.assign(server.options, { bandwidth: 200_000, sharedBandwidth: shared, multiRange: true, gzipRanges: false });
    try {
      for (const bytes of [5000, 60_000]) {
        const t0 = performance.now();
        const res = await fetch(url, { headers: { range: `bytes=0-${bytes - 1}` } });
        const body = Buffer.from(await res.arrayBuffer());
        const ms = performance.now() - t0;
        assert.equal(body.length, bytes);
        // 200 KB/s: 25 ms for 5 KB, 300 ms for 60 KB (less a timer's slack).
        assert.ok(ms >= (bytes / 200_000) * 1000 - 5, `${bytes} bytes in ${ms.toFixed(1)} ms`);
      }
    } finally {
      Object.assign(server.options, { bandwidth: 0, sharedBandwidth: false });
    }
  });
}
