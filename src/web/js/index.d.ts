// gitsense-search in the browser: the page-side API (index.js).

import type { SearchResults } from './results';

export type * from './results';

export type StorageMode = 'auto' | 'opfs' | 'indexeddb' | 'memory' | 'lazy';

/** Download and open progress; `loaded`/`total` are bytes for 'download'
 * and 'fill' (lazy mode: bytes of the index copied into OPFS so far). */
export interface Progress {
  phase: 'manifest' | 'download' | 'verify' | 'store' | 'fill' | 'ready';
  loaded: number;
  total: number;
}

export interface OpenOptions {
  /** URL of the manifest.json `gitsense-search publish` wrote (relative to the page). */
  manifestUrl: string;
  /** Where to keep the index; 'auto' tries OPFS, then IndexedDB, then memory,
   * and on a first visit with OPFS reads the index lazily (HTTP Range
   * requests) while a copy fills OPFS. 'lazy': read lazily even without OPFS
   * (pages then live in a bounded memory cache). */
  storage?: StorageMode;
  /** Lazy mode: copy the whole index into OPFS in the background (default
   * true). false: only pages queries read are kept. */
  lazyFill?: boolean;
  onProgress?: (p: Progress) => void;
  /** A background update check finished. */
  onUpdate?: (status: UpdateStatus) => void;
  /** A background update failed (the current index keeps answering) or the engine crashed. */
  onError?: (error: GitSenseSearchError) => void;
}

export interface SearchOptions {
  /** 1-based page (default 1). */
  page?: number;
  /** Results per target and page (default: the profile's limit; at most 1000). */
  perPage?: number;
  /** The chat the user is in, for `scope:` queries. */
  currentChatId?: number;
  /** Snippet markers (default 'html': escaped text with <mark>). */
  highlight?: 'html' | 'raw' | 'none';
  /** Include full message and code contents (default true). */
  includeContent?: boolean;
  /** Token budget for the whole results object (chars/4 estimate). */
  maxTokens?: number;
  /** `nextCursor` of a previous page. */
  cursor?: string;
  /** Add per-stage timings as `trace`. */
  trace?: boolean;
}

export interface UpdateStatus {
  /** current: the manifest names the index in use; updated: a new index was
   * swapped in; offline: no manifest could be fetched. */
  status: 'current' | 'updated' | 'offline';
  revision: string;
  reason?: string;
}

/** Lazy mode: the index read over HTTP Range requests and its copy in OPFS. */
export interface LazyInfo {
  /** filling: pages are being copied into OPFS; complete: the verified copy
   * is stored and in use; memory: no copy (reason says why). */
  state: 'filling' | 'complete' | 'memory';
  reason?: string;
  /** The raw index read by range. */
  url: string;
  pageSize: number;
  pageCount: number;
  pagesStored: number;
  pagesCached: number;
  /** Synchronous range requests made while queries ran, and their bytes. */
  readRequests: number;
  readBytes: number;
  /** Batched parallel requests made before queries (the warm-up). */
  prefetchRequests: number;
  prefetchBytes: number;
  prefetchRounds: number;
  prefetchWaitMs: number;
  /** Background fill requests and bytes. */
  fillRequests: number;
  fillBytes: number;
  /** Hot pages (every query reads them) fetched in one request at start. */
  hotPages: number;
  hotBytes: number;
  pageReads: number;
  readWaitMs: number;
  storeMs: number;
}

export interface EngineInfo {
  /** 'lazy': read over HTTP Range requests (see `lazy`). */
  storage: 'opfs' | 'indexeddb' | 'memory' | 'lazy';
  /** Why this storage is in use (e.g. why OPFS was not). */
  storageReason: string;
  /** 'stored': opened from browser storage; 'downloaded': fetched in this
   * session; 'lazy': read over HTTP Range requests in this session. */
  source: 'stored' | 'downloaded' | 'lazy';
  manifestUrl: string;
  /** Name of the index file in storage. */
  file: string;
  sha256: string;
  index: {
    formatVersion: number;
    revision: string;
    builtAt: string;
    source: string;
    chats: number;
    messages: number;
    codeBlocks: number;
    groups: number;
    pageSize: number;
    pageCount: number;
  };
  sizeBytes: number;
  /** Index bytes downloaded in this session (compressed; lazy: pages). */
  downloadedBytes: number;
  online: boolean;
  lastUpdate?: UpdateStatus;
  timings: {
    storageMs: number;
    manifestMs?: number;
    downloadMs?: number;
    verifyMs?: number;
    storeMs?: number;
    openMs: number;
    lastSearchMs?: number;
    /** Lazy mode: batched prefetch before the last search. */
    lastWarmMs?: number;
    /** Lazy mode: from opening until the verified copy was switched in. */
    fillMs?: number;
  };
  lazy?: LazyInfo;
}

export interface SyntaxGuide {
  filters: { name: string; targets: string; values: string; example: string; help: string }[];
  directives: { name: string; example: string; values: string; help: string }[];
}

/** Every failure: `code` is stable and dotted (e.g. 'query.unbalanced_quote',
 * 'download.checksum_mismatch', 'storage.busy'); `position` is the character
 * offset in the query for query errors, else null. */
export class GitSenseSearchError extends Error {
  readonly code: string;
  readonly position: number | null;
  readonly location?: string;
  toJSON(): { code: string; message: string; position: number | null; location?: string };
}

export class GitSenseSearch extends EventTarget {
  /** Opens the index: from storage when present (no network needed), else downloads it. */
  static open(options: OpenOptions): Promise<GitSenseSearch>;
  /** Removes every stored index of this origin (fails with storage.busy while one is open). */
  static clear(): Promise<void>;

  search(query: string, options?: SearchOptions): Promise<SearchResults>;
  /** The results object as JSON text, byte for byte what the CLI prints. */
  searchJson(query: string, options?: SearchOptions): Promise<string>;
  info(): Promise<EngineInfo>;
  /** Checks the manifest now and swaps in a changed index once verified. */
  update(): Promise<UpdateStatus>;
  /** The query language's filters and directives (for help screens). */
  syntax(): Promise<SyntaxGuide>;
  /** Names of the index files in storage. */
  storedFiles(): Promise<string[]>;
  /** Closes the index, releases storage and stops the worker. */
  close(): Promise<void>;
  /** Milliseconds the last search took inside the worker. */
  lastSearchMs?: number;

  addEventListener(type: 'progress', listener: (e: CustomEvent<Progress>) => void): void;
  addEventListener(type: 'update', listener: (e: CustomEvent<UpdateStatus>) => void): void;
  addEventListener(type: 'fill', listener: (e: CustomEvent<EngineInfo>) => void): void;
  addEventListener(type: 'updateerror' | 'fillerror' | 'error', listener: (e: CustomEvent<GitSenseSearchError>) => void): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
}

export default GitSenseSearch;
