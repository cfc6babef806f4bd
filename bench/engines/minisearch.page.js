// Page side of MiniSearch (see ../lib/page.mjs for the contract).
const { default: MiniSearch } = await import(CONFIG.module);
const engine = {
  async open() {
    const res = await fetch(CONFIG.index);
    if (!res.ok) throw new Error(`${CONFIG.index}: HTTP ${res.status}`);
    return MiniSearch.loadJSON(await res.text(), CONFIG.options);
  },
  show(ms, q) {
    const top = ms.search(q)[0];
    return { page: top ? top.id : null };
  },
  rank: (ms, q) => ms.search(q).slice(0, 10).map((r) => r.id),
  innerMs: () => null,
  info: (ms) => ({ documents: ms.documentCount, terms: ms.termCount }),
};
