//! The data half of the split: the linker's data objects (string
//! constants, panic locations, tables, SQLite's statics) that only the
//! moved functions use go to S as its own active data segments, which the
//! engine instantiating S writes into P's memory before any moved function
//! runs. P keeps every object its own code, its globals or its kept objects
//! may point at.
//!
//! Where each object starts and ends is the linker's knowledge, not the
//! optimized module's (wasm-opt splits and drops zeros in the segments it
//! is given): the layout comes from the linker's output linked with
//! `--no-merge-data-segments`, one segment per object. The optimized
//! module must hold the same bytes at the same addresses, or the split
//! refuses.
//!
//! Which objects a function uses is read from its constants: a wasm32
//! module without position-independent code addresses static data by
//! `i32.const ADDRESS` or by a load's or store's constant offset (LLVM also
//! merges constant stores, so each half of an `i64.const` and each lane of
//! a `v128.const` counts, and floats' bits too). LLVM may fold an index's
//! constant part into the address (`&TABLE[i - 97]` becomes `TABLE - 97 +
//! i`), so a constant within `SLACK` bytes of an object counts as using
//! it. Objects point at objects (a panic location at its file name, a
//! table at its strings): the data's relocations say which. An object moves when a
//! moved function uses it, directly or through moved objects, and nothing
//! of P's does; an object no function seems to use stays (what uses it is
//! not known). The cost of a wrong guess would be a zero read by P before S
//! is in, so every doubt keeps an object in P.
//!
//! `SPLIT_DATA_DEBUG=1` prints the bytes each side uses and why each kept
//! object of 256 bytes or more that S also uses stays in P.

use std::collections::HashSet;

use walrus::ir::{dfs_in_order, Instr, Value, Visitor};
use walrus::{ConstExpr, DataKind, FunctionId, FunctionKind, GlobalKind, MemoryId, Module};

use crate::Result;

/// How far from an object a constant may be and still count as its address.
const SLACK: u32 = 1024;

/// A run of zeros at least this long splits a segment. A segment's header
/// (flags, offset expression, length) is about 7 bytes, but zeros cost
/// next to nothing once the module is compressed, and a header does not.
const SPLIT_AT_ZEROS: usize = 64;

/// One of the linker's data objects.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub start: u32,
    pub bytes: Vec<u8>,
}

impl Object {
    fn end(&self) -> u32 {
        self.start + self.bytes.len() as u32
    }
}

/// What the linker says about the data: its objects, and which addresses
/// its code and data were given.
pub struct Layout {
    pub objects: Vec<Object>,
    /// Every address a relocation wrote inside (or one past the end of) the
    /// object it names.
    explained: HashSet<u32>,
    /// Objects some relocation addresses from outside their bounds
    /// (`TABLE - 97`): P keeps them whatever uses them.
    pinned: Vec<bool>,
    /// For each object, the objects it holds the address of (the data's
    /// relocations: a panic location's file name, a table's strings).
    points: Vec<Vec<usize>>,
}

/// The layout of a module linked with `--no-merge-data-segments` (one
/// segment per object) and `--emit-relocs` (its symbol table and
/// relocations).
pub fn layout(linked: &[u8]) -> Result<Layout> {
    use wasmparser::{KnownCustom, Linking, Payload, RelocationType as R, SymbolInfo};
    let bad = |e: wasmparser::BinaryReaderError| format!("the layout module: {e}");
    // The objects, in the segments' order, and each segment's address, and
    // where and how long its bytes are in `linked`.
    let mut objects: Vec<Object> = Vec::new();
    let mut segments: Vec<(u32, usize, usize)> = Vec::new();
    let mut data_section = 0;
    let mut symbols: Vec<Option<(u32, u32, u32)>> = Vec::new();
    // Each relocation: its symbol and addend, and for the data's, where it
    // is (an offset into the data section's contents).
    let mut relocations: Vec<(u32, i64, Option<u32>)> = Vec::new();
    let (mut linking, mut code_relocs) = (false, false);
    for payload in wasmparser::Parser::new(0).parse_all(linked) {
        match payload.map_err(bad)? {
            Payload::DataSection(reader) => {
                data_section = reader.range().start;
                for data in reader {
                    let data = data.map_err(bad)?;
                    let wasmparser::DataKind::Active { offset_expr, .. } = data.kind else {
                        return Err("the layout module has a passive data segment".into());
                    };
                    let mut ops = offset_expr.get_operators_reader();
                    let wasmparser::Operator::I32Const { value } = ops.read().map_err(bad)? else {
                        return Err("the layout module has a computed data offset".into());
                    };
                    let at = data.data.as_ptr() as usize - linked.as_ptr() as usize;
                    segments.push((value as u32, at, data.data.len()));
                    objects.push(Object {
                        start: value as u32,
                        bytes: data.data.to_vec(),
                    });
                }
            }
            Payload::CustomSection(c) => match c.as_known() {
                KnownCustom::Linking(reader) => {
                    linking = true;
                    for sub in reader.subsections() {
                        if let Linking::SymbolTable(map) = sub.map_err(bad)? {
                            for symbol in map {
                                symbols.push(match symbol.map_err(bad)? {
                                    SymbolInfo::Data {
                                        symbol: Some(d), ..
                                    } => Some((d.index, d.offset, d.size)),
                                    _ => None,
                                });
                            }
                        }
                    }
                }
                KnownCustom::Reloc(reader) => {
                    code_relocs |= c.name() == "reloc.CODE";
                    let in_data = c.name() == "reloc.DATA";
                    for entry in reader.entries() {
                        let entry = entry.map_err(bad)?;
                        if matches!(
                            entry.ty,
                            R::MemoryAddrLeb
                                | R::MemoryAddrSleb
                                | R::MemoryAddrI32
                                | R::MemoryAddrRelSleb
                                | R::MemoryAddrLeb64
                                | R::MemoryAddrSleb64
                                | R::MemoryAddrI64
                                | R::MemoryAddrRelSleb64
                                | R::MemoryAddrLocrelI32
                        ) {
                            relocations.push((
                                entry.index,
                                entry.addend,
                                in_data.then_some(entry.offset),
                            ));
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    if !linking || !code_relocs {
        return Err(
            "the layout module has no symbol table or code relocations: link it with --emit-relocs"
                .into(),
        );
    }
    objects.sort_by_key(|o| o.start);
    for pair in objects.windows(2) {
        if pair[0].end() > pair[1].start {
            return Err(format!(
                "the layout module's segments overlap at {}: link it with --no-merge-data-segments",
                pair[1].start
            ));
        }
    }
    let mut explained = HashSet::new();
    let mut pinned = vec![false; objects.len()];
    let mut points = vec![Vec::new(); objects.len()];
    let mut by_place: Vec<(usize, u32, usize)> = segments
        .iter()
        .map(|&(start, at, len)| (at, start, len))
        .collect();
    by_place.sort_unstable();
    for (index, addend, place) in relocations {
        let Some(Some((segment, offset, size))) = symbols.get(index as usize).copied() else {
            continue; // a symbol the linker did not define here, or no data
        };
        let Some(&(base, _, _)) = segments.get(segment as usize) else {
            return Err(format!(
                "a data symbol names segment {segment}, which the layout module does not have"
            ));
        };
        let at = base + offset;
        let inside = (0..=i64::from(size)).contains(&addend);
        if !inside {
            for i in near(&objects, at, 0) {
                pinned[i] = true;
            }
            continue;
        }
        let target = at + addend as u32;
        match place {
            None => {
                explained.insert(target);
            }
            Some(offset) => {
                // The object the pointer is stored in.
                let pos = data_section + offset as usize;
                let k = by_place.partition_point(|(p, _, _)| *p <= pos);
                let Some(&(p, start, len)) = k.checked_sub(1).and_then(|k| by_place.get(k)) else {
                    return Err(format!(
                        "a data relocation at {pos} is outside every segment"
                    ));
                };
                if pos >= p + len {
                    return Err(format!(
                        "a data relocation at {pos} is outside every segment"
                    ));
                }
                let from = start + (pos - p) as u32;
                let holder = objects.partition_point(|o| o.end() <= from);
                for j in near(&objects, target, 0) {
                    if let Some(list) = points.get_mut(holder) {
                        list.push(j);
                    }
                }
            }
        }
    }
    for list in &mut points {
        list.sort_unstable();
        list.dedup();
    }
    Ok(Layout {
        objects,
        explained,
        pinned,
        points,
    })
}

/// The linked module without what `--emit-relocs` added (the symbol table
/// and relocations, which no tool after the linker keeps true), for
/// wasm-bindgen.
pub fn without_link_sections(bytes: &[u8]) -> Result<Vec<u8>> {
    let bad = || "not a wasm module".to_string();
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(bad());
    }
    let mut out = bytes[..8].to_vec();
    let mut at = 8;
    while at < bytes.len() {
        let start = at;
        let id = bytes[at];
        let (size, len) = leb_u32(&bytes[at + 1..]).ok_or_else(bad)?;
        let body = at + 1 + len;
        let end = body
            .checked_add(size as usize)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(bad)?;
        let link = id == 0 && {
            let (n, nl) = leb_u32(&bytes[body..end]).ok_or_else(bad)?;
            let name = bytes
                .get(body + nl..body + nl + n as usize)
                .ok_or_else(bad)?;
            name == b"linking" || name.starts_with(b"reloc.")
        };
        if !link {
            out.extend_from_slice(&bytes[start..end]);
        }
        at = end;
    }
    Ok(out)
}

/// An unsigned LEB128 number and its length in bytes.
fn leb_u32(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(5).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return u32::try_from(value).ok().map(|v| (v, i + 1));
        }
    }
    None
}

/// A module's active data segments with constant offsets: memory, address,
/// bytes. Any other kind of segment is refused (a split would need to know
/// what initializes it and when).
fn active_segments(m: &Module) -> Result<Vec<(MemoryId, u32, Vec<u8>)>> {
    m.data
        .iter()
        .map(|d| match &d.kind {
            DataKind::Active {
                memory,
                offset: ConstExpr::Value(Value::I32(at)),
            } => Ok((*memory, *at as u32, d.value.clone())),
            _ => Err("a data segment is passive or has a computed offset".to_string()),
        })
        .collect()
}

/// What the split does with the data: the segments P keeps and the ones S
/// writes, with the figures the tool reports.
#[derive(Debug)]
pub struct DataPlan {
    memory: MemoryId,
    pub primary: Vec<(u32, Vec<u8>)>,
    pub secondary: Vec<(u32, Vec<u8>)>,
    pub moved_objects: usize,
    pub moved_bytes: usize,
}

/// Every constant in a function body that may be an address.
#[derive(Default)]
struct Addresses(Vec<u32>);

impl Addresses {
    fn value(&mut self, v: &Value) {
        match *v {
            Value::I32(x) => self.0.push(x as u32),
            Value::I64(x) => self.0.extend([x as u32, (x >> 32) as u32]),
            Value::F32(x) => self.0.push(x.to_bits()),
            Value::F64(x) => {
                let b = x.to_bits();
                self.0.extend([b as u32, (b >> 32) as u32]);
            }
            Value::V128(x) => self.0.extend((0..4).map(|i| (x >> (32 * i)) as u32)),
        }
    }
    fn offset(&mut self, offset: u64) {
        if let Ok(o) = u32::try_from(offset) {
            self.0.push(o);
        }
    }
}

impl<'a> Visitor<'a> for Addresses {
    fn visit_instr(&mut self, instr: &'a Instr, _: &'a walrus::InstrLocId) {
        match instr {
            Instr::Const(c) => self.value(&c.value),
            Instr::Load(i) => self.offset(i.arg.offset),
            Instr::Store(i) => self.offset(i.arg.offset),
            Instr::AtomicRmw(i) => self.offset(i.arg.offset),
            Instr::Cmpxchg(i) => self.offset(i.arg.offset),
            Instr::AtomicNotify(i) => self.offset(i.arg.offset),
            Instr::AtomicWait(i) => self.offset(i.arg.offset),
            Instr::LoadSimd(i) => self.offset(i.arg.offset),
            _ => {}
        }
    }
}

/// The objects a constant may address: those within `slack` bytes of it.
fn near(objects: &[Object], at: u32, slack: u32) -> std::ops::Range<usize> {
    let lo = at.saturating_sub(slack);
    let hi = at.saturating_add(slack);
    // First object ending after `lo`, first starting after `hi`.
    let first = objects.partition_point(|o| o.end() < lo);
    let last = objects.partition_point(|o| o.start <= hi);
    first..last.max(first)
}

/// Decides which objects move, given the module P is made from (function
/// bodies still whole) and the functions that move.
pub fn plan(p: &Module, layout: &Layout, moved: &HashSet<FunctionId>) -> Result<DataPlan> {
    let objects = &layout.objects[..];
    let segments = active_segments(p)?;
    let memory = match segments.first() {
        Some((m, _, _)) => *m,
        None => return Err("the module has no data".into()),
    };
    if segments.iter().any(|(m, _, _)| *m != memory) {
        return Err("data segments in more than one memory".into());
    }
    // The module's data as one image (the zeros between its segments are
    // free to write), checked against the layout.
    let lo = segments.iter().map(|(_, at, _)| *at).min().unwrap_or(0);
    let hi = segments
        .iter()
        .map(|(_, at, b)| at + b.len() as u32)
        .max()
        .unwrap_or(0);
    let mut image = vec![0u8; (hi - lo) as usize];
    for (_, at, bytes) in &segments {
        let from = (at - lo) as usize;
        image[from..from + bytes.len()].copy_from_slice(bytes);
    }
    check_same_bytes(&image, lo, objects)?;

    // Constants of P's functions and globals, and of S's functions.
    let (mut in_p, mut in_s) = (Addresses::default(), Addresses::default());
    for f in p.funcs.iter() {
        if let FunctionKind::Local(local) = &f.kind {
            let into = if moved.contains(&f.id()) {
                &mut in_s
            } else {
                &mut in_p
            };
            dfs_in_order(into, local, local.entry_block());
        }
    }
    for g in p.globals.iter() {
        if let GlobalKind::Local(ConstExpr::Value(v)) = &g.kind {
            in_p.value(v);
        }
    }
    // An address the linker wrote marks its object; any other constant in
    // the data's range (one wasm-opt folded, or a number that only looks
    // like an address) marks every object within SLACK of it in P.
    let mark = |addresses: &Addresses, slack: u32| {
        let (lo, hi) = (
            objects.first().map_or(0, |o| o.start),
            objects.last().map_or(0, Object::end),
        );
        let mut used = vec![false; objects.len()];
        let mut unexplained = 0;
        for &at in &addresses.0 {
            if at < lo.saturating_sub(slack) || at > hi.saturating_add(slack) {
                continue;
            }
            let slack = if layout.explained.contains(&at) {
                0
            } else {
                unexplained += 1;
                slack
            };
            for i in near(objects, at, slack) {
                used[i] = true;
            }
        }
        (used, unexplained)
    };
    let ((mut used_p, unexplained), (used_s, _)) = (mark(&in_p, SLACK), mark(&in_s, 0));
    for (i, pinned) in layout.pinned.iter().enumerate() {
        used_p[i] |= pinned;
    }
    if std::env::var_os("SPLIT_DATA_DEBUG").is_some() {
        let sum = |f: &dyn Fn(usize) -> bool| -> usize {
            (0..objects.len())
                .filter(|&i| f(i))
                .map(|i| objects[i].bytes.len())
                .sum()
        };
        eprintln!(
            "unexplained {unexplained} p {} s {} none {} p-only {} s-only {}",
            sum(&|i| used_p[i]),
            sum(&|i| used_s[i]),
            sum(&|i| !used_p[i] && !used_s[i]),
            sum(&|i| used_p[i] && !used_s[i]),
            sum(&|i| !used_p[i] && used_s[i])
        );
    }
    let points = &layout.points;
    let reach = |mut seen: Vec<bool>| {
        let mut stack: Vec<usize> = (0..seen.len()).filter(|&i| seen[i]).collect();
        while let Some(i) = stack.pop() {
            for &j in &points[i] {
                if !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen
    };
    let direct_p = used_p.clone();
    let (kept, wanted) = (reach(used_p), reach(used_s));
    if std::env::var_os("SPLIT_DATA_DEBUG").is_some() {
        for (i, o) in objects.iter().enumerate() {
            if kept[i] && wanted[i] && o.bytes.len() >= 256 {
                let by: Vec<u32> = (0..objects.len())
                    .filter(|&j| kept[j] && points[j].contains(&i))
                    .map(|j| objects[j].start)
                    .collect();
                eprintln!(
                    "kept {} ({} bytes): direct {} pinned {} pointed at by {:?}",
                    o.start,
                    o.bytes.len(),
                    direct_p[i],
                    layout.pinned[i],
                    by
                );
            }
        }
    }
    let moves: Vec<bool> = (0..objects.len()).map(|i| wanted[i] && !kept[i]).collect();

    // P: the image without the moved objects; S: the moved objects'.
    for (i, o) in objects.iter().enumerate() {
        if moves[i] {
            let (a, b) = (o.start.clamp(lo, hi), o.end().clamp(lo, hi));
            image[(a - lo) as usize..(b - lo) as usize].fill(0);
        }
    }
    let primary = pack(lo, &image);
    let mut secondary = Vec::new();
    let (mut moved_objects, mut moved_bytes) = (0, 0);
    for (i, o) in objects.iter().enumerate() {
        if moves[i] {
            moved_objects += 1;
            moved_bytes += o.bytes.len();
            secondary.extend(pack(o.start, &o.bytes));
        }
    }
    Ok(DataPlan {
        memory,
        primary,
        secondary: merge(secondary),
        moved_objects,
        moved_bytes,
    })
}

/// The module's data (`image`, from address `lo`) holds each object's
/// bytes where the layout puts it, and nothing between or beyond them.
fn check_same_bytes(image: &[u8], lo: u32, objects: &[Object]) -> Result<()> {
    let mismatch = |at: u32| {
        Err(format!(
            "the module's data differs from the layout's at address {at}: the layout module is not the one this module was made from"
        ))
    };
    let byte = |at: u32| {
        at.checked_sub(lo)
            .and_then(|i| image.get(i as usize))
            .copied()
            .unwrap_or(0)
    };
    let hi = lo + image.len() as u32;
    let mut done = lo;
    for o in objects {
        if let Some(at) = (done..o.start.min(hi)).find(|&at| byte(at) != 0) {
            return mismatch(at);
        }
        if let Some(k) = (0..o.bytes.len()).find(|&k| byte(o.start + k as u32) != o.bytes[k]) {
            return mismatch(o.start + k as u32);
        }
        done = done.max(o.end());
    }
    match (done..hi).find(|&at| byte(at) != 0) {
        Some(at) => mismatch(at),
        None => Ok(()),
    }
}

/// A run of bytes as segments without their long runs of zeros (memory
/// starts zeroed, and nothing else writes where these go first).
fn pack(start: u32, bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0 {
            i += 1;
            continue;
        }
        let from = i;
        let mut zeros = 0;
        while i < bytes.len() && zeros < SPLIT_AT_ZEROS {
            zeros = if bytes[i] == 0 { zeros + 1 } else { 0 };
            i += 1;
        }
        let to = i - zeros;
        out.push((start + from as u32, bytes[from..to].to_vec()));
    }
    out
}

/// Segments sorted, those that touch joined (only bytes the inputs set, so
/// no byte of another object is ever written).
fn merge(mut segments: Vec<(u32, Vec<u8>)>) -> Vec<(u32, Vec<u8>)> {
    segments.sort_by_key(|s| s.0);
    let mut out: Vec<(u32, Vec<u8>)> = Vec::new();
    for (start, bytes) in segments {
        match out.last_mut() {
            Some((s, b)) if *s + b.len() as u32 == start => b.extend(bytes),
            _ => out.push((start, bytes)),
        }
    }
    out
}

/// Replaces P's data segments by the plan's.
pub fn apply_primary(p: &mut Module, plan: &DataPlan) {
    let ids: Vec<_> = p.data.iter().map(|d| d.id()).collect();
    for id in ids {
        p.data.delete(id);
    }
    p.memories.get_mut(plan.memory).data_segments.clear();
    add(p, plan.memory, &plan.primary);
}

/// Gives S the moved objects, in `memory` (S's import of P's).
pub fn apply_secondary(s: &mut Module, memory: MemoryId, plan: &DataPlan) {
    add(s, memory, &plan.secondary);
}

fn add(m: &mut Module, memory: MemoryId, segments: &[(u32, Vec<u8>)]) {
    for (start, bytes) in segments {
        let id = m.data.add(
            DataKind::Active {
                memory,
                offset: ConstExpr::Value(Value::I32(*start as i32)),
            },
            bytes.clone(),
        );
        m.memories.get_mut(memory).data_segments.insert(id);
    }
}

#[cfg(test)]
mod tests {
    use super::{apply_primary, merge, near, pack, plan, without_link_sections, Layout, Object};
    use std::collections::HashSet;
    use walrus::ir::Value;
    use walrus::{ConstExpr, DataKind, FunctionBuilder, Module, ModuleConfig, RawCustomSection};

    /// A module whose data is `objects` (one segment each) and whose
    /// functions load from the given addresses: (name, addresses).
    fn module(objects: &[Object], funcs: &[(&str, &[u32])]) -> Module {
        let mut m = Module::with_config(ModuleConfig::new());
        let memory = m.memories.add_local(false, false, 1, None, None);
        for o in objects {
            let id = m.data.add(
                DataKind::Active {
                    memory,
                    offset: ConstExpr::Value(Value::I32(o.start as i32)),
                },
                o.bytes.clone(),
            );
            m.memories.get_mut(memory).data_segments.insert(id);
        }
        for (name, addresses) in funcs {
            let mut b = FunctionBuilder::new(&mut m.types, &[], &[]);
            b.name(name.to_string());
            for &at in *addresses {
                b.func_body()
                    .i32_const(at as i32)
                    .load(
                        memory,
                        walrus::ir::LoadKind::I32_8 {
                            kind: walrus::ir::ExtendedLoad::ZeroExtend,
                        },
                        walrus::ir::MemArg {
                            align: 1,
                            offset: 0,
                        },
                    )
                    .drop();
            }
            let f = b.finish(vec![], &mut m.funcs);
            m.exports.add(name, f);
        }
        m
    }

    #[test]
    fn data_only_moved_functions_use_moves_and_every_doubt_keeps_it() {
        // A: used by the kept function. B: only by the moved one, and it
        // points at C, which moves with it. D: the moved function's, but a
        // relocation addresses it from outside (pinned). E: the moved
        // function's, but the kept one has a constant near it that no
        // relocation explains. F: nobody's.
        let mut b = vec![7; 8];
        b[4..8].copy_from_slice(&102000u32.to_le_bytes());
        let objects = vec![
            obj(101000, &[1; 8]),
            obj(101008, &b),
            obj(102000, &[3; 4]),
            obj(103000, &[4; 4]),
            obj(105000, &[5; 4]),
            obj(109000, &[6; 4]),
        ];
        let m = module(
            &objects,
            &[
                ("kept", &[101000, 105100]),
                ("moved", &[101010, 103000, 105000]),
            ],
        );
        let moved: HashSet<_> = m
            .funcs
            .iter()
            .filter(|f| f.name.as_deref() == Some("moved"))
            .map(|f| f.id())
            .collect();
        let layout = Layout {
            explained: [101000, 101010, 103000, 105000].into_iter().collect(),
            pinned: vec![false, false, false, true, false, false],
            points: vec![vec![], vec![2], vec![], vec![], vec![], vec![]],
            objects: objects.clone(),
        };
        let plan = plan(&m, &layout, &moved).unwrap();
        assert_eq!(plan.moved_objects, 2);
        assert_eq!(
            plan.secondary,
            // (the trailing zero is memory's already)
            vec![
                (101008, objects[1].bytes[..7].to_vec()),
                (102000, vec![3; 4])
            ]
        );
        // P keeps A, D, E and F, and zeros where B and C were.
        let mut m = m;
        apply_primary(&mut m, &plan);
        let mut image = std::collections::BTreeMap::new();
        for d in m.data.iter() {
            let DataKind::Active {
                offset: ConstExpr::Value(Value::I32(at)),
                ..
            } = d.kind
            else {
                panic!("not active");
            };
            for (k, &byte) in d.value.iter().enumerate() {
                image.insert(at as u32 + k as u32, byte);
            }
        }
        let at = |a: u32| image.get(&a).copied().unwrap_or(0);
        assert_eq!(
            (at(101000), at(101008), at(101012), at(102000)),
            (1, 0, 0, 0)
        );
        assert_eq!((at(103000), at(105000), at(109000)), (4, 5, 6));
    }

    #[test]
    fn a_layout_whose_bytes_differ_from_the_module_is_refused() {
        let objects = vec![obj(1000, &[1; 8])];
        let m = module(&objects, &[("moved", &[1000])]);
        let moved: HashSet<_> = m.funcs.iter().map(|f| f.id()).collect();
        let layout = Layout {
            explained: HashSet::new(),
            pinned: vec![false],
            points: vec![vec![]],
            objects: vec![obj(1000, &[2; 8])],
        };
        let err = plan(&m, &layout, &moved).unwrap_err();
        assert!(
            err.contains("differs from the layout's at address 1000"),
            "{err}"
        );
    }

    #[test]
    fn the_link_sections_are_dropped_and_everything_else_kept() {
        let mut m = module(&[obj(8, &[1])], &[("f", &[8])]);
        for name in ["linking", "reloc.CODE", "reloc.DATA", "keep.me"] {
            m.customs.add(RawCustomSection {
                name: name.to_string(),
                data: vec![1, 2, 3],
            });
        }
        let stripped = without_link_sections(&m.emit_wasm()).unwrap();
        let back = Module::from_buffer(&stripped).unwrap();
        let names: Vec<_> = back
            .customs
            .iter()
            .map(|(_, c)| c.name().to_string())
            .collect();
        assert!(names.contains(&"keep.me".to_string()), "{names:?}");
        assert!(
            !names
                .iter()
                .any(|n| n == "linking" || n.starts_with("reloc.")),
            "{names:?}"
        );
        assert_eq!(back.data.iter().count(), 1);
        assert!(without_link_sections(b"not wasm").is_err());
    }

    fn obj(start: u32, bytes: &[u8]) -> Object {
        Object {
            start,
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn a_constant_near_an_object_counts_as_its_address() {
        let objects = [obj(100, &[1; 10]), obj(110, &[2; 10]), obj(200, &[3; 4])];
        assert_eq!(near(&objects, 105, 0), 0..1);
        // One past the end is the next object's start and the first's end.
        assert_eq!(near(&objects, 110, 0), 0..2);
        assert_eq!(near(&objects, 150, 0), 2..2);
        assert_eq!(near(&objects, 190, 20), 2..3);
        assert_eq!(near(&objects, 135, 20), 1..2);
        assert_eq!(near(&objects, 160, 100), 0..3);
        assert_eq!(near(&objects, 10, 20), 0..0);
    }

    #[test]
    fn packing_drops_runs_of_zeros_and_merging_joins_only_what_touches() {
        let mut bytes = vec![0, 0, 1, 2];
        bytes.extend([0; 64]);
        bytes.extend([3, 0, 0, 4, 0]);
        bytes.extend([0; 62]);
        bytes.extend([5, 0]);
        let mut tail = vec![3, 0, 0, 4];
        tail.extend([0; 63]);
        tail.push(5);
        assert_eq!(pack(10, &bytes), vec![(12, vec![1, 2]), (78, tail)]);
        assert_eq!(
            merge(vec![
                (30, vec![5]),
                (12, vec![1, 2]),
                (14, vec![3]),
                (20, vec![4])
            ]),
            vec![(12, vec![1, 2, 3]), (20, vec![4]), (30, vec![5])]
        );
    }
}
