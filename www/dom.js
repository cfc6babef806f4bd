// DOM and number helpers shared by the demo's search page (app.js) and
// its chat-app mode (chat.js). Text is only ever added as text nodes.

/** Creates an element; `children` are nodes or strings (added as text). */
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'role' || k === 'tabindex' || k === 'title' || k === 'type') {
      e.setAttribute(k, String(v));
    } else e[k] = v;
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export const formatBytes = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : n >= 1e3 ? `${Math.round(n / 1e3)} KB` : `${n} B`);
export const formatMs = (ms) => (ms < 10 ? ms.toFixed(1) : Math.round(ms)) + ' ms';
export const plural = (n, one, many) => `${n.toLocaleString()} ${n === 1 ? one : many}`;
export const formatDate = (iso) => {
  if (!iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
};

