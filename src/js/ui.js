// <gitsense-search>: a search box and a ⌘K / Ctrl+K dialog over the
// browser module, for a page that adds one script tag and one element:
//
//   <script type="module" src="/_gitsense/pkg/ui.js"></script>
//   <gitsense-search manifest="/_gitsense/manifest.json"></gitsense-search>
//
// Documentation results become one row per page with its best sections
// beneath (links to url#anchor); chat results keep their breadcrumb form
// and are handed to the page as a `gitsense-select` event. Everything lives
// in a shadow root, so the host page's CSS neither leaks in nor out; the
// look is set with --gs-* custom properties, the words with `strings`.
// Index content is untrusted: it only ever enters the DOM as text nodes,
// and the engine's snippets (escaped text with <mark>) are parsed into text
// and <mark> elements, never assigned as HTML. docs/ui.md documents it all.

/** The UI's words; a page replaces any of them (attribute or property `strings`). */
export const STRINGS = {
  button: 'Search',
  placeholder: 'Search',
  dialog: 'Search',
  close: 'Close',
  filters: 'Filter results',
  all: 'All',
  text: 'Text',
  code: 'Code',
  loading: 'Loading the search index…',
  results: '{count} results',
  noResults: 'No results for “{query}”',
  corrected: 'Showing results for “{query}”',
  error: 'Search is not available: {message}',
  keys: '↑ ↓ to move, Enter to open, Esc to close',
  save: 'Save for offline',
  saving: 'Saving for offline… {percent}%',
  saved: 'Saved for offline',
  saveFailed: 'Could not save for offline: {message}',
};

/** The reader's text with each corrected word (whole, any case) replaced
 * by its first replacement. */
function corrected(text, corrections) {
  return text.replace(/[\p{L}\p{N}_]+/gu, (w) => {
    const c = corrections.find((x) => x.word === w.toLowerCase());
    return c ? c.replacements[0] : w;
  });
}

// Sections shown under a page, results asked per target, words around a
// snippet's matches (about 30 words of prose).
const SECTIONS = 3;
const PER_PAGE = 20;
const SNIPPET_TOKENS = 30;
// A language from the index becomes a `lang:` filter only when it is a
// plain name (it is index content, then typed into the query language).
const LANG = /^[a-z0-9][a-z0-9+#._-]{0,30}$/i;

const CSS = `
:host{--gs-font:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;--gs-bg:#fff;--gs-fg:#1b1f24;--gs-muted:#57606a;
--gs-accent:#0b57d0;--gs-border:#d0d7de;--gs-hover:#edf2fc;--gs-mark-bg:#fff0a0;--gs-mark-fg:#1b1f24;
--gs-backdrop:rgb(15 20 30/.45);--gs-radius:10px;--gs-width:640px;--gs-shadow:0 16px 48px rgb(0 0 0/.25);
--gs-code-bg:#f4f6f8;display:inline-block;font-family:var(--gs-font);color:var(--gs-fg)}
:host([theme=dark]){--gs-bg:#16181d;--gs-fg:#e6e8eb;--gs-muted:#a4abb5;--gs-accent:#8ab4ff;--gs-border:#3a404a;
--gs-hover:#253043;--gs-mark-bg:#6b5a00;--gs-mark-fg:#fff;--gs-code-bg:#1f232a;--gs-backdrop:rgb(0 0 0/.6)}
@media (prefers-color-scheme:dark){:host(:not([theme=light])){--gs-bg:#16181d;--gs-fg:#e6e8eb;--gs-muted:#a4abb5;
--gs-accent:#8ab4ff;--gs-border:#3a404a;--gs-hover:#253043;--gs-mark-bg:#6b5a00;--gs-mark-fg:#fff;--gs-code-bg:#1f232a;
--gs-backdrop:rgb(0 0 0/.6)}}
*{box-sizing:border-box}
button{font:inherit;color:inherit}
.open{display:flex;align-items:center;gap:.5em;min-width:12em;padding:.45em .7em;border:1px solid var(--gs-border);
border-radius:var(--gs-radius);background:var(--gs-bg);color:var(--gs-muted);cursor:pointer}
.open:hover{border-color:var(--gs-accent)}
.open span{flex:1;text-align:start}
kbd{font:inherit;font-size:.8em;padding:.05em .35em;border:1px solid var(--gs-border);border-radius:4px}
svg{width:1.1em;height:1.1em;fill:none;stroke:currentColor;stroke-width:2;stroke-linecap:round;flex:none}
dialog{width:min(var(--gs-width),calc(100vw - 2em));max-height:min(80vh,760px);margin:10vh auto auto;padding:0;
border:1px solid var(--gs-border);border-radius:var(--gs-radius);background:var(--gs-bg);color:var(--gs-fg);
box-shadow:var(--gs-shadow);font-family:var(--gs-font);overflow:hidden}
dialog[open]{display:flex;flex-direction:column}
dialog::backdrop{background:var(--gs-backdrop)}
.bar{display:flex;align-items:center;gap:.6em;padding:.75em 1em;border-bottom:1px solid var(--gs-border)}
input{flex:1;min-width:0;border:0;outline:0;background:transparent;color:inherit;font:inherit;font-size:1.1em}
input::-webkit-search-cancel-button{display:none}
.close{border:1px solid var(--gs-border);border-radius:6px;background:transparent;padding:.15em .5em;font-size:.85em;cursor:pointer}
.facets{display:flex;flex-wrap:wrap;gap:.4em;padding:.5em 1em 0}
.facets[hidden]{display:none}
.facets button{border:1px solid var(--gs-border);border-radius:999px;background:transparent;padding:.15em .75em;font-size:.85em;cursor:pointer}
.facets button[aria-pressed=true]{background:var(--gs-accent);border-color:var(--gs-accent);color:var(--gs-bg)}
.status{padding:.5em 1em 0;color:var(--gs-muted);font-size:.9em;min-height:1.2em}
.rows{list-style:none;margin:0;padding:.25em .5em .75em;overflow-y:auto;flex:1}
.rows ul{list-style:none;margin:0;padding:0 0 0 .9em;border-left:2px solid var(--gs-border);margin-left:.6em}
.row{padding:.35em 0}
a,.item{display:block;width:100%;text-align:start;padding:.4em .6em;border:0;border-radius:6px;background:transparent;
color:inherit;text-decoration:none;cursor:pointer;overflow-wrap:anywhere}
a:hover,.item:hover,a:focus,.item:focus{background:var(--gs-hover);outline:2px solid var(--gs-accent);outline-offset:-2px}
.page{font-weight:600;color:var(--gs-accent)}
.t{display:block;font-weight:600}
.s,.crumbs{display:block;color:var(--gs-muted);font-size:.9em;line-height:1.45}
.crumbs{font-size:.8em}
.s pre{margin:.2em 0 0;padding:.4em .5em;background:var(--gs-code-bg);border-radius:4px;white-space:pre-wrap;font-size:.95em;color:var(--gs-fg)}
.lang{font-weight:400;font-size:.8em;color:var(--gs-muted);margin-inline-start:.5em}
mark{background:var(--gs-mark-bg);color:var(--gs-mark-fg);border-radius:2px}
.foot{display:flex;align-items:center;gap:1em;padding:.5em 1em;border-top:1px solid var(--gs-border);color:var(--gs-muted);font-size:.8em}
.keys{flex:1}
.save{border:1px solid var(--gs-border);border-radius:6px;background:transparent;padding:.15em .6em;font-size:inherit;color:var(--gs-accent);cursor:pointer}
.save[hidden]{display:none}
.save:disabled{color:var(--gs-muted);cursor:default}
@media (max-width:640px){dialog{inset:0;width:100%;max-width:100%;height:100%;max-height:100%;margin:0;border:0;border-radius:0}
.keys{display:none}.foot:has(>.save[hidden]){display:none}.open{min-width:0}}
`;

// An SVG magnifier, drawn by code (no markup string in the page).
function icon() {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const c = document.createElementNS(ns, 'circle');
  for (const [k, v] of [['cx', 10.5], ['cy', 10.5], ['r', 6.5]]) c.setAttribute(k, v);
  const p = document.createElementNS(ns, 'path');
  p.setAttribute('d', 'M15.5 15.5L21 21');
  svg.append(c, p);
  return svg;
}

/** An element; `children` are nodes or strings (added as text). */
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null && v !== false) e.setAttribute(k, v === true ? '' : v);
  for (const c of children.flat()) if (c != null && c !== false) e.append(c);
  return e;
}

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
const decode = (s) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ENTITIES[e]);

/**
 * A snippet's Markdown marks dropped (headings, emphasis, inline code,
 * fences, quotes, list bullets, link targets), on the engine's escaped
 * HTML with <mark> tags kept as they are. Code snippets are left alone.
 */
export function stripMarkdown(html) {
  return html
    .replace(/^[ \t]*#{1,6}[ \t]+/gm, '')
    .replace(/^[ \t]*&gt;[ \t]?/gm, '')
    .replace(/^[ \t]*(?:[-*+]|\d+[.)])[ \t]+/gm, '')
    .replace(/```[\w+-]*|`/g, '')
    .replace(/\*\*|__|~~|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])/g, '')
    .replace(/!?\[([^\]]*)\]\([^)\s]*\)/g, '$1')
    .replace(/\.\.\./g, '…')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The engine's escaped snippet → text nodes and <mark> elements. */
function marked(html) {
  const out = [];
  const re = /<mark>([\s\S]*?)<\/mark>/g;
  let at = 0;
  for (let m; (m = re.exec(html)); at = re.lastIndex) {
    if (m.index > at) out.push(decode(html.slice(at, m.index)));
    out.push(h('mark', null, decode(m[1])));
  }
  if (at < html.length) out.push(decode(html.slice(at)));
  return out;
}

const isOverview = (m) => /overview/i.test(m.messages_type || '');
// A section's snippet that starts at its heading: the heading is the
// item's title already, unless it holds the only matches.
const dropHeading = (html) => {
  const rest = html.replace(/^\s*#{1,6}[ \t][^\n]*\n+(?=\S)/, '');
  return rest.includes('<mark>') ? rest : html;
};
const lastCrumb = (path) => (path ? path.split(' -> ').pop() : '');

/**
 * The results object → rows to show. Documentation results (they carry a
 * URL) become one row per page, in the order of the page's best result,
 * with up to SECTIONS items beneath; chat results (no URL) one row each,
 * with their breadcrumbs. Overview messages are never shown. `link`
 * resolves an index URL for an href (null: not a link that can be followed).
 */
export function toRows(res, link) {
  const rows = [];
  const pages = new Map();
  const add = (r, url, item) => {
    const href = url && link(url);
    if (!href) {
      rows.push({ crumbs: (r.chat_path || '').split(' -> ').filter(Boolean), items: [item], result: r });
      return;
    }
    const key = href.split('#')[0];
    let row = pages.get(key);
    if (!row) {
      row = { href: key, title: lastCrumb(r.chat_path) || key, items: [] };
      pages.set(key, row);
      rows.push(row);
    }
    // A section and its code blocks are one item: the section's, once.
    const shown = row.items.some((i) => i.href === href && i.title === item.title);
    if (item.title && !shown && row.items.length < SECTIONS) row.items.push({ ...item, href });
  };
  const R = res.results;
  for (const m of R.messages) {
    if (isOverview(m)) continue;
    const url = m.messages_meta_url;
    const title = url ? m.messages_meta_title || lastCrumb(m.chat_path) : m.messages_meta_file_path || lastCrumb(m.chat_path);
    const snippet = m.messages_content_snippet || '';
    // A chat's file (a git blob) is code: shown as it is.
    if (!url && m.messages_type === 'git-blob') add(m, null, { title, code: snippet, result: m });
    else add(m, url, { title, snippet: stripMarkdown(dropHeading(snippet)), result: m });
  }
  for (const c of R.codeBlocks) {
    add(c, c.code_blocks_meta_url, {
      title: c.code_blocks_component || c.code_blocks_meta_anchor || lastCrumb(c.chat_path),
      code: c.code_blocks_content_snippet || '',
      lang: c.code_blocks_language,
      result: c,
    });
  }
  for (const c of R.chats) {
    const url = c.chats_meta_url;
    if (url) add(c, url, { result: c });
    else add(c, null, { title: c.chats_name || lastCrumb(c.chat_path), snippet: c.chats_name_snippet || '', result: c });
  }
  return rows;
}

const fill = (template, values) => template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));

export class GitSenseSearchElement extends HTMLElement {
  static observedAttributes = ['strings'];

  #engine = null;
  #opening = null;
  #ownEngine = false;
  #strings = { ...STRINGS };
  #root;
  #els = {};
  #facet = '';
  #langs = [];
  #hasCode = false;
  #seq = 0;
  #rows = [];
  #shown = '';
  #whenEngine = null;
  #timer = 0;
  // The "save for offline" control: hidden until the engine offers the
  // copy (lazy mode, no full copy stored, policy not 'never'), then
  // 'offer', 'saving' (with percent), 'done' or 'failed' (with message).
  #save = { state: 'hidden', percent: 0, message: '' };
  #onKey = (e) => {
    if ((e.key === 'k' || e.key === 'K') && (e.ctrlKey || e.metaKey) && !e.altKey) {
      e.preventDefault();
      this.open();
    }
  };

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    // A constructed sheet: no <style> element, so a page's CSP need not
    // allow inline styles.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    this.#root.adoptedStyleSheets = [sheet];
  }

  /** The engine the element searches: set one the page already opened to share it. */
  get engine() {
    return this.#engine;
  }
  set engine(engine) {
    this.#engine = engine;
    this.#ownEngine = false;
    this.#save = { state: 'hidden', percent: 0, message: '' };
    this.#opening = Promise.resolve(engine);
    if (this.#whenEngine) this.#whenEngine(engine);
    this.#whenEngine = null;
    this.#facetsFor(engine);
  }

  /** The words shown (see STRINGS); assigning merges over the defaults. */
  get strings() {
    return { ...this.#strings };
  }
  set strings(value) {
    this.#strings = { ...STRINGS, ...(value || {}) };
    if (this.isConnected) this.#render();
  }

  attributeChangedCallback(name, _old, value) {
    if (name !== 'strings') return;
    try {
      this.strings = value ? JSON.parse(value) : {};
    } catch {
      console.warn('<gitsense-search>: the strings attribute is not JSON; keeping the words in use');
    }
  }

  connectedCallback() {
    this.#render();
    document.addEventListener('keydown', this.#onKey);
  }

  disconnectedCallback() {
    document.removeEventListener('keydown', this.#onKey);
    if (this.#ownEngine && this.#engine) this.#engine.close();
    if (this.#ownEngine) [this.#engine, this.#opening] = [null, null];
  }

  /** Opens the dialog (and the engine, on first use); `query` fills the box. */
  open(query) {
    const { dialog, input } = this.#els;
    if (!dialog.open) dialog.showModal();
    if (typeof query === 'string') input.value = query;
    input.focus();
    input.select();
    this.#ready().then(() => this.#search(), () => {});
  }

  /** Closes the dialog; focus goes back to the button. */
  close() {
    if (this.#els.dialog.open) this.#els.dialog.close();
    this.#els.openBtn.focus();
  }

  #render() {
    const s = this.#strings;
    this.#shown = ''; // the new list is empty
    const mac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
    const openBtn = h('button', { type: 'button', class: 'open', part: 'button', 'aria-haspopup': 'dialog', 'aria-keyshortcuts': 'Control+K Meta+K' },
      icon(), h('span', null, s.button), h('kbd', { 'aria-hidden': 'true' }, mac ? '⌘K' : 'Ctrl K'));
    const input = h('input', { type: 'search', placeholder: s.placeholder, 'aria-label': s.placeholder, autocomplete: 'off', spellcheck: 'false', enterkeyhint: 'search' });
    const close = h('button', { type: 'button', class: 'close' }, s.close);
    const facets = h('div', { class: 'facets', role: 'group', 'aria-label': s.filters, hidden: true });
    const status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
    const rows = h('ul', { class: 'rows', 'aria-label': s.dialog });
    const save = h('button', { type: 'button', class: 'save', part: 'save', hidden: true });
    const dialog = h('dialog', { 'aria-label': s.dialog, part: 'dialog' },
      h('div', { class: 'bar' }, icon(), input, close), facets, status, rows,
      h('div', { class: 'foot' }, h('span', { class: 'keys', 'aria-hidden': 'true' }, s.keys), save));
    const keep = this.#els.input?.value;
    this.#root.replaceChildren(openBtn, dialog);
    this.#els = { openBtn, input, close, facets, status, rows, dialog, save };
    this.#showSave();
    if (keep) input.value = keep;

    openBtn.addEventListener('click', () => this.open());
    // Reaching for the box starts loading the engine.
    for (const ev of ['pointerenter', 'focus']) openBtn.addEventListener(ev, () => this.#ready().catch(() => {}), { once: true });
    close.addEventListener('click', () => this.close());
    dialog.addEventListener('close', () => openBtn.focus());
    dialog.addEventListener('click', (e) => {
      if (e.target === dialog) this.close(); // the backdrop
    });
    input.addEventListener('input', () => {
      clearTimeout(this.#timer);
      this.#busy(true);
      this.#timer = setTimeout(() => this.#search(), 60);
    });
    dialog.addEventListener('keydown', (e) => this.#key(e));
    rows.addEventListener('click', (e) => this.#pick(e));
    save.addEventListener('click', () => this.#saveOffline());
    facets.addEventListener('click', (e) => {
      const b = e.target.closest('button');
      if (!b) return;
      this.#facet = b.dataset.facet;
      this.#search();
    });
    if (this.#engine) this.#facetsFor(this.#engine);
  }

  /** The engine, opened on first use from the `manifest` attribute. */
  #ready() {
    if (!this.#opening) {
      const manifestUrl = this.getAttribute('manifest');
      if (!manifestUrl) {
        // No manifest: the page hands an engine over (the engine property).
        this.#status(this.#strings.loading);
        this.#opening = new Promise((resolve) => (this.#whenEngine = resolve));
        return this.#opening;
      }
      const offline = this.getAttribute('offline') || undefined;
      this.#ownEngine = true;
      this.#status(this.#strings.loading);
      this.#opening = import('./index.js')
        .then(({ GitSenseSearch }) => GitSenseSearch.open({ manifestUrl, offline }))
        .then((engine) => {
          this.#engine = engine;
          this.#facetsFor(engine);
          return engine;
        });
      this.#opening.catch((e) => {
        this.#opening = null; // the next attempt tries again
        this.#status(fill(this.#strings.error, { message: e.message || String(e) }));
      });
    }
    return this.#opening;
  }

  #facetsFor(engine) {
    engine.info().then((info) => {
      this.#hasCode = info.index.codeBlocks > 0 && info.index.messages > 0;
      this.#showFacets();
      if (this.#engine !== engine) return;
      if (info.offline && info.offline.canSave && this.#save.state === 'hidden') this.#save = { state: 'offer', percent: 0, message: '' };
      this.#showSave();
    }, () => {});
  }

  /** The reader asked for the whole index to be kept offline. */
  async #saveOffline() {
    const engine = this.#engine;
    if (!engine || this.#save.state === 'saving' || this.#save.state === 'done') return;
    this.#save = { state: 'saving', percent: 0, message: '' };
    this.#showSave();
    try {
      await engine.saveOffline({
        onProgress: ({ loaded, total }) => {
          if (this.#save.state !== 'saving' || !(total > 0)) return;
          this.#save.percent = Math.min(100, Math.floor((100 * loaded) / total));
          this.#showSave();
        },
      });
      this.#save = { state: 'done', percent: 100, message: '' };
    } catch (e) {
      this.#save = { state: 'failed', percent: 0, message: e.message || String(e) };
    }
    if (this.#engine === engine) this.#showSave();
  }

  #showSave() {
    const b = this.#els.save;
    if (!b) return; // not rendered yet
    const s = this.#strings;
    const { state, percent, message } = this.#save;
    b.hidden = state === 'hidden';
    b.disabled = state === 'saving' || state === 'done';
    b.dataset.state = state;
    b.textContent = state === 'saving' ? fill(s.saving, { percent })
      : state === 'done' ? s.saved
        : state === 'failed' ? fill(s.saveFailed, { message })
          : s.save;
  }

  #showFacets() {
    if (!this.#els.facets) return; // not rendered yet
    const s = this.#strings;
    const list = [['', s.all], ['in:messages', s.text], ['in:code-blocks', s.code]];
    if (this.#facet.startsWith('in:code-blocks')) for (const l of this.#langs) list.push([`in:code-blocks lang:${l}`, l]);
    this.#els.facets.replaceChildren(...list.map(([f, label]) =>
      h('button', { type: 'button', 'data-facet': f, 'aria-pressed': String(f === this.#facet) }, label)));
    this.#els.facets.hidden = !this.#hasCode;
  }

  #status(text) {
    this.#els.status.textContent = text;
  }

  /** Where an index URL leads: resolved against `base-url` (default: the directory above the manifest's), http(s) only. */
  #link(url) {
    try {
      const page = document.baseURI;
      const given = this.getAttribute('base-url');
      const base = given ? new URL(given, page) : new URL('..', new URL(this.getAttribute('manifest') || '.', page));
      const u = new URL(url, base);
      return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
    } catch {
      return null;
    }
  }

  async #search() {
    const seq = ++this.#seq;
    const text = this.#els.input.value;
    if (!this.#engine) return; // #ready() searches once open
    if (!text.trim()) {
      this.#shown = '';
      this.#els.rows.replaceChildren();
      this.#status('');
      return this.#busy(false);
    }
    // Filters go first: box mode reads the last word as a prefix.
    const query = this.#facet ? `${this.#facet} ${text}` : text;
    // Reopening with the same text keeps the rows (and a focus on one).
    if (query === this.#shown) return this.#busy(false);
    this.#busy(true);
    const mode = this.getAttribute('mode') === 'strict' ? 'strict' : 'box';
    let res;
    try {
      // The page's language: on a site shipping translations side by
      // side, its pages come first (JSON leaves out an empty one).
      const lang = document.documentElement.lang || undefined;
      res = await this.#engine.search(query, { mode, perPage: PER_PAGE, snippetTokens: SNIPPET_TOKENS, includeContent: false, lang });
    } catch (e) {
      this.#shown = '';
      if (seq !== this.#seq) return;
      this.#status(fill(this.#strings.error, { message: e.message || String(e) }));
      return this.#busy(false);
    }
    if (seq !== this.#seq) return; // a newer search is under way
    if (!this.#facet.includes('lang:')) {
      this.#langs = [...new Set(res.results.codeBlocks.map((c) => c.code_blocks_language).filter((l) => l && LANG.test(l)))].sort();
    }
    this.#showFacets();
    const rows = toRows(res, (u) => this.#link(u));
    this.#rows = rows;
    this.#shown = query;
    this.#els.rows.replaceChildren(...rows.map((r, i) => this.#row(r, i)));
    const fixed = res.didYouMean && rows.length ? corrected(text, res.didYouMean.corrections) : null;
    this.#status(fixed ? fill(this.#strings.corrected, { query: fixed, count: rows.length })
      : rows.length ? fill(this.#strings.results, { count: rows.length }) : fill(this.#strings.noResults, { query: text }));
    this.#busy(false);
  }

  /** aria-busy on the list while what it shows is not the box's text yet. */
  #busy(on) {
    this.#els.rows.setAttribute('aria-busy', String(on));
  }

  #row(row, i) {
    const item = (it, j) => {
      const snippet = it.code != null
        ? h('span', { class: 's' }, h('pre', null, marked(it.code)))
        : it.snippet ? h('span', { class: 's' }, marked(it.snippet)) : null;
      const body = [h('span', { class: 't' }, it.title, it.lang ? h('span', { class: 'lang' }, it.lang) : null), snippet];
      return it.href
        ? h('li', null, h('a', { href: it.href }, body))
        : h('li', null, h('button', { type: 'button', class: 'item', 'data-row': i, 'data-item': j }, body));
    };
    if (!row.href) {
      const it = row.items[0];
      return h('li', { class: 'row chat' },
        h('button', { type: 'button', class: 'item', 'data-row': i, 'data-item': 0 },
          h('span', { class: 'crumbs' }, row.crumbs.join(' › ')),
          h('span', { class: 't' }, it.title, it.lang ? h('span', { class: 'lang' }, it.lang) : null),
          it.code != null ? h('span', { class: 's' }, h('pre', null, marked(it.code))) : h('span', { class: 's' }, marked(it.snippet || ''))));
    }
    return h('li', { class: 'row' }, h('a', { class: 'page', href: row.href }, row.title),
      row.items.length ? h('ul', null, row.items.map(item)) : null);
  }

  /**
   * A link closes the dialog (an anchor on this page would not unload it);
   * a result without a link (a chat's) goes to the page as a
   * `gitsense-select` event, { result, query }, and closes it too.
   */
  #pick(e) {
    if (e.target.closest('a')) return this.close();
    const b = e.target.closest('button.item');
    const row = b && this.#rows[b.dataset.row];
    if (!row) return;
    const detail = { result: row.items[b.dataset.item].result, query: this.#els.input.value };
    this.close();
    this.dispatchEvent(new CustomEvent('gitsense-select', { detail, bubbles: true, composed: true }));
  }

  #focusables() {
    return [...this.#els.rows.querySelectorAll('a, button.item')];
  }

  #key(e) {
    const { input, dialog } = this.#els;
    const list = this.#focusables();
    const at = list.indexOf(this.#root.activeElement);
    if (e.key === 'Escape') {
      // Also when a search field would only clear itself.
      e.preventDefault();
      this.close();
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (!list.length) return;
      e.preventDefault();
      const next = e.key === 'ArrowDown' ? Math.min(at + 1, list.length - 1) : at - 1;
      if (next < 0) input.focus();
      else list[next].focus();
    } else if (e.key === 'Tab') {
      // The focus stays in the dialog.
      const all = [...dialog.querySelectorAll('input, button, a[href]')].filter((el) => !el.closest('[hidden]'));
      const first = all[0];
      const last = all[all.length - 1];
      if (e.shiftKey && this.#root.activeElement === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && this.#root.activeElement === last) {
        e.preventDefault();
        first.focus();
      }
    } else if (at >= 0 && e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
      input.focus(); // typing on a result goes on in the box
    }
  }
}

if (typeof customElements !== 'undefined' && !customElements.get('gitsense-search')) {
  customElements.define('gitsense-search', GitSenseSearchElement);
}
