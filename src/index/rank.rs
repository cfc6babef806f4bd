//! The rank of a message as one FTS5 auxiliary function,
//! `gs_message_rank(fts_messages, title_len, body_len, keywords_len,
//! avg_title_len, avg_keywords_len)`, registered on every connection
//! ([`register`]).
//!
//! It computes what three `bm25()` calls and two length norms did (see
//! [`super::BM25_K1`]): FTS5's own BM25 arithmetic (`fts5Bm25Function`,
//! operation for operation), once per column weighting, over the phrase
//! hits of the current row (`xInst`, from the doclists already read). The
//! row's column lengths come as arguments, from `message_rank` (FTS5's own
//! token counts, copied there at build time), instead of from FTS5's
//! `_docsize` table: ranking then reads one narrow row per matched message
//! rather than two, which is what a lazily read index pays for per query.
//!
//! In: the FTS5 context of the row and the five values. Out: the score
//! (lower is better, as `bm25()`): `min(title · norm(title_len) · w_title,
//! keywords · norm(keywords_len) · w_keywords) + body`, where `title` and
//! `keywords` are BM25 saturated per column (weight 1e6) and `body` is
//! BM25 of body hits, all normalised by the whole row's length.

use super::{BM25_B, BM25_K1, MESSAGE_COLUMN_WEIGHTS};
use crate::error::{Error, Result};
use rusqlite::{ffi, Connection};
use std::ffi::{c_int, c_void};
use std::ptr;

/// The SQL name of the function.
pub const MESSAGE_RANK: &str = "gs_message_rank";

/// Column order of `fts_messages`.
const TITLE: c_int = 0;
const BODY: c_int = 1;
const KEYWORDS: c_int = 2;

/// The weight `bm25(fts, 1e6, 0, 0)` gives a column to saturate it.
const SATURATE: f64 = 1e6;

/// Per query: FTS5's average row length and each phrase's IDF.
struct QueryData {
    avgdl: f64,
    idf: Vec<f64>,
}

unsafe extern "C" fn free_query_data(p: *mut c_void) {
    if !p.is_null() {
        drop(Box::from_raw(p as *mut QueryData));
    }
}

unsafe extern "C" fn count_hit(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    user: *mut c_void,
) -> c_int {
    *(user as *mut i64) += 1;
    ffi::SQLITE_OK
}

fn ok(rc: c_int) -> std::result::Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// The query's data, computed on the first row as `fts5Bm25GetData` does.
unsafe fn query_data(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> std::result::Result<*const QueryData, c_int> {
    let (Some(get), Some(set), Some(phrases), Some(rows), Some(total), Some(query)) = (
        api.xGetAuxdata,
        api.xSetAuxdata,
        api.xPhraseCount,
        api.xRowCount,
        api.xColumnTotalSize,
        api.xQueryPhrase,
    ) else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let p = get(fts, 0) as *const QueryData;
    if !p.is_null() {
        return Ok(p);
    }
    let n_phrase = phrases(fts);
    let mut n_row: i64 = 0;
    ok(rows(fts, &mut n_row))?;
    let mut n_token: i64 = 0;
    ok(total(fts, -1, &mut n_token))?;
    let avgdl = n_token as f64 / n_row as f64;
    let mut idf = Vec::with_capacity(n_phrase.max(0) as usize);
    for i in 0..n_phrase {
        let mut hits: i64 = 0;
        ok(query(
            fts,
            i,
            &mut hits as *mut i64 as *mut c_void,
            Some(count_hit),
        ))?;
        let v = (((n_row - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
        idf.push(if v <= 0.0 { 1e-6 } else { v });
    }
    let data = Box::into_raw(Box::new(QueryData { avgdl, idf }));
    // On failure FTS5 frees the data itself (xDelete).
    ok(set(fts, data as *mut c_void, Some(free_query_data)))?;
    Ok(data)
}

/// `fts5Bm25Function`'s sum for one column weighting: `freq` holds the
/// weighted hits per phrase, `d` the row's length in tokens.
fn bm25(data: &QueryData, freq: &[f64], d: f64) -> f64 {
    let (k1, b) = (BM25_K1, BM25_B);
    let mut score = 0.0;
    for (idf, f) in data.idf.iter().zip(freq) {
        score += idf * ((f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * d / data.avgdl)));
    }
    -score
}

/// A column's length norm `1 / (1 + k1·(1 − b + b·len/avg))`; 1 for a
/// message without that column.
fn norm(len: i64, avg: f64) -> f64 {
    if len > 0 {
        1.0 / (1.0 + BM25_K1 * (1.0 - BM25_B + BM25_B * len as f64 / avg))
    } else {
        1.0
    }
}

unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> std::result::Result<f64, c_int> {
    let [title_len, body_len, keywords_len, avg_title, avg_keywords] = args else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let (title_len, body_len, keywords_len) = (
        ffi::sqlite3_value_int64(*title_len),
        ffi::sqlite3_value_int64(*body_len),
        ffi::sqlite3_value_int64(*keywords_len),
    );
    let (avg_title, avg_keywords) = (
        ffi::sqlite3_value_double(*avg_title),
        ffi::sqlite3_value_double(*avg_keywords),
    );
    let (Some(inst_count), Some(inst)) = (api.xInstCount, api.xInst) else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let data = &*query_data(api, fts)?;
    let n = data.idf.len();
    // Weighted hits per phrase of the three bm25() calls this replaces:
    // (1e6, 0, 0), (0, w_body, 0) and (0, 0, 1e6).
    let mut freq = vec![0.0f64; 3 * n];
    let (title, rest) = freq.split_at_mut(n);
    let (body, keywords) = rest.split_at_mut(n);
    let mut n_inst: c_int = 0;
    ok(inst_count(fts, &mut n_inst))?;
    for i in 0..n_inst {
        let (mut phrase, mut column, mut offset) = (0, 0, 0);
        ok(inst(fts, i, &mut phrase, &mut column, &mut offset))?;
        let Some(p) = usize::try_from(phrase).ok().filter(|&p| p < n) else {
            continue;
        };
        match column {
            TITLE => title[p] += SATURATE,
            BODY => body[p] += MESSAGE_COLUMN_WEIGHTS.body,
            KEYWORDS => keywords[p] += SATURATE,
            _ => {}
        }
    }
    let d = (title_len + body_len + keywords_len) as f64;
    let w = MESSAGE_COLUMN_WEIGHTS;
    let t = bm25(data, title, d) * norm(title_len, avg_title) * w.title;
    let k = bm25(data, keywords, d) * norm(keywords_len, avg_keywords) * w.keywords;
    // SQL's min(): the later argument when they compare equal.
    let best = if t < k { t } else { k };
    Ok(best + bm25(data, body, d))
}

unsafe extern "C" fn message_rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    let args: &[*mut ffi::sqlite3_value] = if vals.is_null() || n_val <= 0 {
        &[]
    } else {
        std::slice::from_raw_parts(vals, n_val as usize)
    };
    match api.as_ref().map(|api| score(api, fts, args)) {
        Some(Ok(v)) => ffi::sqlite3_result_double(ctx, v),
        Some(Err(rc)) => ffi::sqlite3_result_error_code(ctx, rc),
        None => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE),
    }
}

/// Registers [`MESSAGE_RANK`] on a connection (FTS5's API pointer comes
/// from `SELECT fts5(?1)`, as the FTS5 documentation describes).
pub fn register(conn: &Connection) -> Result<()> {
    let failed = |what: &str| {
        Error::new(
            "internal.error",
            format!("cannot register the ranking function: {what}"),
        )
    };
    unsafe {
        let db = conn.handle();
        let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
        let sql = c"SELECT fts5(?1)";
        if ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut stmt, ptr::null_mut())
            != ffi::SQLITE_OK
        {
            return Err(failed("FTS5 is not available"));
        }
        let mut api: *mut ffi::fts5_api = ptr::null_mut();
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            &mut api as *mut *mut ffi::fts5_api as *mut c_void,
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        let Some(create) = api.as_ref().and_then(|a| a.xCreateFunction) else {
            return Err(failed("no FTS5 API"));
        };
        let rc = create(
            api,
            c"gs_message_rank".as_ptr(),
            ptr::null_mut(),
            Some(message_rank),
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(failed(&format!("SQLite error {rc}")));
        }
    }
    Ok(())
}

/// The column sizes in an FTS5 `_docsize` blob (one varint per column).
pub fn docsize_columns(blob: &[u8]) -> Vec<i64> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < blob.len() {
        let mut v: u64 = 0;
        let mut len = 0;
        for i in 0..9 {
            let Some(&byte) = blob.get(at + i) else {
                return out;
            };
            len = i + 1;
            if i == 8 {
                v = (v << 8) | u64::from(byte);
                break;
            }
            v = (v << 7) | u64::from(byte & 0x7f);
            if byte & 0x80 == 0 {
                break;
            }
        }
        out.push(v as i64);
        at += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docsize_blobs_decode() {
        assert_eq!(docsize_columns(&[3, 0x81, 0x00, 7]), vec![3, 128, 7]);
        assert_eq!(docsize_columns(&[]), Vec::<i64>::new());
    }

    /// The function against the three bm25() calls and norms it replaces,
    /// on an FTS5 table built here (lengths from its own `_docsize`).
    #[test]
    fn equals_bm25_per_column_with_norms() {
        let c = Connection::open_in_memory().unwrap();
        register(&c).unwrap();
        c.execute_batch(
            "CREATE VIRTUAL TABLE f USING fts5(title, body, keywords);
             INSERT INTO f VALUES ('json dumps', 'serialize obj to a json formatted str', 'dumps');
             INSERT INTO f VALUES ('json', 'the json module: dumps, loads, dump and load json', '');
             INSERT INTO f VALUES ('pickle', 'like json dumps but binary', 'serialize');
             INSERT INTO f VALUES ('', 'nothing about it', 'json');",
        )
        .unwrap();
        let sizes: Vec<(i64, Vec<i64>)> = {
            let mut s = c
                .prepare("SELECT id, sz FROM f_docsize ORDER BY id")
                .unwrap();
            s.query_map([], |r| {
                Ok((r.get(0)?, docsize_columns(&r.get::<_, Vec<u8>>(1)?)))
            })
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
        };
        let avg = |col: usize| {
            let v: Vec<i64> = sizes
                .iter()
                .map(|(_, s)| s[col])
                .filter(|&n| n > 0)
                .collect();
            v.iter().sum::<i64>() as f64 / v.len() as f64
        };
        let (avg_t, avg_k) = (avg(0), avg(2));
        for q in [
            "json",
            "json dumps",
            "\"json dumps\"",
            "serialize OR binary",
            "dumps*",
        ] {
            let mut s = c
                .prepare(
                    "SELECT rowid, gs_message_rank(f, ?2, ?3, ?4, ?5, ?6),
                            bm25(f, 1e6, 0.0, 0.0), bm25(f, 0.0, 0.0, 1e6), bm25(f, 0.0, 1.0, 0.0)
                     FROM f WHERE f MATCH ?1 AND rowid = ?7",
                )
                .unwrap();
            let mut seen = 0;
            for (id, sz) in &sizes {
                let row = s
                    .query_row(
                        rusqlite::params![q, sz[0], sz[1], sz[2], avg_t, avg_k, id],
                        |r| {
                            Ok((
                                r.get::<_, f64>(1)?,
                                r.get::<_, f64>(2)?,
                                r.get::<_, f64>(3)?,
                                r.get::<_, f64>(4)?,
                            ))
                        },
                    )
                    .ok();
                let Some((ours, t, k, b)) = row else { continue };
                seen += 1;
                let w = MESSAGE_COLUMN_WEIGHTS;
                let t = t * norm(sz[0], avg_t) * w.title;
                let k = k * norm(sz[2], avg_k) * w.keywords;
                let expected = if t < k { t } else { k } + b;
                assert_eq!(
                    ours.to_bits(),
                    expected.to_bits(),
                    "{q}, row {id}: {ours} vs {expected}"
                );
            }
            assert!(seen > 0, "{q} matches");
        }
    }
}
