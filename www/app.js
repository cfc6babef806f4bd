// The demo page: a search UI over the browser module (pkg/).
//
// Index content is untrusted: it is only ever put into the page as text
// nodes. The engine's HTML snippets (escaped text with <mark>) are parsed
// into text and <mark> elements here, never assigned as innerHTML.

import { GitSenseSearch } from './pkg/index.js';
// The drop-in UI: <gitsense-search> in the top bar, a Ctrl+K / ⌘K dialog
// over the same engine; a chat it lists is shown here (gitsense-select).
import './pkg/ui.js';
import { h, formatBytes, formatMs, plural, formatDate } from './dom.js';
import { ChatApp } from './chat.js';

const params = new URLSearchParams(location.search);
// The default index: this project's documentation (under docs/) and the
// GitSense sample (build.sh build_demo_index).
const manifestUrl = params.get('manifest') || 'demo/manifest.json';
// ?mode=chat: the chat-app mode (chat.js) instead of the published index.
const chatMode = params.get('mode') === 'chat';
const PER_PAGE = 10;

const $ = (id) => document.getElementById(id);
const input = $('q');
const resultsEl = $('results');

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
const decode = (s) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ENTITIES[e]);

/** The engine's escaped snippet with <mark> → text nodes and <mark> elements. */
function snippet(html) {
  const frag = document.createDocumentFragment();
  if (!html) return frag;
  const re = /<mark>([\s\S]*?)<\/mark>/g;
  let at = 0;
  for (let m; (m = re.exec(html)); ) {
    if (m.index > at) frag.append(document.createTextNode(decode(html.slice(at, m.index))));
    frag.append(h('mark', {}, decode(m[1])));
    at = re.lastIndex;
  }
  if (at < html.length) frag.append(document.createTextNode(decode(html.slice(at))));
  return frag;
}

const EXT_LANG = {
  js: 'javascript', jsx: 'javascript', mjs: 'javascript', ts: 'typescript', tsx: 'typescript', py: 'python',
  rs: 'rust', go: 'go', rb: 'ruby', java: 'java', c: 'c', h: 'c', cpp: 'cpp', cs: 'csharp', css: 'css',
  html: 'html', json: 'json', md: 'markdown', sh: 'bash', yml: 'yaml', yaml: 'yaml', sql: 'sql', toml: 'toml',
};
function languageOf(r) {
  if (r.source_type === 'code-block') return r.code_blocks_language || null;
  const file = r.messages_meta_file_path || r.messages_meta_file_name;
  if (typeof file !== 'string' || !file.includes('.')) return null;
  return EXT_LANG[file.split('.').pop().toLowerCase()] || file.split('.').pop().toLowerCase();
}

function breadcrumbs(path) {
  if (!path) return null;
  const parts = path.split(' -> ');
  return h('nav', { class: 'crumbs', 'aria-label': 'Chat path' },
    h('ol', {}, parts.map((p, i) => h('li', { 'aria-current': i === parts.length - 1 ? 'location' : undefined }, p))));
}

function tag(text, cls = '') {
  return text ? h('span', { class: `tag ${cls}`.trim() }, text) : null;
}

function metaLine(...items) {
  const shown = items.filter(Boolean);
  return shown.length ? h('div', { class: 'meta' }, shown.map((t) => h('span', {}, t))) : null;
}

function fullText(text, lang) {
  if (!text) return null;
  return h('div', { class: 'full', hidden: true },
    h('pre', { class: 'code' }, h('code', { 'data-language': lang || undefined }, text)));
}

/** `content` as a link to `url` (a documentation page and section) when
 * it is an http(s) or relative URL; index content never picks a scheme
 * such as javascript:. */
function pageLink(url, content) {
  if (typeof url !== 'string' || !url) return content;
  let href;
  try {
    href = new URL(url, location.href);
  } catch {
    return content;
  }
  if (href.protocol !== 'http:' && href.protocol !== 'https:') return content;
  return h('a', { class: 'page-link', href: href.href }, content);
}

function chatResult(r) {
  return h('article', { class: 'result', 'data-source-type': 'chat', tabindex: '-1', 'aria-expanded': 'false' },
    breadcrumbs(r.chat_path),
    h('h3', { class: 'title' }, pageLink(r.chats_meta_url, r.chats_name_snippet ? snippet(r.chats_name_snippet) : r.chats_name || `Chat ${r.chats_id}`),
      tag(r.chats_type)),
    metaLine(
      r.chats_meta_git_repo && `repo ${r.chats_meta_git_repo}`,
      r.cte_chat_message_stats_num_messages != null && plural(r.cte_chat_message_stats_num_messages, 'message', 'messages'),
      formatDate(r.cte_chat_message_stats_last_updated_at || r.chats_modified_at) && `updated ${formatDate(r.cte_chat_message_stats_last_updated_at || r.chats_modified_at)}`,
    ));
}

function messageResult(r) {
  const lang = languageOf(r);
  const isCode = r.messages_type === 'git-blob' || !!lang;
  const crumbs = (r.chat_path || '').split(' -> ');
  const title = r.messages_meta_file_path || crumbs[crumbs.length - 1] || `Message ${r.messages_id}`;
  return h('article', { class: 'result', 'data-source-type': 'message', tabindex: '-1', 'aria-expanded': 'false' },
    breadcrumbs(r.chat_path),
    h('h3', { class: 'title' }, pageLink(r.messages_meta_url, title), tag(r.messages_role, `role-${r.messages_role}`), tag(r.messages_type), lang && tag(lang, 'lang')),
    r.messages_meta_purpose ? h('p', { class: 'purpose' }, String(r.messages_meta_purpose)) : null,
    isCode
      ? h('pre', { class: 'snippet code' }, h('code', { 'data-language': lang || undefined }, snippet(r.messages_content_snippet)))
      : h('p', { class: 'snippet' }, snippet(r.messages_content_snippet)),
    metaLine(
      r.messages_branch_name && `branch ${r.messages_branch_name}`,
      r.messages_meta_git_repo && `repo ${r.messages_meta_git_repo}`,
      formatDate(r.messages_updated_at || r.messages_created_at),
    ),
    fullText(r.messages_content, lang));
}

function codeResult(r) {
  const lang = languageOf(r);
  const version = r.code_blocks_major_version != null
    ? `v${r.code_blocks_major_version}.${r.code_blocks_minor_version ?? 0}.${r.code_blocks_patch_version ?? 0}` : null;
  return h('article', { class: 'result', 'data-source-type': 'code-block', tabindex: '-1', 'aria-expanded': 'false' },
    breadcrumbs(r.chat_path),
    h('h3', { class: 'title' }, r.code_blocks_component || `Code block ${r.code_blocks_uuid.slice(0, 8)}`,
      lang && tag(lang, 'lang'), tag(version)),
    h('div', { class: 'codebox' },
      h('div', { class: 'codebox-head' }, lang || 'code', r.code_blocks_size != null ? ` · ${formatBytes(r.code_blocks_size)}` : ''),
      h('pre', { class: 'snippet code' }, h('code', { 'data-language': lang || undefined }, snippet(r.code_blocks_content_snippet)))),
    metaLine(r.code_blocks_branch_name && `branch ${r.code_blocks_branch_name}`, formatDate(r.code_blocks_created_at)),
    fullText(r.code_blocks_content, lang));
}

function group(title, count, items, render) {
  if (!items.length) return null;
  return h('section', { class: 'group' },
    h('h2', {}, title, h('span', { class: 'count' }, count.toLocaleString())),
    items.map(render));
}

// Facet chips: how many matches each type, language and repository has,
// asked for once the results show (the first answer does not wait for the
// counts). A chip adds its filter to the query; a pressed chip removes it.
const FACETS = [
  { field: 'chat-type', label: 'Type' },
  { field: 'lang', label: 'Language' },
  { field: 'repo', label: 'Repository' },
];
const MAX_CHIPS = 8;

/** `key:value` as the query language reads it, or null for a value it
 * cannot carry (a double quote); values with spaces or commas are quoted. */
function filterToken(key, value) {
  const v = String(value);
  if (!v || v.includes('"')) return null;
  return /^[^\s',()]+$/.test(v) ? `${key}:${v}` : `${key}:"${v}"`;
}

const hasToken = (query, token) => ` ${query} `.includes(` ${token} `);

function toggleToken(query, token) {
  const q = hasToken(query, token) ? ` ${query} `.replace(` ${token} `, ' ') : `${query} ${token}`;
  return q.replace(/\s+/g, ' ').trim();
}

/** The facets' counts summed over the targets, most frequent first. */
function facetCounts(facets, field) {
  const counts = new Map();
  for (const f of facets || []) {
    if (f.field !== field) continue;
    for (const { value, count } of f.values) counts.set(value, (counts.get(value) || 0) + count);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])));
}

function renderFacets(res, query) {
  const groups = FACETS.map(({ field, label }) => {
    const chips = facetCounts(res?.facets, field)
      .map(([value, count]) => ({ value, count, token: filterToken(field, value) }))
      .filter((c) => c.token);
    const pressed = chips.filter((c) => hasToken(query, c.token));
    // One value alone narrows nothing, unless it is the filter in use.
    if (chips.length < 2 && !pressed.length) return null;
    const shown = [...pressed, ...chips.filter((c) => !pressed.includes(c)).slice(0, MAX_CHIPS)];
    return h('div', { class: 'facet', 'data-field': field },
      h('span', { class: 'facet-label' }, label),
      shown.map((c) => h('button', {
        type: 'button', class: 'chip', 'data-filter': c.token, 'aria-pressed': String(pressed.includes(c)),
        title: pressed.includes(c) ? `Remove ${c.token}` : `Add ${c.token}`,
      }, String(c.value), h('span', { class: 'count' }, c.count.toLocaleString()))));
  }).filter(Boolean);
  $('facets').replaceChildren(...groups);
  show('facets', groups.length > 0);
}

async function loadFacets(seq, query) {
  let res = null;
  try {
    res = await engine.search(query, { perPage: 1, facets: FACETS.map((f) => f.field) });
  } catch {
    // The results already say what is wrong with the query.
  }
  if (seq === searchSeq) renderFacets(res, query);
}

$('facets').addEventListener('click', (e) => {
  const chip = e.target.closest('.chip');
  if (!chip) return;
  input.value = toggleToken(input.value, chip.dataset.filter);
  state = { query: input.value, page: 1 };
  runSearch();
});

// The repository browser (git-nav), beside the examples when the index
// holds git repositories: repositories → branches → directories and files;
// a file opens as a search for its text.
const GIT_ROOT = { label: 'Repositories', query: 'profile:git-nav' };
const GIT_KINDS = { 'git-repo-owner': 'owner', 'git-repo': 'repository', 'git-ref': 'branch', 'git-tree': 'directory', 'git-blob': 'file' };
let gitTrail = [GIT_ROOT];
let gitChats = [];

/** The level below a listed chat, or null for a file. */
function gitLevelOf(c) {
  const repo = c.chats_meta_git_repo;
  const name = c.chats_name || '';
  const plain = /^[\w.\/-]+$/;
  switch (c.chats_type) {
    case 'git-repo-owner': return plain.test(name) ? `git-owner:${name}` : `git-ls-tree-id:${c.chats_id}`;
    case 'git-repo': return repo && plain.test(repo) ? `git-repository:${repo}` : `git-ls-tree-id:${c.chats_id}`;
    case 'git-ref':
      return repo && plain.test(repo) && plain.test(name)
        ? `git-repository:${repo} git-branch:${name}` : `git-ls-tree-id:${c.chats_id}`;
    case 'git-blob': return null;
    default: return `git-ls-tree-id:${c.chats_id}`;
  }
}

async function showGitLevel(trail) {
  const level = trail[trail.length - 1];
  let res;
  try {
    res = await engine.search(level.query);
  } catch (e) {
    showError(e, level.query);
    return;
  }
  gitTrail = trail;
  $('git-crumbs').replaceChildren(...trail.map((t, i) => h('li', {},
    i === trail.length - 1 ? h('span', { 'aria-current': 'location' }, t.label)
      : h('button', { type: 'button', class: 'link', 'data-depth': i }, t.label))));
  $('git-entries').replaceChildren(...res.results.chats.map((c) => {
    const kind = GIT_KINDS[c.chats_type] || c.chats_type;
    const label = c.chats_type === 'git-repo' && c.chats_meta_git_repo ? c.chats_meta_git_repo : c.chats_name;
    return h('li', {}, h('button', { type: 'button', class: `git-entry git-${kind}`, 'data-chat-id': c.chats_id, 'data-name': label },
      label, tag(kind)));
  }));
  gitChats = res.results.chats;
  return res.results.chats.length;
}

$('git-crumbs').addEventListener('click', (e) => {
  const b = e.target.closest('button[data-depth]');
  if (b) showGitLevel(gitTrail.slice(0, Number(b.dataset.depth) + 1));
});
$('git-entries').addEventListener('click', (e) => {
  const b = e.target.closest('.git-entry');
  if (!b) return;
  const c = gitChats.find((x) => String(x.chats_id) === b.dataset.chatId);
  const next = gitLevelOf(c);
  if (next) {
    showGitLevel([...gitTrail, { label: b.firstChild.textContent, query: next }]);
  } else {
    input.value = `chat-id:${c.chats_id} msg-type:git-blob`;
    state = { query: input.value, page: 1 };
    runSearch();
  }
});

let hasRepositories = false;
async function initGitBrowser() {
  hasRepositories = (await showGitLevel([GIT_ROOT])) > 0;
  show('git-browser', hasRepositories && !state.query.trim());
}

// ---------------------------------------------------------------------------

let engine = null;
let state = { query: '', page: 1 };
let searchSeq = 0;

function show(id, visible) {
  $(id).hidden = !visible;
}

function notice(text, kind = 'info') {
  const n = $('notice');
  n.replaceChildren(text);
  n.className = `notice notice-${kind}`;
  n.hidden = !text;
}

function showError(err, query) {
  const box = $('error');
  const parts = [h('strong', {}, err.message || String(err)), ' ', h('code', { class: 'code-name' }, err.code || 'error')];
  if (query && Number.isInteger(err.position)) {
    const chars = [...query];
    parts.push(h('pre', { class: 'caret' }, chars.join(''), '\n', ' '.repeat(Math.min(err.position, chars.length)), '^'));
  }
  box.replaceChildren(...parts);
  box.hidden = false;
}

function render(res, ms) {
  const { totalCounts: c, pagination: p } = res;
  const parts = [
    h('strong', {}, plural(p.totalResults, 'result', 'results')),
    ` · ${plural(c.chats, 'chat', 'chats')} · ${plural(c.messages, 'message', 'messages')} · ${plural(c.codeBlocks, 'code block', 'code blocks')}`,
    h('span', { class: 'timing' }, formatMs(ms)),
  ];
  $('summary').replaceChildren(...parts);
  show('summary', true);
  const notes = [];
  if (res.didYouMean) notes.push(`Showing results for “${res.didYouMean.query}”: ${res.didYouMean.corrections.map((c) => `“${c.word}” is in no indexed text`).join(', ')}.`);
  if (res.searchCriteria.fallback) notes.push(res.searchCriteria.fallback.reason);
  if (res.hint) notes.push(res.hint);
  for (const w of res.searchCriteria.warnings || []) notes.push(w);
  notice(notes.join(' '), 'info');

  resultsEl.replaceChildren(...[
    group('Chats', c.chats, res.results.chats, chatResult),
    group('Messages', c.messages, res.results.messages, messageResult),
    group('Code blocks', c.codeBlocks, res.results.codeBlocks, codeResult),
  ].filter(Boolean));
  if (!res.totalResultsReturned) {
    resultsEl.replaceChildren(h('p', { class: 'empty' }, p.totalResults ? 'No results on this page.' : 'Nothing matches. Check the spelling, drop a filter, or see the syntax help.'));
  }
  $('page-label').textContent = `Page ${p.currentPage} of ${Math.max(1, p.totalPages)}`;
  $('prev').disabled = p.currentPage <= 1;
  $('next').disabled = p.currentPage >= p.totalPages;
  show('pager', p.totalPages > 1);
}

async function runSearch() {
  const seq = ++searchSeq;
  const query = state.query.trim();
  const url = new URL(location.href);
  if (query) url.searchParams.set('q', state.query);
  else url.searchParams.delete('q');
  if (state.page > 1) url.searchParams.set('page', state.page);
  else url.searchParams.delete('page');
  history.replaceState(null, '', url);
  $('error').hidden = true;
  if (!query) {
    resultsEl.replaceChildren();
    show('summary', false);
    show('facets', false);
    show('pager', false);
    notice('');
    show('welcome', true);
    show('git-browser', hasRepositories);
    return;
  }
  show('welcome', false);
  show('git-browser', false);
  const t0 = performance.now();
  try {
    const res = await engine.search(state.query, { page: state.page, perPage: PER_PAGE });
    if (seq !== searchSeq) return; // a newer search is under way
    render(res, performance.now() - t0);
    loadFacets(seq, state.query);
  } catch (e) {
    if (seq !== searchSeq) return;
    resultsEl.replaceChildren();
    show('summary', false);
    show('facets', false);
    show('pager', false);
    notice('');
    showError(e, state.query);
  }
}

let debounce = 0;
input.addEventListener('input', () => {
  state = { query: input.value, page: 1 };
  clearTimeout(debounce);
  debounce = setTimeout(runSearch, 120);
});
$('search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  clearTimeout(debounce);
  state = { query: input.value, page: 1 };
  runSearch();
});
$('prev').addEventListener('click', () => {
  state.page = Math.max(1, state.page - 1);
  runSearch().then(() => window.scrollTo({ top: 0 }));
});
$('next').addEventListener('click', () => {
  state.page += 1;
  runSearch().then(() => window.scrollTo({ top: 0 }));
});
for (const b of document.querySelectorAll('.examples button')) {
  b.addEventListener('click', () => {
    input.value = b.dataset.q;
    state = { query: input.value, page: 1 };
    runSearch();
    input.focus();
  });
}

// Results: click or Enter shows the full text.
function toggle(article) {
  const full = article.querySelector('.full');
  if (!full) return;
  full.hidden = !full.hidden;
  article.setAttribute('aria-expanded', String(!full.hidden));
}
resultsEl.addEventListener('click', (e) => {
  const article = e.target.closest('.result');
  if (article && !window.getSelection().toString()) {
    article.focus();
    toggle(article);
  }
});

// Keys: / focuses the box (Ctrl/⌘+K is the UI's dialog); arrows move
// through results.
const results = () => [...resultsEl.querySelectorAll('.result')];
document.addEventListener('keydown', (e) => {
  const inBox = document.activeElement === input;
  const typing = inBox || ['INPUT', 'TEXTAREA', 'GITSENSE-SEARCH'].includes(document.activeElement?.tagName);
  if (e.key === '/' && !typing) {
    e.preventDefault();
    input.focus();
    input.select();
    return;
  }
  const list = results();
  const at = list.indexOf(document.activeElement);
  if (e.key === 'ArrowDown' && (inBox || at >= 0) && list.length) {
    e.preventDefault();
    list[Math.min(at + 1, list.length - 1)].focus();
  } else if (e.key === 'ArrowUp' && at >= 0) {
    e.preventDefault();
    if (at === 0) input.focus();
    else list[at - 1].focus();
  } else if (e.key === 'Enter' && at >= 0) {
    e.preventDefault();
    toggle(list[at]);
  } else if (e.key === 'Escape' && at >= 0) {
    input.focus();
  }
});

$('help-toggle').addEventListener('click', () => {
  const open = $('help').hidden;
  $('help').hidden = !open;
  $('help-toggle').setAttribute('aria-expanded', String(open));
});

async function fillHelp() {
  const syntax = await engine.syntax();
  $('help-filters').replaceChildren(...syntax.filters.flatMap((f) => [
    h('dt', {}, h('code', {}, f.example)),
    h('dd', {}, f.help),
  ]));
  $('help-directives').replaceChildren(...syntax.directives.flatMap((d) => [
    h('dt', {}, h('code', {}, d.example)),
    h('dd', {}, `${d.help}: ${d.values}`),
  ]));
}

// Status: storage, offline, index facts.
const STORAGE_NAMES = { opfs: 'Stored in OPFS', indexeddb: 'Stored in IndexedDB', memory: 'In memory only', lazy: 'Reading on demand' };
let fillShown = -1;
async function refreshStatus() {
  const info = await engine.info();
  const badge = $('storage-badge');
  badge.textContent = STORAGE_NAMES[info.storage] || info.storage;
  badge.title = info.storageReason;
  if (info.storage === 'lazy' && info.lazy) {
    // Pages are read as queries need them while the rest is saved.
    const pct = Math.floor((100 * info.lazy.pagesStored) / info.lazy.pageCount);
    badge.textContent = info.lazy.state === 'filling' ? `${STORAGE_NAMES.lazy} · ${pct}% saved for offline` : STORAGE_NAMES.lazy;
    badge.title = info.lazy.reason || 'The index is read over HTTP range requests while a copy is saved in OPFS for offline use';
  }
  badge.className = `badge badge-${info.storage}`;
  badge.hidden = false;
  const offline = !navigator.onLine || info.lastUpdate?.status === 'offline';
  $('offline-badge').hidden = !offline;
  $('offline-badge').title = info.storage === 'memory' ? 'Offline' : 'Offline: answering from the stored index';
  const i = info.index;
  $('welcome-stats').textContent = `${plural(i.chats, 'chat', 'chats')}, ${plural(i.messages, 'message', 'messages')} and ${plural(i.codeBlocks, 'code block', 'code blocks')}, searchable in your browser.`;
  $('footer').replaceChildren(
    h('span', {}, `Index ${i.revision.slice(0, 8)}`),
    h('span', {}, `built ${formatDate(i.builtAt)}`),
    h('span', {}, formatBytes(info.sizeBytes)),
    h('span', {}, {
      downloaded: `downloaded ${formatBytes(info.downloadedBytes)} in ${formatMs(info.timings.downloadMs || 0)}`,
      lazy: `read on demand: ${formatBytes(info.downloadedBytes)} fetched`,
    }[info.source] || (info.writable ? `writable index ${info.name}` : 'opened from browser storage')),
    h('span', {}, 'gitsense-search'),
  );
}
window.addEventListener('online', () => engine && refreshStatus());
window.addEventListener('offline', () => engine && refreshStatus());

function onProgress(p) {
  if (p.phase === 'download') {
    show('download', true);
    $('download-label').textContent = 'Downloading the search index…';
    $('download-bytes').textContent = `${formatBytes(p.loaded)} of ${formatBytes(p.total)}`;
    $('download-progress').max = p.total || 1;
    $('download-progress').value = p.loaded;
  } else if (p.phase === 'verify' || p.phase === 'store') {
    $('download-label').textContent = p.phase === 'verify' ? 'Verifying…' : 'Storing for offline use…';
  } else if (p.phase === 'ready') {
    show('download', false);
    if (engine) refreshStatus();
  } else if (p.phase === 'fill' && engine) {
    // The badge follows the background copy in steps of 5%.
    const step = Math.floor((20 * p.loaded) / (p.total || 1));
    if (step !== fillShown) {
      fillShown = step;
      refreshStatus();
    }
  }
}

/** The default mode: the demo's published index. */
function openPublished() {
  return GitSenseSearch.open({
    manifestUrl,
    // A chat app is used again and again, and offline: copy at once.
    offline: 'always',
    // A link to a search (?q=...): its pages come while the module loads.
    firstQuery: params.get('q') || undefined,
    onProgress,
    onUpdate: (u) => {
      refreshStatus();
      if (u.status === 'updated') {
        notice(`The search index was updated (revision ${u.revision.slice(0, 8)}).`, 'success');
        runSearch();
      }
    },
    onError: (e) => {
      show('download', false);
      notice(`${e.code === 'internal.panic' ? 'The search engine crashed' : 'Could not update the search index'}: ${e.message}`, 'warning');
      refreshStatus();
    },
  });
}

/** Chat-app mode (?mode=chat): the page's own writable index, searched
 * with this page's box and results (chat.js fills it). */
async function openChatMode() {
  $('welcome-title').textContent = 'Your chats, searchable offline.';
  $('welcome-try').hidden = true;
  document.querySelector('.examples').hidden = true;
  const chat = new ChatApp({
    name: params.get('name') || undefined,
    storage: params.get('storage') || undefined,
    onEngine: (e) => {
      engine = e;
      window.gitsense = e;
      document.querySelector('gitsense-search').engine = e;
    },
    onChange: () => {
      refreshStatus();
      if (state.query.trim()) runSearch();
    },
  });
  const opened = await chat.open();
  chat.attach();
  return opened;
}

async function main() {
  const mode = chatMode ? 'chat' : 'search';
  document.body.dataset.mode = mode;
  document.querySelector(`.modes a[data-mode="${mode}"]`).setAttribute('aria-current', 'page');
  try {
    engine = await (chatMode ? openChatMode() : openPublished());
  } catch (e) {
    show('download', false);
    showError(e);
    document.body.dataset.state = 'error';
    return;
  }
  window.gitsense = engine; // for the console (and the tests)
  const quick = document.querySelector('gitsense-search');
  quick.engine = engine;
  quick.addEventListener('gitsense-select', (e) => {
    input.value = e.detail.query;
    state = { query: input.value, page: 1 };
    runSearch();
  });
  show('download', false);
  input.disabled = false;
  await Promise.all([refreshStatus(), fillHelp()]);
  const q = params.get('q');
  if (q) {
    input.value = q;
    state = { query: q, page: Math.max(1, Number(params.get('page')) || 1) };
  }
  await runSearch();
  await initGitBrowser();
  input.focus();
  document.body.dataset.state = 'ready';
}

main();
