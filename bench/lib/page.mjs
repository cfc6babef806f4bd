// The benchmark page of one engine: a blank page whose only script opens
// the engine at load and shows the first result, as a site's search would.
//
// Each engine's page script (`bench/engines/<name>.page.js`) gets its
// settings as `CONFIG` and defines `engine`:
//   open(CONFIG) → handle            load code and index (however it does)
//   show(handle, q) → { page }       what a search box does for a query:
//                                    the first result, ready to display
//   rank(handle, q) → [page paths]   the ranking, best first (duplicates
//                                    allowed: they are reduced here)
//   innerMs(handle) → ms | null      time of the last query inside the
//                                    engine's worker, when it reports it
//   info(handle) → object            anything worth recording
//   settled(handle) → promise        (optional) resolves when the engine's
//                                    background work (a download after the
//                                    first answer) is done
// The script is inlined, so every engine's page costs one request.

/** The driver: runs after the engine script, inside the same module. */
const DRIVER = `
const params = new URLSearchParams(location.search);
const firstQuery = params.get('q');
const errorText = (e) => String((e && (e.stack || e.message)) || e);
window.__bench = (async () => {
  try {
    const handle = await engine.open(CONFIG);
    const first = await engine.show(handle, firstQuery);
    const ms = performance.now();
    // The server counts the requests made before this moment (not those an
    // engine starts once it has answered).
    const stats = window.__firstResult ? await window.__firstResult(performance.timeOrigin + ms) : null;
    window.__handle = handle;
    return { ok: true, ms, first, stats, queryInnerMs: engine.innerMs(handle) };
  } catch (e) {
    return { ok: false, error: errorText(e), ms: performance.now() };
  }
})();
// Every query twice: first as a new query on the open engine, then again.
window.__warm = async (queries) => {
  const out = { fresh: [], repeat: [], freshInner: [], repeatInner: [], errors: 0 };
  for (const pass of ['fresh', 'repeat']) {
    for (const q of queries) {
      const t = performance.now();
      try {
        await engine.show(window.__handle, q);
      } catch (e) {
        out.errors++;
        continue;
      }
      out[pass].push(performance.now() - t);
      out[pass + 'Inner'].push(engine.innerMs(window.__handle));
    }
  }
  return out;
};
// Top ten distinct pages per query (null and the error for a failure).
window.__rank = async (queries) => {
  const out = [];
  for (const q of queries) {
    try {
      const seen = new Set();
      for (const p of await engine.rank(window.__handle, q)) if (p && seen.size < 10) seen.add(p);
      out.push([...seen]);
    } catch (e) {
      out.push({ error: errorText(e) });
    }
  }
  return out;
};
window.__info = async () => engine.info(window.__handle);
window.__settled = async () => (engine.settled ? engine.settled(window.__handle) : null);
`;

export function pageHtml(engine) {
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>bench: ${engine.label}</title>
${engine.head || ''}
<script type="module">
const CONFIG = ${JSON.stringify(engine.config)};
${engine.pageScript}
${DRIVER}
</script>
</html>
`;
}
