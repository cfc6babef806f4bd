// gitsense-search in the browser: the page-side API (index.js).

// With the extension: resolvable under moduleResolution node16/nodenext
// as well as bundler.
import type { SearchResults } from './results.js';

export type * from './results.js';

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
  /** Lazy mode: when to copy the whole index into OPFS (every later visit
   * then answers from it, offline too). Under every policy the pages a
   * visit's searches read are kept for the next visit. 'auto' (the
   * default): only when the reader asks (`saveOffline()`, the drop-in UI's
   * "save for offline" control), never on its own; 'always': at once (after
   * the first search), in the background; 'never': no copy, and
   * `saveOffline()` rejects with `offline.refused`. */
  offline?: 'auto' | 'always' | 'never';
  /** The older spelling of `offline`: false is 'never'; ignored when
   * `offline` is given. */
  lazyFill?: boolean;
  /** Milliseconds a request may go unanswered: one HTTP Range request
   * (then retried twice), the manifest, and the full download's wait for
   * its next bytes; past it, `network.timeout` ("no answer within N ms").
   * Default: 15000 for the manifest and a page a query is waiting on, 60000
   * for prefetches, the fill and the full download. 1 to 600000. */
  requestTimeoutMs?: number;
  /** The query the page will run first, when it knows it at load (a
   * search page's `?q=`). Accepted and checked, but it fetches nothing:
   * the first search's pages come from the engine's warm-up whether it is
   * given or not. */
  firstQuery?: string;
  /** Where the engine's files (`worker.js`, the `.wasm` files) are served:
   * a directory URL, absolute or relative to the page. Default: beside this
   * module. Needed when a bundler moved this module without copying them
   * (esbuild); they must be same-origin (a module worker). */
  assetsUrl?: string | URL;
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
  /** How the query is read: 'strict' (default; the query language,
   * malformed text rejects with a `query.*` error) or 'box' (a search
   * box's text: never an error; unbalanced quotes, `fn main()`, operators
   * at the ends are searched literally; the word being typed also matches
   * as a prefix; filters typed whole still apply). */
  mode?: 'strict' | 'box';
  /** Words around the matches in a message's snippet, 1 to 64 (default
   * 12; the drop-in UI asks for 30). */
  snippetTokens?: number;
  /** The reader's language ('en', 'fr', 'pt-BR'): on a site that ships
   * pages in several languages side by side (each page's `<html lang>`),
   * matches on pages in it come first; the others follow. Default: the
   * site's own language (that of most pages). The drop-in UI passes its
   * page's `<html lang>`. */
  lang?: string;
  /** Milliseconds this search may work before it answers with what it has
   * (`truncated`); 0 lifts the bound. Default: the engine's (150 in the
   * browser, as the CLI's --time-budget-ms is 1000). */
  timeBudgetMs?: number;
  /** Facets to count over the matches, each 'FIELD' or 'FIELD:TYPE' as
   * `insight-field:` takes them (e.g. ['lang', 'repo', 'keywords:array']);
   * the counts come back as `facets`. */
  facets?: string[];
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
  /** Pages held in memory only (a stored page read this visit is kept in memory too, and counted as stored). */
  pagesCached: number;
  /** The warm-up and the fill read the packed file (the index's pages
   * compressed one by one, publish's `index-<hash>.pages`), not the raw
   * index; prefetchBytes and fillBytes count its compressed bytes. */
  packed: boolean;
  /** Why pages come from the raw index although a packed file is
   * published (it is missing, or not what its lengths say). */
  packedOff?: string;
  /** Why the hot pages are not used: their file failed, e.g.
   * `download.too_large: ...` for one that inflates past what the manifest
   * declares, `download.corrupt: ...` for one whose pages do not decode,
   * `index.version_mismatch: ...` for a `hotFormat` the module does not
   * read. */
  hotOff?: string;
  /** The storage failure that stopped the copy into OPFS (its code, e.g.
   * `storage.quota_exceeded`), until the fill reports it as 'fillerror'. */
  fillError?: string;
  /** Synchronous range requests made while queries ran, and their bytes. */
  readRequests: number;
  readBytes: number;
  /** Batched parallel requests made before queries (the warm-up). */
  prefetchRequests: number;
  prefetchBytes: number;
  prefetchRounds: number;
  prefetchWaitMs: number;
  /** The host answers several ranges per request (multipart/byteranges):
   * each warm-up round is one request. */
  multiRange: boolean;
  /** The worker opened the OPFS fill files while the module loaded (a
   * cold visit's first answer waits for no file to be created); the
   * hot pages are written into them when the fill starts. */
  fillPrepared: boolean;
  /** Background fill requests and bytes. */
  fillRequests: number;
  fillBytes: number;
  /** Hot pages (every query reads them) fetched in one request at start. */
  hotPages: number;
  hotBytes: number;
  pageReads: number;
  readWaitMs: number;
  /** Milliseconds spent writing pages into the OPFS fill file: pages
   * fetched for queries, and the hot pages once the fill starts. */
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
  /** Whether SQLite is set up for the index in use: an index read lazily answers the searches the reader can run without it. */
  sqliteOpen: boolean;
  lastUpdate?: UpdateStatus;
  timings: {
    storageMs: number;
    manifestMs?: number;
    downloadMs?: number;
    verifyMs?: number;
    storeMs?: number;
    openMs: number;
    lastSearchMs?: number;
    /** Lazy mode: the last search's batched page fetches. */
    lastWarmMs?: number;
    /** What answered the last search: the reader (lazy mode, no SQLite) or SQLite. */
    lastSearchBy?: 'reader' | 'sqlite';
    /** Lazy mode: from opening until the verified copy was switched in. */
    fillMs?: number;
  };
  lazy?: LazyInfo;
  /**
   * The engine's code (see docs/lazy-loading.md, "The module in two parts"): `split`
   * when a build ships its functions in two wasm modules, the second of
   * which (`secondLoaded`) comes after the first answer or when first
   * needed.
   */
  module: { split: boolean; secondLoaded: boolean };
  /**
   * When this engine reached each step of starting up, in milliseconds
   * since the page's time origin (`performance.now()`'s zero), for
   * tuning a page's first visit. Steps not reached are absent. On the
   * page: `pageOpen` (open() called), `pageHot` (lazy mode: the page's
   * prefetch done: hot pages in and decoded, range probes answered),
   * `pageCompiled` (the wasm module compiled); in the
   * worker: `prefetched` (the page's prefetch handed over), `module`
   * (the compiled module handed over), `instantiated`, `opened`, `firstSearch` (the first search's start) and `firstAnswer`
   * (the first search that succeeded, its end).
   */
  /** What open({ offline }) decided for this visit: the policy, this
   * browser's visit count to the index, whether the connection is metered
   * (Save-Data, cellular), whether the copy into OPFS runs, and whether
   * `saveOffline()` would start it (lazy mode, no full copy stored or under
   * way, policy not 'never'). */
  offline?: { policy: 'auto' | 'always' | 'never'; visits: number; metered: boolean; copying: boolean; canSave: boolean };
  startup: Partial<Record<'pageOpen' | 'pageHot' | 'pageCompiled' | 'prefetched' | 'module' | 'instantiated' | 'opened' | 'firstSearch' | 'firstAnswer', number>>;
}

export interface SyntaxGuide {
  filters: { name: string; targets: string; values: string; example: string; help: string }[];
  directives: { name: string; example: string; values: string; help: string }[];
}

/** Where a writable index lives ('auto': OPFS, else IndexedDB). */
export type WritableStorage = 'auto' | 'opfs' | 'indexeddb' | 'memory';

export interface CreateOptions {
  /** The index's name: 1 to 64 letters, digits, '-', '_' or '.'. */
  name: string;
  storage?: WritableStorage;
  assetsUrl?: string | URL;
  /** The engine crashed. */
  onError?: (error: GitSenseSearchError) => void;
}

/** open({ name }): a writable index made by create(); with manifestUrl
 * too, an overlay: a copy of that published index holding the page's
 * writes, searched as one index, kept across new revisions. */
export interface OpenWritableOptions extends CreateOptions {
  manifestUrl?: string;
  requestTimeoutMs?: number;
  onProgress?: (p: Progress) => void;
  onUpdate?: (status: UpdateStatus) => void;
}

/** A chat, as the GitSense model has it (`parent_id` 0 or absent: a root chat). */
export interface ChatRecord {
  id: number;
  name: string;
  parent_id?: number;
  type?: string;
  uuid?: string;
  owner?: string;
  group_id?: number;
  created_at?: string;
  modified_at?: string;
  meta?: Record<string, unknown>;
}

/** A message; its fenced code blocks become code blocks by themselves. */
export interface MessageRecord {
  id: number;
  chat_id: number;
  role: 'system' | 'user' | 'assistant';
  content: string;
  type?: string;
  title?: string;
  keywords?: string;
  meta?: Record<string, unknown>;
  created_at?: string;
  updated_at?: string;
}

/** A code block given explicitly (a GitSense header in its content fills uuid, version, ...). */
export interface CodeBlockRecord {
  id: number;
  message_id: number;
  content: string;
  type?: string;
  uuid?: string;
  language?: string;
  component?: string;
  description?: string;
  created_at?: string;
}

export interface WriteRecords {
  chats?: ChatRecord[];
  messages?: MessageRecord[];
  codeBlocks?: CodeBlockRecord[];
}

export interface RemoveIds {
  chatIds?: number[];
  messageIds?: number[];
  blockIds?: number[];
}

/** Rows a write added, replaced or removed, and the index's revision after it. */
export interface WriteSummary {
  chats: number;
  messages: number;
  codeBlocks: number;
  revision: string;
  /** What was repaired in the input (lone surrogates replaced by U+FFFD); absent when nothing was. */
  warnings?: string[];
}

/** How far an importFile() is: bytes of the file read, rows stored so far. */
export interface ImportProgress {
  bytesRead: number;
  totalBytes: number;
  chats: number;
  messages: number;
  codeBlocks: number;
}

export interface ImportOptions {
  /** Called after each stored batch (and once at the end). */
  onProgress?: (p: ImportProgress) => void;
  /** Aborting rejects with import.aborted; nothing is imported. */
  signal?: AbortSignal;
  /** For benchmarks: messages per stored batch, SQLite page cache and FTS5 term buffer (MiB) while importing. */
  tuning?: { batchMessages?: number; cacheMib?: number; ftsBufferMib?: number };
}

/** What an importFile() added. */
export interface ImportSummary {
  /** 'chatgpt', 'claude', 'sharegpt' or 'mixed' ('-jsonl' appended for JSON Lines). */
  format: string;
  /** Chats added: one per conversation and the export's own (their parent). */
  chats: number;
  messages: number;
  codeBlocks: number;
  /** As the CLI's importer reports them (skipped elements, repaired characters, ...). */
  warnings: string[];
  revision: string;
}

/** info() of a writable index (or an overlay). */
export interface WritableInfo {
  writable: true;
  name: string;
  storage: 'opfs' | 'indexeddb' | 'memory';
  storageReason: string;
  file: string;
  index: EngineInfo['index'];
  sizeBytes: number;
  timings: { openMs: number; lastWriteMs?: number; lastSaveMs?: number; lastSearchMs?: number };
  /** An overlay: its published index, how the copy in use came, the last update check. */
  overlay?: { source: 'stored' | 'downloaded'; manifestUrl: string; baseSha256: string; lastUpdate?: UpdateStatus };
  /** A tab sharing the index with others: whether this tab's worker holds it. */
  tab?: { owner: boolean };
}

/** A structured error as data (inside stage reports): see GitSenseSearchError. */
export interface ErrorInfo {
  code: string;
  message: string;
  position?: number;
  location?: string;
}

/** Options of an assisted search (the Rust `AssistOptions`). */
export interface AssistOptions {
  /** Token budget (characters / 4) of every prompt sent to the model. */
  maxTokens?: number | null;
  /** Above this many stage-2 matches the model picks from a condensed view (default 50). */
  condenseThreshold?: number;
  /** Most tiny overviews stage 2 returns (default 200). */
  maxCandidates?: number;
  /** Most files read in stage 3 and reviewed in stage 4 (default 50). */
  maxReviewFiles?: number;
  /** Characters of file text used when a file has no overview (default 1500). */
  fallbackChars?: number;
  /** Extra stage-1 attempts after a rejected query or one that matches nothing (default 1). */
  retries?: number;
}

/** What the llm callback is told besides the prompt. */
export interface LlmCallInfo {
  /** 1 (query), 2 (condensed-pick) or 4 (review). */
  stage: 1 | 2 | 4;
  name: 'query' | 'condensed-pick' | 'review';
  /** The assistedSearch() signal, to cancel the model's request with. */
  signal?: AbortSignal;
}

/** The host's model: the answer text for a prompt. Never called by the module on its own. */
export type Llm = (prompt: string, info: LlmCallInfo) => string | Promise<string>;

export interface AssistedSearchOptions extends AssistOptions {
  llm: Llm;
  /** Each stage report, in order, as the stage ends (a throwing listener is reported, not fatal). */
  onStage?: (report: StageReport) => void;
  /** Aborting rejects the search with `assist.aborted` and drops it in the worker. */
  signal?: AbortSignal;
}

/** What one stage did. */
export interface StageReport {
  stage: 1 | 2 | 3 | 4;
  name: 'query' | 'tiny-overviews' | 'condensed-pick' | 'overviews' | 'review';
  /** Stage-1 attempt number (1 = first); 1 elsewhere. */
  attempt: number;
  query?: string;
  /** e.g. matches, candidates, listed, chosen, flagged, short, tinyFallback, fileTextFallback, missing, reviewed, identified. */
  counts: Record<string, number>;
  /** Estimated tokens of the prompt sent in this stage. */
  promptTokens?: number;
  /** Time the llm callback took (ms). */
  llmMs?: number;
  /** Time the whole stage took, llm included (ms). */
  elapsedMs: number;
  notes: string[];
  /** Why the stage failed or was retried (e.g. the rejected query's error). */
  error?: ErrorInfo;
}

/** A file the model identified, as GitSense's `identifiedFiles` holds it. */
export interface IdentifiedFile {
  path: string;
  chat_id: number;
}

/** A reference in the model's answer that matched no candidate (dropped). */
export interface Flagged {
  mention: string;
  reason: 'unknown-path' | 'unknown-chat-id' | 'ambiguous-path' | 'path-not-candidate';
}

/** What stage 3 read about an identified file. */
export interface Overview {
  chatId: number;
  path: string;
  language: string | null;
  source: 'short-overview' | 'tiny-overview' | 'file-text' | 'none';
  messageId: number | null;
  text: string;
  /** Why the source is a fallback; null for a short overview. */
  note: string | null;
}

/** The result of an assisted search (the Rust `AssistOutcome`, as the CLI's `assist --format json` prints it). */
export interface AssistOutcome {
  question: string;
  /** The accepted stage-1 query (without the stage-2 profile). */
  query: string;
  /** The model's direct answer, or its whole reply when it was not JSON. */
  answer: string | null;
  identifiedFiles: IdentifiedFile[];
  flagged: Flagged[];
  /** Stage-2 matches. */
  totalMatches: number;
  overviews: Overview[];
  /** The identified files' overview messages; searchCriteria adds aiAssistant, question, identifiedFiles. */
  results: SearchResults;
  stages: StageReport[];
}

export type OutputFormat = 'json' | 'terse' | 'verbose' | 'markdown' | 'mcp';

export interface FormatOptions {
  /** Token budget (characters / 4) of the rendered text. */
  maxTokens?: number;
  /** Seconds the search took, for the `N results in X.XXs` footer. */
  elapsedSecs?: number;
}

/** Every failure: `code` is stable and dotted (e.g. 'query.unbalanced_quote',
 * 'download.checksum_mismatch', 'storage.busy'); `position` is the character
 * offset in the query for query errors, else null. */
export class GitSenseSearchError extends Error {
  readonly code: string;
  readonly position: number | null;
  readonly location?: string;
  /** A write's bad record ({ record, field }), or an import error's place in the file ({ byte, element, line }). */
  readonly where?: { record: string; field: string } | { byte?: number; element?: number; line?: number };
  toJSON(): { code: string; message: string; position: number | null; location?: string; where?: { record: string; field: string } | { byte?: number; element?: number; line?: number } };
}

export class GitSenseSearch extends EventTarget {
  /** Opens the index: from storage when present (no network needed), else
   * downloads it. Outside a browser (Node) it rejects with
   * `environment.unsupported`. */
  static open(options: OpenOptions | OpenWritableOptions): Promise<GitSenseSearch>;
  /** Makes a writable index of the page's own (no manifest); index.exists if the name is taken. */
  static create(options: CreateOptions): Promise<GitSenseSearch>;
  /** Writable index: adds records in one transaction (all or nothing), stored and searchable once it resolves. */
  add(records: WriteRecords): Promise<WriteSummary>;
  /**
   * Writable index (or overlay): imports a chat export (ChatGPT, Claude,
   * ShareGPT, `messages` arrays; told by the content), read as a stream.
   * All or nothing: a bad file or an abort rejects (import.*
   * codes, `where: { byte, element, line }`) and changes nothing; a
   * truncated file keeps its complete conversations and warns, as the CLI.
   */
  importFile(file: Blob, options?: ImportOptions): Promise<ImportSummary>;
  /** Writable index: removes chats (with their messages, code blocks and child chats), messages, code blocks. */
  remove(ids: RemoveIds): Promise<WriteSummary>;
  /** Removes every stored index of this origin (fails with storage.busy while one is open). */
  static clear(options?: { assetsUrl?: string | URL }): Promise<void>;

  search(query: string, options?: SearchOptions): Promise<SearchResults>;
  /** The results object as JSON text, byte for byte what the CLI prints. */
  searchJson(query: string, options?: SearchOptions): Promise<string>;
  info(): Promise<EngineInfo | WritableInfo>;
  /** Checks the manifest now and swaps in a changed index once verified
   * (an overlay: with the page's writes applied to it). */
  update(): Promise<UpdateStatus>;
  /** Writable index: replaces records by id (a message's code blocks are cut from its new text). */
  update(records: WriteRecords): Promise<WriteSummary>;
  /** Keeps the whole index in browser storage for offline use, now (lazy
   * mode: the pages not read yet are fetched, the copy is verified and
   * answers from then on). `onProgress` follows the copy (phase 'fill').
   * Resolves with info() once it is stored, at once for an index stored
   * whole already; rejects with `offline.refused` under open({ offline:
   * 'never' }) or the storage error that stopped the copy. */
  saveOffline(options?: { onProgress?: (p: { phase: 'fill'; loaded: number; total: number }) => void }): Promise<EngineInfo | WritableInfo>;
  /** The query language's filters and directives (for help screens). */
  syntax(): Promise<SyntaxGuide>;
  /**
   * AI-assisted search: the worker runs the stages, `options.llm` (the
   * host's model, called on the page) answers each prompt. Rejects with
   * `assist.llm_failed` (location names the stage) when llm throws,
   * `assist.aborted`, `assist.index_changed` (an update swapped the index
   * mid-search), or the query error when the model's query is still
   * rejected after the retries.
   */
  assistedSearch(question: string, options: AssistedSearchOptions): Promise<AssistOutcome>;
  /** Renders a results object (or its JSON text) within `maxTokens`. */
  formatResults(results: SearchResults | string, format?: OutputFormat, options?: FormatOptions): Promise<string>;
  /** Renders an assisted-search outcome (or its JSON text) within `maxTokens`. */
  formatOutcome(outcome: AssistOutcome | string, format?: OutputFormat, options?: FormatOptions): Promise<string>;
  /** The query-syntax guide (text) the assisted search's stage-1 prompt shows the model. */
  assistGuide(): Promise<string>;
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
