//! The native CLI: argument parsing and wiring only.
//!
//! Exit codes: 0 ok, 2 usage or query error, 1 any other failure.

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use gitsense_engine::assist::{self, AssistOptions, StageReport};
use gitsense_engine::format::{self, Format, FormatOptions};
use gitsense_engine::index::FinishProgress;
use gitsense_engine::plan::QueryMode;
use gitsense_engine::{Engine, Error, ErrorKind, Highlight, SearchOptions};
use gitsense_import as import;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::{Command as Process, ExitCode, Stdio};
use std::time::{Duration, Instant};

mod highlight;
mod progress;
mod sources;
use progress::{Steps, Unit};

/// `eprintln!` that never panics: a closed stderr (a reader that went
/// away, `2>&-`) loses the message but changes neither the work done nor
/// the exit status.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

#[derive(Parser)]
#[command(
    name = "gitsense-search",
    version,
    about = "Build GitSense-compatible search indexes and query them",
    long_about = "Build a prebuilt SQLite FTS5 search index from a GitSense Chat database, a chat export, \
                  a git repository or a documentation site, and query it with the GitSense search syntax. \
                  The same index is served to the browser module.",
    after_help = SOURCES_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build an index from a source.
    Build(BuildArgs),
    /// Add sources to an existing index: the result is the index a `build`
    /// of its sources and the new ones in one go gives (same ids, revision
    /// and results). Every record is indexed again, not only the new ones.
    Add(AddArgs),
    /// Search an index (see the query syntax below with --help).
    Search(SearchArgs),
    /// AI-assisted search: an LLM writes the query, picks candidates and
    /// reviews file overviews (stage reports go to stderr).
    Assist(AssistArgs),
    /// Write what a static site deploys for the browser module: the
    /// gzip-compressed index under a content-addressed name, the raw index
    /// (for HTTP Range reads), its hot pages (fetched first by lazy readers)
    /// and manifest.json.
    Publish {
        /// The index file.
        index: PathBuf,
        /// The directory to write into (created if missing); files of
        /// earlier publishes are left in place for visitors mid-download.
        #[arg(long, value_name = "DIR")]
        out_dir: PathBuf,
        /// Print the manifest as JSON instead of a summary.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Add search to a built documentation site in one step: index it,
    /// publish the index into DIR/_gitsense/, copy the browser module
    /// beside it, and print the lines to paste into a page.
    Site(SiteArgs),
    /// Show what an index holds: format version, revision, counts, size.
    Info {
        /// The index file.
        index: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also check every byte of the file against the checksum recorded
        /// when it was built (`publish` always does).
        #[arg(long)]
        verify: bool,
    },
}

/// The top-level help's list of `build` sources; a test checks it names
/// every member of the `source` group.
const SOURCES_HELP: &str = "\
Sources (one or several per `build`, into one index; `gitsense-search build --help` for their options):
  --gitsense-db PATH   a GitSense Chat database (SQLite file)
  --chat-export FILE   a ChatGPT, Claude or ShareGPT-style chat export (JSON or JSON Lines)
  --git DIR            a git repository: the committed tree of HEAD (or of each --branch)
  --docs DIR           a documentation site: built HTML and/or Markdown sources

Example:
  gitsense-search build --docs ./site/html --out docs.gsx
  gitsense-search search docs.gsx 'install lang:sh'
  gitsense-search publish docs.gsx --out-dir public/search";

/// The sources other than --git. Git-only flags conflict with them: clap's
/// `requires = "git"` is satisfied by any member of the `source` group
/// (clap issue 4707).
const NOT_GIT: [&str; 3] = ["gitsense_db", "chat_export", "docs"];

/// What `build` and `add` read: one or several sources into one index.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("source").required(true).multiple(true)))]
struct Sources {
    /// A GitSense Chat database (SQLite file).
    #[arg(long, value_name = "PATH", group = "source")]
    gitsense_db: Option<PathBuf>,
    /// A chat export: ChatGPT's or Claude's `conversations.json`, or a
    /// ShareGPT-style JSON array (or JSON Lines) of `{id, conversations:
    /// [{from, value}]}`; the format is told by the content. Streamed; a
    /// truncated tail is reported and the complete conversations before it
    /// are kept; no message at all is an error. Repeatable: each file is
    /// a source of its own, in the order given.
    #[arg(long, value_name = "FILE", group = "source")]
    chat_export: Vec<PathBuf>,
    /// A git repository (working tree or bare): the committed tree of HEAD's
    /// branch (or of each --branch) becomes git-blob chats with overviews.
    #[arg(long, value_name = "DIR", group = "source")]
    git: Option<PathBuf>,
    /// With --git: index this branch instead of HEAD's (repeatable).
    #[arg(long, value_name = "NAME", conflicts_with_all = NOT_GIT)]
    branch: Vec<String>,
    /// With --git: the repository's group name `owner/name` (default: from
    /// the `origin` remote URL, else the parent directory and directory name).
    #[arg(long, value_name = "OWNER/NAME", conflicts_with_all = NOT_GIT)]
    repo: Option<String>,
    /// With --git: skip files larger than this many bytes.
    #[arg(long, value_name = "BYTES", conflicts_with_all = NOT_GIT, default_value_t = import::git::DEFAULT_MAX_FILE_SIZE)]
    max_file_size: u64,
    /// A documentation site: a directory of built HTML (Sphinx, mdBook,
    /// Docusaurus, MkDocs, Hugo, plain pages) and/or Markdown sources.
    #[arg(long, value_name = "DIR", group = "source")]
    docs: Option<PathBuf>,
    /// Prefix for documentation page URLs, e.g. https://docs.python.org/3.11/
    /// (default: paths relative to the site root).
    #[arg(long, value_name = "URL", requires = "docs")]
    base_url: Option<String>,
    /// Do not attach the entries of the site's own index pages (Sphinx
    /// genindex) to the sections they point to.
    #[arg(long, requires = "docs")]
    no_site_index: bool,
    #[command(flatten)]
    pages: PageGlobs,
}

#[derive(Args)]
struct BuildArgs {
    #[command(flatten)]
    sources: Sources,
    /// Where to write the index (written to a temporary file, then renamed).
    /// Refused when it is one of the build's inputs, or an existing file
    /// that is not a gitsense-search index (see --force).
    #[arg(long, value_name = "INDEX")]
    out: PathBuf,
    /// Replace an existing --out file even though it is not a
    /// gitsense-search index (never one of the build's own inputs).
    #[arg(long)]
    force: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
struct AddArgs {
    /// The index to add to (replaced atomically unless --out is given).
    index: PathBuf,
    #[command(flatten)]
    sources: Sources,
    /// Write the result here instead of replacing INDEX.
    #[arg(long, value_name = "INDEX")]
    out: Option<PathBuf>,
    /// Publish the result into this directory afterwards (what `publish
    /// --out-dir DIR` does): a published copy is stale after `add` until
    /// it is published again.
    #[arg(long, value_name = "DIR")]
    publish: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// Which pages of a documentation site are indexed.
#[derive(Args)]
struct PageGlobs {
    /// With --docs / site: leave out pages whose path (relative to the site
    /// root) matches this glob: `*` within a directory, `**` across them,
    /// e.g. `old/**`, `**/print.html` (repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// With --docs / site: index only pages matching one of these globs
    /// (repeatable; --exclude still applies).
    #[arg(long, value_name = "GLOB")]
    include: Vec<String>,
}

#[derive(Args)]
struct SiteArgs {
    /// The built site (the directory a web server serves).
    dir: PathBuf,
    /// The site's public URL, e.g. https://example.org/docs/: section links
    /// become absolute, and the printed lines use its path.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    #[command(flatten)]
    pages: PageGlobs,
    /// Where to publish the index and copy the module (default: DIR/_gitsense).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// The browser module to copy (default: $GITSENSE_SEARCH_PKG, else pkg/
    /// in the current directory, else beside the executable or in the
    /// repository it was built in).
    #[arg(long, value_name = "DIR")]
    pkg: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
struct SearchArgs {
    /// The index file.
    index: PathBuf,
    /// The query (GitSense syntax); may start with '-'.
    #[arg(allow_hyphen_values = true)]
    query: String,
    /// Page number (1-based).
    #[arg(long, default_value_t = 1)]
    page: u64,
    /// Results per target and page (default: the profile's limit).
    #[arg(long)]
    per_page: Option<u64>,
    /// At most N results in all, 1 to 1000 (the lowest-ranked leave
    /// first); without a cursor to continue from.
    #[arg(short = 'n', long, value_name = "N", conflicts_with_all = ["per_page", "cursor"],
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    limit: Option<u64>,
    /// Facets to count over the matches (comma list or repeated), each
    /// FIELD or FIELD:TYPE as insight-field: takes them.
    #[arg(long, value_name = "FIELD[:TYPE]", value_delimiter = ',')]
    facets: Vec<String>,
    /// The current chat id, for scope: queries.
    #[arg(long, value_name = "ID")]
    current_chat: Option<i64>,
    /// Output format: json (the results object), terse, verbose, markdown,
    /// mcp (markdown whose git files are their match's lines, as gitctx
    /// writes them). Default: terse when standard output is a terminal,
    /// json otherwise.
    #[arg(long, value_parser = ["json", "terse", "verbose", "markdown", "mcp"])]
    format: Option<String>,
    /// Shorthand for --format verbose: on a terminal, git files' lines are
    /// numbered and coloured (plain when piped or NO_COLOR is set).
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Shorthand for --format markdown.
    #[arg(long)]
    markdown: bool,
    /// Shorthand for --format mcp.
    #[arg(long)]
    mcp: bool,
    /// Snippet markers: html (escaped text, <mark>), raw (<GSC>…</GSC>), none.
    #[arg(long, default_value = "html", value_parser = ["html", "raw", "none"])]
    highlight: String,
    /// Leave out full message and code contents (snippets stay).
    #[arg(long)]
    no_content: bool,
    /// Token budget for the output (chars/4 estimate).
    #[arg(long)]
    max_tokens: Option<u64>,
    /// Milliseconds the search may work (0: no bound); past it the results
    /// are marked truncated, with a hint.
    #[arg(long, default_value_t = gitsense_engine::search::DEFAULT_TIME_BUDGET_MS as u64)]
    time_budget_ms: u64,
    /// Continue from a previous page's nextCursor.
    #[arg(long, conflicts_with = "page")]
    cursor: Option<String>,
    /// Add per-stage timings to the results object.
    #[arg(long)]
    trace: bool,
    /// How the query is read: strict (the query language; malformed
    /// queries are errors) or box (a search box's text: never an error,
    /// the last word also matched as a prefix).
    #[arg(long, default_value = "strict", value_parser = ["strict", "box"])]
    mode: String,
    /// Words around the matches in a message's snippet (1 to 64; default 12).
    #[arg(long, value_name = "N")]
    snippet_tokens: Option<u32>,
    /// The reader's language (en, fr, pt-BR): on a site shipping pages in
    /// several languages, pages in it come first (default: the site's
    /// own).
    #[arg(long, value_name = "TAG")]
    lang: Option<String>,
    /// Pretty-print JSON.
    #[arg(long)]
    pretty: bool,
}

#[derive(Args)]
struct AssistArgs {
    /// The index file.
    index: PathBuf,
    /// The question, in natural language.
    #[arg(allow_hyphen_values = true)]
    question: String,
    /// The LLM: a command run with `sh -c` for each prompt, the prompt on
    /// its stdin, the answer read from its stdout.
    #[arg(long, value_name = "CMD")]
    llm_cmd: String,
    /// Seconds each LLM call may take before it is killed.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    llm_timeout: u64,
    /// Output format: json (the outcome object), terse, verbose, markdown.
    #[arg(long, default_value = "json", value_parser = ["json", "terse", "verbose", "markdown"])]
    format: String,
    /// Token budget (chars/4 estimate) of every prompt and of the output.
    #[arg(long)]
    max_tokens: Option<u64>,
    /// Above this many matches the LLM picks from a condensed view.
    #[arg(long, default_value_t = AssistOptions::default().condense_threshold)]
    condense_threshold: u64,
    /// Most files whose overviews the LLM reviews.
    #[arg(long, default_value_t = AssistOptions::default().max_review_files)]
    max_files: u64,
    /// Print each stage report as a JSON line on stderr (instead of one
    /// line of text per stage).
    #[arg(long)]
    trace: bool,
    /// No stage reports on stderr.
    #[arg(long, short, conflicts_with = "trace")]
    quiet: bool,
    /// Pretty-print JSON.
    #[arg(long)]
    pretty: bool,
}

fn main() -> ExitCode {
    let cmd = Cli::command().mut_subcommand("search", |c| {
        c.after_long_help(gitsense_engine::guide::syntax_guide())
    });
    let matches = cmd.get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    if let Command::Search(a) = &cli.command {
        if let Some(conflict) = format_flag_conflict(a) {
            errln!("Error: {conflict}");
            return ExitCode::from(2);
        }
    }
    // Ctrl-C or a kill mid-build must not leave temporary files behind.
    gitsense_engine::index::tempfiles::remove_on_signal();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err((e, query)) => {
            errln!("error: {e}");
            if let (Some(q), Some(p)) = (query, e.position) {
                let pad: String = q
                    .chars()
                    .take(p)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                errln!("  {q}\n  {pad}^");
            }
            match e.kind() {
                ErrorKind::Query => ExitCode::from(2),
                _ => ExitCode::from(1),
            }
        }
    }
}

/// Two flags that each choose the output format, as gitctx words it:
/// `--mcp and --verbose are mutually exclusive`.
fn format_flag_conflict(a: &SearchArgs) -> Option<String> {
    let given: Vec<&str> = [
        (a.format.is_some(), "--format"),
        (a.mcp, "--mcp"),
        (a.markdown, "--markdown"),
        (a.verbose, "--verbose"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    match given.as_slice() {
        [first, second, ..] => Some(format!("{first} and {second} are mutually exclusive")),
        _ => None,
    }
}

/// The format a search prints: the flag given, else terse for a person at
/// a terminal and the results object for a program reading a pipe.
fn output_format(a: &SearchArgs) -> Result<Format, Error> {
    if a.verbose {
        Ok(Format::Verbose)
    } else if a.markdown {
        Ok(Format::Markdown)
    } else if a.mcp {
        Ok(Format::Mcp)
    } else if let Some(f) = &a.format {
        f.parse()
    } else if std::io::stdout().is_terminal() {
        Ok(Format::Terse)
    } else {
        Ok(Format::Json)
    }
}

/// Colours only for a terminal, and never when `NO_COLOR` is set to
/// anything but the empty string (no-color.org).
fn paint() -> &'static dyn format::Paint {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    if !no_color && std::io::stdout().is_terminal() {
        &highlight::Ansi
    } else {
        &format::Plain
    }
}

/// Writes to stdout; a reader that went away (`| head`) ends the process
/// quietly with status 0, as other command-line tools do, instead of a
/// panic in `print!`.
fn emit(text: &str) -> Result<(), (Error, Option<String>)> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err((Error::io("writing to stdout", e), None)),
    }
}

/// `println!` through [`emit`].
macro_rules! outln {
    ($($arg:tt)*) => {
        emit(&format!("{}\n", format_args!($($arg)*)))?
    };
}

/// The warnings and the summary line of a finished `build` or `add`.
fn print_built(
    what: &str,
    stats: &gitsense_engine::index::BuildStats,
    report: &import::ImportReport,
    started: Instant,
) -> Result<(), (Error, Option<String>)> {
    for w in &report.warnings {
        errln!("warning: {w}");
    }
    outln!(
        "{what} {} in {:.2}s: {} chats, {} messages, {} code blocks, {} bytes, revision {}",
        stats.path.display(),
        started.elapsed().as_secs_f64(),
        stats.chats,
        stats.messages,
        stats.code_blocks,
        stats.size_bytes,
        stats.revision
    );
    Ok(())
}

fn run(cli: Cli) -> Result<(), (Error, Option<String>)> {
    match cli.command {
        Command::Build(a) => build(a),
        Command::Add(a) => add(a),
        Command::Search(a) => search(a),
        Command::Site(a) => site(a),
        Command::Publish {
            index,
            out_dir,
            json,
            quiet,
        } => publish(&index, &out_dir, json, quiet),
        Command::Assist(a) => assist_cmd(a),
        Command::Info {
            index,
            json,
            verify,
        } => info(&index, json, verify),
    }
}

/// `build`: sources → a new index.
fn build(a: BuildArgs) -> Result<(), (Error, Option<String>)> {
    let started = Instant::now();
    let src = &a.sources;
    import::check_output(&a.out, &src.inputs(), a.force).map_err(|e| (e, None))?;
    let docs_opts = src.docs_options().map_err(|e| (e, None))?;
    let mut steps = Steps::new(a.quiet);
    let mut finishing = |p: FinishProgress| steps.show(p.step.label(), p.done, p.total);
    let built = import::build_with_progress(
        &a.out,
        src.description(),
        |w| src.fill(w, docs_opts.as_ref(), a.quiet),
        &mut finishing,
    );
    drop(steps);
    let (stats, report) = built.map_err(|e| (e, None))?;
    print_built("built", &stats, &report, started)
}

/// `add`: sources into an existing index, then publish it if asked.
fn add(a: AddArgs) -> Result<(), (Error, Option<String>)> {
    let started = Instant::now();
    let src = &a.sources;
    let out = a.out.clone().unwrap_or_else(|| a.index.clone());
    import::check_add_output(&a.index, &out, &src.inputs()).map_err(|e| (e, None))?;
    let docs_opts = src.docs_options().map_err(|e| (e, None))?;
    let mut steps = Steps::new(a.quiet);
    let mut finishing = |p: FinishProgress| steps.show(p.step.label(), p.done, p.total);
    let built = import::add_with_progress(
        &a.index,
        &out,
        src.description(),
        |w| src.fill(w, docs_opts.as_ref(), a.quiet),
        &mut finishing,
    );
    drop(steps);
    let (stats, report) = built.map_err(|e| (e, None))?;
    print_built("added to", &stats, &report, started)?;
    if let Some(dir) = &a.publish {
        let mut steps = Steps::new(a.quiet);
        let m = gitsense_publish::publish_with(&out, dir, &mut |p| {
            steps.show(p.step.label(), p.done, p.total)
        })
        .map_err(|e| (e, None))?;
        drop(steps);
        outln!(
            "published revision {} to {}: {}",
            m.revision,
            dir.display(),
            gitsense_publish::MANIFEST_FILE
        );
    }
    Ok(())
}

/// `search`: one query, printed in the format asked for.
fn search(a: SearchArgs) -> Result<(), (Error, Option<String>)> {
    let started = Instant::now();
    let fmt = output_format(&a).map_err(|e| (e, None))?;
    let engine = Engine::open(&a.index).map_err(|e| (e, None))?;
    let mut results = engine
        .search(&a.query, &search_options(&a, fmt))
        .map_err(|e| (e, Some(a.query.clone())))?;
    if let Some(n) = a.limit {
        // A cursor would continue past the results left out here.
        if gitsense_engine::budget::limit(&mut results, n as usize) {
            results.next_cursor = None;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let out = match fmt {
        Format::Json if a.pretty => serde_json::to_string_pretty(&results).unwrap_or_default(),
        Format::Json => format::render(&results, fmt, None),
        _ => format::format_painted(
            &results,
            fmt,
            &FormatOptions {
                max_tokens: a.max_tokens,
                elapsed_secs: Some(elapsed),
            },
            &format::Preamble::default(),
            paint(),
        )
        .map_err(|e| (e, None))?,
    };
    emit(&out)?;
    if fmt == Format::Json {
        emit("\n")?;
    }
    Ok(())
}

/// The engine's options for `search`'s flags, printing in `fmt`.
fn search_options(a: &SearchArgs, fmt: Format) -> SearchOptions {
    let highlight = match (a.highlight.as_str(), fmt) {
        ("raw", _) => Highlight::Raw,
        ("none", _) => Highlight::None,
        (_, Format::Json) => Highlight::Html,
        // Plain-text renderers show text, not HTML entities.
        _ => Highlight::Raw,
    };
    SearchOptions {
        page: a.page,
        per_page: a.per_page.or(a.limit),
        current_chat_id: a.current_chat,
        highlight,
        include_content: !a.no_content,
        // The budget is on what is printed: the results object for JSON,
        // the rendered text otherwise.
        max_tokens: a.max_tokens.filter(|_| fmt == Format::Json),
        cursor: a.cursor.clone(),
        trace: a.trace,
        facets: a.facets.clone(),
        mode: if a.mode == "box" {
            QueryMode::Box
        } else {
            QueryMode::Strict
        },
        snippet_tokens: a.snippet_tokens,
        time_budget_ms: Some(a.time_budget_ms),
        lang: a.lang.clone(),
    }
}

/// `publish`: an index → the files a static site serves.
fn publish(
    index: &std::path::Path,
    out_dir: &std::path::Path,
    json: bool,
    quiet: bool,
) -> Result<(), (Error, Option<String>)> {
    let mut steps = Steps::new(quiet);
    let m = gitsense_publish::publish_with(index, out_dir, &mut |p| {
        steps.show(p.step.label(), p.done, p.total)
    })
    .map_err(|e| (e, None))?;
    drop(steps);
    if json {
        outln!("{}", serde_json::to_string_pretty(&m).unwrap_or_default());
    } else {
        // The files in the order a browser asks for them: the hot pages,
        // then the one copy of the index (packed pages, else the gzip
        // index and the raw one for ranges).
        let hot = match m.hot_file.as_deref() {
            Some(f) => format!(
                "{f} ({} hot pages; again as {} for first visits), ",
                m.hot_pages.len(),
                gitsense_publish::FIRST_VISIT_FILE
            ),
            None => String::new(),
        };
        let index = if m.compression == gitsense_publish::COMPRESSION_PAGES {
            format!(
                "{} ({} bytes for {} bytes of index: pages compressed one by one, read by range or whole)",
                m.file, m.compressed_size, m.size
            )
        } else {
            format!(
                "{} ({} bytes, gzip of {} bytes){}",
                m.file,
                m.compressed_size,
                m.size,
                m.raw_file
                    .as_deref()
                    .map(|r| format!(", {r} (for range reads)"))
                    .unwrap_or_default()
            )
        };
        outln!(
            "published revision {} to {}: {hot}{index}, {}",
            m.revision,
            out_dir.display(),
            gitsense_publish::MANIFEST_FILE
        );
    }
    Ok(())
}

/// `assist`: the AI-assisted multi-stage search, the LLM run as a command.
fn assist_cmd(a: AssistArgs) -> Result<(), (Error, Option<String>)> {
    let started = Instant::now();
    let fmt: Format = a.format.parse().map_err(|e| (e, None))?;
    let engine = Engine::open(&a.index).map_err(|e| (e, None))?;
    let opts = AssistOptions {
        max_tokens: a.max_tokens,
        condense_threshold: a.condense_threshold,
        max_review_files: a.max_files,
        ..AssistOptions::default()
    };
    let timeout = Duration::from_secs(a.llm_timeout);
    let mut llm = |prompt: &str| run_llm(&a.llm_cmd, prompt, timeout);
    let mut on_stage = |r: &StageReport| {
        if a.trace {
            errln!("{}", serde_json::to_string(r).unwrap_or_default());
        } else if !a.quiet {
            errln!("{}", stage_line(r));
        }
    };
    let outcome = assist::assisted_search(&engine, &a.question, &opts, &mut llm, &mut on_stage)
        .map_err(|e| (e, None))?;
    let fopts = FormatOptions {
        max_tokens: a.max_tokens,
        elapsed_secs: Some(started.elapsed().as_secs_f64()),
    };
    let mut out = assist::format_outcome(&outcome, fmt, &fopts).map_err(|e| (e, None))?;
    if fmt == Format::Json {
        if a.pretty {
            out = serde_json::from_str::<serde_json::Value>(&out)
                .and_then(|v| serde_json::to_string_pretty(&v))
                .unwrap_or(out);
        }
        out.push('\n');
    }
    emit(&out)?;
    Ok(())
}

/// `info`: what an index holds, optionally with its checksum verified.
fn info(index: &std::path::Path, json: bool, verify: bool) -> Result<(), (Error, Option<String>)> {
    let engine = Engine::open(index).map_err(|e| (e, None))?;
    if verify {
        gitsense_engine::index::checksum::check(index).map_err(|e| (e, None))?;
    }
    let i = engine.info();
    if json {
        outln!("{}", serde_json::to_string_pretty(i).unwrap_or_default());
    } else {
        outln!("index:          {}", index.display());
        outln!("format version: {}", i.format_version);
        outln!("revision:       {}", i.revision);
        outln!("built at:       {}", i.built_at);
        outln!("source:         {}", i.source);
        outln!("chats:          {}", i.chats);
        outln!("messages:       {}", i.messages);
        outln!("code blocks:    {}", i.code_blocks);
        outln!("groups:         {}", i.groups);
        outln!(
            "size:           {} bytes ({} pages of {})",
            i.size_bytes(),
            i.page_count,
            i.page_size
        );
        if verify {
            outln!("checksum:       verified");
        }
    }
    Ok(())
}

/// One line of text per stage report, for people watching stderr.
fn stage_line(r: &StageReport) -> String {
    let mut s = format!("stage {} {}", r.stage, r.name);
    if r.attempt > 1 {
        s.push_str(&format!(" (attempt {})", r.attempt));
    }
    if let Some(q) = &r.query {
        s.push_str(&format!(": {q}"));
    }
    let counts: Vec<String> = r.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    if !counts.is_empty() {
        s.push_str(&format!(" [{}]", counts.join(", ")));
    }
    s.push_str(&format!(" {:.0} ms", r.elapsed_ms));
    if let Some(l) = r.llm_ms {
        s.push_str(&format!(" (LLM {l:.0} ms)"));
    }
    for n in &r.notes {
        s.push_str(&format!("\n  {n}"));
    }
    if let Some(e) = &r.error {
        s.push_str(&format!("\n  error: {e}"));
    }
    s
}

fn llm_error(message: String) -> Error {
    Error::new("assist.llm_failed", message)
}

impl PageGlobs {
    /// The page filter, with `also_exclude` added to the excludes.
    fn filter(&self, also_exclude: &[String]) -> Result<import::docs::PageFilter, Error> {
        let mut exclude = self.exclude.clone();
        exclude.extend_from_slice(also_exclude);
        import::docs::PageFilter::new(&self.include, &exclude)
    }
}

/// `site`: build → publish → copy the module → print the lines to paste.
fn site(a: SiteArgs) -> Result<(), (Error, Option<String>)> {
    let fail = |e: Error| (e, None);
    let exe = std::env::current_exe().ok();
    let module =
        gitsense_publish::site::find_module(a.pkg.as_deref(), exe.as_deref()).map_err(fail)?;
    let out_dir = a.out_dir.clone().unwrap_or_else(|| a.dir.join("_gitsense"));
    // The published directory inside the site is left out of the index
    // (a second run would otherwise read the first one's files).
    let inside = std::fs::create_dir_all(&out_dir)
        .and_then(|_| {
            Ok((
                std::fs::canonicalize(&a.dir)?,
                std::fs::canonicalize(&out_dir)?,
            ))
        })
        .map_err(|e| {
            fail(Error::new("site.io", e.to_string()).with_location(out_dir.display().to_string()))
        })
        .map(|(root, out)| {
            out.strip_prefix(&root)
                .ok()
                .map(|p| p.to_string_lossy().replace('\\', "/"))
        })?;
    let also = inside.iter().map(|p| format!("{p}/**")).collect::<Vec<_>>();
    let opts = import::docs::DocsOptions {
        base_url: a.base_url.clone(),
        use_site_index: true,
        pages: a.pages.filter(&also).map_err(fail)?,
    };
    let index = std::env::temp_dir().join(format!("gitsense-site-{}.gsx", std::process::id()));
    let pb = progress::bar(a.quiet, "reading documentation (pages)", Unit::Count);
    let built = import::build_with(
        &index,
        format!(
            "{}{}",
            gitsense_engine::index::DOCS_SOURCE_PREFIX,
            a.dir.display()
        ),
        |w| import::docs::import(&a.dir, &opts, w, &pb),
    );
    let published = built.and_then(|(stats, report)| {
        let m = gitsense_publish::publish(&index, &out_dir)?;
        Ok((stats, report, m))
    });
    let _ = std::fs::remove_file(&index);
    let (stats, report, manifest) = published.map_err(fail)?;
    for w in &report.warnings {
        errln!("warning: {w}");
    }
    let copied = gitsense_publish::site::copy_module(
        &module,
        &out_dir.join(gitsense_publish::site::MODULE_DIR),
    )
    .map_err(fail)?;
    // The web path of the published directory: under the base URL's path
    // when it lies inside the site, else relative to the page.
    let web_dir = match &inside {
        Some(rel) => format!("{}{rel}/", url_path(a.base_url.as_deref())),
        None => format!("{}/", out_dir.display()),
    };
    errln!(
        "indexed {} chats (pages and directories), {} sections, {} code blocks into {} (revision {}); copied the module ({} files) from {}",
        stats.chats,
        stats.messages,
        stats.code_blocks,
        out_dir.display(),
        manifest.revision,
        copied.len(),
        module.display()
    );
    if inside.is_none() {
        errln!(
            "note: {} is outside the site; change the paths below to where it is served",
            out_dir.display()
        );
    }
    errln!("paste into a page of the site:");
    emit(&gitsense_publish::site::paste_lines(&web_dir))?;
    Ok(())
}

/// The path of a base URL, with its trailing slash (`/` without one).
fn url_path(base: Option<&str>) -> String {
    let Some(b) = base else { return "/".into() };
    let after_scheme = b.split_once("://").map_or(b, |(_, rest)| rest);
    let path = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("/");
    if path.ends_with('/') {
        path.to_string()
    } else {
        format!("{path}/")
    }
}

/// Runs the LLM command with `sh -c`, the prompt on stdin; returns its
/// stdout. A non-zero exit, a failure to start, or running past `timeout`
/// (the command and its children are killed) is an error.
fn run_llm(cmd: &str, prompt: &str, timeout: Duration) -> Result<String, Error> {
    let mut command = Process::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        // Its own process group, so a timeout can end the whole pipeline.
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| llm_error(format!("cannot run the --llm-cmd command: {e}")))?;
    // Write and read on threads: a large prompt and a chatty command could
    // otherwise each wait for the other to drain a pipe.
    let mut stdin = child.stdin.take();
    let input = prompt.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            // A command that ignores its input closes the pipe early: fine.
            let _ = s.write_all(&input);
        }
    });
    let read_all = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = read_all(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = read_all(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                #[cfg(unix)]
                let _ = Process::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::new(
                    "assist.llm_timeout",
                    format!(
                        "the --llm-cmd command did not answer within {} s (raise --llm-timeout)",
                        timeout.as_secs()
                    ),
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(llm_error(format!("waiting for the --llm-cmd command: {e}"))),
        }
    };
    let _ = writer.join();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        let tail: String = String::from_utf8_lossy(&stderr)
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join(" | ");
        return Err(llm_error(format!(
            "the --llm-cmd command failed ({status}){}",
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        )));
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The top-level help, as `--help` prints it.
    fn top_help() -> String {
        Cli::command().render_long_help().to_string()
    }

    #[test]
    fn the_top_level_help_names_every_command_and_every_source() {
        let help = top_help();
        let mut cmd = Cli::command();
        // Built: the group then lists the arguments that name it.
        cmd.build();
        for sub in cmd.get_subcommands() {
            assert!(
                help.contains(sub.get_name()),
                "{} is missing",
                sub.get_name()
            );
        }
        let build = cmd.find_subcommand("build").expect("build");
        let group = build
            .get_groups()
            .find(|g| g.get_id() == "source")
            .expect("the source group");
        let sources: Vec<String> = group
            .get_args()
            .map(|id| {
                let arg = build
                    .get_arguments()
                    .find(|a| a.get_id() == id)
                    .expect("arg");
                format!("--{}", arg.get_long().expect("a long flag"))
            })
            .collect();
        assert_eq!(sources.len(), 4, "{sources:?}");
        for flag in &sources {
            assert!(
                help.contains(flag.as_str()),
                "{flag} is missing from:\n{help}"
            );
        }
    }
}
