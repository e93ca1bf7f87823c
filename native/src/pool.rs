//! One session window's observation tally for the pool (spec §6.2), as `WindowTally` in
//! `core/pool_window.py` and `summarize_window` in `core/pool.py` decide it.
//!
//! Each observation becomes its identity `ref NUL key NUL typeof:String(value)` (spec
//! §2.7.4, JavaScript number text from `jsnum`). With `drop_unloadable`, an observation
//! whose ref or key is empty, holds NUL or has JavaScript trim whitespace around it, or
//! whose value is a number JSON cannot write, is dropped and counted. A string value
//! longer than the byte limit (WTF-8 bytes: a lone surrogate counts 3) still identifies
//! the window but is not counted into the pool. The summary gives the counts in
//! first-seen order and every observation's identity in UTF-16 code-unit order (the
//! window's digest hashes them; `WindowTally::write_digest` writes the JSON text of that
//! array as orjson would).

use crate::evidence::{FastMap, FastSet};
use std::cmp::Ordering;

use crate::evidence::value_key_into;
use crate::json::{is_js_whitespace, JsString, Number, Value};

/// One distinct identity: its observations, its summed count and whether it is oversized.
#[derive(Clone, Debug)]
pub struct Entry {
    pub identity: Vec<u8>,
    pub count: u64,
    pub seen: u64,
    pub oversized: bool,
    /// The identity is UTF-8 (it holds no lone surrogate).
    pub utf8: bool,
}

/// The tally of one window (see the module's comment).
#[derive(Debug)]
pub struct WindowTally {
    drop_unloadable: bool,
    limit: Option<i64>,
    pub entries: Vec<Entry>,
    index: FastMap<Vec<u8>, usize>,
    /// The identity is built here, so one met before costs no allocation.
    scratch: Vec<u8>,
    pub dropped: u64,
    pub oversized: u64,
}

/// Whether a ref or key would load back from a pool file unchanged: not empty, no NUL, no
/// JavaScript trim whitespace at either end.
pub fn loadable_text(text: &JsString) -> bool {
    let bytes = text.as_wtf8();
    if bytes.is_empty() || bytes.contains(&0) {
        return false;
    }
    let mut points = text.code_points();
    let first = points.next();
    let last = points.last().or(first);
    let trimmed = |cp: Option<u32>| cp.and_then(char::from_u32).is_some_and(is_js_whitespace);
    !trimmed(first) && !trimmed(last)
}

/// `unwritable_number`: a number JSON cannot write (±Infinity, however it was spelled).
pub fn unwritable_number(value: &Value) -> bool {
    matches!(value, Value::Number(n) if !n.to_f64().is_finite())
        && !matches!(value, Value::Number(Number::Int(_) | Number::UInt(_)))
}

impl WindowTally {
    /// `max_value_bytes`: `None` for no bound (the reference).
    pub fn new(drop_unloadable: bool, max_value_bytes: Option<i64>) -> Self {
        WindowTally {
            drop_unloadable,
            limit: max_value_bytes,
            entries: Vec::new(),
            index: FastMap::default(),
            scratch: Vec::new(),
            dropped: 0,
            oversized: 0,
        }
    }

    /// Hears one observation of weight `count`.
    pub fn add(&mut self, reference: &JsString, key: &JsString, value: &Value, count: u64) {
        if self.drop_unloadable {
            let texts = loadable_text(reference) && loadable_text(key);
            if !texts || unwritable_number(value) {
                self.dropped += 1;
                return;
            }
        }
        let identity = &mut self.scratch;
        identity.clear();
        identity.extend_from_slice(reference.as_wtf8());
        identity.push(0);
        identity.extend_from_slice(key.as_wtf8());
        identity.push(0);
        if !value_key_into(identity, value) {
            // Never observed (the harvest keeps primitives only); spelled as JavaScript would.
            identity.extend_from_slice(b"object:");
            if matches!(value, Value::Null) {
                identity.extend_from_slice(b"null");
            }
        }
        let oversized = match (self.limit, value) {
            (Some(limit), Value::String(text)) => text.as_wtf8().len() as i128 > i128::from(limit),
            _ => false,
        };
        if oversized {
            self.oversized += 1;
        }
        match self.index.get(self.scratch.as_slice()) {
            Some(&at) => {
                let entry = &mut self.entries[at];
                entry.count += count;
                entry.seen += 1;
            }
            None => {
                let identity = self.scratch.clone();
                self.index.insert(identity.clone(), self.entries.len());
                let utf8 = [reference, key].iter().all(|t| t.as_str().is_some())
                    && !matches!(value, Value::String(t) if t.as_str().is_none());
                self.entries.push(Entry {
                    identity,
                    utf8,
                    count,
                    seen: 1,
                    oversized,
                });
            }
        }
    }

    /// The positions of the entries in code-unit order of their identities (distinct, so
    /// an unstable sort gives the one order).
    pub fn sorted(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            compare_code_units(&self.entries[a].identity, &self.entries[b].identity)
        });
        order
    }

    /// The JSON text of the array of every observation's identity in code-unit order, as
    /// orjson writes it, handed to `sink` piece by piece; false (and nothing handed on) when
    /// an identity holds a lone surrogate (orjson refuses it, and the Python hashes the list
    /// its own way).
    fn write_digest(&self, sink: &mut impl FnMut(&[u8])) -> bool {
        if self.entries.iter().any(|entry| !entry.utf8) {
            return false;
        }
        sink(b"[");
        // One identity's text, written once and handed on for each of its observations.
        let mut item = Vec::new();
        for (rank, at) in self.sorted().into_iter().enumerate() {
            let entry = &self.entries[at];
            item.clear();
            item.push(b',');
            write_json_string(&mut item, &entry.identity);
            let first = usize::from(rank == 0);
            sink(&item[first..]);
            for _ in 1..entry.seen {
                sink(&item);
            }
        }
        sink(b"]");
        true
    }

    /// [`WindowTally::write_digest`]'s text (what the digest hashes), whole: for the tests.
    #[cfg(test)]
    pub fn digest_text(&self) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(self.entries.len() * 32 + 2);
        self.write_digest(&mut |piece| out.extend_from_slice(piece))
            .then_some(out)
    }

    /// The lowercase hex SHA-256 of [`WindowTally::write_digest`]'s text, without the text
    /// ever held whole (an identity holds up to 64 KiB and repeats for each observation).
    pub fn digest_hex(&self) -> Option<String> {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        if !self.write_digest(&mut |piece| hasher.update(piece)) {
            return None;
        }
        Some(crate::writer::hex_digest(hasher))
    }
}

/// A window's counts as the pool merges them: identity and count, in first-seen order
/// (the oversized identities left out), as `WindowSummary.counts` holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts(pub Vec<(Vec<u8>, i64)>);

impl WindowTally {
    /// The counts the pool merges, moved out of the tally.
    pub fn take_counts(&mut self) -> Counts {
        let entries = std::mem::take(&mut self.entries);
        self.index = FastMap::default();
        Counts(
            entries
                .into_iter()
                .filter(|e| !e.oversized)
                .map(|e| (e.identity, e.count as i64))
                .collect(),
        )
    }
}

impl Counts {
    /// The counts as bytes (`from_bytes` reads them back): each identity's length and count
    /// as little-endian `u32` and `i64`, then its bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (identity, count) in &self.0 {
            out.extend_from_slice(&(identity.len() as u32).to_le_bytes());
            out.extend_from_slice(&count.to_le_bytes());
            out.extend_from_slice(identity);
        }
        out
    }

    pub fn from_bytes(mut bytes: &[u8]) -> Option<Counts> {
        let mut items = Vec::new();
        while !bytes.is_empty() {
            let head = bytes.get(..12)?;
            let len = u32::from_le_bytes(head[..4].try_into().ok()?) as usize;
            let count = i64::from_le_bytes(head[4..].try_into().ok()?);
            let identity = bytes.get(12..12 + len)?;
            items.push((identity.to_vec(), count));
            bytes = &bytes[12 + len..];
        }
        Some(Counts(items))
    }
}

/// The pool keeps this many values of an entry (`POOL_TRACKED_VALUES`).
const TRACKED_VALUES: usize = 16;

/// One stored value: its count and, for a value the loaded pool held, its place among the
/// loaded values (the caller keeps them; a value merged in is rebuilt from its identity).
#[derive(Clone, Copy, Debug)]
pub struct Stored {
    pub count: i64,
    pub loaded: Option<usize>,
    /// When the value was stored: ties of two spellings of the same code units (a Python
    /// caller's surrogate pair and the astral character) keep a dict's order.
    made: u64,
}

#[derive(Debug)]
struct PoolEntry {
    reference: Vec<u8>,
    key: Vec<u8>,
    /// When the entry was made: the entries of a Python dict keep that order.
    made: u64,
    total: i64,
    values: FastMap<Vec<u8>, Stored>,
}

/// One entry of the pool as written: ref, key, total and the values, most counted first.
pub struct Row<'a> {
    pub reference: &'a [u8],
    pub key: &'a [u8],
    pub total: i64,
    pub values: Vec<(&'a [u8], Stored)>,
}

/// The pool's entries while windows merge into it, as `PoolMerger` in `core/pool.py`
/// keeps and changes them (the tracked sessions and baked digests stay in Python).
#[derive(Debug, Default)]
pub struct Entries {
    /// By ref and key, spelled `len(ref) ref key` so that no two pairs share a spelling.
    entries: FastMap<Vec<u8>, PoolEntry>,
    made: u64,
    scratch: Vec<u8>,
}

/// `text.partition(NUL)`: before the first NUL and after it (all and nothing without one).
fn partition(text: &[u8]) -> (&[u8], &[u8]) {
    match text.iter().position(|&b| b == 0) {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, &[]),
    }
}

/// The order the pool keeps values in: the larger count first, ties in code-unit order,
/// then in the order they were stored.
fn value_order(a: (&[u8], &Stored), b: (&[u8], &Stored)) -> Ordering {
    (b.1.count.cmp(&a.1.count))
        .then_with(|| compare_code_units(a.0, b.0))
        .then(a.1.made.cmp(&b.1.made))
}

impl Entries {
    fn spelling(&mut self, reference: &[u8], key: &[u8]) {
        self.scratch.clear();
        self.scratch
            .extend_from_slice(&(reference.len() as u64).to_le_bytes());
        self.scratch.extend_from_slice(reference);
        self.scratch.extend_from_slice(key);
    }

    /// An entry of the loaded pool (a later one of the same ref and key replaces it in place,
    /// as a dict's item does); `values` are `(identity, count, place among the loaded)`.
    pub fn load(
        &mut self,
        reference: &[u8],
        key: &[u8],
        total: i64,
        values: Vec<(Vec<u8>, i64, usize)>,
    ) {
        self.spelling(reference, key);
        let mut stored: FastMap<Vec<u8>, Stored> = FastMap::default();
        for (identity, count, at) in values {
            self.made += 1;
            let made = stored.get(&identity).map_or(self.made, |s| s.made);
            let loaded = Some(at);
            stored.insert(
                identity,
                Stored {
                    count,
                    loaded,
                    made,
                },
            );
        }
        let values = stored;
        if let Some(entry) = self.entries.get_mut(self.scratch.as_slice()) {
            (entry.total, entry.values) = (total, values);
            return;
        }
        self.made += 1;
        let entry = PoolEntry {
            reference: reference.to_vec(),
            key: key.to_vec(),
            made: self.made,
            total,
            values,
        };
        self.entries.insert(self.scratch.clone(), entry);
    }

    /// Merges a window's `fresh` counts over the `existing` ones of the same file (none when
    /// the file is new to the pool): each identity's difference changes its entry, in the
    /// order `PoolMerger.add` takes them, and every entry changed keeps its top values.
    pub fn apply(&mut self, fresh: &Counts, existing: Option<&Counts>) {
        let mut deltas: Vec<(&[u8], i64)> = Vec::with_capacity(fresh.0.len());
        match existing {
            None => deltas.extend(fresh.0.iter().map(|(id, n)| (id.as_slice(), *n))),
            Some(old) => {
                let before: FastMap<&[u8], i64> =
                    old.0.iter().map(|(id, n)| (id.as_slice(), *n)).collect();
                let now: FastSet<&[u8]> = fresh.0.iter().map(|(id, _)| id.as_slice()).collect();
                for (identity, count) in &fresh.0 {
                    let had = before.get(identity.as_slice()).copied().unwrap_or(0);
                    deltas.push((identity, count - had));
                }
                for (identity, count) in &old.0 {
                    if !now.contains(identity.as_slice()) {
                        deltas.push((identity, -count));
                    }
                }
            }
        }
        let mut touched: FastSet<Vec<u8>> = FastSet::default();
        for (identity, delta) in deltas {
            if delta == 0 {
                continue;
            }
            let (reference, rest) = partition(identity);
            let (key, value) = partition(rest);
            self.spelling(reference, key);
            if !self.entries.contains_key(self.scratch.as_slice()) {
                self.made += 1;
                let entry = PoolEntry {
                    reference: reference.to_vec(),
                    key: key.to_vec(),
                    made: self.made,
                    total: 0,
                    values: FastMap::default(),
                };
                self.entries.insert(self.scratch.clone(), entry);
            }
            let entry = self
                .entries
                .get_mut(self.scratch.as_slice())
                .expect("made above");
            let slot = entry.values.get_mut(value);
            let new = slot.as_ref().map_or(0, |s| s.count) + delta;
            entry.total += delta;
            match slot {
                Some(slot) if new > 0 => slot.count = new,
                Some(_) => {
                    entry.values.remove(value);
                }
                None if new > 0 => {
                    self.made += 1;
                    let stored = Stored {
                        count: new,
                        loaded: None,
                        made: self.made,
                    };
                    entry.values.insert(value.to_vec(), stored);
                }
                None => {}
            }
            if entry.values.is_empty() && entry.total <= 0 {
                self.entries.remove(self.scratch.as_slice());
            } else if !touched.contains(self.scratch.as_slice()) {
                touched.insert(self.scratch.clone());
            }
        }
        for spelling in touched {
            if let Some(entry) = self.entries.get_mut(&spelling) {
                evict(entry);
            }
        }
    }

    /// The entries as the pool file lists them: in code-unit order of `ref NUL key` (ties in
    /// the order they were made), each one's values most counted first.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let mut order: Vec<(Vec<u8>, &PoolEntry)> = self
            .entries
            .values()
            .map(|entry| ([&entry.reference[..], b"\0", &entry.key].concat(), entry))
            .collect();
        order.sort_by(|a, b| compare_code_units(&a.0, &b.0).then(a.1.made.cmp(&b.1.made)));
        order
            .into_iter()
            .map(|(_, entry)| {
                let mut values: Vec<(&[u8], Stored)> = entry
                    .values
                    .iter()
                    .map(|(identity, stored)| (identity.as_slice(), *stored))
                    .collect();
                values.sort_by(|a, b| value_order((a.0, &a.1), (b.0, &b.1)));
                Row {
                    reference: &entry.reference,
                    key: &entry.key,
                    total: entry.total,
                    values,
                }
            })
            .collect()
    }
}

/// Keeps an entry's [`TRACKED_VALUES`] values (`_evict` in `core/pool.py`): the others
/// leave, and their counts leave the total.
fn evict(entry: &mut PoolEntry) {
    if entry.values.len() <= TRACKED_VALUES {
        return;
    }
    let mut ranked: Vec<(Vec<u8>, Stored)> = entry
        .values
        .iter()
        .map(|(identity, stored)| (identity.clone(), *stored))
        .collect();
    ranked.select_nth_unstable_by(TRACKED_VALUES, |a, b| {
        value_order((&a.0, &a.1), (&b.0, &b.1))
    });
    for (identity, stored) in &ranked[TRACKED_VALUES..] {
        entry.total -= stored.count;
        entry.values.remove(identity);
    }
}

/// A JSON string of UTF-8 bytes with orjson's (and ES2019's) escapes; runs that need none
/// are copied whole.
fn write_json_string(out: &mut Vec<u8>, text: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut rest = text;
    while let Some(at) = rest
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
    {
        out.extend_from_slice(&rest[..at]);
        let b = rest[at];
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
        }
        rest = &rest[at + 1..];
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// UTF-16 code units of WTF-8 bytes (lone surrogates included).
fn code_units(bytes: &[u8]) -> impl Iterator<Item = u16> + '_ {
    let mut at = 0;
    let mut pending: Option<u16> = None;
    std::iter::from_fn(move || {
        if let Some(low) = pending.take() {
            return Some(low);
        }
        let first = u32::from(*bytes.get(at)?);
        let (len, init) = match first {
            0x00..=0x7F => (1, first),
            0xC0..=0xDF => (2, first & 0x1F),
            0xE0..=0xEF => (3, first & 0x0F),
            _ => (4, first & 0x07),
        };
        let end = (at + len).min(bytes.len());
        let cp = bytes[at + 1..end]
            .iter()
            .fold(init, |cp, &b| (cp << 6) | (u32::from(b) & 0x3F));
        at = end;
        if cp > 0xFFFF {
            let v = cp - 0x10000;
            pending = Some(0xDC00 + (v & 0x3FF) as u16);
            Some(0xD800 + (v >> 10) as u16)
        } else {
            Some(cp as u16)
        }
    })
}

/// JavaScript's `<` on strings (UTF-16 code units) for WTF-8 bytes. Byte order is
/// code-point order, which differs from code-unit order only where a four-byte sequence
/// (an astral character) meets a three-byte one from U+D000 up; only those comparisons
/// decode.
/// How many bytes `a` and `b` begin with alike, found 32 bytes at a time (identities of one
/// ref and key share their prefix, and often a long path after it).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let mut same = 0;
    for (x, y) in a.chunks_exact(BLOCK).zip(b.chunks_exact(BLOCK)) {
        if x != y {
            break;
        }
        same += BLOCK;
    }
    same + a[same..]
        .iter()
        .zip(&b[same..])
        .take_while(|(x, y)| x == y)
        .count()
}

pub fn compare_code_units(a: &[u8], b: &[u8]) -> Ordering {
    let same = common_prefix(a, b);
    if same == a.len() || same == b.len() {
        return a.len().cmp(&b.len());
    }
    // Back to the start of the character the first difference is in (equal so far).
    let mut start = same;
    while start > 0 && (a[start] & 0xC0) == 0x80 {
        start -= 1;
    }
    let (x, y) = (a[start], b[start]);
    let astral_meets_high =
        (x >= 0xF0 && (0xED..=0xEF).contains(&y)) || (y >= 0xF0 && (0xED..=0xEF).contains(&x));
    if astral_meets_high {
        return code_units(&a[start..]).cmp(code_units(&b[start..]));
    }
    a[same].cmp(&b[same])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn value(raw: &str) -> Value<'_> {
        parse(raw.as_bytes()).unwrap().value
    }

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn code_unit_order() {
        let words = [
            "",
            "a",
            "ab",
            "b",
            "\u{E000}",
            "\u{FFFF}",
            "\u{10000}",
            "\u{10FFFF}",
            "\u{D7FF}",
            "é",
            "\u{20AC}x",
            "\u{1F600}a",
            "\u{1F600}",
        ];
        for a in words {
            for b in words {
                assert_eq!(
                    compare_code_units(a.as_bytes(), b.as_bytes()),
                    units(a).cmp(&units(b)),
                    "{a:?} {b:?}"
                );
            }
        }
        // A lone low surrogate sorts above an astral character's high one.
        let lone = [0xED, 0xB0, 0x80];
        assert_eq!(
            compare_code_units(&lone, "\u{10000}".as_bytes()),
            Ordering::Greater
        );
    }

    #[test]
    fn identities_dropped_and_oversized() {
        let mut tally = WindowTally::new(true, Some(3));
        let text = |s: &str| JsString::from(s);
        tally.add(&text("r"), &text("k"), &value("\"abcd\""), 1);
        tally.add(&text("r"), &text("k"), &value("\"ab\""), 2);
        tally.add(&text("r"), &text(" k"), &value("1"), 1);
        tally.add(&text(""), &text("k"), &value("1"), 1);
        tally.add(&text("r"), &text("k"), &value("1e400"), 1);
        tally.add(&text("r"), &text("k"), &value("1e21"), 1);
        tally.add(&text("r"), &text("k"), &value("\"ab\""), 1);
        assert_eq!((tally.dropped, tally.oversized), (3, 1));
        let hex = crate::writer::sha256_hex(&tally.digest_text().unwrap());
        assert_eq!(tally.digest_hex(), Some(hex));
        let text = String::from_utf8(tally.digest_text().unwrap()).unwrap();
        assert_eq!(
            text,
            r#"["r\u0000k\u0000number:1e+21","r\u0000k\u0000string:ab","r\u0000k\u0000string:ab","r\u0000k\u0000string:abcd"]"#
        );
        assert_eq!(tally.entries[1].count, 3);
    }

    #[test]
    fn counts_round_trip_as_bytes() {
        let counts = Counts(vec![
            (b"r\0k\0string:a".to_vec(), 3),
            (vec![0xED, 0xA0, 0x80], 1),
        ]);
        assert_eq!(Counts::from_bytes(&counts.to_bytes()), Some(counts.clone()));
        let bytes = counts.to_bytes();
        assert_eq!(Counts::from_bytes(&bytes[..bytes.len() - 1]), None);
        assert_eq!(Counts::from_bytes(&[]), Some(Counts::default()));
    }

    #[test]
    fn entries_merge_retract_and_keep_sixteen() {
        let id = |n: usize| format!("r\0k\0number:{n}").into_bytes();
        let mut entries = Entries::default();
        let first = Counts((0..20).map(|n| (id(n), 1 + n as i64)).collect());
        entries.apply(&first, None);
        let rows = entries.rows();
        assert_eq!(rows.len(), 1);
        // The four least counted values left, and their counts left the total.
        assert_eq!(rows[0].values.len(), 16);
        assert_eq!(rows[0].values[0].0, b"number:19");
        assert_eq!(rows[0].total, (5..=20).sum::<i64>());
        // The file rewritten without value 0 (evicted already): its retraction still
        // subtracts from the total (the spec's drift, kept).
        let again = Counts((1..20).map(|n| (id(n), 1 + n as i64)).collect());
        entries.apply(&again, Some(&first));
        assert_eq!(entries.rows()[0].total, (5..=20).sum::<i64>() - 1);
        // Everything retracted: the entry goes.
        entries.apply(&Counts::default(), Some(&again));
        assert!(entries.rows().is_empty());
    }
}
