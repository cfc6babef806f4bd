//! `publish` on the real sample index: the files the manifest names, and
//! that the packed file (every page compressed on its own) gives back the
//! raw index page for page, with the page lengths after the hot pages in
//! the hot file.

mod common;

use common::{sample_index, temp_dir};
use flate2::read::{DeflateDecoder, GzDecoder};
use gitsense_publish::pagecodec::decode_hot;
use gitsense_publish::{
    decode_packed_lengths, packed_offsets, publish, Manifest, FIRST_VISIT_FILE, FIRST_VISIT_MAGIC,
    HOT_FORMAT_DELTA,
};
use std::io::Read;

#[test]
fn the_packed_file_holds_every_page_and_its_lengths_follow_the_hot_pages() {
    let out = temp_dir().join("published");
    let m = publish(&sample_index(), &out).expect("publish");
    // One copy for range reads: the packed file, no raw index beside it.
    assert_eq!(m.raw_file, None);
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".gsx")), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with(".gsx.gz")), "{names:?}");
    let raw = std::fs::read(sample_index()).unwrap();
    // The whole download is the packed file itself (checked page by page
    // below): the host keeps one copy of the index.
    assert_eq!(m.compression, gitsense_publish::COMPRESSION_PAGES);
    assert_eq!(Some(&m.file), m.packed_file.as_ref());
    assert_eq!(m.compressed_size, m.packed_size);
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
    let lengths = decode_packed_lengths(tail, pages).unwrap();
    let offsets = packed_offsets(&lengths, m.page_size, m.packed_size).expect("lengths add up");
    // What a browser downloading the whole index reads them with.
    assert_eq!(
        gitsense_publish::packed_offsets_in_hot(&m, &hot).unwrap(),
        offsets
    );
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

fn gunzip(path: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    GzDecoder::new(&std::fs::read(path).unwrap()[..])
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn the_first_visit_file_holds_the_manifest_as_published_then_the_hot_file() {
    // A directory of its own: the tests of this file run in parallel.
    let out = temp_dir().join("published-first-visit");
    let check = |m: &Manifest| {
        let first = gunzip(&out.join(FIRST_VISIT_FILE));
        assert_eq!(&first[..8], FIRST_VISIT_MAGIC);
        let len = u32::from_le_bytes(first[8..12].try_into().unwrap()) as usize;
        let manifest = std::fs::read(out.join("manifest.json")).unwrap();
        assert_eq!(
            &first[12..12 + len],
            &manifest[..],
            "the manifest byte for byte"
        );
        assert_eq!(
            &first[12 + len..],
            &gunzip(&out.join(m.hot_file.as_deref().unwrap()))[..],
            "then the hot file's bytes"
        );
    };
    let m = publish(&sample_index(), &out).expect("publish");
    check(&m);
    // Both hot files are compressed harder than zlib's best (zopfli):
    // every first visit fetches one before its first answer.
    for file in [FIRST_VISIT_FILE, m.hot_file.as_deref().unwrap()] {
        let published = std::fs::read(out.join(file)).unwrap();
        let mut zlib = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut zlib, &gunzip(&out.join(file))).unwrap();
        let zlib = zlib.finish().unwrap();
        assert!(
            published.len() < zlib.len(),
            "{file}: {} bytes, zlib's best {}",
            published.len(),
            zlib.len()
        );
    }
    // Published again with another index into the same directory: the
    // file follows the new manifest.
    let other = temp_dir().join("first-visit-other.gsx");
    let mut bytes = std::fs::read(sample_index()).unwrap();
    // Same pages, another file: the header's change counter (offset 24).
    bytes[27] ^= 1;
    std::fs::write(&other, &bytes).unwrap();
    let m2 = publish(&other, &out).expect("publish again");
    assert_ne!(m2.sha256, m.sha256);
    check(&m2);
}

/// The files publish wrote when it held the whole index in memory (read
/// whole, gzipped in one call, pages packed from the slice), by name:
/// what the streaming publish must still write, byte for byte.
fn in_memory_publish(index: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    use gitsense_publish::{encode_packed_lengths, first_visit_bytes, hot, pack_page, pagecodec};
    use sha2::{Digest, Sha256};
    let zopfli = |bytes: &[u8]| {
        let mut out = Vec::new();
        zopfli::compress(
            zopfli::Options::default(),
            zopfli::Format::Gzip,
            bytes,
            &mut out,
        )
        .unwrap();
        out
    };
    let conn = gitsense_engine::index::open_file(index).unwrap();
    let info = gitsense_engine::index::verify(&conn).unwrap();
    drop(conn);
    let bytes = std::fs::read(index).unwrap();
    let sha256 = gitsense_engine::util::hex(&Sha256::digest(&bytes));
    let stem = format!("index-{}", &sha256[..16]);
    let hot = hot::hot_pages(index).unwrap().pages;
    let ps = info.page_size as usize;
    let mut hot_pages = Vec::new();
    for &p in &hot {
        let at = (p as usize - 1) * ps;
        hot_pages.extend_from_slice(&bytes[at..at + ps]);
    }
    let mut hot_bytes = pagecodec::encode_hot(&hot, &hot_pages, ps);
    let mut packed = Vec::new();
    let mut lengths = Vec::new();
    for page in bytes.chunks(ps) {
        let p = pack_page(page).unwrap();
        lengths.push(p.len() as u32);
        packed.extend_from_slice(&p);
    }
    hot_bytes.extend_from_slice(&encode_packed_lengths(&lengths));
    let mut m = Manifest::gzip_of(
        &info,
        sha256,
        format!("{stem}.pages"),
        packed.len() as u64,
        None,
    );
    m.compression = gitsense_publish::COMPRESSION_PAGES.into();
    m.hot_pages = hot;
    m.hot_file = Some(format!("{stem}.hot.gz"));
    m.hot_format = HOT_FORMAT_DELTA;
    m.packed_file = Some(format!("{stem}.pages"));
    m.packed_size = packed.len() as u64;
    let json = serde_json::to_string_pretty(&m).unwrap() + "\n";
    vec![
        (format!("{stem}.pages"), packed),
        (format!("{stem}.hot.gz"), zopfli(&hot_bytes)),
        (
            FIRST_VISIT_FILE.to_string(),
            zopfli(&first_visit_bytes(json.as_bytes(), &hot_bytes)),
        ),
        ("manifest.json".to_string(), json.into_bytes()),
    ]
}

#[test]
fn the_streaming_publish_writes_what_the_in_memory_one_did_byte_for_byte() {
    let index = sample_index();
    // Several of publish's runs of pages, the last one partial.
    let pages = std::fs::metadata(&index).unwrap().len() / 4096;
    assert!(pages > 2 * 256 && pages % 256 != 0, "{pages} pages");
    let out = temp_dir().join("published-streaming");
    let mut steps = Vec::new();
    gitsense_publish::publish_with(&index, &out, &mut |p| steps.push(p)).expect("publish");
    let expected = in_memory_publish(&index);
    let mut written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut names: Vec<String> = expected.iter().map(|(n, _)| n.clone()).collect();
    names.sort();
    assert_eq!(written, names);
    for (name, bytes) in &expected {
        let got = std::fs::read(out.join(name)).unwrap();
        assert!(
            got == *bytes,
            "{name} differs ({} bytes against {})",
            got.len(),
            bytes.len()
        );
    }
    // Progress: every page checked, then every page written, in order.
    use gitsense_publish::Step;
    let last = |step| {
        steps
            .iter()
            .rev()
            .find(|p| p.step == step)
            .copied()
            .unwrap()
    };
    assert_eq!(
        (last(Step::Verify).done, last(Step::Verify).total),
        (pages, pages)
    );
    assert_eq!(
        (last(Step::Write).done, last(Step::Write).total),
        (pages, pages)
    );
    let order: Vec<Step> = steps.iter().map(|p| p.step).collect();
    let first = |s| order.iter().position(|&x| x == s).unwrap();
    assert!(
        first(Step::Verify) < first(Step::HotPages) && first(Step::HotPages) < first(Step::Write)
    );
}
