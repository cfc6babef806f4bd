//! `publish` on the real sample index: the files the manifest names, and
//! that the packed file (every page compressed on its own) gives back the
//! raw index page for page, with the page lengths after the hot pages in
//! the hot file.

mod common;

use common::{sample_index, temp_dir};
use flate2::read::{DeflateDecoder, GzDecoder};
use gitsense_search::index::pagecodec::decode_hot;
use gitsense_search::publish::{
    decode_packed_lengths, packed_offsets, publish, Manifest, HOT_FORMAT_DELTA,
};
use std::io::Read;

#[test]
fn the_packed_file_holds_every_page_and_its_lengths_follow_the_hot_pages() {
    let out = temp_dir().join("published");
    let m = publish(&sample_index(), &out).expect("publish");
    let raw = std::fs::read(out.join(m.raw_file.as_deref().unwrap())).unwrap();
    assert_eq!(raw, std::fs::read(sample_index()).unwrap());
    // What the manifest on disk says is what publish returned.
    let on_disk = Manifest::parse(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
        .expect("manifest parses");
    assert_eq!(on_disk, m);

    let packed = std::fs::read(out.join(m.packed_file.as_deref().expect("packed file"))).unwrap();
    assert_eq!(packed.len() as u64, m.packed_size);
    let mut hot = Vec::new();
    GzDecoder::new(&std::fs::read(out.join(m.hot_file.as_deref().unwrap())).unwrap()[..])
        .read_to_end(&mut hot)
        .unwrap();
    let ps = m.page_size as usize;
    let pages = m.page_count as usize;
    assert!(!m.hot_pages.is_empty());
    // The hot pages encoded (interior table pages as deltas), then the
    // packed file's page lengths.
    assert_eq!(m.hot_format, HOT_FORMAT_DELTA);
    let (hot_pages, tail) = decode_hot(&hot, &m.hot_pages, ps).expect("hot pages decode");
    assert_eq!(tail.len(), 2 * pages);
    let mut interior = 0;
    for (i, &p) in m.hot_pages.iter().enumerate() {
        let at = (p as usize - 1) * ps;
        assert_eq!(
            &hot_pages[i * ps..(i + 1) * ps],
            &raw[at..at + ps],
            "hot page {p}"
        );
        let header = if p == 1 { 100 } else { 0 };
        interior += usize::from(raw[at + header] == 0x05);
    }
    assert!(interior > 0, "the sample has interior table pages");
    // Every interior table page came as deltas (codec byte 1), the rest as
    // they are (0).
    let mut at = 4 * m.hot_pages.len();
    let mut encoded = 0;
    for i in 0..m.hot_pages.len() {
        encoded += usize::from(hot[at] == 1);
        at += u32::from_le_bytes(hot[4 * i..4 * i + 4].try_into().unwrap()) as usize;
    }
    assert_eq!(encoded, interior);
    let lengths = decode_packed_lengths(&tail, pages).unwrap();
    let offsets = packed_offsets(&lengths, m.page_size, m.packed_size).expect("lengths add up");
    let mut compressed = 0;
    for i in 0..pages {
        let bytes = &packed[offsets[i] as usize..offsets[i + 1] as usize];
        let page = if bytes.len() == ps {
            bytes.to_vec()
        } else {
            compressed += 1;
            let mut out = Vec::new();
            DeflateDecoder::new(bytes).read_to_end(&mut out).unwrap();
            out
        };
        assert_eq!(page, raw[i * ps..(i + 1) * ps], "page {}", i + 1);
    }
    // Nearly every page of an index compresses; the whole file well.
    assert!(
        compressed * 10 > pages * 9,
        "{compressed} of {pages} compressed"
    );
    assert!(
        m.packed_size * 2 < m.size,
        "{} of {}",
        m.packed_size,
        m.size
    );
}
