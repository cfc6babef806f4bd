//! Ranking records: the few numbers ranking needs of every matched row
//! (token counts, and the ids of the row's message and chat), packed a
//! chunk of ids at a time into the rows of `message_rank` and `code_rank`.
//!
//! Ranking reads them for every row a query matches; read lazily over HTTP
//! that is what a query pays for between its doclists and its results. A
//! row per id (`id, chat_id, lengths`) in a b-tree is wide and compresses
//! poorly, so a common word needed a round trip of its own for them.
//! Packed column by column, 256 ids to a row, small deltas side by side,
//! they take a few bytes a record: small enough to ship with the hot pages
//! (`hot`) of a documentation-sized index, and otherwise several times
//! fewer pages to fetch.
//!
//! A chunk's blob: the number of records `n` (varint), then `n` id offsets
//! from the chunk's first id (`id - (chunk << CHUNK_SHIFT)`, ascending),
//! then each field as a column of `n` varints: [`Col::Plain`] values as
//! they are (counts, never negative), [`Col::Delta`] values (ids, which
//! rise through a chunk) as the zigzag difference from the previous
//! record's. Varints are LEB128 (7 bits a byte, low first).

/// Ids per chunk: `chunk = id >> CHUNK_SHIFT`.
pub(crate) const CHUNK_SHIFT: u32 = 8;

/// The chunk holding `id`'s record.
pub fn chunk_of(id: i64) -> i64 {
    id >> CHUNK_SHIFT
}

/// How a field is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Plain,
    Delta,
}

/// `message_rank`: chat id, then FTS5's token counts of title, body and
/// keywords.
pub const MESSAGE_FIELDS: [Col; 4] = [Col::Delta, Col::Plain, Col::Plain, Col::Plain];
/// `code_rank`: message id, chat id, then FTS5's token count of the content.
pub const CODE_FIELDS: [Col; 3] = [Col::Delta, Col::Delta, Col::Plain];

/// One decoded chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub(crate) chunk: i64,
    ids: Vec<i64>,
    width: usize,
    fields: Vec<i64>,
}

impl Chunk {
    /// The fields of `id`'s record.
    pub fn get(&self, id: i64) -> Option<&[i64]> {
        let i = self.ids.binary_search(&id).ok()?;
        self.fields.get(i * self.width..(i + 1) * self.width)
    }

    /// Every record, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &[i64])> {
        self.ids
            .iter()
            .copied()
            .zip(self.fields.chunks(self.width.max(1)))
    }
}

/// `v` as LEB128 (7 bits a byte, low first) at the end of `out`.
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// The LEB128 number at `at` (advanced past it); `None` past the end.
pub fn get(blob: &[u8], at: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *blob.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// The blob of chunk `chunk` holding `records` (ids ascending, all in the
/// chunk, each with one value per column of `cols`).
pub(crate) fn encode(chunk: i64, records: &[(i64, Vec<i64>)], cols: &[Col]) -> Vec<u8> {
    let base = chunk << CHUNK_SHIFT;
    let mut out = Vec::with_capacity(records.len() * (cols.len() + 1) + 2);
    put(&mut out, records.len() as u64);
    for (id, _) in records {
        debug_assert_eq!(chunk_of(*id), chunk, "record {id} outside chunk {chunk}");
        put(&mut out, (id - base) as u64);
    }
    for (c, col) in cols.iter().enumerate() {
        let mut prev = 0i64;
        for (_, fields) in records {
            let v = fields.get(c).copied().unwrap_or(0);
            match col {
                Col::Plain => put(&mut out, v as u64),
                Col::Delta => put(&mut out, zigzag(v.wrapping_sub(prev))),
            }
            prev = v;
        }
    }
    out
}

/// Decodes a blob of `encode`; `None` when it is not one (truncated,
/// ids out of order or outside the chunk).
pub fn decode(chunk: i64, blob: &[u8], cols: &[Col]) -> Option<Chunk> {
    let mut at = 0;
    let n = usize::try_from(get(blob, &mut at)?).ok()?;
    // Every record takes at least a byte per column and one for its id.
    if n > blob.len() {
        return None;
    }
    let base = chunk.checked_shl(CHUNK_SHIFT)?;
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let off = get(blob, &mut at)?;
        if off >> CHUNK_SHIFT != 0 {
            return None;
        }
        let id = base + off as i64;
        if ids.last().is_some_and(|&last| last >= id) {
            return None;
        }
        ids.push(id);
    }
    let width = cols.len();
    let mut fields = vec![0i64; n * width];
    for (c, col) in cols.iter().enumerate() {
        let mut prev = 0i64;
        for i in 0..n {
            let raw = get(blob, &mut at)?;
            let v = match col {
                Col::Plain => raw as i64,
                Col::Delta => prev.wrapping_add(unzigzag(raw)),
            };
            fields[i * width + c] = v;
            prev = v;
        }
    }
    (at == blob.len()).then_some(Chunk {
        chunk,
        ids,
        width,
        fields,
    })
}

/// Groups `records` (ids ascending) into chunks: `(chunk, blob)`.
pub(crate) fn chunks(records: &[(i64, Vec<i64>)], cols: &[Col]) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < records.len() {
        let chunk = chunk_of(records[start].0);
        let end = start
            + records[start..]
                .iter()
                .take_while(|(id, _)| chunk_of(*id) == chunk)
                .count();
        out.push((chunk, encode(chunk, &records[start..end], cols)));
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_chunk_round_trips_and_looks_up() {
        let records = vec![
            (512, vec![7, 0, 120, 3]),
            (513, vec![7, 4, 1, 0]),
            (700, vec![9, 2, 100_000, 1]),
            (767, vec![3, 0, 0, 0]),
        ];
        let blob = encode(2, &records, &MESSAGE_FIELDS);
        let c = decode(2, &blob, &MESSAGE_FIELDS).unwrap();
        assert_eq!(c.get(700), Some(&[9, 2, 100_000, 1][..]));
        assert_eq!(c.get(767), Some(&[3, 0, 0, 0][..]));
        assert_eq!(c.get(514), None);
        let back: Vec<(i64, Vec<i64>)> = c.iter().map(|(id, f)| (id, f.to_vec())).collect();
        assert_eq!(back, records);
        // Count 1, offsets 1+1+2+2, chat deltas 4, titles 4, bodies
        // 1+1+3+1, keywords 4.
        assert_eq!(blob.len(), 25);
    }

    #[test]
    fn bad_blobs_are_refused() {
        let blob = encode(
            1,
            &[(256, vec![1, 2, 3]), (300, vec![1, 2, 3])],
            &CODE_FIELDS,
        );
        assert!(decode(1, &blob, &CODE_FIELDS).is_some());
        // Wrong chunk width, truncation, trailing bytes, ids out of order.
        assert!(decode(1, &blob, &MESSAGE_FIELDS).is_none());
        for cut in 0..blob.len() {
            assert!(decode(1, &blob[..cut], &CODE_FIELDS).is_none(), "cut {cut}");
        }
        let mut longer = blob.clone();
        longer.push(0);
        assert!(decode(1, &longer, &CODE_FIELDS).is_none());
        assert!(decode(1, &[2, 5, 5, 0, 0, 0, 0, 0, 0], &CODE_FIELDS).is_none());
        assert!(decode(1, &[1, 0x80, 0x02, 0, 0, 0], &CODE_FIELDS).is_none());
        assert!(decode(0, &[0xff; 12], &CODE_FIELDS).is_none());
    }

    proptest! {
        #[test]
        fn chunks_round_trip(
            mut ids in proptest::collection::btree_set(0i64..5000, 0..600),
            seed in any::<u64>(),
        ) {
            ids.insert(0);
            let records: Vec<(i64, Vec<i64>)> = ids
                .iter()
                .enumerate()
                .map(|(i, &id)| {
                    let x = seed.wrapping_mul(i as u64 + 1).rotate_left(i as u32 % 64);
                    (id, vec![(x % 1_000_000) as i64, (x >> 20) as i64 % 70, (x >> 40) as i64])
                })
                .collect();
            let mut back = Vec::new();
            for (chunk, blob) in chunks(&records, &CODE_FIELDS) {
                let c = decode(chunk, &blob, &CODE_FIELDS).unwrap();
                for (id, f) in c.iter() {
                    prop_assert_eq!(chunk_of(id), chunk);
                    back.push((id, f.to_vec()));
                }
            }
            prop_assert_eq!(back, records);
        }
    }
}
