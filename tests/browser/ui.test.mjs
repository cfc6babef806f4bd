// The drop-in UI (<gitsense-search>, pkg/ui.js) in headless Chromium, on a
// small documentation site made by `gitsense-search site` from fixture
// HTML, its page holding nothing but the two lines the command printed:
// axe-core in light and dark, closed and open; the keyboard (Ctrl+K, typing,
// arrows, Enter to url#anchor, Escape, the focus trap); a phone's viewport;
// one row per page; Markdown marks stripped and titles as text; facets;
// translated words; and the chat breadcrumbs on the demo page.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, cli, closePage, demoReady, screenshotPath, ROOT } from './harness.mjs';
import { startServer } from '../../www/serve.mjs';

const AXE = path.join(ROOT, 'node_modules/axe-core/axe.min.js');

/** A page of an mdBook-like site. */
const page = (title, body) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title} - The Book</title></head>` +
  `<body><nav id="sidebar">sidebar</nav><main>${body}</main></body></html>`;

const LONG =
  'Each value in Rust has an owner, and there can only be one owner at a time; when the owner goes out of scope, ' +
  'the value will be dropped, which is how the language keeps memory safe without a garbage collector or manual frees ' +
  'scattered through every program that reads or writes the heap.';

/** The fixture site: two pages about ownership (three and two sections), a hostile heading, code in two languages. */
function writeSite(dir) {
  const w = (rel, text) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  };
  w('ownership.html', page('What is Ownership?',
    `<h1 id="what-is-ownership">What is Ownership?</h1><p>${LONG}</p>` +
    `<h2 id="ownership-rules">Ownership Rules</h2><p>The <strong>ownership</strong> rules, with <code>String::from</code> and <a href="box.html">a link to boxes</a>: ${LONG}</p>` +
    `<ul><li>Each ownership value has an owner.</li><li>One owner at a time.</li></ul>` +
    `<h2 id="the-string-type">The String Type</h2><p>A <em>String</em> shows ownership rules at work. ${LONG}</p>` +
    `<pre><code class="language-rust">fn main() { let s = String::from("ownership"); }</code></pre>`));
  w('box.html', page('Using Box<T>',
    `<h1 id="using-box">Using <code>Box&lt;T&gt;</code> to Point to Data on the Heap</h1><p>Boxes move ownership with the box. ${LONG}</p>` +
    `<h2 id="recursive-types">Enabling Recursive Types with Box&lt;T&gt;</h2><p>A cons list needs indirection and ownership. ${LONG}</p>` +
    `<pre><code class="language-toml">[package] # ownership example manifest</code></pre>`));
  w('hostile.html', page('Hostile',
    `<h1 id="hostile">Tags like &lt;img src=x onerror="window.__xss=1"&gt; in a heading</h1><p>zebracorn ownership ${LONG}</p>`));
  w('other.html', page('Other', '<h1 id="other">Other</h1><p>Nothing about the topic here, only zebras.</p>'));
}

let site;
let docs;
let docsServer;
let lines;
before(async () => {
  site = await setup();
  // The built site, served at the root of its own origin as a host would.
  docs = path.join(site.root, 'book');
  writeSite(docs);
  lines = cli('site', docs, '--pkg', path.join(ROOT, 'www/dist/pkg'), '--quiet');
  // The reader's page: nothing but what the command printed.
  fs.writeFileSync(path.join(docs, 'index.html'),
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Docs</title></head><body><main><h1>Docs</h1>\n${lines}</main></body></html>`);
  docsServer = await startServer({ root: docs, port: 0 });
});
after(async () => {
  await docsServer.close();
  await site.close();
});

/** Opens the docs page with a fresh element (its engine opens on first use). */
async function docsPage(options = {}) {
  const p = await site.page(null);
  if (options.viewport) await p.setViewportSize(options.viewport);
  if (options.colorScheme) await p.emulateMedia({ colorScheme: options.colorScheme });
  await p.goto(docsServer.url + 'index.html');
  await p.waitForFunction(() => customElements.get('gitsense-search'));
  return p;
}

/** Ctrl+K, then types `q` and waits for rows (or the status line). */
async function searchFor(p, q, done = /result|No results/i) {
  await p.keyboard.press('Control+k');
  await p.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('dialog').open);
  await p.keyboard.type(q);
  await p.waitForFunction(
    ([q, done]) => {
      const r = document.querySelector('gitsense-search').shadowRoot;
      return r.querySelector('input').value === q && r.querySelector('.rows').getAttribute('aria-busy') === 'false' && new RegExp(done, 'i').test(r.querySelector('.status').textContent);
    },
    [q, done.source],
    { timeout: 60_000 },
  );
}

/** The shadow root's state, as data. */
const view = (p) =>
  p.evaluate(() => {
    const el = document.querySelector('gitsense-search');
    const r = el.shadowRoot;
    const active = r.activeElement;
    return {
      open: r.querySelector('dialog').open,
      status: r.querySelector('.status').textContent,
      rows: [...r.querySelectorAll('.rows > .row')].map((row) => ({
        href: row.querySelector('a.page')?.getAttribute('href') ?? null,
        title: row.querySelector('a.page')?.textContent ?? null,
        crumbs: row.querySelector('.crumbs')?.textContent ?? null,
        items: [...row.querySelectorAll('li')].map((li) => ({
          href: li.querySelector('a')?.getAttribute('href') ?? null,
          title: li.querySelector('.t')?.textContent ?? '',
          snippet: li.querySelector('.s')?.textContent ?? '',
          marks: li.querySelectorAll('.s mark').length,
        })),
      })),
      active: active ? { tag: active.tagName, cls: active.className, href: active.getAttribute('href') } : null,
      hostFocused: document.activeElement === el,
      facets: [...r.querySelectorAll('.facets button')].map((b) => ({ label: b.textContent, pressed: b.getAttribute('aria-pressed') })),
      facetsHidden: r.querySelector('.facets').hidden,
    };
  });

async function axe(p, label) {
  if (!(await p.evaluate(() => typeof window.axe === 'object'))) await p.addScriptTag({ path: AXE });
  const violations = await p.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
    .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })));
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `${label}: ${JSON.stringify(bad)}`);
}

test('the site command prints two lines, and they alone give the page a working search', async () => {
  assert.equal(lines.trim().split('\n').length, 2, lines);
  assert.match(lines, /<script type="module" src="\/_gitsense\/pkg\/ui\.js"><\/script>/);
  assert.match(lines, /<gitsense-search manifest="\/_gitsense\/manifest\.json"><\/gitsense-search>/);
  docsServer.reset();
  const p = await docsPage();
  // Nothing of the engine or the index is fetched before the reader reaches for the box.
  await p.waitForTimeout(300);
  const early = Object.keys(docsServer.stats().byPath);
  assert.ok(!early.some((u) => /manifest|\.wasm|index\.js/.test(u)), early.join());
  await searchFor(p, 'ownership');
  const v = await view(p);
  assert.ok(v.rows.length >= 3, JSON.stringify(v.rows));
  assert.ok(v.rows.every((r) => r.href && r.href.startsWith(docsServer.url)), JSON.stringify(v.rows));
  // Every link leads to a page that exists, and to an anchor it has.
  for (const item of v.rows.flatMap((r) => r.items)) {
    const u = new URL(item.href);
    const html = fs.readFileSync(path.join(docs, u.pathname), 'utf8');
    assert.ok(html.includes(`id="${u.hash.slice(1)}"`), item.href);
  }
  await p.screenshot({ path: screenshotPath('ui-results.png') });
  assert.deepEqual(p.errors, []);
  await closePage(p);
});

test('a cold visit\'s searches through the box, typed key by key, with facets, need only the first wasm module', async () => {
  // The module's second part (xtask/src/wasm_split.rs) is refused: were
  // any of these searches to run a function the split profile
  // (xtask/split-profile.txt) left out of the first part, loading it
  // would fail and the box would show the error.
  const second = fs.readdirSync(path.join(docs, '_gitsense/pkg')).filter((f) => /^gitsense_search_bg-[0-9a-f]{16}\.wasm$/.test(f));
  assert.equal(second.length, 1, `one second module: ${second}`);
  const clearing = await docsPage();
  await clearing.evaluate(async () => {
    const { GitSenseSearch } = await import('/_gitsense/pkg/index.js');
    await GitSenseSearch.clear();
  });
  await closePage(clearing);
  docsServer.options.block = [`/_gitsense/pkg/${second[0]}`];
  try {
    const p = await docsPage();
    await p.keyboard.press('Control+k');
    await p.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('dialog').open);
    const shown = [];
    for (const text of ['ownership rules', 'box<t> heap', '"string type"', 'zebracorn', 'zzqx', 'ownershp']) {
      await p.evaluate(() => {
        const input = document.querySelector('gitsense-search').shadowRoot.querySelector('input');
        input.value = '';
        input.focus();
      });
      // Slower than the box's debounce: each prefix is searched.
      await p.keyboard.type(text, { delay: 80 });
      await p.waitForFunction((text) => {
        const r = document.querySelector('gitsense-search').shadowRoot;
        return r.querySelector('input').value === text && r.querySelector('.rows').getAttribute('aria-busy') === 'false' &&
          /result|No results|rror/i.test(r.querySelector('.status').textContent);
      }, text, { timeout: 60_000 });
      const v = await view(p);
      shown.push([text, v.status, v.rows.length]);
    }
    assert.ok(shown.every(([, status]) => !/rror/i.test(status)), JSON.stringify(shown));
    assert.ok(shown[0][2] > 0 && shown[1][2] > 0, JSON.stringify(shown));
    assert.match(shown[4][1], /No results/);
    // A typo: the word the index holds is searched, and the status says so.
    assert.match(shown[5][1], /Showing results for “ownership”/);
    assert.ok(shown[5][2] > 0, JSON.stringify(shown));
    // The facets the box shows for this index, each clicked.
    await p.evaluate(() => {
      const input = document.querySelector('gitsense-search').shadowRoot.querySelector('input');
      input.value = '';
      input.focus();
    });
    await p.keyboard.type('ownership', { delay: 80 });
    for (const facet of await p.evaluate(() => [...document.querySelector('gitsense-search').shadowRoot.querySelectorAll('.facets:not([hidden]) button')].map((b) => b.dataset.facet))) {
      await p.evaluate((f) => document.querySelector('gitsense-search').shadowRoot.querySelector(`.facets button[data-facet="${f}"]`).click(), facet);
      await p.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.rows').getAttribute('aria-busy') === 'false');
      assert.doesNotMatch((await view(p)).status, /rror/i, facet);
    }
    const info = await p.evaluate(() => document.querySelector('gitsense-search').engine.info());
    assert.equal(info.storage, 'lazy');
    assert.deepEqual(info.module, { split: true, secondLoaded: false });
    assert.deepEqual(p.errors, []);
    await closePage(p);
  } finally {
    docsServer.options.block = [];
  }
});

test('one row per page with its best sections beneath, Markdown marks stripped, snippets of about 30 words', async () => {
  const p = await docsPage();
  await searchFor(p, 'ownership rules');
  const v = await view(p);
  const hrefs = v.rows.map((r) => r.href);
  assert.equal(new Set(hrefs).size, hrefs.length, `one row per page: ${hrefs}`);
  const own = v.rows.find((r) => r.href.endsWith('/ownership.html'));
  assert.equal(own.title, 'What is Ownership?');
  assert.ok(own.items.length >= 2 && own.items.length <= 3, JSON.stringify(own.items));
  assert.ok(own.items.every((i) => i.href.startsWith(own.href + '#')));
  assert.ok(own.items.some((i) => i.title === 'Ownership Rules'));
  for (const i of own.items) {
    assert.ok(i.marks > 0, `highlighted: ${i.snippet}`);
    assert.doesNotMatch(i.snippet, /(^|\s)#{1,6}\s|\*\*|`|\]\(|^\s*[-*]\s/, `no Markdown: ${i.snippet}`);
    const words = i.snippet.split(/\s+/).filter(Boolean).length;
    assert.ok(words >= 20 && words <= 40, `${words} words: ${i.snippet}`);
  }
  // Overview messages (a page's summary) are in the results object, never on screen.
  const counted = await p.evaluate(async () => {
    const el = document.querySelector('gitsense-search');
    const { toRows } = await import('/_gitsense/pkg/ui.js');
    const res = await el.engine.search('ownership rules', { mode: 'box', perPage: 20, snippetTokens: 30 });
    const overviews = res.results.messages.filter((m) => /overview/.test(m.messages_type)).length;
    const rows = toRows(res, (u) => new URL(u, location.href).href);
    const shown = rows.flatMap((r) => r.items).filter((i) => /overview/.test(i.result.messages_type || '')).length;
    // "The String Type" matches as a section and as its code block.
    const both = await el.engine.search('ownership', { mode: 'box', perPage: 20, snippetTokens: 30 });
    const blocks = both.results.codeBlocks.length;
    const repeated = toRows(both, (u) => new URL(u, location.href).href)
      .flatMap((r) => r.items.map((i) => `${i.href} ${i.title}`))
      .filter((k, n, all) => all.indexOf(k) !== n);
    return { overviews, shown, blocks, repeated };
  });
  assert.ok(counted.overviews > 0, 'the index has overview messages for this query');
  assert.equal(counted.shown, 0);
  assert.ok(counted.blocks > 0, 'code blocks match too');
  assert.deepEqual(counted.repeated, []);
  assert.deepEqual(p.errors, []);
  await closePage(p);
});

test('titles are text: Box<T> shows as written and a tag in a heading never becomes an element', async () => {
  const p = await docsPage();
  await searchFor(p, 'Box');
  let v = await view(p);
  const box = v.rows.find((r) => r.href.endsWith('/box.html'));
  assert.equal(box.title, 'Using Box<T> to Point to Data on the Heap');
  assert.ok(box.items.some((i) => i.title.includes('Box<T>')), JSON.stringify(box.items));
  await p.keyboard.press('Control+a');
  await p.keyboard.type('zebracorn');
  await p.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.rows .row a[href*="hostile"]'));
  v = await view(p);
  assert.match(v.rows[0].items[0].title, /<img src=x onerror="window.__xss=1">/);
  const injected = await p.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelectorAll('.rows img, .rows script').length);
  assert.equal(injected, 0);
  assert.equal(await p.evaluate(() => window.__xss ?? null), null);
  await closePage(p);
});

test('keyboard: Ctrl+K opens, typing searches, arrows and Enter go to url#anchor, Escape closes, Tab stays inside', async () => {
  const p = await docsPage();
  await searchFor(p, 'recursive');
  let v = await view(p);
  assert.ok(v.open && v.hostFocused && v.active.tag === 'INPUT');
  // Tab cycles within the dialog.
  for (let i = 0; i < 12; i++) {
    await p.keyboard.press(i % 3 === 2 ? 'Shift+Tab' : 'Tab');
    const inside = await p.evaluate(() => {
      const r = document.querySelector('gitsense-search').shadowRoot;
      return document.activeElement === r.host && r.querySelector('dialog').contains(r.activeElement);
    });
    assert.ok(inside, `focus left the dialog after ${i + 1} presses`);
  }
  // Escape closes and gives the focus back to the button; Ctrl+K reopens with the text kept.
  await p.keyboard.press('Escape');
  v = await view(p);
  assert.equal(v.open, false);
  assert.match(v.active.cls, /open/);
  await p.keyboard.press('Control+k');
  await p.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('dialog').open);
  v = await view(p);
  assert.equal(v.active.tag, 'INPUT');
  await p.keyboard.press('ArrowDown');
  v = await view(p);
  assert.equal(v.active.href, v.rows[0].href);
  await p.keyboard.press('ArrowDown');
  v = await view(p);
  const target = v.active.href;
  assert.match(target, /\/box\.html#recursive-types$/);
  // Typing on a result goes on in the box.
  await p.keyboard.press('ArrowUp');
  await p.keyboard.press('ArrowUp');
  assert.equal((await view(p)).active.tag, 'INPUT');
  await p.keyboard.press('ArrowDown');
  await p.keyboard.press('ArrowDown');
  const nav = p.waitForURL(target);
  await p.keyboard.press('Enter');
  await nav;
  assert.equal(new URL(p.url()).hash, '#recursive-types');
  assert.deepEqual(p.errors, []);
  await closePage(p);
});

test('facets: text and code, then a language from the results, typed into the query as filters', async () => {
  const p = await docsPage();
  await searchFor(p, 'ownership');
  let v = await view(p);
  assert.equal(v.facetsHidden, false);
  assert.deepEqual(v.facets.map((f) => f.label), ['All', 'Text', 'Code']);
  await p.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.facets button[data-facet="in:code-blocks"]').click());
  await p.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.facets button[data-facet*="lang:rust"]'));
  v = await view(p);
  assert.ok(v.rows.flatMap((r) => r.items).every((i) => i.snippet.length && i.title), JSON.stringify(v.rows));
  assert.ok(v.facets.some((f) => f.label === 'toml') && v.facets.some((f) => f.label === 'rust'), JSON.stringify(v.facets));
  await p.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.facets button[data-facet*="lang:rust"]').click());
  await p.waitForFunction(() => [...document.querySelector('gitsense-search').shadowRoot.querySelectorAll('.rows .row')].every((r) => r.querySelector('a.page').href.endsWith('ownership.html')));
  v = await view(p);
  assert.equal(v.rows.length, 1);
  assert.match(v.rows[0].items[0].title, /rust/);
  assert.equal(v.facets.find((f) => f.label === 'rust').pressed, 'true');
  await closePage(p);
});

test('axe-core: no serious or critical violation, closed and open with results, light and dark', async () => {
  for (const [label, options, theme] of [
    ['light', {}, null],
    ['dark (prefers-color-scheme)', { colorScheme: 'dark' }, null],
    ['dark (theme attribute)', {}, 'dark'],
  ]) {
    const p = await docsPage(options);
    if (theme) await p.evaluate((t) => document.querySelector('gitsense-search').setAttribute('theme', t), theme);
    await axe(p, `${label}, closed`);
    await searchFor(p, 'ownership');
    await axe(p, `${label}, open with results`);
    await p.screenshot({ path: screenshotPath(`ui-${label.split(' ')[0]}.png`) });
    // The colours follow the scheme: the dialog's background is dark.
    const bg = await p.evaluate(() => getComputedStyle(document.querySelector('gitsense-search').shadowRoot.querySelector('dialog')).backgroundColor);
    const lum = bg.match(/\d+/g).slice(0, 3).reduce((a, b) => a + Number(b), 0);
    assert.ok(label === 'light' ? lum > 600 : lum < 150, `${label}: ${bg}`);
    await closePage(p);
  }
});

test('a phone: the dialog fills the screen and nothing overflows sideways', async () => {
  const p = await docsPage({ viewport: { width: 375, height: 667 } });
  await searchFor(p, 'ownership');
  const m = await p.evaluate(() => {
    const r = document.querySelector('gitsense-search').shadowRoot;
    const d = r.querySelector('dialog').getBoundingClientRect();
    const rows = r.querySelector('.rows');
    return { d: [d.left, d.top, d.width, d.height], page: document.documentElement.scrollWidth, rows: [rows.scrollWidth, rows.clientWidth], vw: innerWidth, vh: innerHeight };
  });
  assert.deepEqual(m.d, [0, 0, m.vw, m.vh]);
  assert.ok(m.page <= m.vw, JSON.stringify(m));
  assert.ok(m.rows[0] <= m.rows[1], JSON.stringify(m));
  await p.screenshot({ path: screenshotPath('ui-phone.png') });
  await closePage(p);
});

test('a site shipping translations side by side: the page\'s <html lang> decides which language\'s pages come first', async () => {
  // English pages (most of the site) and a French translation whose text
  // matches the query better word for word.
  const dir = path.join(site.root, 'multi');
  const w = (rel, lang, title, body) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), `<!DOCTYPE html><html lang="${lang}"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1 id="top">${title}</h1><p>${body}</p></main></body></html>`);
  };
  w('en/core.html', 'en', 'KeepAlive Directive', 'Enables persistent connections. Syntax: KeepAlive On|Off.');
  w('en/install.html', 'en', 'Compiling and Installing', 'Download the sources, configure, build and install the server.');
  w('en/vhosts.html', 'en', 'Virtual Hosts', 'Several sites on one machine, each with its own name.');
  w('fr/core.html', 'fr', 'Directive KeepAlive', 'KeepAlive active les connexions persistantes. KeepAlive On, KeepAlive Off: KeepAlive.');
  const printed = cli('site', dir, '--pkg', path.join(ROOT, 'www/dist/pkg'), '--quiet');
  for (const lang of ['en', 'fr']) {
    fs.writeFileSync(path.join(dir, `${lang}/search.html`),
      `<!DOCTYPE html><html lang="${lang}"><head><meta charset="utf-8"><title>Search</title></head><body><main>\n${printed}</main></body></html>`);
  }
  const server = await startServer({ root: dir, port: 0 });
  try {
    for (const [lang, first] of [['en', '/en/core.html'], ['fr', '/fr/core.html']]) {
      const p = await site.page(null);
      await p.goto(`${server.url}${lang}/search.html`);
      await p.waitForFunction(() => customElements.get('gitsense-search'));
      await searchFor(p, 'KeepAlive');
      const rows = (await view(p)).rows.map((r) => r.href);
      assert.equal(rows.length, 2, JSON.stringify(rows));
      assert.equal(new URL(rows[0]).pathname, first, `${lang}: ${JSON.stringify(rows)}`);
      await closePage(p);
    }
  } finally {
    await server.close();
  }
});

test('the words are translatable by attribute and by property', async () => {
  const p = await docsPage();
  await p.evaluate(() => document.querySelector('gitsense-search').setAttribute('strings', JSON.stringify({ button: 'Suchen', placeholder: 'Doku durchsuchen', noResults: 'Keine Treffer für „{query}“' })));
  assert.equal(await p.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.open span').textContent), 'Suchen');
  await searchFor(p, 'qqxyzzy', /Keine Treffer/);
  let v = await view(p);
  assert.equal(v.status, 'Keine Treffer für „qqxyzzy“');
  assert.equal(await p.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelector('input').placeholder), 'Doku durchsuchen');
  await p.evaluate(() => (document.querySelector('gitsense-search').strings = { all: 'Alle', results: '{count} Seiten' }));
  await p.keyboard.press('Control+k');
  await p.keyboard.type('ownership');
  await p.waitForFunction(() => /Seiten/.test(document.querySelector('gitsense-search').shadowRoot.querySelector('.status').textContent));
  v = await view(p);
  assert.match(v.status, /^\d+ Seiten$/);
  assert.equal(v.facets[0].label, 'Alle');
  await closePage(p);
});

test('the demo page: Ctrl+K opens the UI on its engine, chat results keep their breadcrumbs, picking one shows it in the page', async () => {
  const p = await site.page('?q=');
  assert.equal(await demoReady(p), 'ready');
  await searchFor(p, 'payment');
  const v = await view(p);
  assert.ok(v.rows.length > 3);
  // The demo's index holds the GitSense sample and this project's docs:
  // a chat's row is its breadcrumb (no link), a doc page's row a link.
  const chats = v.rows.filter((r) => r.href === null);
  assert.ok(chats.length > 3 && chats.every((r) => r.crumbs.includes(' › ')), JSON.stringify(v.rows.slice(0, 2)));
  assert.ok(v.rows.every((r) => r.href === null || /^docs\/|^\.\.?\/|^\/|^https?:/.test(r.href) || r.href.includes('.html')), JSON.stringify(v.rows));
  assert.equal(v.rows[0].href, null, 'a chat first for "payment"');
  await p.screenshot({ path: screenshotPath('ui-demo-chats.png') });
  await p.keyboard.press('ArrowDown');
  await p.keyboard.press('Enter');
  await p.waitForSelector('#results .result');
  assert.equal(await p.inputValue('#q'), 'payment');
  assert.equal((await view(p)).open, false);
  assert.deepEqual(p.errors, []);
  await closePage(p);
});

test('"save for offline": shown in lazy mode with no full copy, translatable, shows progress and the done state; hidden under offline="never"', async () => {
  const p = await docsPage();
  await p.evaluate(() => document.querySelector('gitsense-search').setAttribute('strings', JSON.stringify({ save: 'Offline speichern', saving: 'Speichern… {percent} %', saved: 'Offline gespeichert' })));
  await searchFor(p, 'ownership');
  const save = () => p.evaluate(() => {
    const b = document.querySelector('gitsense-search').shadowRoot.querySelector('.save');
    return { hidden: b.hidden, disabled: b.disabled, state: b.dataset.state, text: b.textContent, visible: b.getBoundingClientRect().width > 0 };
  });
  await p.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.save').dataset.state === 'offer');
  const offered = await save();
  assert.deepEqual(offered, { hidden: false, disabled: false, state: 'offer', text: 'Offline speichern', visible: true });
  assert.equal((await p.evaluate(() => document.querySelector('gitsense-search').engine.info())).lazy.state, 'filling');
  await axe(p, 'open, save offered');
  // Every text the control shows while it saves.
  await p.evaluate(() => {
    const b = document.querySelector('gitsense-search').shadowRoot.querySelector('.save');
    window.saveTexts = [];
    new MutationObserver(() => window.saveTexts.push(b.textContent)).observe(b, { childList: true, characterData: true, subtree: true });
  });
  await p.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.save').click());
  await p.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.save').dataset.state !== 'saving', null, { timeout: 60_000 });
  const done = await save();
  assert.deepEqual(done, { hidden: false, disabled: true, state: 'done', text: 'Offline gespeichert', visible: true });
  const texts = await p.evaluate(() => window.saveTexts);
  assert.ok(texts.some((t) => /^Speichern… \d+ %$/.test(t)), JSON.stringify(texts));
  const info = await p.evaluate(() => document.querySelector('gitsense-search').engine.info());
  assert.equal(info.lazy.state, 'complete', JSON.stringify(info.lazy));
  await p.screenshot({ path: screenshotPath('ui-saved-offline.png') });
  await closePage(p);

  // The copy is stored: the next visit opens it, with nothing to offer.
  const stored = await docsPage();
  await searchFor(stored, 'ownership');
  assert.equal((await stored.evaluate(() => document.querySelector('gitsense-search').engine.info())).source, 'stored');
  assert.equal((await stored.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.save').hidden)), true);
  await stored.evaluate(async () => {
    const el = document.querySelector('gitsense-search');
    await el.engine.close();
    const { GitSenseSearch } = await import(new URL('index.js', document.querySelector('script[type=module]').src).href);
    await GitSenseSearch.clear();
  });
  await closePage(stored);

  // offline="never": lazy mode again, and no control.
  const never = await docsPage();
  await never.evaluate(() => document.querySelector('gitsense-search').setAttribute('offline', 'never'));
  await searchFor(never, 'ownership');
  const ninfo = await never.evaluate(() => document.querySelector('gitsense-search').engine.info());
  assert.equal(ninfo.source, 'lazy');
  assert.equal(ninfo.offline.canSave, false);
  assert.equal((await never.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelector('.save').hidden)), true);
  assert.deepEqual(never.errors, []);
  await closePage(never);
});
