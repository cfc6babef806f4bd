// Network half of the browser module, called from Rust (src/host.rs):
// the manifest request and the streamed index download.
//
// Errors are thrown as Error objects with a dotted `code`
// (network.failed, network.http_status, download.truncated,
// download.too_large, download.corrupt, download.unsupported) that Rust turns into the engine's
// structured errors.

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

async function get(url) {
  let res;
  try {
    // no-cache: revalidate, so a changed manifest is seen at once.
    res = await fetch(url, { cache: 'no-cache', credentials: 'same-origin' });
  } catch (e) {
    throw fail('network.failed', `cannot fetch ${url}: ${e.message}`);
  }
  if (!res.ok) throw fail('network.http_status', `${url} answered HTTP ${res.status} ${res.statusText}`);
  return res;
}

/** The manifest text. */
export async function fetchText(url) {
  const res = await get(url);
  try {
    return await res.text();
  } catch (e) {
    throw fail('network.failed', `reading ${url} failed: ${e.message}`);
  }
}

/**
 * Downloads the index at `url` into a Uint8Array of exactly `expect.size`
 * bytes, decompressing gzip on the fly with DecompressionStream.
 *
 * expect: { size, compressedSize, compression: 'gzip' | 'none' }
 * onProgress({ phase: 'download', loaded, total }) is called at most every
 * 50 ms and once at the end; loaded/total count bytes on the wire.
 *
 * A server that already sent the file with `Content-Encoding: gzip` hands
 * fetch() the decoded bytes; the gzip magic number tells the two apart.
 */
export async function downloadIndex(url, expect, onProgress) {
  const res = await get(url);
  if (!res.body) throw fail('network.failed', `${url} has no response body`);
  const out = new Uint8Array(expect.size);
  let written = 0;
  let received = 0;
  let lastReport = 0;
  const raw = res.body.getReader();
  const readRaw = async () => {
    try {
      return await raw.read();
    } catch (e) {
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
