// Page side of gitsense-search (see ../lib/page.mjs for the contract).
const { GitSenseSearch } = await import(CONFIG.module);
const pageOf = (m) => m && m.messages_meta_file_path;
const engine = {
  // offline: 'always': the repeat and offline visits measured next read the stored copy.
  open: () => GitSenseSearch.open({ manifestUrl: CONFIG.manifestUrl, offline: 'always' }),
  // What a search box calls: the default search, all targets.
  async show(e, q) {
    const r = await e.search(q);
    return { page: pageOf(r.results.messages[0]) || null };
  },
  // The ranking: messages only, enough of them for ten distinct pages.
  async rank(e, q) {
    const r = await e.search(`${q} in:messages`, { perPage: 50, highlight: 'none', includeContent: false });
    return r.results.messages.map(pageOf);
  },
  innerMs: (e) => e.lastSearchMs,
  // Storage, source (downloaded or stored), sizes and timings of each stage.
  info: (e) => e.info(),
  // Lazy mode answers before the index is stored; its background copy into
  // OPFS ends with a 'fill' (or 'fillerror') event. The next visit should
  // find the copy complete.
  settled: (e) =>
    new Promise((resolve) => {
      e.addEventListener('fill', () => resolve('fill'), { once: true });
      e.addEventListener('fillerror', () => resolve('fillerror'), { once: true });
      e.info().then((i) => {
        if (!(i.lazy && i.lazy.state === 'filling')) resolve(i.storage);
      }, () => resolve('info failed'));
    }),
};
