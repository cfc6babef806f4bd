//! Small helpers shared by the engine: timestamps, HTML escaping, stable
//! ids, hex, JSON arguments of the JSON entry points.

use crate::error::{Error, Result};
use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, poisoned or not: a panic while holding the lock aborts
/// in the browser (panic = "abort"), and natively what the engine keeps
/// behind its locks stays consistent.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// JSON text with each `\uXXXX` escape of a lone surrogate (one that is
/// not half of a pair, which no UTF-8 text can hold) replaced by `\ufffd`,
/// and how many were replaced. Backslashes that escape themselves are
/// respected; text without such escapes is borrowed as it is.
///
/// ```
/// use gitsense_engine::util::repair_lone_surrogates;
/// let (text, n) = repair_lone_surrogates(r#"["a\ud800b", "\ud83d\ude00", "\\ud800"]"#);
/// assert_eq!((text.as_ref(), n), (r#"["a\ufffdb", "\ud83d\ude00", "\\ud800"]"#, 1));
/// ```
pub fn repair_lone_surrogates(json: &str) -> (std::borrow::Cow<'_, str>, usize) {
    let bytes = json.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        let hex = json.get(at + 2..at + 6)?;
        (bytes.get(at + 1) == Some(&b'u')).then(|| u16::from_str_radix(hex, 16).ok())?
    };
    let is_high = |u: u16| (0xD800..0xDC00).contains(&u);
    let is_low = |u: u16| (0xDC00..0xE000).contains(&u);
    let mut lone = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match unit(i) {
            Some(u)
                if is_high(u)
                    && bytes.get(i + 6) == Some(&b'\\')
                    && unit(i + 6).is_some_and(is_low) =>
            {
                i += 12
            }
            Some(u) if is_high(u) || is_low(u) => {
                lone.push(i);
                i += 6;
            }
            Some(_) => i += 6,
            None => i += 2,
        }
    }
    if lone.is_empty() {
        return (std::borrow::Cow::Borrowed(json), 0);
    }
    let mut out = String::with_capacity(json.len());
    let mut from = 0;
    for &at in &lone {
        out.push_str(&json[from..at]);
        out.push_str("\\ufffd");
        from = at + 6;
    }
    out.push_str(&json[from..]);
    (std::borrow::Cow::Owned(out), lone.len())
}

/// Formats Unix seconds as an ISO 8601 UTC timestamp (`2025-06-16T18:56:00Z`).
pub fn iso8601_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Longest piece of input a message quotes, in characters.
pub(crate) const ECHO_MAX_CHARS: usize = 80;

/// Input as a message (a warning, an error) quotes it: control characters
/// escaped, so it stays on one line, and cut to `ECHO_MAX_CHARS`
/// characters with its full length noted, so a huge name cannot flood the
/// output.
///
/// ```
/// use gitsense_engine::util::echo;
/// assert_eq!(echo("a\nb"), "a\\nb");
/// assert!(echo(&"x".repeat(1000)).ends_with("… (1000 characters)"));
/// ```
pub fn echo(s: &str) -> String {
    let n = s.chars().count();
    let mut out = String::new();
    for c in s.chars().take(ECHO_MAX_CHARS) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if n > ECHO_MAX_CHARS {
        out.push_str(&format!("… ({n} characters)"));
    }
    out
}

/// Lowercase hex of a byte string (digests, content-addressed names).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses a JSON argument of a JSON entry point (`options.invalid` when it
/// is not what `what` names); blank text means the default.
pub fn from_json_arg<T: serde::de::DeserializeOwned + Default>(
    json: &str,
    what: &str,
) -> Result<T> {
    if json.trim().is_empty() {
        return Ok(T::default());
    }
    json_arg(json, what)
}

/// Parses a required JSON argument (`options.invalid` when it is not what
/// `what` names).
pub(crate) fn json_arg<T: serde::de::DeserializeOwned>(json: &str, what: &str) -> Result<T> {
    serde_json::from_str(json)
        .map_err(|e| Error::new("options.invalid", format!("bad {what}: {e}")))
}

/// A UUID derived from `key` (SHA-256, RFC 9562 version 8 "custom"), so
/// importers can give records without one a stable id: the same key always
/// yields the same UUID.
pub fn stable_uuid(key: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(key.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x80; // version 8
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 9562 variant
    let h = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_format_as_utc() {
        assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601_utc(1_764_439_579), "2025-11-29T18:06:19Z");
    }

    #[test]
    fn hex_is_lowercase_and_padded() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            escape_html("<a href='x'>&"),
            "&lt;a href=&#39;x&#39;&gt;&amp;"
        );
    }

    #[test]
    fn stable_uuids_depend_only_on_their_key() {
        let a = stable_uuid("sharegpt:0:abc:1:0");
        assert_eq!(a, stable_uuid("sharegpt:0:abc:1:0"));
        assert_ne!(a, stable_uuid("sharegpt:0:abc:1:1"));
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "8");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
    }
}
