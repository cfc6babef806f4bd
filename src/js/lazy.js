// Lazy mode, JS half (called from src/storage/lazy/mod.rs and worker.js):
// HTTP Range reads of the published raw index, the hot-page prefetch, and
// the OPFS files a lazy session fills in the background.
//
// Every range answer is checked before its bytes are used: status 206, a
// Content-Range naming exactly the bytes asked for and the size the
// manifest announces (so pages of two published versions never mix; the
// file name is content-addressed too), no Content-Encoding, and a
// Content-Length equal to the range. A server that ignores Range (200 with
// the whole file), compresses ranges or drops Content-Length fails with
// `lazy.range_unsupported`, and the session falls back to the full
// download. Errors are thrown as Error objects with a dotted `code`.

const FILL_DIR = '.gitsense-search-lazy';
const RETRIES = 2;

function fail(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

/**
 * Checks a range answer's headers; `get(name)` reads a header. Throws
 * lazy.range_unsupported (the server cannot serve ranges as needed) or
 * network.http_status.
 */
function checkRange(url, status, get, start, end, size) {
  if (status === 416) {
    const total = /^bytes \*\/(\d+)$/.exec(get('content-range') || '');
    if (total && Number(total[1]) !== size) {
      throw fail('lazy.version_mismatch', `${url} has ${total[1]} bytes but the manifest announces ${size}: it is not the published index`);
    }
  }
  if (status === 200) {
    throw fail('lazy.range_unsupported', `the server ignored the Range header for ${url} (it answered 200 with the whole file)`);
  }
  if (status !== 206) throw fail('network.http_status', `${url} answered HTTP ${status} to a range request`);
  const encoding = get('content-encoding');
  if (encoding && encoding !== 'identity') {
    throw fail('lazy.range_unsupported', `the server compressed a range of ${url} (Content-Encoding: ${encoding}), so byte offsets cannot be trusted`);
  }
  const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(get('content-range') || '');
  if (!range) throw fail('lazy.range_unsupported', `the server answered a range of ${url} without a valid Content-Range`);
  if (Number(range[3]) !== size) {
    throw fail('lazy.version_mismatch', `${url} has ${range[3]} bytes but the manifest announces ${size}: it is not the published index`);
  }
  if (Number(range[1]) !== start || Number(range[2]) !== end) {
    throw fail('lazy.range_unsupported', `the server answered bytes ${range[1]}-${range[2]} of ${url} instead of ${start}-${end}`);
  }
  const length = get('content-length');
  if (length === null || length === undefined || length === '') {
    throw fail('lazy.range_unsupported', `the server answered a range of ${url} without Content-Length`);
  }
  if (Number(length) !== end - start + 1) {
    throw fail('lazy.range_unsupported', `the server sent Content-Length ${length} for ${end - start + 1} bytes of ${url}`);
  }
}

/** The error of a read that failed (`doing`: what it was), retried by the caller. */
function readFailed(timedOut, doing, timeoutMs, e) {
  return timedOut ? fail('network.timeout', `${doing}: no answer within ${timeoutMs} ms`) : fail('network.failed', `${doing}: ${e.message}`);
}

/**
 * Bytes `start..=end` of `url` (a file of `size` bytes), with a synchronous
 * XMLHttpRequest: SQLite reads pages synchronously, and a dedicated worker
 * may block. Network failures and timeouts are retried twice.
 */
export function rangeSync(url, start, end, size, timeoutMs) {
  let last;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    const xhr = new XMLHttpRequest();
    try {
      xhr.open('GET', url, false);
      xhr.responseType = 'arraybuffer';
      xhr.timeout = timeoutMs;
      xhr.setRequestHeader('Range', `bytes=${start}-${end}`);
      xhr.send();
    } catch (e) {
      if (typeof navigator !== 'undefined' && navigator.onLine === false) {
        throw fail('network.offline', `the browser is offline and bytes ${start}-${end} of the index have not been fetched yet`);
      }
      last = readFailed(e.name === 'TimeoutError', `reading bytes ${start}-${end} of ${url} failed`, timeoutMs, e);
      continue;
    }
    if (xhr.status >= 500) {
      last = fail('network.http_status', `${url} answered HTTP ${xhr.status} to a range request`);
      continue;
    }
    checkRange(url, xhr.status, (h) => xhr.getResponseHeader(h), start, end, size);
    const bytes = new Uint8Array(xhr.response);
    if (bytes.length !== end - start + 1) {
      throw fail('lazy.range_unsupported', `the server sent ${bytes.length} bytes for ${end - start + 1} bytes of ${url}`);
    }
    return bytes;
  }
  throw last;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * GET `url` with `Range: header` (`what` names the bytes in errors),
 * retried twice with a pause after a network failure, a 5xx answer or a
 * body cut off. `check(res)` vets the answer's headers; when it throws, the
 * answer is aborted there (a server ignoring Range never sends the whole
 * file). Resolves { res, body: Uint8Array }.
 */
async function rangeRequest(url, header, what, timeoutMs, check) {
  let last;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    if (attempt) await sleep(250 * attempt);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      let res;
      try {
        // no-store: the HTTP cache would serialise concurrent requests for one URL
        // (its cache lock); pages are kept in OPFS anyway.
        res = await fetch(url, { headers: { Range: header }, signal: abort.signal, credentials: 'same-origin', cache: 'no-store' });
      } catch (e) {
        last = readFailed(abort.signal.aborted, `reading ${what} failed`, timeoutMs, e);
        continue;
      }
      if (res.status >= 500) {
        abort.abort();
        last = fail('network.http_status', `${url} answered HTTP ${res.status} to a range request`);
        continue;
      }
      try {
        check(res);
      } catch (e) {
        abort.abort();
        throw e;
      }
      try {
        return { res, body: new Uint8Array(await res.arrayBuffer()) };
      } catch (e) {
        last = readFailed(abort.signal.aborted, `reading ${what} was interrupted`, timeoutMs, e);
      }
    } finally {
      clearTimeout(timer);
    }
  }
  throw last;
}

/** Bytes `start..=end` of `url` with fetch (the background fill, probes). */
export async function rangeFetch(url, start, end, size, timeoutMs) {
  const { body } = await rangeRequest(url, `bytes=${start}-${end}`, `bytes ${start}-${end} of ${url}`, timeoutMs, (res) =>
    checkRange(url, res.status, (h) => res.headers.get(h), start, end, size),
  );
  if (body.length !== end - start + 1) {
    throw fail('lazy.range_unsupported', `the server sent ${body.length} bytes for ${end - start + 1} bytes of ${url}`);
  }
  return body;
}

/** Several ranges of `url` at once (the warm-up before a query): an array of Uint8Array. */
export function rangeFetchAll(url, starts, ends, size, timeoutMs) {
  return Promise.all(Array.from(starts, (start, i) => rangeFetch(url, start, ends[i], size, timeoutMs)));
}

const CRLF2 = [13, 10, 13, 10];

function indexOfBytes(bytes, pattern, from) {
  const first = pattern[0];
  for (let i = bytes.indexOf(first, from); i !== -1 && i + pattern.length <= bytes.length; i = bytes.indexOf(first, i + 1)) {
    let k = 1;
    while (k < pattern.length && bytes[i + k] === pattern[k]) k++;
    if (k === pattern.length) return i;
  }
  return -1;
}

const latin1 = (bytes) => String.fromCharCode.apply(null, bytes);

/**
 * The parts of a multipart/byteranges body: [{ start, end, total, bytes }].
 * Each part's length comes from its Content-Range, so part bytes that
 * happen to hold the boundary cannot cut a part short. Throws
 * lazy.range_unsupported on anything malformed.
 */
export function parseByteranges(body, boundary, url) {
  const bad = (why) => fail('lazy.range_unsupported', `the server's multipart answer for ${url} is malformed: ${why}`);
  const delimiter = Array.from(`--${boundary}`, (c) => c.charCodeAt(0));
  const parts = [];
  let at = indexOfBytes(body, delimiter, 0);
  if (at === -1) throw bad('no boundary');
  for (;;) {
    at += delimiter.length;
    if (body[at] === 45 && body[at + 1] === 45) return parts; // the closing "--boundary--"
    const headersEnd = indexOfBytes(body, CRLF2, at);
    if (headersEnd === -1) throw bad('a part without a blank line after its headers');
    const headers = latin1(body.subarray(at, headersEnd));
    const range = /^content-range:[ \t]*bytes (\d+)-(\d+)\/(\d+|\*)[ \t]*$/im.exec(headers);
    if (!range) throw bad('a part without a Content-Range');
    const start = Number(range[1]);
    const end = Number(range[2]);
    const from = headersEnd + 4;
    if (end < start || from + (end - start + 1) > body.length) throw bad(`part ${start}-${end} is cut short`);
    parts.push({ start, end, total: range[3], bytes: body.subarray(from, from + end - start + 1) });
    at = indexOfBytes(body, delimiter, from + end - start + 1);
    if (at === -1) throw bad('no closing boundary');
  }
}

/**
 * Several ranges of `url` in one request (`Range: bytes=a-b,c-d,...`): an
 * array of Uint8Array, one per range. The answer is a multipart/byteranges
 * body, or one part when the server merged the ranges; either way every
 * range asked for must be inside a part whose Content-Range names the
 * manifest's size. A 200 answer is aborted at its headers and fails with
 * lazy.multi_range_unsupported (the caller asks range by range instead).
 * Network failures are retried twice.
 */
export async function rangesFetch(url, starts, ends, size, timeoutMs) {
  const what = `${starts.length} ranges of ${url}`;
  // Read off the headers once: the multipart boundary, or the one part's
  // first and last byte.
  let boundary;
  let single;
  const { body } = await rangeRequest(url, `bytes=${Array.from(starts, (s, i) => `${s}-${ends[i]}`).join(',')}`, what, timeoutMs, (res) => {
    if (res.status === 200) {
      throw fail('lazy.multi_range_unsupported', `the server answered 200 with the whole file to a request for ${what}`);
    }
    boundary = (/^multipart\/byteranges\s*;\s*boundary="?([^";]+)"?/i.exec(res.headers.get('content-type') || '') || [])[1];
    if (boundary) {
      if (res.status !== 206) throw fail('network.http_status', `${url} answered HTTP ${res.status} to a range request`);
      const encoding = res.headers.get('content-encoding');
      if (encoding && encoding !== 'identity') {
        throw fail('lazy.range_unsupported', `the server compressed ${what} (Content-Encoding: ${encoding}), so byte offsets cannot be trusted`);
      }
    } else {
      // One part: the server merged the ranges (or sent the first only).
      // checkRange vets it whole: status, encoding, size, Content-Length.
      const got = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(res.headers.get('content-range') || '');
      single = got ? [Number(got[1]), Number(got[2])] : [-1, -1];
      checkRange(url, res.status, (h) => res.headers.get(h), single[0], single[1], size);
    }
  });
  let parts;
  if (boundary) {
    try {
      parts = parseByteranges(body, boundary, url);
    } catch (e) {
      // A multipart body this parser cannot read: range by range instead.
      throw fail('lazy.multi_range_unsupported', e.message);
    }
    for (const p of parts) {
      if (Number(p.total) !== size) {
        throw fail('lazy.version_mismatch', `${url} has ${p.total} bytes but the manifest announces ${size}: it is not the published index`);
      }
    }
  } else {
    const [start, end] = single;
    if (body.length !== end - start + 1) {
      throw fail('lazy.range_unsupported', `the server sent ${body.length} bytes for bytes ${start}-${end} of ${url}`);
    }
    parts = [{ start, end, bytes: body }];
  }
  return Array.from(starts, (start, i) => {
    const p = parts.find((q) => q.start <= start && ends[i] <= q.end);
    if (!p) throw fail('lazy.multi_range_unsupported', `the server's answer for ${what} left out bytes ${start}-${ends[i]}`);
    return p.bytes.slice(start - p.start, ends[i] - p.start + 1);
  });
}

/**
 * Ranges of `url` (an array of Uint8Array, one per range) in requests of
 * at most `perRequest` ranges each, all at once: the warm-up's round on a
 * server that serves several ranges per request. A request the server
 * answers without them is asked again range by range, and the array's
 * `fellBack` is then true.
 */
export async function rangeFetchMulti(url, starts, ends, size, timeoutMs, perRequest) {
  const chunks = [];
  for (let i = 0; i < starts.length; i += perRequest) chunks.push([i, Math.min(starts.length, i + perRequest)]);
  let fellBack = false;
  const answers = await Promise.all(
    chunks.map(([a, b]) => {
      const s = Array.from(starts).slice(a, b);
      const e = Array.from(ends).slice(a, b);
      if (s.length === 1) return rangeFetch(url, s[0], e[0], size, timeoutMs).then((bytes) => [bytes]);
      return rangesFetch(url, s, e, size, timeoutMs).catch((err) => {
        if (!err || err.code !== 'lazy.multi_range_unsupported') throw err;
        fellBack = true;
        return rangeFetchAll(url, s, e, size, timeoutMs);
      });
    }),
  );
  const out = answers.flat();
  // The server stopped serving several ranges per request (a CDN in front
  // changed, say): the caller asks range by range from now on.
  out.fellBack = fellBack;
  return out;
}

/**
 * How `url` (a file of `size` bytes) serves ranges, probed before any page
 * is read: a 1-byte range and, for a same-origin index, two ranges in one
 * request, in parallel. Resolves { probe: null | { code, message } (no
 * usable ranges: the session downloads the whole file), multi: whether
 * several ranges per request work }.
 */
export async function probeRanges(url, size, timeoutMs) {
  const sameOrigin = typeof location === 'undefined' || new URL(url, location.href).origin === location.origin;
  const [probe, multi] = await Promise.all([
    rangeFetch(url, 0, 0, size, timeoutMs).then(
      () => null,
      (e) => probeError(e),
    ),
    size > 2 && sameOrigin
      ? rangesFetch(url, [0, 2], [0, 2], size, timeoutMs).then(
          () => true,
          () => false,
        )
      : false,
  ]);
  return { probe, multi: !probe && multi };
}

/**
 * A failed range probe: the manifest just loaded from the same server, so
 * a request that fails outright (a range answer the browser rejects, such
 * as a compressed one) means ranges are not usable here.
 */
function probeError(e) {
  if (e && e.code === 'network.failed') {
    return { code: 'lazy.range_unsupported', message: `the server does not serve usable byte ranges: ${e.message}` };
  }
  return { code: (e && e.code) || 'network.failed', message: e && e.message };
}

// Raw DEFLATE (RFC 1951), decoded here rather than by DecompressionStream:
// a packed page is a few KiB, and a stream per page (a Blob, a pipe, a
// Response, several tasks each) cost a cold visit ~20 ms a round in
// Chromium. Canonical Huffman codes as zlib's puff.c decodes them, with a
// table for codes of up to FAST_BITS bits (nearly all of them); every
// bound is checked, so bytes that are not DEFLATE fail instead of reading
// or writing out of place.
const FAST_BITS = 9;
const LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
// The order code length code lengths come in.
const CLEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/** A Huffman code's tables (filled by huffman()). */
const code = (symbols) => ({ count: new Uint16Array(16), symbol: new Uint16Array(symbols), fast: new Uint16Array(1 << FAST_BITS) });

/**
 * Fills `h` with the canonical Huffman code of the code lengths
 * `lengths[at..at + n]`: `count[len]` codes of each length, `symbol` the
 * symbols in code order, and `fast[next FAST_BITS bits]` the symbol << 4 |
 * length of a code that short (0: longer). Returns 0 for a complete code,
 * more for an incomplete one, less for an over-subscribed one (not a code).
 */
function huffman(lengths, at, n, h) {
  const { count, symbol, fast } = h;
  count.fill(0);
  fast.fill(0);
  for (let s = 0; s < n; s++) count[lengths[at + s]]++;
  if (count[0] === n) return 0;
  let left = 1;
  for (let len = 1; len <= 15; len++) {
    left = (left << 1) - count[len];
    if (left < 0) return left;
  }
  const offs = new Uint16Array(16);
  for (let len = 1; len < 15; len++) offs[len + 1] = offs[len] + count[len];
  for (let s = 0; s < n; s++) if (lengths[at + s] !== 0) symbol[offs[lengths[at + s]]++] = s;
  // Codes in order: each length's first code follows the last one before.
  let next = 0;
  let k = 0;
  for (let len = 1; len <= FAST_BITS; len++, next <<= 1) {
    for (let i = 0; i < count[len]; i++, next++, k++) {
      // The stream holds a code's first bit first: index by it reversed.
      let rev = 0;
      for (let b = 0; b < len; b++) rev |= ((next >> b) & 1) << (len - 1 - b);
      for (let j = rev; j < 1 << FAST_BITS; j += 1 << len) fast[j] = (symbol[k] << 4) | len;
    }
  }
  return left;
}

// A dynamic block's code lengths and tables, filled anew by each block
// (inflateRaw runs to its end without yielding: one set serves every call).
let scratch = null;

let fixedCodes = null;
function fixed() {
  if (!fixedCodes) {
    const lengths = new Uint8Array(288 + 30);
    lengths.fill(8, 0, 144);
    lengths.fill(9, 144, 256);
    lengths.fill(7, 256, 280);
    lengths.fill(8, 280, 288);
    lengths.fill(5, 288);
    fixedCodes = [code(288), code(30)];
    huffman(lengths, 0, 288, fixedCodes[0]);
    huffman(lengths, 288, 30, fixedCodes[1]);
  }
  return fixedCodes;
}

/**
 * Inflates the raw DEFLATE stream `src` into `out`, which it must fill
 * exactly; throws an Error saying what is wrong with the bytes otherwise
 * (cut short, not DEFLATE, or more or fewer bytes than `out` holds).
 */
export function inflateRaw(src, out) {
  let pos = 0;
  let bitbuf = 0;
  let bitcnt = 0;
  let at = 0;
  const broken = (why) => new Error(why);
  const bits = (n) => {
    while (bitcnt < n) {
      if (pos >= src.length) throw broken('the stream ends early');
      bitbuf |= src[pos++] << bitcnt;
      bitcnt += 8;
    }
    const v = bitbuf & ((1 << n) - 1);
    bitbuf >>>= n;
    bitcnt -= n;
    return v;
  };
  const decode = (h) => {
    while (bitcnt <= 16 && pos < src.length) {
      bitbuf |= src[pos++] << bitcnt;
      bitcnt += 8;
    }
    if (bitcnt >= FAST_BITS) {
      const e = h.fast[bitbuf & ((1 << FAST_BITS) - 1)];
      if (e !== 0) {
        bitbuf >>>= e & 15;
        bitcnt -= e & 15;
        return e >> 4;
      }
    }
    // Bit by bit (puff.c): a long code, or the stream's last bits.
    const { count, symbol } = h;
    let c = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len <= 15; len++) {
      if (bitcnt === 0) throw broken('the stream ends early');
      c |= bitbuf & 1;
      bitbuf >>>= 1;
      bitcnt--;
      const n = count[len];
      if (c - n < first) return symbol[index + (c - first)];
      index += n;
      first = (first + n) << 1;
      c <<= 1;
    }
    throw broken('a code that is not in its table');
  };
  const { lengths, lenCode, distCode } = scratch || (scratch = { lengths: new Uint8Array(286 + 30), lenCode: code(286), distCode: code(30) });
  let last;
  do {
    last = bits(1);
    const type = bits(2);
    if (type === 0) {
      // Stored: the rest of the current byte is padding; whole bytes
      // already taken into the bit buffer go back.
      bitbuf >>>= bitcnt & 7;
      bitcnt -= bitcnt & 7;
      pos -= bitcnt >> 3;
      bitbuf = 0;
      bitcnt = 0;
      if (pos + 4 > src.length) throw broken('the stream ends early');
      const len = src[pos] | (src[pos + 1] << 8);
      if ((src[pos + 2] | (src[pos + 3] << 8)) !== (~len & 0xffff)) throw broken('a stored block whose length does not check');
      pos += 4;
      if (pos + len > src.length) throw broken('the stream ends early');
      if (at + len > out.length) throw broken(`more than ${out.length} bytes`);
      out.set(src.subarray(pos, pos + len), at);
      pos += len;
      at += len;
      continue;
    }
    let lc = lenCode;
    let dc = distCode;
    if (type === 1) {
      [lc, dc] = fixed();
    } else if (type === 2) {
      const nlen = bits(5) + 257;
      const ndist = bits(5) + 1;
      const ncode = bits(4) + 4;
      if (nlen > 286 || ndist > 30) throw broken('too many codes');
      lengths.fill(0, 0, 19);
      for (let i = 0; i < ncode; i++) lengths[CLEN_ORDER[i]] = bits(3);
      if (huffman(lengths, 0, 19, lenCode) !== 0) throw broken('an incomplete code length code');
      let i = 0;
      const total = nlen + ndist;
      while (i < total) {
        const sym = decode(lenCode);
        if (sym < 16) {
          lengths[i++] = sym;
          continue;
        }
        let len = 0;
        let rep;
        if (sym === 16) {
          if (i === 0) throw broken('a repeat with nothing to repeat');
          len = lengths[i - 1];
          rep = 3 + bits(2);
        } else if (sym === 17) {
          rep = 3 + bits(3);
        } else {
          rep = 11 + bits(7);
        }
        if (i + rep > total) throw broken('code lengths past their count');
        lengths.fill(len, i, i + rep);
        i += rep;
      }
      if (lengths[256] === 0) throw broken('no end-of-block code');
      // An incomplete code is allowed only as a single code of length 1.
      let err = huffman(lengths, 0, nlen, lenCode);
      if (err < 0 || (err > 0 && nlen - lenCode.count[0] !== 1)) throw broken('an incomplete literal/length code');
      err = huffman(lengths, nlen, ndist, distCode);
      if (err < 0 || (err > 0 && ndist - distCode.count[0] !== 1)) throw broken('an incomplete distance code');
    } else {
      throw broken('a block of the reserved type 3');
    }
    for (;;) {
      let sym = decode(lc);
      if (sym < 256) {
        if (at >= out.length) throw broken(`more than ${out.length} bytes`);
        out[at++] = sym;
      } else if (sym === 256) {
        break;
      } else {
        sym -= 257;
        if (sym >= 29) throw broken('a length code out of range');
        const len = LEN_BASE[sym] + bits(LEN_EXTRA[sym]);
        const d = decode(dc);
        if (d >= 30) throw broken('a distance code out of range');
        const dist = DIST_BASE[d] + bits(DIST_EXTRA[d]);
        if (dist > at) throw broken('a distance before the start');
        if (at + len > out.length) throw broken(`more than ${out.length} bytes`);
        for (const end = at + len; at < end; at++) out[at] = out[at - dist];
      }
    }
  } while (!last);
  if (at !== out.length) throw broken(`${at} bytes, not ${out.length}`);
}

/**
 * Pages from runs of the packed file (publish's `index-<hash>.pages`: each
 * page raw DEFLATE on its own, or as is when its length is the page size):
 * `answers[i]` holds `counts[i]` pages whose lengths are the next
 * `counts[i]` of `lengths`. Returns an array with each run's pages
 * (inflateRaw, in place). Throws lazy.packed_invalid when the bytes are
 * not what the lengths say or a page does not inflate to exactly
 * `pageSize` bytes (the caller then reads the raw index instead).
 */
export function inflateRuns(answers, lengths, counts, pageSize) {
  const bad = (why) => fail('lazy.packed_invalid', `the packed index pages are not usable: ${why}`);
  let k = 0;
  return Array.from(answers, (bytes, i) => {
    const count = counts[i];
    let want = 0;
    for (let n = 0; n < count; n++) want += lengths[k + n];
    if (want !== bytes.length) throw bad(`a run of ${count} pages came as ${bytes.length} bytes, not ${want}`);
    const out = new Uint8Array(count * pageSize);
    let at = 0;
    for (let n = 0; n < count; n++, k++) {
      const page = bytes.subarray(at, at + lengths[k]);
      const into = out.subarray(n * pageSize, (n + 1) * pageSize);
      at += lengths[k];
      if (page.length === pageSize) {
        into.set(page);
        continue;
      }
      try {
        inflateRaw(page, into);
      } catch (e) {
        throw bad(`a page does not inflate to ${pageSize} bytes (${e.message})`);
      }
    }
    return out;
  });
}

/**
 * The most bytes the hot file of manifest `m` can inflate to: its pages
 * (hotFormat 2: each with a 4-byte length and at most twice the page
 * size, far above what the codec makes) and the packed file's page
 * lengths (2 bytes a page). A gzip bomb in its place stops there.
 */
export function hotLimit(m) {
  const pages = Array.isArray(m.hotPages) ? Math.min(m.hotPages.length, m.pageCount || 0) : 0;
  const perPage = m.hotFormat === 2 ? 4 + 2 * m.pageSize : m.pageSize;
  return pages * perPage + 2 * (m.pageCount || 0) + 64;
}

/**
 * A decompressed stream's chunks, at most `limit` bytes in all: past that
 * the stream is cancelled and download.too_large thrown, so what the
 * manifest declares bounds the memory and time a bad file costs. `each`
 * gets every chunk and may return true to stop early (the stream is then
 * cancelled too). Resolves the bytes kept.
 */
export async function readAtMost(stream, limit, what, each) {
  const reader = stream.getReader();
  const chunks = [];
  let have = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      have += value.length;
      if (have > limit) throw fail('download.too_large', `${what} inflates to more than the ${limit} bytes the manifest allows`);
      chunks.push(value);
      if (each && each(value, have)) break;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  const out = new Uint8Array(have);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function gunzip(res, limit, what) {
  return readAtMost(res.body.pipeThrough(new DecompressionStream('gzip')), limit, what);
}

const FIRST_VISIT_MAGIC = 'GSXHOT1\n';

/** The manifest's length in the header of a first visit's file (its
 * first 12 bytes at least), or null when `bytes` do not start as one. */
function firstVisitLength(bytes) {
  if (bytes.length < 12 || ![...FIRST_VISIT_MAGIC].every((c, i) => bytes[i] === c.charCodeAt(0))) return null;
  return (bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (bytes[11] << 24)) >>> 0;
}

/**
 * The hot file's bytes in a first visit's file (publish's
 * manifest.hot.gz, uncompressed: "GSXHOT1\n", the manifest's length as 4
 * bytes little-endian, the manifest, the hot file), or null unless that
 * manifest is `manifestText` exactly: an index published between the two
 * requests, or a manifest edited since, never gets these pages.
 */
export function firstVisitHot(bytes, manifestText) {
  const len = firstVisitLength(bytes);
  if (len === null || 12 + len > bytes.length) return null;
  const inside = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let text;
  try {
    text = inside.decode(bytes.subarray(12, 12 + len));
  } catch {
    return null;
  }
  return text === manifestText ? bytes.slice(12 + len) : null;
}

/**
 * Reads a first visit's file (a fetch Response) through firstVisitHot(),
 * checking the manifest in it as soon as it has come: another manifest
 * stops the download there (a stale copy in a cache then costs the few
 * KB before its end, not the whole file before the named hot file is asked
 * for). Resolves the hot file's bytes or null; never rejects.
 */
export async function readFirstVisitHot(res, manifestText, limit = Infinity) {
  let stream;
  try {
    stream = res.body.pipeThrough(new DecompressionStream('gzip'));
  } catch {
    return null;
  }
  // The manifest's length once the manifest is in and is this one; false
  // once it is known not to be.
  let checked = null;
  let head = new Uint8Array(0);
  const bytes = await readAtMost(stream, 12 + manifestText.length * 3 + limit, 'manifest.hot.gz', (value) => {
    if (checked !== null) return false;
    const joined = new Uint8Array(head.length + value.length);
    joined.set(head);
    joined.set(value, head.length);
    head = joined;
    if (head.length < 12) return false;
    // The magic, then the manifest once it is in: the rest only if they
    // are this manifest's.
    const len = firstVisitLength(head);
    if (len === null) return (checked = false), true;
    if (head.length < 12 + len) return false;
    if (firstVisitHot(head.subarray(0, 12 + len), manifestText) === null) return (checked = false), true;
    checked = len;
    return false;
  }).catch(() => null);
  if (!bytes || !checked) return null;
  return bytes.slice(12 + checked);
}

/** The largest index the module opens (crates/publish's
 * MAX_BROWSER_INDEX_BYTES; tests/browser/reliability.test.mjs checks that
 * nothing of a larger one is requested). */
const MAX_INDEX_BYTES = 4 * 1024 ** 3;

/**
 * The first visit's hand-off: what the page fetched before the wasm module
 * was ready, in the one shape the session reads (src/storage/lazy/mod.rs
 * `Prefetched`): `manifest` (text), `hot` (the hot file gunzipped, as
 * published: the session decodes its pages by the manifest's `hotFormat`),
 * `hotError` ({ code, message }: why they are missing), `probe` and
 * `multi` (probeRanges), `stored` (the index is stored: only the manifest
 * was fetched, no range probed), and the fill files the worker opened
 * (`fill`, prepareFill's handles, named `fillBase`).
 */
export function handOff({ manifest = null, hot = null, hotError = null, probe = null, multi = false, stored = false, fill = null, fillBase = null } = {}) {
  return { manifest, hot, hotError, probe, multi, stored, probed: !stored, fill, fillBase };
}

/**
 * What the page fetches before the wasm module is ready (index.js): the
 * manifest (or `manifestResponse`, a fetch of it already under way), then
 * at once the hot pages and the range probes (probeRanges) of the raw
 * index, in parallel. Resolves the hand-off (handOff), or null when
 * nothing could be fetched (the session then does it itself and reports
 * the error). `onManifest(text)`, if given, gets the manifest of an index
 * that can be read lazily as soon as it is here, before the hot pages (the
 * worker opens the fill files meanwhile: openFill()). `firstVisitFile`: a
 * fetch of publish's first-visit file (manifest.hot.gz) made alongside the
 * manifest, or null.
 */
export async function prefetch(manifestUrl, timeoutMs, manifestResponse, onManifest, firstVisitFile) {
  const firstVisit = { response: firstVisitFile };
  try {
    return await prefetchWith(manifestUrl, timeoutMs, manifestResponse, onManifest, firstVisit);
  } finally {
    // Not taken (no manifest, an index not read lazily, no decompressor):
    // its body is not left holding a connection.
    if (firstVisit.response) Promise.resolve(firstVisit.response).then(discard, () => {});
  }
}

/** Cancels the body of a response not read (null: nothing to do). */
function discard(res) {
  if (res && res.body && !res.bodyUsed) res.body.cancel().catch(() => {});
  return null;
}

/** `{ signal }` that aborts a fetch after `ms` (none where unsupported). */
function timeoutSignal(ms) {
  return typeof AbortSignal !== 'undefined' && AbortSignal.timeout ? { signal: AbortSignal.timeout(ms ?? 10000) } : {};
}

async function prefetchWith(manifestUrl, timeoutMs, manifestResponse, onManifest, firstVisit) {
  try {
    const res = await (manifestResponse || fetch(manifestUrl, { cache: 'no-cache', credentials: 'same-origin', ...timeoutSignal(timeoutMs) }));
    if (!res || !res.ok) return null;
    const text = await res.text();
    const m = JSON.parse(text);
    // An index too large to open is refused by the session, which reads
    // the manifest next: nothing of it is asked for here.
    // Pages are read by range from the raw index when one is published,
    // else from the packed file (then the session reads only that).
    const ranged = m && (typeof m.rawFile === 'string' ? [m.rawFile, m.size] : [m.packedFile, m.packedSize]);
    const usable = ranged && typeof ranged[0] === 'string' && Number.isInteger(ranged[1]) && Number.isInteger(m.size) && m.size <= MAX_INDEX_BYTES;
    if (!usable) return handOff({ manifest: text });
    const probe = probeRanges(new URL(ranged[0], res.url || manifestUrl).href, ranged[1], timeoutMs ?? 10000);
    let hot = Promise.resolve(null);
    // Why the hot pages are not used, when a file failed (too large:
    // download.too_large); the session reports it in info().lazy.hotOff.
    let hotError = null;
    if (typeof m.hotFile === 'string' && typeof DecompressionStream !== 'undefined') {
      const limit = hotLimit(m);
      const named = () =>
        fetch(new URL(m.hotFile, res.url || manifestUrl).href, { credentials: 'same-origin', ...timeoutSignal(timeoutMs) })
          .then((r) => (r.ok ? gunzip(r, limit, m.hotFile) : null))
          .catch((e) => {
            hotError = e && e.code ? { code: e.code, message: e.message } : hotError;
            return null;
          });
      // The first visit's file, asked for alongside the manifest: its hot
      // pages if it holds this very manifest, else the manifest's hot file.
      hot = firstVisit.response
        ? Promise.resolve(firstVisit.response)
            .then((r) => (r && r.ok ? readFirstVisitHot(r, text, limit) : discard(r)))
            .catch(() => null)
            .then((bytes) => bytes || named())
        : named();
      firstVisit.response = null;
      if (onManifest) onManifest(text);
    }
    const hotBytes = await hot;
    const { probe: failed, multi } = await probe;
    return handOff({ manifest: text, hot: hotBytes, hotError, probe: failed, multi });
  } catch {
    return null;
  }
}

// --- the whole index from the packed file ---------------------------------
//
// A manifest of compression "pages" names the packed file as the file to
// download: a session that cannot read by range (a host without Range, a
// browser without OPFS sync access handles) fetches it whole and inflates
// it page by page, with the page lengths the hot file ends with. The host
// keeps one copy of the index, not a gzip beside the packed file.

/**
 * The hot file of manifest `m` at `url`, gunzipped (at most hotLimit(m)
 * bytes), within `timeoutMs` in all. Throws network.http_status,
 * network.failed, network.timeout, download.too_large, download.corrupt
 * (not gzip) or download.unsupported (no DecompressionStream).
 */
export async function fetchHot(url, m, timeoutMs) {
  if (typeof DecompressionStream === 'undefined') {
    throw fail('download.unsupported', 'this browser has no DecompressionStream, which the hot file needs');
  }
  const ms = timeoutMs || 15000;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  try {
    let res;
    try {
      res = await fetch(url, { credentials: 'same-origin', signal: abort.signal });
    } catch (e) {
      throw readFailed(abort.signal.aborted, `fetching ${url} failed`, ms, e);
    }
    if (!res.ok) {
      discard(res);
      throw fail('network.http_status', `${url} answered HTTP ${res.status} ${res.statusText}`);
    }
    try {
      return await gunzip(res, hotLimit(m), url);
    } catch (e) {
      if (e && e.code) throw e;
      if (abort.signal.aborted) throw readFailed(true, `reading ${url}`, ms, e);
      throw fail('download.corrupt', `${url} is not valid gzip: ${e && e.message}`);
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Downloads the packed file at `url` (`packedSize` bytes) whole and
 * inflates it into the index's `size` bytes as it arrives: page i is the
 * next `lengths[i]` bytes, raw DEFLATE, or as is when that is `pageSize`.
 * A wait of more than `stallMs` for the next bytes fails with
 * network.timeout. onProgress({ phase: 'download', loaded, total }) at most
 * every 50 ms and once at the end, counting the packed file's bytes.
 * Throws download.too_large or download.truncated (a file of another
 * size), download.corrupt (a page that does not inflate to `pageSize`),
 * network.*.
 */
export async function downloadPacked(url, size, packedSize, pageSize, lengths, onProgress, stallMs) {
  const ms = stallMs || 60000;
  const abort = new AbortController();
  let timer = null;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(), ms);
  };
  touch();
  let received = 0;
  const stalled = (e, doing) => readFailed(abort.signal.aborted, `${doing} ${url}${received ? ` after ${received} bytes` : ''}`, ms, e);
  let reader = null;
  try {
    let res;
    try {
      res = await fetch(url, { cache: 'no-cache', credentials: 'same-origin', signal: abort.signal });
    } catch (e) {
      throw stalled(e, 'fetching');
    }
    if (!res.ok || !res.body) {
      discard(res);
      throw fail('network.http_status', `${url} answered HTTP ${res.status} ${res.statusText}`);
    }
    const packed = new Uint8Array(packedSize);
    const out = new Uint8Array(size);
    let page = 0;
    let at = 0;
    let lastReport = 0;
    const report = (force) => {
      const now = performance.now();
      if (onProgress && (force || now - lastReport >= 50)) {
        lastReport = now;
        onProgress({ phase: 'download', loaded: received, total: packedSize });
      }
    };
    report(true);
    reader = res.body.getReader();
    for (;;) {
      let r;
      try {
        r = await reader.read();
      } catch (e) {
        throw stalled(e, 'downloading');
      }
      touch();
      if (r.done) break;
      if (received + r.value.length > packedSize) {
        throw fail('download.too_large', `${url} is larger than the ${packedSize} bytes the manifest announces`);
      }
      packed.set(r.value, received);
      received += r.value.length;
      // Pages are inflated as soon as they are in, so the work is spread
      // over the download.
      while (page < lengths.length && at + lengths[page] <= received) {
        const src = packed.subarray(at, at + lengths[page]);
        const into = out.subarray(page * pageSize, (page + 1) * pageSize);
        if (src.length === pageSize) {
          into.set(src);
        } else {
          try {
            inflateRaw(src, into);
          } catch (e) {
            throw fail('download.corrupt', `page ${page + 1} of ${url} does not inflate to ${pageSize} bytes (${e.message})`);
          }
        }
        at += lengths[page];
        page += 1;
      }
      report(false);
    }
    if (received < packedSize) {
      throw fail('download.truncated', `${url} ended after ${received} of ${packedSize} bytes`);
    }
    if (page !== lengths.length || page * pageSize !== size) {
      throw fail('download.corrupt', `${url} holds ${page} pages, not the ${size / pageSize} of the index`);
    }
    report(true);
    return out;
  } finally {
    clearTimeout(timer);
    if (reader) reader.cancel().catch(() => {});
  }
}

// --- the OPFS files a lazy session fills -----------------------------------
//
// In the directory FILL_DIR: `<base>.part` holds the pages fetched so far at
// their offsets, `<base>.map` one byte per page (1 = stored, flushed after
// the page itself), so a reload resumes where the fill stopped. `stored-
// <scope>` says that an index of that scope is complete in the OPFS pool,
// so the next visit's worker does not prefetch. Sync access handles: only in
// a dedicated worker, one holder at a time.

async function fillDir(create) {
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(FILL_DIR, { create });
}

// Chromium's sync access handles have answered a failed write with a
// negative error code read as an unsigned 32-bit count (4294967288: -8,
// base::File's FILE_ERROR_NO_SPACE, when the quota is exhausted). A count
// beyond what was asked is such a code, never a length.
const FILE_ERROR_NO_SPACE = -8;

/** The error of a sync access handle's read or write that moved `n` of `want` bytes. */
function ioCountError(op, n, want) {
  if (n > want) {
    const code = n >= 2 ** 31 && n < 2 ** 32 ? n - 2 ** 32 : NaN;
    if (code === FILE_ERROR_NO_SPACE) return Object.assign(new Error(`the ${op} failed for lack of space (error ${code})`), { name: 'QuotaExceededError' });
    return new Error(`the ${op} failed (error ${Number.isNaN(code) ? n : code})`);
  }
  return new Error(`short ${op}: ${n} of ${want} bytes`);
}

function storageFail(what, e) {
  if (e && e.name === 'QuotaExceededError') return fail('storage.quota_exceeded', `${what}: the browser's storage quota is exhausted (${e.message})`);
  if (e && (e.name === 'NoModificationAllowedError' || e.name === 'InvalidStateError')) {
    return fail('storage.busy', `${what}: another tab or worker holds the file`);
  }
  return fail('storage.failed', `${what}: ${e ? `${e.name}: ${e.message}` : 'unknown error'}`);
}

/**
 * Opens (creating) the fill files `<base>.part` / `<base>.map` for an index
 * of `pageCount` pages of `pageSize` bytes. Resolves { part, map, present }
 * (present: Uint8Array, one byte per page) or throws storage.*.
 */
export async function fillOpen(base, pageCount, pageSize) {
  if (typeof FileSystemFileHandle === 'undefined' || !FileSystemFileHandle.prototype.createSyncAccessHandle) {
    throw fail('storage.unavailable', 'OPFS sync access handles are not available here');
  }
  let part;
  let map;
  try {
    const dir = await fillDir(true);
    part = await (await dir.getFileHandle(`${base}.part`, { create: true })).createSyncAccessHandle();
    map = await (await dir.getFileHandle(`${base}.map`, { create: true })).createSyncAccessHandle();
    const present = new Uint8Array(pageCount);
    if (map.getSize() === pageCount && part.getSize() === pageCount * pageSize) {
      map.read(present, { at: 0 });
    } else {
      // New, or of another geometry: start empty.
      part.truncate(pageCount * pageSize);
      map.truncate(0);
      map.truncate(pageCount);
      map.flush();
      part.flush();
    }
    return { part, map, present };
  } catch (e) {
    try {
      if (part) part.close();
      if (map) map.close();
    } catch {
      // already closed
    }
    throw storageFail('opening the lazy fill files', e);
  }
}

/** Writes `bytes` at `offset` of the part file (recorded by fillCommit). */
export function fillWrite(handles, offset, bytes) {
  try {
    const n = handles.part.write(bytes, { at: offset });
    if (n !== bytes.length) throw ioCountError('write', n, bytes.length);
  } catch (e) {
    throw storageFail('storing fetched pages', e);
  }
}

/**
 * Flushes the part file, then marks runs of pages (firsts[i], counts[i])
 * stored in the map and flushes it: a page is never marked before its
 * bytes are durable.
 */
export function fillCommit(handles, firsts, counts) {
  try {
    handles.part.flush();
    for (let i = 0; i < firsts.length; i++) {
      const ones = new Uint8Array(counts[i]).fill(1);
      handles.map.write(ones, { at: firsts[i] });
      handles.present.set(ones, firsts[i]);
    }
    handles.map.flush();
  } catch (e) {
    throw storageFail('recording stored pages', e);
  }
}

/** Reads stored bytes of the part file into `buf`. */
export function fillRead(handles, offset, buf) {
  try {
    const n = handles.part.read(buf, { at: offset });
    if (n !== buf.length) throw ioCountError('read', n, buf.length);
  } catch (e) {
    throw storageFail('reading stored pages', e);
  }
}

export function fillClose(handles) {
  for (const h of [handles.part, handles.map]) {
    try {
      h.close();
    } catch {
      // already closed
    }
  }
}

/** Removes the fill files whose names start with `prefix`, except those starting with `keep` (if not empty). */
export async function fillRemove(prefix, keep) {
  let dir;
  try {
    dir = await fillDir(false);
  } catch {
    return;
  }
  const names = [];
  for await (const name of dir.keys()) {
    if (name.startsWith(prefix) && !name.startsWith('stored-') && !(keep && name.startsWith(keep))) names.push(name);
  }
  for (const name of names) {
    try {
      await dir.removeEntry(name);
    } catch {
      // held by another tab: left for later
    }
  }
}

/**
 * Lazy mode's fill files, made ready by the worker while the wasm module
 * still downloads, so that a cold visit's first answer waits for no OPFS
 * call: for a prefetch (prefetch() above) that brought the hot file of an
 * index not stored yet, removes the stale fill files of this scope and
 * opens `<scope>-<first 16 of sha256>` (as src/storage/lazy/mod.rs names
 * it); the session writes the hot pages there once it has decoded them
 * and the fill starts. Resolves `value` with `fill` (the
 * fillOpen() handles) and `fillBase`, or `value` unchanged when something
 * is missing or fails (the session then opens the files itself, and says
 * why it cannot). `fillOpening`: openFill()'s promise for the manifest the
 * page sent ahead of the hot pages; its files are used when they are this
 * index's, else closed.
 */
export async function prepareFill(value, manifestUrl, fillOpening) {
  const opened = fillOpening ? await fillOpening.catch(() => null) : null;
  // Fill files opened ahead and not used are closed; removed too when
  // they hold nothing yet (a first visit's, made while it turned out the
  // index was stored: its mark in localStorage had been lost), so no empty
  // file of the index's full size is left behind.
  const unused = async () => {
    if (!opened) return;
    fillClose(opened.fill);
    if (!opened.fill.present.some((b) => b)) await fillRemove(`${opened.base}.`);
  };
  if (!value || value.stored || !(value.hot instanceof Uint8Array) || typeof value.manifest !== 'string') {
    await unused();
    return value;
  }
  let target;
  try {
    target = await fillTarget(value.manifest, manifestUrl);
  } catch {
    await unused();
    return value;
  }
  if (opened && opened.base === target.base && opened.fill.present.length === target.pageCount) {
    return handOff({ ...value, fill: opened.fill, fillBase: target.base });
  }
  await unused();
  try {
    return handOff({ ...value, fill: await openFillAt(target), fillBase: target.base });
  } catch {
    return value;
  }
}

/** Where the fill files of the index `manifestText` announces live
 * ({ scope, base, pageCount, pageSize }); throws when the manifest does
 * not describe a raw index this module opens. */
async function fillTarget(manifestText, manifestUrl) {
  const { sha256, pageCount, pageSize } = JSON.parse(manifestText);
  if (typeof sha256 !== 'string' || sha256.length < 16 || !Number.isInteger(pageCount) || !Number.isInteger(pageSize)) {
    throw fail('manifest.invalid', 'the manifest does not describe the raw index');
  }
  if (pageCount * pageSize > MAX_INDEX_BYTES) throw fail('download.too_large', `the index is larger than the ${MAX_INDEX_BYTES} bytes the module opens`);
  const scope = await scopeOf(manifestUrl);
  return { scope, base: `${scope}-${sha256.slice(0, 16)}`, pageCount, pageSize };
}

/** Removes the stale fill files of the target's scope and opens its own
 * (fillOpen()'s handles). */
async function openFillAt({ scope, base, pageCount, pageSize }) {
  await fillRemove(`${scope}-`, base);
  return fillOpen(base, pageCount, pageSize);
}

/**
 * Opens the fill files for the index `manifestText` announces (removing
 * the stale ones of this scope) while its hot pages are still on the way:
 * resolves { fill (fillOpen()'s handles), base }; rejects when the
 * manifest is not usable or OPFS fails (prepareFill() then tries again).
 */
export async function openFill(manifestText, manifestUrl) {
  const target = await fillTarget(manifestText, manifestUrl);
  return { fill: await openFillAt(target), base: target.base };
}

/** Records that an index of `scope` is complete in the OPFS pool. */
export async function markStored(scope) {
  try {
    const dir = await fillDir(true);
    await dir.getFileHandle(`stored-${scope}`, { create: true });
  } catch {
    // Only an optimisation: without it the next visit prefetches once more.
  }
}

/** Whether `markStored(scope)` was called (and storage not cleared since). */
/**
 * Marks the index whose fill files are `base` as proven wrong: its pages
 * read by range did not hash to the manifest's SHA-256. Later visits do
 * not read it lazily (src/session.rs); GitSenseSearch.clear() removes the
 * mark with the rest.
 */
export async function markRefused(base) {
  try {
    const dir = await fillDir(true);
    await dir.getFileHandle(`refused-${base}`, { create: true });
  } catch {
    // Without OPFS nothing of it was kept either.
  }
}

export async function isRefused(base) {
  try {
    const dir = await fillDir(false);
    await dir.getFileHandle(`refused-${base}`);
    return true;
  } catch {
    return false;
  }
}

export async function isMarkedStored(scope) {
  try {
    const dir = await fillDir(false);
    await dir.getFileHandle(`stored-${scope}`);
    return true;
  } catch {
    return false;
  }
}

/** The storage scope of a manifest URL (as src/storage/mod.rs computes it:
 * the URL without its query string or fragment). */
export async function scopeOf(manifestUrl) {
  const key = manifestUrl.split(/[?#]/)[0];
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key)));
  let s = '';
  for (const b of digest) s += b.toString(16).padStart(2, '0');
  return s.slice(0, 12);
}

export const FILL_DIRECTORY = FILL_DIR;
