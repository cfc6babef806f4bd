// Test doubles for the browser crate's tests (src/tests/), running in the
// test's dedicated worker: a fake network (fetch replaced by a route table
// that counts requests), a switch for navigator.onLine, and gzip via
// CompressionStream.

const routes = new Map();
let log = [];

/** Replaces fetch with the route table and clears routes and the log. */
export function fakeNetwork() {
  if (!globalThis.__realFetch) {
    globalThis.__realFetch = globalThis.fetch;
    globalThis.fetch = async (input) => {
      const url = String(input && input.url ? input.url : input);
      log.push(url);
      const r = routes.get(url);
      if (!r) throw new TypeError('Failed to fetch');
      return new Response(r.body.slice(0), { status: r.status, headers: { 'content-type': r.type } });
    };
  }
  routes.clear();
  log = [];
  setOnline(true);
}

/** Serves `body` (Uint8Array or string) at `url`. */
export function route(url, body, status) {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  routes.set(url, { body: bytes, status: status || 200, type: 'application/octet-stream' });
}

export function unroute(url) {
  routes.delete(url);
}

/** URLs fetched since fakeNetwork(). */
export function requests() {
  return log.slice();
}

export function setOnline(online) {
  Object.defineProperty(navigator, 'onLine', { configurable: true, get: () => online });
}

export async function gzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
