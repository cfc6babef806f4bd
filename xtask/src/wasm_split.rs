//! Build tool (run by `./build.sh`, not shipped): splits the browser module
//! into a primary module, holding the functions a cold visit's first answer
//! runs, and a secondary module with everything else (the fill, OPFS and
//! IndexedDB setup, the assisted search, formats, SQLite's write paths,
//! error paths), which the worker loads after the first answer.
//!
//! ```text
//! wasm-split instrument IN.wasm OUT.wasm
//! wasm-split names IN.wasm HITS PROFILE
//! wasm-split split IN.wasm --keep PROFILE [--keep PROFILE...] --primary P.wasm --secondary S.wasm [--layout LINKED.wasm] [--report TSV]
//! wasm-split strip-link LINKED.wasm OUT.wasm
//! ```
//!
//! IN carries a name section (`wasm-opt -g`: the same code as without it,
//! plus the names); P and S are written without one.
//!
//! `instrument` writes IN with a call to the import `gitsense_split.hit(i)`
//! at the entry of every function, `i` being its index in IN; a profile run
//! (`xtask/js/split-profile.mjs`) records the indices a visit calls, one
//! per line, into HITS. `names` turns HITS into PROFILE: the functions'
//! names, one per line, without what changes from build to build (symbol
//! hashes, crate disambiguators, wasm-bindgen's shim indices), so that a
//! profile made once (`xtask/split-profile.txt`, committed) still names the
//! same functions after unrelated edits (instances of a generic function
//! share a name: the profile says which of them, and keeps them all when
//! their number changed). `split` keeps the functions PROFILE names in P
//! and moves every other function's body to S:
//!
//! - In P, a moved function keeps its index, type and every reference to it
//!   (calls, exports, table slots); its body becomes a stub that calls the
//!   import `gitsense_split.load()` unless P's exported global
//!   `__split_ready` is set, then calls the real function through a table
//!   slot S fills. The worker's loader (`src/js/split.js`) instantiates
//!   S and sets the global; a stub reached before that loads S at once
//!   (synchronously: the engine runs in a dedicated worker), so a stale
//!   profile costs time, never correctness.
//! - S imports P's memory, tables, globals and the functions it calls
//!   (exported by P as `__split_*`), defines the moved bodies and writes
//!   them into P's function table with one active element segment. It has
//!   no start function and no exports.
//! - With `--layout LINKED` (the linker's output, linked with
//!   `--no-merge-data-segments --emit-relocs`), the data objects only
//!   moved functions use move to S's own data segments (`split_data`);
//!   without it, all data stays in P. `strip-link` writes LINKED without
//!   what `--emit-relocs` added, for wasm-bindgen.
//!
//! Kept whatever the profile says: the start function, functions without a
//! name, and any function that uses a data or element segment by index
//! (`memory.init`, `table.init`, their drops), since those stay in P.
//! `split` names the profile's functions the module no longer has (renamed
//! or inlined since the profile was made): a sign to run
//! `./build.sh split-profile`. `--report` lists each named function with
//! the part it went to (`primary` or `secondary`, a tab, its name in IN),
//! for the size table (`bench/code-size.mjs`).

mod split_data;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;

use walrus::ir::{dfs_in_order, Visitor};
use walrus::{
    ConstExpr, DataId, ElementId, ElementItems, ElementKind, ExportItem, FunctionBuilder,
    FunctionId, FunctionKind, GlobalKind, ImportKind, ImportedFunction, InstrSeqBuilder, Module,
    ModuleConfig, TableId, ValType,
};

/// The import namespace of the loader's functions in P (and of `hit`).
const LOADER: &str = "gitsense_split";
/// The import namespace under which S finds P's exports.
const PRIMARY: &str = "primary";

type Result<T> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wasm-split: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<String> {
    match args.first().map(String::as_str) {
        Some("instrument") if args.len() == 3 => {
            let (input, out) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
            let bytes = instrument(&read(&input)?)?;
            write(&out, &bytes)?;
            Ok(format!(
                "instrumented {} -> {}",
                input.display(),
                out.display()
            ))
        }
        Some("strip-link") if args.len() == 3 => {
            let (input, out) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
            write(&out, &split_data::without_link_sections(&read(&input)?)?)?;
            Ok(format!(
                "{} without its link sections -> {}",
                input.display(),
                out.display()
            ))
        }
        Some("names") if args.len() == 4 => {
            let (input, hits, out) = (
                PathBuf::from(&args[1]),
                PathBuf::from(&args[2]),
                PathBuf::from(&args[3]),
            );
            let hits = parse_hits(
                &std::fs::read_to_string(&hits).map_err(|e| format!("{}: {e}", hits.display()))?,
            )?;
            let names = profile_names(&read(&input)?, &hits)?;
            let mut text = String::from(PROFILE_HEADER);
            for n in &names {
                text.push_str(n);
                text.push('\n');
            }
            write(&out, text.as_bytes())?;
            Ok(format!(
                "{} functions called, {} names -> {}",
                hits.len(),
                names.len(),
                out.display()
            ))
        }
        Some("split") => {
            let mut input = None;
            let (mut keep, mut primary, mut secondary) = (Vec::new(), None, None);
            let mut report = None;
            let mut expand = 0u32;
            let mut layout = None;
            let mut it = args[1..].iter();
            while let Some(a) = it.next() {
                let mut value = || {
                    it.next()
                        .cloned()
                        .ok_or_else(|| format!("{a} needs a value"))
                };
                match a.as_str() {
                    "--keep" => keep.push(value()?),
                    "--primary" => primary = Some(value()?),
                    "--secondary" => secondary = Some(value()?),
                    "--report" => report = Some(value()?),
                    "--layout" => layout = Some(value()?),
                    "--expand" => {
                        expand = value()?
                            .parse()
                            .map_err(|_| "--expand takes a number of levels".to_string())?
                    }
                    _ if input.is_none() && !a.starts_with("--") => input = Some(a.clone()),
                    _ => return Err(format!("unknown argument {a}")),
                }
            }
            let (Some(input), false, Some(primary), Some(secondary)) =
                (input, keep.is_empty(), primary, secondary)
            else {
                return Err(usage());
            };
            let mut profile = BTreeSet::new();
            for file in &keep {
                profile.extend(parse_profile(
                    &std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?,
                ));
            }
            let layout_module = match &layout {
                Some(path) => Some(split_data::layout(&read(path.as_ref())?)?),
                None => None,
            };
            let split = split(
                &read(input.as_ref())?,
                &profile,
                expand,
                layout_module.as_ref(),
            )?;
            write(primary.as_ref(), &split.primary)?;
            write(secondary.as_ref(), &split.secondary)?;
            if let Some(report) = report {
                let text: String = split
                    .report
                    .iter()
                    .map(|(kept, name)| {
                        format!("{}\t{name}\n", if *kept { "primary" } else { "secondary" })
                    })
                    .collect();
                write(report.as_ref(), text.as_bytes())?;
            }
            if !split.missing.is_empty() {
                let shown: Vec<&str> = split.missing.iter().take(5).map(String::as_str).collect();
                eprintln!(
                    "wasm-split: {} of the profile's {} functions are not in this build (renamed or inlined since; `./build.sh split-profile` makes a new profile): {}{}",
                    split.missing.len(),
                    profile.len(),
                    shown.join(", "),
                    if split.missing.len() > shown.len() { ", ..." } else { "" }
                );
            }
            let data = match split.data {
                Some((objects, bytes)) => {
                    format!(", data: {objects} objects ({bytes} bytes) moved")
                }
                None => String::new(),
            };
            Ok(format!(
                "split {input}: {} functions kept ({} names profiled, {expand} levels of callees), {} moved{data}; primary {} bytes, secondary {} bytes",
                split.kept, profile.len(), split.moved, split.primary.len(), split.secondary.len()
            ))
        }
        _ => Err(usage()),
    }
}

fn usage() -> String {
    "usage: wasm-split instrument IN OUT | wasm-split names IN HITS PROFILE | wasm-split strip-link IN OUT | wasm-split split IN --keep PROFILE --primary P --secondary S [--layout LINKED] [--report TSV]".into()
}

fn read(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn write(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// One function index per line (blank lines and `#` comments allowed).
fn parse_hits(text: &str) -> Result<BTreeSet<u32>> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.parse::<u32>()
                .map_err(|_| format!("not a function index: {l:?}"))
        })
        .collect()
}

/// The first lines of a profile file.
const PROFILE_HEADER: &str = "\
# The browser module's functions a visit runs: the first wasm module keeps
# them, the second gets the rest (xtask/src/wasm_split.rs). Made by
# `./build.sh split-profile` (a profile run in headless Chromium,
# xtask/js/split-profile.mjs); one name per line, without symbol hashes.
";

/// A profile's names (blank lines and `#` comments skipped).
fn parse_profile(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// A function's name as a profile spells it: what stays the same from build
/// to build. Symbol hashes (`::h0123456789abcdef`), crate disambiguators
/// (`alloc[3ca501edff3f0c7c]`), wasm-opt's suffixes for names it made
/// unique (`push[1]`) and wasm-bindgen's shim indices (`shim_idx: 792`)
/// change with unrelated edits; the path, the type and the method do not.
fn name_key(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if c == '[' {
            if let Some(end) = rest.find(']') {
                let inner = &rest[1..end];
                let disambiguator =
                    inner.len() == 16 && inner.bytes().all(|b| b.is_ascii_hexdigit());
                let unique = !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit());
                if disambiguator || unique {
                    rest = &rest[end + 1..];
                    continue;
                }
            }
        }
        if let Some(tail) = rest.strip_prefix("shim_idx: ") {
            let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
            out.push_str("shim_idx: _");
            rest = &tail[digits..];
            continue;
        }
        if let Some(tail) = rest.strip_prefix("::h") {
            if tail.len() == 16 && tail.bytes().all(|b| b.is_ascii_hexdigit()) {
                break;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The named functions by profile name, each group in index order, and
/// the unnamed ones.
fn name_groups(m: &Module) -> (BTreeMap<String, Vec<FunctionId>>, Vec<FunctionId>) {
    let mut groups: BTreeMap<String, Vec<FunctionId>> = BTreeMap::new();
    let mut unnamed = Vec::new();
    for f in m.funcs.iter() {
        match &f.name {
            Some(name) => groups.entry(name_key(name)).or_default().push(f.id()),
            None => unnamed.push(f.id()),
        }
    }
    (groups, unnamed)
}

/// The profile lines of the functions at `hits` (indices into `bytes`): a
/// name alone, or, for one of several functions that share it (instances
/// of a generic function), `NAME<TAB>#k/n`, its place among them.
fn profile_names(bytes: &[u8], hits: &BTreeSet<u32>) -> Result<BTreeSet<String>> {
    let m = parse(bytes)?;
    let ids = function_ids(&m);
    let (groups, _) = name_groups(&m);
    let mut names = BTreeSet::new();
    for &i in hits {
        let id = *ids.get(i as usize).ok_or_else(|| {
            format!(
                "the hits name function {i}, the module has {}: hits of another build",
                ids.len()
            )
        })?;
        // An unnamed function stays in P whatever the profile says.
        let Some(name) = &m.funcs.get(id).name else {
            continue;
        };
        let key = name_key(name);
        let group = &groups[&key];
        if group.len() == 1 {
            names.insert(key);
        } else {
            let k = group.iter().position(|&g| g == id).unwrap_or(0) + 1;
            names.insert(format!("{key}\t#{k}/{}", group.len()));
        }
    }
    if names.is_empty() && !hits.is_empty() {
        return Err("the module has no function names: build it with `wasm-opt -g`".into());
    }
    Ok(names)
}

/// What a profile keeps of a module: the functions it names; of a group
/// that shares a name, the places it names when the group has as many
/// functions as when it was made, else all of them (which instance is
/// which is not known then); for a line ending in `*`, every function
/// whose name starts with what comes before it. Also the unnamed
/// functions. Returns them and the profile's names the module has no
/// function for.
#[cfg(test)]
fn profiled(m: &Module, profile: &BTreeSet<String>) -> (HashSet<FunctionId>, Vec<String>) {
    let (keep, _, missing) = profiled_with_prefixes(m, profile);
    (keep, missing)
}

/// [`profiled`], and the functions kept for a line ending in `*`.
fn profiled_with_prefixes(
    m: &Module,
    profile: &BTreeSet<String>,
) -> (HashSet<FunctionId>, HashSet<FunctionId>, Vec<String>) {
    let (groups, unnamed) = name_groups(m);
    let mut wanted: BTreeMap<&str, Vec<Option<(usize, usize)>>> = BTreeMap::new();
    let mut prefixes = Vec::new();
    for line in profile {
        if let Some(prefix) = line.strip_suffix('*') {
            prefixes.push(prefix);
            continue;
        }
        let (key, place) = match line.rsplit_once("\t#") {
            Some((key, place)) => {
                let parsed = place
                    .split_once('/')
                    .and_then(|(k, n)| Some((k.parse().ok()?, n.parse().ok()?)));
                (key, parsed)
            }
            None => (line.as_str(), None),
        };
        wanted.entry(key).or_default().push(place);
    }
    let mut keep: HashSet<FunctionId> = unnamed.into_iter().collect();
    let mut missing = Vec::new();
    let mut whole = HashSet::new();
    for prefix in prefixes {
        let before = whole.len();
        for (key, group) in &groups {
            if key.starts_with(prefix) {
                whole.extend(group.iter().copied());
            }
        }
        if whole.len() == before {
            missing.push(format!("{prefix}*"));
        }
    }
    keep.extend(whole.iter().copied());
    for (key, places) in wanted {
        let Some(group) = groups.get(key) else {
            missing.push(key.to_string());
            continue;
        };
        let exact: Option<Vec<usize>> = places
            .iter()
            .map(|p| match p {
                Some((k, n)) if *n == group.len() && (1..=*n).contains(k) => Some(k - 1),
                _ => None,
            })
            .collect();
        match exact {
            Some(ks) => keep.extend(ks.into_iter().map(|k| group[k])),
            None => keep.extend(group.iter().copied()),
        }
    }
    (keep, whole, missing)
}

/// Whether a function name is the standard library's (its generic
/// functions are instantiated for the code that calls them).
fn is_library(name: &str) -> bool {
    let name = name.trim_start_matches('<');
    ["core::", "alloc::", "std::", "hashbrown::"]
        .iter()
        .any(|l| name.starts_with(l))
}

fn parse(bytes: &[u8]) -> Result<Module> {
    let mut config = ModuleConfig::new();
    // walrus would add its own producers section to each output; the names
    // are read from the input, the shipped modules go without them.
    config.generate_producers_section(false);
    // (WASM_SPLIT_NAMES keeps them, to read a stack trace of the outputs.)
    config.generate_name_section(std::env::var_os("WASM_SPLIT_NAMES").is_some());
    config
        .parse(bytes)
        .map_err(|e| format!("not a wasm module: {e}"))
}

/// Every function, in the input's index order (imports first).
fn function_ids(m: &Module) -> Vec<FunctionId> {
    m.funcs.iter().map(|f| f.id()).collect()
}

fn instrument(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut m = parse(bytes)?;
    let ids = function_ids(&m);
    let ty = m.types.add(&[ValType::I32], &[]);
    let (hit, _) = m.add_import_func(LOADER, "hit", ty);
    for (index, id) in ids.into_iter().enumerate() {
        if let FunctionKind::Local(f) = &mut m.funcs.get_mut(id).kind {
            let index = i32::try_from(index).map_err(|_| "too many functions".to_string())?;
            let mut body = f.builder_mut().func_body();
            body.instr_at(
                0,
                walrus::ir::Const {
                    value: walrus::ir::Value::I32(index),
                },
            );
            body.instr_at(1, walrus::ir::Call { func: hit });
        }
    }
    Ok(m.emit_wasm())
}

/// Data and element segments a function names (they stay in P).
#[derive(Default)]
struct SegmentUse {
    any: bool,
}

impl<'a> Visitor<'a> for SegmentUse {
    fn visit_data_id(&mut self, _: &DataId) {
        self.any = true;
    }
    fn visit_element_id(&mut self, _: &ElementId) {
        self.any = true;
    }
}

/// The functions a function calls directly.
#[derive(Default)]
struct Callees(Vec<FunctionId>);

/// Instructions in a function body.
#[derive(Default)]
struct Size(usize);

impl<'a> Visitor<'a> for Size {
    fn visit_instr(&mut self, _: &'a walrus::ir::Instr, _: &'a walrus::InstrLocId) {
        self.0 += 1;
    }
}

/// A function of at most this many instructions stays in P whatever the
/// profile says: its stub would be about as big, and a call to it (small
/// generic helpers, the instances a profile cannot tell apart) would load
/// S for nothing.
const SMALL_FUNCTION: usize = 16;

impl<'a> Visitor<'a> for Callees {
    fn visit_call(&mut self, instr: &walrus::ir::Call) {
        self.0.push(instr.func);
    }
    fn visit_return_call(&mut self, instr: &walrus::ir::ReturnCall) {
        self.0.push(instr.func);
    }
}

struct Split {
    primary: Vec<u8>,
    secondary: Vec<u8>,
    kept: usize,
    moved: usize,
    /// The profile's names this module has no function for.
    missing: Vec<String>,
    /// Each named local function: whether P keeps it, and its name as in IN.
    report: Vec<(bool, String)>,
    /// With a layout: the data objects moved to S and their bytes.
    data: Option<(usize, usize)>,
}

fn split(
    bytes: &[u8],
    profile: &BTreeSet<String>,
    expand: u32,
    layout: Option<&split_data::Layout>,
) -> Result<Split> {
    let mut p = parse(bytes)?;
    let mut s = parse(bytes)?;
    let ids = function_ids(&p);
    if p.funcs.iter().all(|f| f.name.is_none()) {
        return Err("the module has no function names: build it with `wasm-opt -g`".into());
    }
    let (mut keep, whole, missing) = profiled_with_prefixes(&p, profile);
    // What the functions kept by a prefix call of the standard library's
    // (their own instances of its generics), through the library's own
    // calls: a profile cannot tell a generic's instances apart, and the
    // prefixes are there for the paths it did not see.
    let mut frontier: Vec<FunctionId> = whole.into_iter().collect();
    while let Some(id) = frontier.pop() {
        if let FunctionKind::Local(f) = &p.funcs.get(id).kind {
            let mut calls = Callees::default();
            dfs_in_order(&mut calls, f, f.entry_block());
            for c in calls.0 {
                let library = p
                    .funcs
                    .get(c)
                    .name
                    .as_deref()
                    .is_some_and(|n| is_library(&name_key(n)));
                if library && keep.insert(c) {
                    frontier.push(c);
                }
            }
        }
    }

    // The profile, and `expand` levels of the functions it calls directly:
    // a profile run meets only the sizes and shapes of its own data (a
    // longer doclist, a deeper b-tree take paths next to the ones it saw).
    let index_of: HashMap<FunctionId, usize> =
        ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let mut frontier: Vec<FunctionId> = keep.iter().copied().collect();
    for _ in 0..expand {
        let mut next = Vec::new();
        for id in frontier {
            if let FunctionKind::Local(f) = &p.funcs.get(id).kind {
                let mut calls = Callees::default();
                dfs_in_order(&mut calls, f, f.entry_block());
                for c in calls.0 {
                    if keep.insert(c) {
                        next.push(c);
                    }
                }
            }
        }
        frontier = next;
    }

    // What moves: local functions outside the profile that P can do without.
    let start = p.start;
    let mut moved: Vec<FunctionId> = Vec::new();
    for &id in &ids {
        let FunctionKind::Local(f) = &p.funcs.get(id).kind else {
            continue;
        };
        if keep.contains(&id) || Some(id) == start {
            continue;
        }
        let mut size = Size::default();
        dfs_in_order(&mut size, f, f.entry_block());
        if size.0 <= SMALL_FUNCTION {
            continue;
        }
        let mut uses = SegmentUse::default();
        dfs_in_order(&mut uses, f, f.entry_block());
        if !uses.any {
            moved.push(id);
        }
    }
    let moved_set: HashSet<FunctionId> = moved.iter().copied().collect();
    let report = ids
        .iter()
        .filter_map(|&id| {
            let f = p.funcs.get(id);
            match (&f.kind, &f.name) {
                (FunctionKind::Local(_), Some(name)) => {
                    Some((!moved_set.contains(&id), name.clone()))
                }
                _ => None,
            }
        })
        .collect();
    let kept = ids
        .iter()
        .filter(|&&id| matches!(p.funcs.get(id).kind, FunctionKind::Local(_)))
        .count()
        - moved.len();
    if moved.is_empty() {
        return Err("nothing to move: the profile covers every function".into());
    }
    // The data only moved functions use (split_data), decided while P's
    // bodies are whole.
    let data_plan = match layout {
        Some(layout) => Some(split_data::plan(&p, layout, &moved_set)?),
        None => None,
    };

    // P's function table gets one slot per moved function, after its own.
    let table = p
        .tables
        .main_function_table()
        .map_err(|e| format!("function table: {e}"))?
        .ok_or("the module has no function table")?;
    let base = p.tables.get(table).initial;
    let size = base + moved.len() as u64;
    {
        let t = p.tables.get_mut(table);
        t.initial = size;
        t.maximum = Some(t.maximum.map_or(size, |m| m.max(size)));
    }

    // ---- S: the moved bodies, everything else imported from P. ----
    // P's items S may use, by their export name in P.
    let mut exports: Vec<(String, ExportItem)> = Vec::new();
    let s_ids = function_ids(&s);
    for (index, (&pid, &sid)) in ids.iter().zip(&s_ids).enumerate() {
        if moved_set.contains(&pid) {
            continue;
        }
        // Kept local functions and P's own imports alike: S imports them
        // from P's exports (a module may export what it imports).
        let name = format!("__split_f{index}");
        let ty = s.funcs.get(sid).ty();
        let old_import = match &s.funcs.get(sid).kind {
            FunctionKind::Import(i) => Some(i.import),
            _ => None,
        };
        let import = s.imports.add(PRIMARY, &name, ImportKind::Function(sid));
        s.funcs.get_mut(sid).kind = FunctionKind::Import(ImportedFunction { import, ty });
        if let Some(old) = old_import {
            s.imports.delete(old);
        }
        exports.push((name, ExportItem::Function(pid)));
    }
    // Memories, tables and globals: imported whole.
    let mem_ids: Vec<_> = s.memories.iter().map(|m| m.id()).collect();
    let p_mem_ids: Vec<_> = p.memories.iter().map(|m| m.id()).collect();
    for (i, (&sm, &pm)) in mem_ids.iter().zip(&p_mem_ids).enumerate() {
        let name = format!("__split_m{i}");
        if let Some(old) = s.memories.get(sm).import {
            s.imports.delete(old);
        }
        let import = s.imports.add(PRIMARY, &name, ImportKind::Memory(sm));
        let mem = s.memories.get_mut(sm);
        mem.import = Some(import);
        mem.data_segments.clear();
        exports.push((name, ExportItem::Memory(pm)));
    }
    let table_ids: Vec<_> = s.tables.iter().map(|t| t.id()).collect();
    let p_table_ids: Vec<_> = p.tables.iter().map(|t| t.id()).collect();
    let mut s_table = None;
    for (i, (&st, &pt)) in table_ids.iter().zip(&p_table_ids).enumerate() {
        let name = format!("__split_t{i}");
        if let Some(old) = s.tables.get(st).import {
            s.imports.delete(old);
        }
        let import = s.imports.add(PRIMARY, &name, ImportKind::Table(st));
        let (initial, maximum) = {
            let t = p.tables.get(pt);
            (t.initial, t.maximum)
        };
        let t = s.tables.get_mut(st);
        t.import = Some(import);
        t.init = None;
        t.elem_segments.clear();
        t.initial = initial;
        t.maximum = maximum;
        if pt == table {
            s_table = Some(st);
        }
        exports.push((name, ExportItem::Table(pt)));
    }
    let s_table: TableId = s_table.ok_or("function table not found in the second parse")?;
    let global_ids: Vec<_> = s.globals.iter().map(|g| g.id()).collect();
    let p_global_ids: Vec<_> = p.globals.iter().map(|g| g.id()).collect();
    for (i, (&sg, &pg)) in global_ids.iter().zip(&p_global_ids).enumerate() {
        let name = format!("__split_g{i}");
        if let GlobalKind::Import(old) = s.globals.get(sg).kind {
            s.imports.delete(old);
        }
        let import = s.imports.add(PRIMARY, &name, ImportKind::Global(sg));
        s.globals.get_mut(sg).kind = GlobalKind::Import(import);
        exports.push((name, ExportItem::Global(pg)));
    }
    // None of P's data or element segments, no exports, no start.
    let data: Vec<_> = s.data.iter().map(|d| d.id()).collect();
    for d in data {
        s.data.delete(d);
    }
    let elems: Vec<_> = s.elements.iter().map(|e| e.id()).collect();
    for e in elems {
        s.elements.delete(e);
    }
    let s_exports: Vec<_> = s.exports.iter().map(|e| e.id()).collect();
    for e in s_exports {
        s.exports.delete(e);
    }
    s.start = None;
    // The moved bodies, written into P's table at `base`.
    let s_moved: Vec<FunctionId> = moved.iter().map(|pid| s_ids[index_of[pid]]).collect();
    s.elements.add(
        ElementKind::Active {
            table: s_table,
            offset: ConstExpr::Value(walrus::ir::Value::I32(base as i32)),
        },
        ElementItems::Functions(s_moved),
    );
    walrus::passes::gc::run(&mut s);
    if let Some(plan) = &data_plan {
        let memory = s.memories.iter().next().map(|m| m.id());
        match memory {
            Some(memory) => split_data::apply_secondary(&mut s, memory, plan),
            None if plan.secondary.is_empty() => {}
            None => return Err("the second module lost its memory import".into()),
        }
    }
    let used: HashSet<String> = s
        .imports
        .iter()
        .filter(|i| i.module == PRIMARY)
        .map(|i| i.name.clone())
        .collect();
    let secondary = s.emit_wasm();

    // ---- P: stubs in place of the moved bodies, exports for S. ----
    let ready = p.globals.add_local(
        ValType::I32,
        true,
        false,
        ConstExpr::Value(walrus::ir::Value::I32(0)),
    );
    p.exports.add("__split_ready", ready);
    let unit = p.types.add(&[], &[]);
    let (load, _) = p.add_import_func(LOADER, "load", unit);
    for (slot, &id) in moved.iter().enumerate() {
        let ty = p.funcs.get(id).ty();
        let (params, results) = {
            let t = p.types.get(ty);
            (t.params().to_vec(), t.results().to_vec())
        };
        let args: Vec<_> = params.iter().map(|&t| p.locals.add(t)).collect();
        let mut b = FunctionBuilder::new(&mut p.types, &params, &results);
        stub_body(
            &mut b.func_body(),
            ready,
            load,
            &args,
            (base + slot as u64) as i32,
            ty,
            table,
        );
        let f = b.local_func(args);
        p.funcs.get_mut(id).kind = FunctionKind::Local(f);
    }
    for (name, item) in exports {
        if used.contains(&name) {
            p.exports.add(&name, item);
        }
    }
    if let Some(plan) = &data_plan {
        split_data::apply_primary(&mut p, plan);
    }
    let primary = p.emit_wasm();
    Ok(Split {
        primary,
        secondary,
        kept,
        moved: moved.len(),
        missing,
        report,
        data: data_plan.map(|d| (d.moved_objects, d.moved_bytes)),
    })
}

/// `if (!ready) load(); return table[slot](args...)`.
fn stub_body(
    body: &mut InstrSeqBuilder,
    ready: walrus::GlobalId,
    load: FunctionId,
    args: &[walrus::LocalId],
    slot: i32,
    ty: walrus::TypeId,
    table: TableId,
) {
    body.block(None, |b| {
        let done = b.id();
        b.global_get(ready).br_if(done).call(load);
    });
    for &a in args {
        body.local_get(a);
    }
    body.i32_const(slot).call_indirect(ty, table);
}

#[cfg(test)]
mod tests {
    use super::{name_key, profiled};
    use std::collections::BTreeSet;
    use walrus::{FunctionBuilder, FunctionId, Module, ModuleConfig};

    /// A module of empty functions with these names, and their ids.
    fn module(names: &[&str]) -> (Module, Vec<FunctionId>) {
        let mut m = Module::with_config(ModuleConfig::new());
        let ids = names
            .iter()
            .map(|name| {
                let mut b = FunctionBuilder::new(&mut m.types, &[], &[]);
                b.name(name.to_string());
                b.finish(vec![], &mut m.funcs)
            })
            .collect();
        (m, ids)
    }

    fn profile(lines: &[&str]) -> BTreeSet<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn a_profile_keeps_what_it_names_whatever_the_hashes() {
        let (m, ids) = module(&[
            "engine::search::h0000000000000001",
            "engine::plan::h0000000000000002",
            "sqlite3VdbeExec",
        ]);
        let (keep, missing) = profiled(
            &m,
            &profile(&["engine::search", "sqlite3VdbeExec", "engine::gone"]),
        );
        assert!(keep.contains(&ids[0]) && keep.contains(&ids[2]) && !keep.contains(&ids[1]));
        assert_eq!(missing, vec!["engine::gone".to_string()]);
    }

    #[test]
    fn a_line_ending_in_a_star_keeps_every_function_its_start_names() {
        let (m, ids) = module(&[
            "engine::reader::Reader::open::h0000000000000001",
            "<engine::reader::Terms<S> as engine::typo::Terms>::scan::h0000000000000002",
            "engine::readers::other::h0000000000000003",
            "sqlite3VdbeExec",
        ]);
        let (keep, missing) = profiled(
            &m,
            &profile(&["engine::reader::*", "<engine::reader::*", "engine::gone::*"]),
        );
        assert!(keep.contains(&ids[0]) && keep.contains(&ids[1]));
        assert!(!keep.contains(&ids[2]) && !keep.contains(&ids[3]));
        assert_eq!(missing, vec!["engine::gone::*".to_string()]);
    }

    #[test]
    fn instances_of_a_generic_function_are_kept_by_place_or_all_when_their_number_changed() {
        let names = [
            "Vec<T>::reserve::h0000000000000001",
            "Vec<T>::reserve::h0000000000000002",
            "Vec<T>::reserve::h0000000000000003",
        ];
        let (m, ids) = module(&names);
        let (keep, missing) = profiled(&m, &profile(&["Vec<T>::reserve\t#2/3"]));
        assert_eq!(keep.len(), 1);
        assert!(keep.contains(&ids[1]) && missing.is_empty());
        // Made when there were two: which is which is not known, so all stay.
        let (keep, _) = profiled(&m, &profile(&["Vec<T>::reserve\t#2/2"]));
        assert_eq!(keep.len(), 3);
    }

    #[test]
    fn a_name_key_drops_what_changes_between_builds() {
        assert_eq!(
            name_key("gitsense_engine::index::records::get::h6922525cce8f9c54"),
            "gitsense_engine::index::records::get"
        );
        assert_eq!(
            name_key("<alloc[3ca501edff3f0c7c]::string::String>::push[1]"),
            "<alloc::string::String>::push"
        );
        assert_eq!(
            name_key("Closure(Closure { owned: true, function: Function { shim_idx: 792, ret: Unit }) -> Externref"),
            "Closure(Closure { owned: true, function: Function { shim_idx: _, ret: Unit }) -> Externref"
        );
        // C functions and generic arguments in brackets are left alone.
        assert_eq!(name_key("sqlite3VdbeExec"), "sqlite3VdbeExec");
        assert_eq!(
            name_key("<[f32] as Sum>::sum::h0123456789abcdef"),
            "<[f32] as Sum>::sum"
        );
        assert_eq!(name_key("f::<[u8; 4]>::h0"), "f::<[u8; 4]>::h0");
    }
}
