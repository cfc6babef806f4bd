// The GitSense results object (search-results-format v1.4.0), as
// `engine.search()` returns it and `gitsense-search search --format json`
// prints it. Written by hand from crates/engine/src/results.rs and
// Engine::criteria in crates/engine/src/search.rs; the browser tests check that every
// key of real results is declared here.

/** One of the three result kinds; `source_type` tells them apart. */
export type SourceType = 'chat' | 'message' | 'code-block';

/** A field of a `*_meta_*` group keeps its JSON type. */
export type MetaValue = string | number | boolean | null | MetaValue[] | { [key: string]: MetaValue };

/** Fields every result carries. */
export interface ResultBase {
  source_type: SourceType;
  /** bm25 rank: lower is more relevant; 0 when no full-text match. */
  fts_rank: number;
  /** The chat the result is (in). */
  result_chat_id: number;
  /** "Root -> Parent -> Chat", or null for a chat without a path. */
  chat_path: string | null;
}

export interface ChatResult extends ResultBase {
  source_type: 'chat';
  chats_id: number;
  chats_uuid: string | null;
  chats_name: string | null;
  chats_type: string | null;
  chats_owner: string | null;
  chats_modified_at: string | null;
  cte_chat_message_stats_num_messages: number | null;
  cte_chat_message_stats_last_updated_at: string | null;
  /** The name with matches marked (an addition to the contract). */
  chats_name_snippet?: string;
  /** `chats_name` HTML-escaped (with highlight 'html', the default). Every
   * other field not named `*_snippet` or `*_html` is plain text. */
  chats_name_html?: string;
  /** `chat_path` HTML-escaped (with highlight 'html'). */
  chat_path_html?: string;
  /** `chats_meta_<key>` fields, present when the chat's meta has the key. */
  [meta: `chats_meta_${string}`]: MetaValue | undefined;
}

export interface MessageResult extends ResultBase {
  source_type: 'message';
  messages_id: number;
  messages_chat_id: number;
  messages_type: string | null;
  messages_role: string | null;
  /** Full text (null with `includeContent: false`). */
  messages_content: string | null;
  /**
   * A snippet around the matches. With `highlight: 'html'` (the default) it
   * is HTML-escaped text with matches in `<mark>…</mark>`, safe to insert
   * as HTML; with 'raw' it is raw text with `<GSC>…</GSC>` markers.
   */
  messages_content_snippet: string | null;
  messages_branch_name: string | null;
  messages_created_at: string | null;
  messages_updated_at: string | null;
  /** The title (`messages_meta_title`, a docs section's heading) HTML-escaped (highlight 'html'). */
  messages_title_html?: string;
  /** `chat_path` HTML-escaped (with highlight 'html'). */
  chat_path_html?: string;
  /** `messages_meta_<key>` fields (docs sections: `_url`, `_anchor`, `_title`;
   * chat exports: `_conversation_id`; a git file's messages: `_commit_hash`,
   * `_commit_author`, `_commit_date`, `_commit_message`, its last commit)
   * from the message's extracted metadata. */
  [meta: `messages_meta_${string}`]: MetaValue | undefined;
}

export interface CodeBlockResult extends ResultBase {
  source_type: 'code-block';
  code_blocks_uuid: string;
  code_blocks_message_id: number;
  code_blocks_content: string | null;
  /** See MessageResult.messages_content_snippet. */
  code_blocks_content_snippet: string | null;
  code_blocks_component: string | null;
  code_blocks_parent_uuid: string | null;
  code_blocks_major_version: number | null;
  code_blocks_minor_version: number | null;
  code_blocks_patch_version: number | null;
  /** The parsed header with its literal keys (`Block-UUID`, `Version`, ...). */
  code_blocks_header: { [key: string]: MetaValue } | null;
  code_blocks_created_at: string | null;
  code_blocks_size: number | null;
  code_blocks_branch_name: string | null;
  code_blocks_language: string | null;
  /** `code_blocks_component` HTML-escaped (with highlight 'html'). */
  code_blocks_component_html?: string;
  /** `chat_path` HTML-escaped (with highlight 'html'). */
  chat_path_html?: string;
  /** `code_blocks_meta_<key>` fields from the header (docs: `_url`, `_anchor` of the section). */
  [meta: `code_blocks_meta_${string}`]: MetaValue | undefined;
}

export type SearchResult = ChatResult | MessageResult | CodeBlockResult;

export type Target = 'chats' | 'messages' | 'code-blocks';
export type Scope = 'current-chat' | 'current-chat-and-branches' | 'connected-chats' | 'all-chats';
export type FilterField =
  | 'chat-id'
  | 'name'
  | 'msg-id'
  | 'block-id'
  | 'git-path'
  | 'msg-type'
  | 'chat-type'
  | 'lang'
  | 'role'
  | 'repo';

export interface Filter {
  field: FilterField;
  value: { kind: 'anyOf'; values: string[] } | { kind: 'null' } | { kind: 'notNull' };
  /** `-field:value`: excludes instead of restricting. */
  negated: boolean;
}

export interface SortKey {
  field: 'fts_rank' | 'created_at' | 'updated_at' | 'name' | 'id' | 'size' | 'path';
  descending: boolean;
}

/** The parsed query and what was actually run. */
export interface SearchCriteria {
  /** The query text as given. */
  query: string;
  /** The full-text expression searched, in query syntax (null: filters only). */
  expression: string | null;
  matchMode: 'all-terms' | 'any-term';
  targets: Target[];
  scope: Scope;
  currentChatId: number | null;
  /** The search profile in effect, e.g. "all.default". */
  profile: string;
  filters: Filter[];
  sort: SortKey[];
  options: {
    caseSensitive: boolean;
    highlight: 'html' | 'raw' | 'none';
    /** How the text was read: the query language, or a search box's forgiving reading. */
    mode: 'strict' | 'box';
    page: number;
    perPage: number;
    /** `option:regex`: terms and phrases were regular expressions. */
    regex?: true;
  };
  /** `meta:` filters over analyzer metadata, as read. */
  metaFilters?: {
    field: string;
    type: 'string' | 'number' | 'boolean' | 'array';
    notEqual: boolean;
    values: (string | number | boolean)[];
    all: boolean;
  }[];
  /** git-nav keys, as read. */
  gitNav?: {
    owner?: string;
    /** `[owner, name]`. */
    repository?: [string, string];
    branch?: string;
    /** The tree (or branch) chat's id of `git-ls-tree-id:`. */
    tree?: number;
  };
  engine: 'gitsense-search';
  engineVersion: string;
  /** Corpus revision of the index that answered. */
  indexRevision: string;
  aiAssistant: boolean;
  /** In an assisted-search outcome's results: the user's question. */
  question?: string;
  /** In an assisted-search outcome's results: the files the model identified. */
  identifiedFiles?: { path: string; chat_id: number }[];
  warnings: string[];
  /** Present when no result held every term and any-term results are shown. */
  fallback?: { from: 'all-terms'; to: 'any-term'; reason: string };
  /** Targets that could not match, with the reason. */
  skippedTargets?: { [target in Target]?: string };
}

export interface Pagination {
  currentPage: number;
  totalPages: number;
  totalResults: number;
  /** Results on this page (equals totalResultsReturned). */
  resultsPerPage: number;
}

export interface TotalCounts {
  chats: number;
  messages: number;
  codeBlocks: number;
}

export interface SearchResults {
  searchCriteria: SearchCriteria;
  pagination: Pagination;
  totalCounts: TotalCounts;
  results: {
    chats: ChatResult[];
    messages: MessageResult[];
    codeBlocks: CodeBlockResult[];
  };
  totalResultsReturned: number;
  /** Why a search found nothing where one would expect something, or what
   * the time budget cut short (with `truncated`). */
  hint?: string;
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
  /** True when `maxTokens` shortened snippets or dropped results, or the
   * search ran out of its time budget (a target's ranking stopped: no
   * results for it; or snippets past it: the start of the text); `hint`
   * then says which. */
  truncated?: boolean;
  /** Value/count pairs over the matches, one per requested facet and
   * target the field exists on (`insight-field:` or the `facets` option);
   * absent when none was asked for. */
  facets?: Facet[];
  /** When no result held every word and some words are in no indexed
   * text: the query as corrected from the index's own words, which these
   * results answer (docs/results.md#did-you-mean). */
  didYouMean?: {
    /** The text as typed, each corrected word replaced by its best
     * replacement. */
    query: string;
    corrections: { word: string; replacements: string[] }[];
  };
  /** Per-stage timings, with `trace: true`. */
  trace?: {
    timing: {
      parse_ms: number;
      count_ms: number;
      fetch_ms: number;
      total_ms: number;
    };
    plans: {
      target: Target;
      fts: string | null;
      skipped: string | null;
    }[];
  };
}

/** The counts of one field's values over one target's matches. */
export interface Facet {
  /** The field as requested: chat-type, lang, repo, branch, role,
   * msg-type, git-path (directories), or an analyzer metadata key. */
  field: string;
  /** 'any' when no type was given (scalars as they are, arrays value by value). */
  type: 'any' | 'string' | 'number' | 'boolean' | 'array';
  target: Target;
  /** Most frequent first, ties by value; at most 100. */
  values: FacetValue[];
  /** Distinct values left out of `values`. */
  otherValues: number;
  /** True when the time budget stopped the counting (counts are then
   * those of the records reached). */
  truncated?: boolean;
}

export interface FacetValue {
  value: string | number | boolean;
  /** Matching records with this value (a record counts once per value). */
  count: number;
}
