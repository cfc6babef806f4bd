// The drop-in UI (ui.js): <gitsense-search>, a search box and a ⌘K / Ctrl+K
// dialog over the module (docs/ui.md).

import type { GitSenseSearch } from './index.js';
import type { SearchResults, SearchResult } from './results.js';

/** The UI's words; any of them can be replaced (attribute or property `strings`). */
export interface UIStrings {
  button: string;
  placeholder: string;
  dialog: string;
  close: string;
  filters: string;
  all: string;
  text: string;
  code: string;
  loading: string;
  /** `{count}`: the rows shown. */
  results: string;
  /** `{query}`: the reader's text. */
  noResults: string;
  /** Results of a corrected query; `{query}`: the reader's text, each
   * word the index does not hold replaced; `{count}`: the rows shown. */
  corrected: string;
  /** `{message}`: the error's message. */
  error: string;
  keys: string;
  /** The "save for offline" control (lazy mode, no full copy stored). */
  save: string;
  /** While it saves; `{percent}`: how much is stored. */
  saving: string;
  saved: string;
  /** `{message}`: why the copy stopped (the control offers it again). */
  saveFailed: string;
}

export declare const STRINGS: UIStrings;

/** One item under a row: a section or code block of a page, or a chat result. */
export interface UIItem {
  title?: string;
  /** Escaped HTML with <mark> (Markdown marks stripped). */
  snippet?: string;
  /** A code snippet: escaped HTML with <mark>. */
  code?: string;
  lang?: string | null;
  href?: string;
  result: SearchResult;
}

/** A row: a page (href, title) with its items, or a chat result (crumbs). */
export interface UIRow {
  href?: string;
  title?: string;
  crumbs?: string[];
  items: UIItem[];
}

/** The results object → the rows the UI shows; `link` resolves an index URL (null: no link). */
export declare function toRows(res: SearchResults, link: (url: string) => string | null): UIRow[];

/** A snippet's Markdown marks dropped, on the engine's escaped HTML with <mark>. */
export declare function stripMarkdown(html: string): string;

export interface SelectDetail {
  result: SearchResult;
  query: string;
}

export declare class GitSenseSearchElement extends HTMLElement {
  /** The engine searched; assign one the page opened to share it. */
  engine: GitSenseSearch | null;
  /** The words shown; assigning merges over the defaults. */
  get strings(): UIStrings;
  set strings(value: Partial<UIStrings>);
  /** Opens the dialog (and the engine on first use); `query` fills the box. */
  open(query?: string): void;
  /** Closes the dialog; the focus goes back to the button. */
  close(): void;
  addEventListener(type: 'gitsense-select', listener: (e: CustomEvent<SelectDetail>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

declare global {
  interface HTMLElementTagNameMap {
    'gitsense-search': GitSenseSearchElement;
  }
}
