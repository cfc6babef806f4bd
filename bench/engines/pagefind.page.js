// Page side of Pagefind (see ../lib/page.mjs for the contract).
const pagefind = await import(CONFIG.module);
const pathOf = (url) => url.replace(/^\//, '').replace(/#.*$/, '');
const engine = {
  async open() {
    await pagefind.options({ baseUrl: '/' });
    // CONFIG.hint: a search page that knows its query at load (?q=) has
    // Pagefind load that query's index chunks at once (its preload()).
    const q = CONFIG.hint ? new URLSearchParams(location.search).get('q') : null;
    if (q) pagefind.preload(q);
    await pagefind.init();
    return pagefind;
  },
  async show(pf, q) {
    const s = await pf.search(q);
    const top = s.results[0] ? await s.results[0].data() : null;
    return { page: top ? pathOf(top.url) : null };
  },
  async rank(pf, q) {
    const s = await pf.search(q);
    const data = await Promise.all(s.results.slice(0, 10).map((r) => r.data()));
    return data.map((d) => pathOf(d.url));
  },
  innerMs: () => null,
  info: () => ({}),
};
