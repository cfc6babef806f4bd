// Page side of sql.js-httpvfs (see ../lib/page.mjs for the contract).
// `createDbWorker` comes from its UMD bundle, loaded by a script tag;
// `db.query(sql, params)` is sql.js's `exec` returning row objects.
const match = (q) =>
  q
    .split(/\s+/)
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .map((w) => `"${w.replace(/"/g, '""')}"`)
    .join(' ');
const engine = {
  async open() {
    const config = { from: 'inline', config: { serverMode: 'full', requestChunkSize: CONFIG.pageSize, url: CONFIG.url } };
    return window.createDbWorker([config], new URL(CONFIG.worker, location.href).href, new URL(CONFIG.wasm, location.href).href);
  },
  async show(w, q) {
    const m = match(q);
    if (!m) return { page: null };
    const rows = await w.db.query(
      "SELECT path, title, snippet(pages, 3, '<mark>', '</mark>', '…', 16) AS excerpt FROM pages WHERE pages MATCH ? ORDER BY rank LIMIT 10",
      [m],
    );
    return { page: rows[0] ? rows[0].path : null };
  },
  async rank(w, q) {
    const m = match(q);
    if (!m) return [];
    const rows = await w.db.query('SELECT path FROM pages WHERE pages MATCH ? ORDER BY rank LIMIT 10', [m]);
    return rows.map((r) => r.path);
  },
  innerMs: () => null,
  async info(w) {
    const [v] = await w.db.query('SELECT sqlite_version() AS v');
    return { sqlite: v.v, stats: await w.worker.getStats() };
  },
};
