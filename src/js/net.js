// Network half of the browser module, called from Rust (src/host.rs):
// the manifest request and the streamed index download.
//
// Errors are thrown as Error objects with a dotted `code`
// (network.failed, network.timeout, network.http_status,
// download.truncated, download.too_large, download.corrupt,
// download.unsupported) that Rust turns into the engine's structured
// errors.
//
// Every request is bounded in time: the manifest as a whole, the index
// download by the longest wait for its next bytes (a large index on a slow
// link may take minutes, a stalled one fails). A stalled request is
// aborted and fails with network.timeout.

function fail(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

/** False only when the browser knows it is offline. */
export function isOnline() {
  return typeof navigator === 'undefined' || navigator.onLine !== false;
}

/** `rel` resolved against `base` (itself resolved against the page). */
export function resolveUrl(rel, base) {
  return new URL(rel, new URL(base, self.location.href)).href;
}

/** The manifest's whole request, unless the page set requestTimeoutMs. */
export const MANIFEST_TIMEOUT_MS = 15000;
/** The index download's longest wait for more bytes, unless the page set requestTimeoutMs. */
export const DOWNLOAD_STALL_MS = 60000;

/**
 * An abort controller that fires after `ms` without a call to its
 * `touch()`; `timedOut()` tells a timeout from other failures.
 */
function deadline(ms) {
  const abort = new AbortController();
  let expired = false;
  let timer = null;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      expired = true;
      abort.abort();
    }, ms);
  };
  touch();
  return { signal: abort.signal, touch, timedOut: () => expired, done: () => clearTimeout(timer) };
}

function timeoutError(url, ms, what) {
  return fail('network.timeout', `${what} ${url}: no answer within ${ms} ms`);
}

async function get(url, limit) {
  let res;
  try {
    // no-cache: revalidate, so a changed manifest is seen at once.
    res = await fetch(url, { cache: 'no-cache', credentials: 'same-origin', signal: limit.signal });
  } catch (e) {
    if (limit.timedOut()) throw timeoutError(url, limit.ms, 'fetching');
    throw fail('network.failed', `cannot fetch ${url}: ${e.message}`);
  }
  if (!res.ok) {
    res.body?.cancel().catch(() => {});
    throw fail('network.http_status', `${url} answered HTTP ${res.status} ${res.statusText}`);
  }
  return res;
}

/** The manifest text, within `timeoutMs` (default MANIFEST_TIMEOUT_MS) in all. */
export async function fetchText(url, timeoutMs) {
  const ms = timeoutMs || MANIFEST_TIMEOUT_MS;
  const limit = { ...deadline(ms), ms };
  try {
    const res = await get(url, limit);
    try {
      return await res.text();
    } catch (e) {
      if (limit.timedOut()) throw timeoutError(url, ms, 'reading');
      throw fail('network.failed', `reading ${url} failed: ${e.message}`);
    }
  } finally {
    limit.done();
  }
}

/**
 * Downloads the index at `url` into a Uint8Array of exactly `expect.size`
 * bytes, decompressing gzip on the fly with DecompressionStream.
 *
 * expect: { size, compressedSize, compression: 'gzip' | 'none' }
 * stallMs: the longest wait for the response or its next bytes
 * (network.timeout); default DOWNLOAD_STALL_MS.
 * onProgress({ phase: 'download', loaded, total }) is called at most every
 * 50 ms and once at the end; loaded/total count bytes on the wire.
 *
 * A server that already sent the file with `Content-Encoding: gzip` hands
 * fetch() the decoded bytes; the gzip magic number tells the two apart.
 */
export async function downloadIndex(url, expect, onProgress, stallMs) {
  const ms = stallMs || DOWNLOAD_STALL_MS;
  const limit = { ...deadline(ms), ms };
  try {
    return await downloadWithin(url, expect, onProgress, limit);
  } finally {
    limit.done();
  }
}

async function downloadWithin(url, expect, onProgress, limit) {
  const res = await get(url, limit);
  if (!res.body) throw fail('network.failed', `${url} has no response body`);
  const out = new Uint8Array(expect.size);
  let written = 0;
  let received = 0;
  let lastReport = 0;
  const raw = res.body.getReader();
  const readRaw = async () => {
    try {
      const r = await raw.read();
      limit.touch();
      return r;
    } catch (e) {
      if (limit.timedOut()) throw fail('network.timeout', `the download of ${url} stalled after ${received} bytes: no data within ${limit.ms} ms`);
      throw fail('network.failed', `the download of ${url} was interrupted after ${received} bytes: ${e.message}`);
    }
  };
  const sink = (chunk) => {
    if (written + chunk.length > out.length) {
      throw fail('download.too_large', `the index is larger than the ${expect.size} bytes the manifest announces`);
    }
    out.set(chunk, written);
    written += chunk.length;
  };

  const first = await readRaw();
  const gzip = expect.compression === 'gzip' && !first.done && first.value[0] === 0x1f && first.value[1] === 0x8b;
  const total = gzip ? expect.compressedSize : expect.size;
  const report = (force) => {
    const now = performance.now();
    if (onProgress && (force || now - lastReport >= 50)) {
      lastReport = now;
      onProgress({ phase: 'download', loaded: received, total });
    }
  };
  report(true);

  if (!gzip) {
    for (let r = first; !r.done; r = await readRaw()) {
      received += r.value.length;
      sink(r.value);
      report(false);
    }
  } else {
    if (typeof DecompressionStream === 'undefined') {
      raw.cancel().catch(() => {});
      throw fail('download.unsupported', 'this browser has no DecompressionStream; publish the index uncompressed (compression "none")');
    }
    const ds = new DecompressionStream('gzip');
    const writer = ds.writable.getWriter();
    const reader = ds.readable.getReader();
    const pump = (async () => {
      try {
        for (let r = first; !r.done; r = await readRaw()) {
          received += r.value.length;
          report(false);
          await writer.write(r.value);
        }
        await writer.close();
      } catch (e) {
        writer.abort(e).catch(() => {});
        throw e;
      }
    })();
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        sink(r.value);
      }
      await pump;
    } catch (e) {
      raw.cancel().catch(() => {});
      reader.cancel().catch(() => {});
      await pump.catch(() => {});
      if (e && e.code) throw e;
      if (received < expect.compressedSize) {
        throw fail('download.truncated', `the compressed index ended after ${received} of ${expect.compressedSize} bytes`);
      }
      throw fail('download.corrupt', `the index is not valid gzip: ${e && e.message}`);
    }
  }
  report(true);
  if (written < expect.size) {
    throw fail('download.truncated', `the index ended after ${written} of ${expect.size} bytes`);
  }
  return out;
}

/** Lowercase hex SHA-256 of `bytes` (crypto.subtle). */
export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let s = '';
  for (const b of digest) s += b.toString(16).padStart(2, '0');
  return s;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
