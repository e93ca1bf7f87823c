//! The pieces of the three JSON text forms of `core/canonical.py` (`canonical_json`,
//! `js_stringify`, `file_text`) that do not touch Python: string literals as
//! `JSON.stringify` writes them, number text, and the two key orders. The walk over a
//! Python value that puts them together is `python_writer.rs`.
//!
//! Keys arrive as `Option<&str>`: `None` is a key that is not valid UTF-8 (a Python `str`
//! holding a lone surrogate), which is never an array index and never printable ASCII.

use std::cmp::Ordering;

/// The largest array index (2**32 - 2): `"4294967295"` is an ordinary key.
const ARRAY_INDEX_MAX: u64 = (1 << 32) - 2;

/// 2**53: integers up to this magnitude print as themselves.
const TWO_53: u64 = 1 << 53;

/// The JSON string literal of `text`, as `JSON.stringify` writes it: `\"`, `\\`, the short
/// escapes `\b \f \n \r \t`, other controls as lowercase `\u00xx`, the rest as itself.
pub fn push_string(out: &mut String, text: &str) {
    out.push('"');
    push_string_body(out, text);
    out.push('"');
}

fn push_string_body(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    let mut start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0C => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1F => "",
            _ => continue,
        };
        // Every byte escaped is ASCII, so `at` is a character boundary.
        out.push_str(&text[start..at]);
        if escape.is_empty() {
            push_unit_escape(out, u32::from(byte));
        } else {
            out.push_str(escape);
        }
        start = at + 1;
    }
    out.push_str(&text[start..]);
}

fn push_unit_escape(out: &mut String, unit: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(char::from(HEX[((unit >> shift) & 0xF) as usize]));
    }
}

/// The JSON string literal of a Python `str` that holds surrogates, given as the bytes
/// `str.encode("utf-8", "surrogatepass")` returns (each surrogate as its own three-byte
/// sequence). As in JavaScript, a high surrogate followed by a low one is one astral
/// character; any other surrogate is written `\udxxx`. `None` if `bytes` is not of that form.
pub fn push_surrogate_string(out: &mut String, bytes: &[u8]) -> Option<()> {
    out.push('"');
    let mut rest = bytes;
    while !rest.is_empty() {
        // In UTF-8, 0xED is followed by 0x80..=0x9F; 0xA0..=0xBF after it is a surrogate.
        let cut = rest
            .windows(2)
            .position(|pair| pair[0] == 0xED && pair[1] >= 0xA0)
            .unwrap_or(rest.len());
        push_string_body(out, std::str::from_utf8(&rest[..cut]).ok()?);
        rest = &rest[cut..];
        if rest.is_empty() {
            break;
        }
        let unit = surrogate(rest)?;
        let low = rest
            .get(3..)
            .and_then(surrogate)
            .filter(|low| *low >= 0xDC00);
        match low {
            Some(low) if unit < 0xDC00 => {
                let astral = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                out.push(char::from_u32(astral)?);
                rest = &rest[6..];
            }
            _ => {
                push_unit_escape(out, unit);
                rest = &rest[3..];
            }
        }
    }
    out.push('"');
    Some(())
}

/// The surrogate encoded by the first three bytes, if they encode one.
fn surrogate(bytes: &[u8]) -> Option<u32> {
    match bytes {
        [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, ..] => {
            Some(0xD000 | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F))
        }
        _ => None,
    }
}

/// `JSON.stringify` of a Python `int` that fits 64 bits: itself up to 2**53 in magnitude,
/// beyond that the nearest double (which is what JavaScript holds) as JavaScript prints it.
pub fn push_int(out: &mut String, value: i64) {
    if value.unsigned_abs() <= TWO_53 {
        out.push_str(itoa(value, &mut [0; 20]));
    } else {
        // `as` rounds to the nearest double, ties to even, as Python's float(int) does.
        push_double(out, value as f64);
    }
}

fn itoa(value: i64, buffer: &mut [u8; 20]) -> &str {
    let mut magnitude = value.unsigned_abs();
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if value < 0 {
        at -= 1;
        buffer[at] = b'-';
    }
    std::str::from_utf8(&buffer[at..]).unwrap_or("0")
}

/// `JSON.stringify` of a double: JavaScript's number text, `null` when not finite.
pub fn push_double(out: &mut String, value: f64) {
    if value.is_finite() {
        out.push_str(ryu_js::Buffer::new().format_finite(value));
    } else {
        out.push_str("null");
    }
}

/// The value of a canonical array-index key (`"0"`, `"7"`, `"10"`, ... up to 2**32 - 2):
/// digits only, no leading zero, as `jscompat.is_array_index_key`.
pub fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes[0] == b'0' && bytes.len() > 1 {
        return None;
    }
    let value: u64 = key.parse().ok()?;
    if value <= ARRAY_INDEX_MAX {
        u32::try_from(value).ok()
    } else {
        None
    }
}

/// Positions of `keys` in JavaScript's own-key order: array-index keys ascending, then the
/// others in insertion order (`jscompat.js_own_keys`).
pub fn own_order(keys: &[Option<&str>]) -> Vec<usize> {
    let (mut index, rest) = split_index_keys(keys);
    if index.is_empty() {
        return rest;
    }
    index.sort_unstable();
    index.into_iter().map(|(_, at)| at).chain(rest).collect()
}

/// Positions of `keys` in the canonical order (`canonical._order_keys`): array-index keys
/// ascending, then the others as ICU collates them. The native core knows ICU's order for
/// printable ASCII only (`core/ascii_collation.py`); `None` when two or more of the other
/// keys are not all printable ASCII (the Python writer asks ICU then).
pub fn canonical_order(keys: &[Option<&str>]) -> Option<Vec<usize>> {
    if keys.len() <= 1 {
        return Some((0..keys.len()).collect());
    }
    let (mut index, mut rest) = split_index_keys(keys);
    if rest.len() > 1 {
        let mut texts = Vec::with_capacity(rest.len());
        for &at in &rest {
            texts.push((keys[at].filter(|key| is_printable_ascii(key))?, at));
        }
        // Distinct keys never collate equal, so an unstable sort is exact.
        texts.sort_unstable_by(|a, b| ascii_collation_cmp(a.0, b.0));
        rest = texts.into_iter().map(|(_, at)| at).collect();
    }
    index.sort_unstable();
    Some(index.into_iter().map(|(_, at)| at).chain(rest).collect())
}

/// `((index value, position) of the array-index keys, positions of the others)`.
fn split_index_keys(keys: &[Option<&str>]) -> (Vec<(u32, usize)>, Vec<usize>) {
    let mut index = Vec::new();
    let mut rest = Vec::with_capacity(keys.len());
    for (at, key) in keys.iter().enumerate() {
        match key.and_then(array_index) {
            Some(value) => index.push((value, at)),
            None => rest.push(at),
        }
    }
    (index, rest)
}

/// Whether every character is printable ASCII (U+0020-U+007E), as Python's
/// `isascii() and isprintable()`.
pub fn is_printable_ascii(text: &str) -> bool {
    text.bytes().all(|byte| (0x20..0x7F).contains(&byte))
}

/// ICU's order of printable ASCII (`ascii_collation._ASCII_COLLATION_ORDER`): every
/// character has one primary weight, in this order, a letter's two cases sharing one.
const COLLATION_ORDER: &[u8; 95] =
    b" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ";

/// The primary weight of each byte (a byte outside the table weighs its own value, as
/// `str.translate` leaves it).
const PRIMARY: [u8; 128] = primary_table();

const fn primary_table() -> [u8; 128] {
    let mut table = [0u8; 128];
    let mut at = 0;
    while at < 128 {
        table[at] = at as u8;
        at += 1;
    }
    let mut weight = 0x20u8;
    let mut rank = 0;
    while rank < COLLATION_ORDER.len() {
        let byte = COLLATION_ORDER[rank];
        if byte.is_ascii_uppercase() {
            table[byte as usize] = table[byte.to_ascii_lowercase() as usize];
        } else {
            weight += 1;
            table[byte as usize] = weight;
        }
        rank += 1;
    }
    table
}

/// ICU's order of two printable ASCII strings (`ascii_collation_key`): their primary
/// weights, then, those equal, the case of each letter with lowercase first.
pub fn ascii_collation_cmp(a: &str, b: &str) -> Ordering {
    let primary = |byte: u8| PRIMARY[usize::from(byte & 0x7F)];
    // The tertiary level: `str.swapcase`, so that lowercase sorts first.
    let swapped = |byte: u8| {
        if byte.is_ascii_alphabetic() {
            byte ^ 0x20
        } else {
            byte
        }
    };
    let (a, b) = (a.bytes(), b.bytes());
    a.clone()
        .map(primary)
        .cmp(b.clone().map(primary))
        .then_with(|| a.map(swapped).cmp(b.map(swapped)))
}

/// The lowercase hex SHA-256 of `data`: `stable_json_hash` of a canonical text, computed
/// beside it so that a process that hashes nothing else never loads `hashlib` (issue 32).
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;

    hex_digest(sha2::Sha256::new_with_prefix(data))
}

/// The lowercase hex of what `hasher` has hashed (for a text hashed piece by piece).
pub fn hex_digest(hasher: sha2::Sha256) -> String {
    use sha2::Digest;
    use std::fmt::Write;

    let mut out = String::with_capacity(64);
    for byte in hasher.finalize() {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(text: &str) -> String {
        let mut out = String::new();
        push_string(&mut out, text);
        out
    }

    fn surrogate_literal(bytes: &[u8]) -> Option<String> {
        let mut out = String::new();
        push_surrogate_string(&mut out, bytes).map(|()| out)
    }

    #[test]
    fn strings_as_json_stringify() {
        assert_eq!(literal("plain é 😀"), "\"plain é 😀\"");
        assert_eq!(literal("\"\\/"), "\"\\\"\\\\/\"");
        assert_eq!(
            literal("\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}\u{2028}"),
            "\"\\b\\f\\n\\r\\t\\u0000\\u001f\u{7f}\u{2028}\""
        );
    }

    #[test]
    fn lone_surrogates_are_escaped_and_pairs_joined() {
        // "\ud800" as surrogatepass writes it
        assert_eq!(
            surrogate_literal(b"a\xed\xa0\x80b").as_deref(),
            Some("\"a\\ud800b\"")
        );
        // "\ud83d\ude00": one astral character in JavaScript
        assert_eq!(
            surrogate_literal(b"\xed\xa0\xbd\xed\xb8\x80").as_deref(),
            Some("\"\u{1F600}\"")
        );
        // "\ud800\ud800\udc00", "\udc00\ud800", "\udbff" at the end
        assert_eq!(
            surrogate_literal(b"\xed\xa0\x80\xed\xa0\x80\xed\xb0\x80\n").as_deref(),
            Some("\"\\ud800\u{10000}\\n\"")
        );
        assert_eq!(
            surrogate_literal(b"\xed\xb0\x80\xed\xa0\x80\xed\xaf\xbf").as_deref(),
            Some("\"\\udc00\\ud800\\udbff\"")
        );
        assert_eq!(surrogate_literal(b"\xff"), None);
    }

    #[test]
    fn numbers_as_javascript() {
        let text = |value: i64| {
            let mut out = String::new();
            push_int(&mut out, value);
            out
        };
        assert_eq!(text(0), "0");
        assert_eq!(text(-17), "-17");
        assert_eq!(text(i64::MIN), "-9223372036854776000");
        assert_eq!(text(1 << 53), "9007199254740992");
        assert_eq!(text((1 << 53) + 1), "9007199254740992");
        assert_eq!(text(-(1 << 53) - 3), "-9007199254740996");
        let double = |value: f64| {
            let mut out = String::new();
            push_double(&mut out, value);
            out
        };
        assert_eq!(double(-0.0), "0");
        assert_eq!(double(1e21), "1e+21");
        assert_eq!(double(1e-7), "1e-7");
        assert_eq!(double(123.0), "123");
        assert_eq!(double(f64::NAN), "null");
        assert_eq!(double(f64::NEG_INFINITY), "null");
    }

    #[test]
    fn array_index_keys() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("4294967294"), Some(4_294_967_294));
        for key in [
            "",
            "01",
            "-1",
            "4294967295",
            "99999999999",
            "1e3",
            "\u{663}",
            " 1",
        ] {
            assert_eq!(array_index(key), None, "{key:?}");
        }
    }

    #[test]
    fn own_key_order() {
        let keys = [
            Some("b"),
            Some("10"),
            None,
            Some("01"),
            Some("2"),
            Some("a"),
        ];
        assert_eq!(own_order(&keys), vec![4, 1, 0, 2, 3, 5]);
    }

    #[test]
    fn canonical_key_order() {
        let keys = [
            Some("b"),
            Some("10"),
            Some("B"),
            Some("a_b"),
            Some("2"),
            Some("ab"),
        ];
        assert_eq!(canonical_order(&keys), Some(vec![4, 1, 3, 5, 0, 2]));
        // ICU decides these: the Python writer takes them
        assert_eq!(canonical_order(&[Some("é"), Some("e")]), None);
        assert_eq!(canonical_order(&[Some("a\t"), Some("b")]), None);
        assert_eq!(canonical_order(&[None, Some("b")]), None);
        // one other key needs no collation
        assert_eq!(canonical_order(&[Some("é"), Some("1")]), Some(vec![1, 0]));
        assert_eq!(canonical_order(&[None]), Some(vec![0]));
    }

    #[test]
    fn ascii_collation_as_icu() {
        let mut words = vec![
            "b", "B", "a", "A", "_", "-", "1", "~", "$", "a b", "ab", "aB", "Ab",
        ];
        words.sort_by(|a, b| ascii_collation_cmp(a, b));
        assert_eq!(
            words,
            ["_", "-", "~", "$", "1", "a", "A", "a b", "ab", "aB", "Ab", "b", "B"]
        );
    }

    #[test]
    fn sha256_is_the_spec_s_digest() {
        // spec §2.7: the stable hash of [] (EMPTY_ARRAY_DIGEST in core/canonical.py).
        assert_eq!(
            sha256_hex(b"[]"),
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
        );
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
