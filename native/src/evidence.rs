//! The proposals' evidence of one input (spec §5.2, §5.4, §5.5), as `ProposalEvidence` in
//! `core/proposals.py` accumulates it: value tallies per `(ref, key)`, argument key sets
//! per ref (the overload clusters) and the sequence windows of successful calls.
//!
//! It owns its data and hands it out finished ([`Evidence`]'s fields, in first-seen
//! order); the Python merges it into a `ProposalEvidence` exactly as it merges the evidence
//! of a file read elsewhere. Strings are WTF-8 bytes (see [`JsString`]).

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use crate::meter::WordHasher;

use crate::audit::is_primitive;
use crate::jsnum::number_text;
use crate::json::{JsString, Number, Value};

/// A parameter with more distinct values than this is never proposed as an enum: its
/// tally forgets its values and keeps counting (`ENUM_MAX_DISTINCT`).
pub const ENUM_MAX_DISTINCT: usize = 8;
pub const FUSE_MIN_SEQUENCE_LENGTH: usize = 3;
pub const FUSE_MAX_SEQUENCE_LENGTH: usize = 6;
pub const FUSE_MIN_EXECUTIONS: usize = 3;
/// `"→"`, the join of a sequence's identity.
const SEQUENCE_JOIN: &str = "\u{2192}";

/// `typeof(v) + ":" + String(v)` of a primitive (`value_key` in `core/jscompat.py`), as
/// WTF-8 bytes; `None` for null, arrays and objects (never observed).
pub fn value_key(value: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    value_key_into(&mut out, value).then_some(out)
}

/// [`value_key`] appended to `out`; false (nothing written) for null, arrays and objects.
pub fn value_key_into(out: &mut Vec<u8>, value: &Value) -> bool {
    match value {
        Value::String(text) => {
            out.extend_from_slice(b"string:");
            out.extend_from_slice(text.as_wtf8());
        }
        Value::Number(number) => {
            out.extend_from_slice(b"number:");
            match number {
                // The common case without the formatter's buffer.
                Number::Int(v) if v.unsigned_abs() <= 1 << 53 => {
                    out.extend_from_slice(v.to_string().as_bytes())
                }
                other => out.extend_from_slice(number_text(other).as_bytes()),
            }
        }
        Value::Bool(true) => out.extend_from_slice(b"boolean:true"),
        Value::Bool(false) => out.extend_from_slice(b"boolean:false"),
        _ => return false,
    }
    true
}

/// Whether two primitives are the same Python value (type and bits: `-0.0` is not `0.0`).
fn same_python_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(Number::Float(x)), Value::Number(Number::Float(y))) => {
            x.to_bits() == y.to_bits()
        }
        _ => a == b,
    }
}

/// Per `(ref, key)`: each distinct value's identity with the last value seen and its
/// count, in first-seen order, and the total (`_Tally`).
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub total: u64,
    pub overflowed: bool,
    pub counts: Vec<(Vec<u8>, Value<'static>, u64)>,
}

impl Tally {
    /// `_Tally.add(value, 1)`.
    pub fn add(&mut self, value: &Value) {
        self.total += 1;
        if self.overflowed {
            return;
        }
        let Some(identity) = value_key(value) else {
            return;
        };
        // At most ENUM_MAX_DISTINCT entries: a scan is as fast as a hash.
        if let Some(slot) = self.counts.iter_mut().find(|slot| slot.0 == identity) {
            // The entry keeps its first-seen position; the value is the last one seen.
            if !same_python_value(&slot.1, value) {
                slot.1 = value.clone().into_owned();
            }
            slot.2 += 1;
            return;
        }
        self.counts.push((identity, value.clone().into_owned(), 1));
        if self.counts.len() > ENUM_MAX_DISTINCT {
            self.overflowed = true;
            self.counts.clear();
        }
    }
}

/// One sequence window: its refs, its occurrences and up to [`FUSE_MIN_EXECUTIONS`]
/// distinct executions (numbered from 0 in this evidence) that contain it.
#[derive(Clone, Debug)]
pub struct Sequence {
    pub identity: Vec<u8>,
    pub window: Vec<Vec<u8>>,
    pub occurrences: u64,
    pub executions: Vec<u64>,
}

/// The maps of the tallies: their keys are byte strings, hashed a word at a time.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;
pub type FastSet<K> = HashSet<K, BuildHasherDefault<WordHasher>>;

/// WTF-8 text (a ref, a key, an identity).
pub type Text = Vec<u8>;
/// A ref's argument key sets as the calls spelled them, with their calls.
pub type KeySets = Vec<(Vec<Text>, u64)>;

/// One operation as the evidence reads it.
#[derive(Clone, Copy, Debug)]
pub struct Operation<'a> {
    pub reference: &'a JsString<'a>,
    pub args: &'a crate::json::Object<'a>,
    pub succeeded: bool,
}

/// The evidence of one input (see the module's comment).
#[derive(Debug, Default)]
pub struct Evidence {
    /// Tally the top-level primitive trace arguments too (`trace_values`).
    pub trace_values: bool,
    /// Executions heard.
    pub executions: u64,
    /// The number the next execution gets: `numbering | file_executions`. A file's own
    /// evidence numbers from 0 (`numbering` 0); evidence carried through a file's scan
    /// ([`Evidence::number_from`]) numbers that file's executions `origin << 32 | n`.
    numbering: u64,
    file_executions: u64,
    pub tallies: Vec<((Text, Text), Tally)>,
    /// `ref 0xFF key` (a byte WTF-8 never holds) -> position in `tallies`.
    tally_index: FastMap<Vec<u8>, usize>,
    /// ref -> (argument keys as the call spelled them, calls), both in first-seen order.
    pub clusters: Vec<(Text, KeySets)>,
    /// ref -> (position in `clusters`, the keys joined by 0xFF -> row).
    cluster_index: FastMap<Text, (usize, FastMap<Vec<u8>, usize>)>,
    pub sequences: Vec<Sequence>,
    sequence_index: FastMap<Vec<u8>, usize>,
    /// Lookup keys are built here, so a key met before costs no allocation.
    scratch: Vec<u8>,
}

impl Evidence {
    pub fn new(trace_values: bool) -> Self {
        Evidence {
            trace_values,
            ..Evidence::default()
        }
    }

    /// Number the executions that follow `origin << 32 | n`, n from 0: the numbers the
    /// file numbered `origin` gives its own once merged (`TraceScanner.take_evidence`), for
    /// evidence carried through that file's scan.
    pub fn number_from(&mut self, origin: u32) {
        self.numbering = u64::from(origin) << 32;
        self.file_executions = 0;
    }

    /// Executions numbered since [`Evidence::number_from`] (or since the start).
    pub fn file_executions(&self) -> u64 {
        self.file_executions
    }

    /// `add_value(ref, key, value)`: one value observation of weight 1.
    pub fn add_value(&mut self, reference: &[u8], key: &[u8], value: &Value) {
        self.scratch.clear();
        self.scratch.extend_from_slice(reference);
        self.scratch.push(0xFF);
        self.scratch.extend_from_slice(key);
        let at = match self.tally_index.get(self.scratch.as_slice()) {
            Some(&at) => at,
            None => {
                let pair = (reference.to_vec(), key.to_vec());
                self.tallies.push((pair, Tally::default()));
                self.tally_index
                    .insert(self.scratch.clone(), self.tallies.len() - 1);
                self.tallies.len() - 1
            }
        };
        self.tallies[at].1.add(value);
    }

    /// `add_operations`: one execution, given by its operations in order.
    pub fn add_operations(&mut self, operations: &[Operation<'_>]) {
        let execution = self.numbering | self.file_executions;
        self.executions += 1;
        self.file_executions += 1;
        let mut segments: Vec<Vec<&[u8]>> = Vec::new();
        let mut segment: Vec<&[u8]> = Vec::new();
        for op in operations {
            let reference = op.reference.as_wtf8();
            self.count_keys(reference, op.args);
            let fabric = reference.starts_with(b"fabric.");
            if self.trace_values && !fabric {
                let entries = op.args.entries();
                for at in op.args.js_order() {
                    let (key, value) = &entries[at];
                    if is_primitive(value) {
                        self.add_value(reference, key.as_wtf8(), value);
                    }
                }
            }
            if op.succeeded && !fabric && !reference.starts_with(b"pi.") {
                segment.push(reference);
            } else if !segment.is_empty() {
                segments.push(std::mem::take(&mut segment));
            }
        }
        if !segment.is_empty() {
            segments.push(segment);
        }
        for refs in &segments {
            self.add_windows(refs, execution);
        }
    }

    fn count_keys(&mut self, reference: &[u8], args: &crate::json::Object) {
        self.scratch.clear();
        for (key, _) in args.entries() {
            self.scratch.extend_from_slice(key.as_wtf8());
            self.scratch.push(0xFF);
        }
        let (at, per_ref) = match self.cluster_index.get_mut(reference) {
            Some(found) => found,
            None => {
                self.clusters.push((reference.to_vec(), Vec::new()));
                let at = self.clusters.len() - 1;
                self.cluster_index
                    .entry(reference.to_vec())
                    .or_insert((at, FastMap::default()))
            }
        };
        let rows = &mut self.clusters[*at].1;
        match per_ref.get(self.scratch.as_slice()) {
            Some(&row) => rows[row].1 += 1,
            None => {
                per_ref.insert(self.scratch.clone(), rows.len());
                let keys = args.entries().iter().map(|(k, _)| k.as_wtf8().to_vec());
                rows.push((keys.collect(), 1));
            }
        }
    }

    fn add_windows(&mut self, refs: &[&[u8]], execution: u64) {
        let widest = FUSE_MAX_SEQUENCE_LENGTH.min(refs.len());
        for width in FUSE_MIN_SEQUENCE_LENGTH..=widest {
            for window in refs.windows(width) {
                let distinct = window
                    .iter()
                    .enumerate()
                    .all(|(i, r)| !window[..i].contains(r));
                if !distinct {
                    continue;
                }
                let identity = window.join(SEQUENCE_JOIN.as_bytes());
                match self.sequence_index.get(&identity) {
                    Some(&at) => {
                        let entry = &mut self.sequences[at];
                        entry.occurrences += 1;
                        if entry.executions.len() < FUSE_MIN_EXECUTIONS
                            && !entry.executions.contains(&execution)
                        {
                            entry.executions.push(execution);
                        }
                    }
                    None => {
                        self.sequence_index
                            .insert(identity.clone(), self.sequences.len());
                        self.sequences.push(Sequence {
                            identity,
                            window: window.iter().map(|r| r.to_vec()).collect(),
                            occurrences: 1,
                            executions: vec![execution],
                        });
                    }
                }
            }
        }
    }
}

impl Tally {
    /// `_Tally.merge(other)`: the tally of the input that follows.
    fn merge(&mut self, other: Tally) {
        self.total += other.total;
        if self.overflowed {
            return;
        }
        if other.overflowed {
            self.overflowed = true;
            self.counts.clear();
            return;
        }
        if self.counts.is_empty() {
            self.counts = other.counts; // at most ENUM_MAX_DISTINCT: never overflows here
            return;
        }
        for (identity, value, count) in other.counts {
            match self.counts.iter_mut().find(|slot| slot.0 == identity) {
                Some(slot) => {
                    slot.1 = value; // the last value seen, as one pass keeps it
                    slot.2 += count;
                }
                None => self.counts.push((identity, value, count)),
            }
        }
        if self.counts.len() > ENUM_MAX_DISTINCT {
            self.overflowed = true;
            self.counts.clear();
        }
    }
}

impl Evidence {
    /// `ProposalEvidence.merge(other)` for the evidence of the input that follows, its
    /// execution numbers moved by `offset` (`self.executions`: numbered after this one's,
    /// the result is one pass over both inputs; 0 for numbers already told apart).
    pub fn merge(&mut self, other: Evidence, offset: u64) {
        self.executions += other.executions;
        // Lookup keys are built in `scratch`; only a new entry's key is allocated.
        let mut joined = std::mem::take(&mut self.scratch);
        for ((reference, key), tally) in other.tallies {
            joined.clear();
            joined.extend_from_slice(&reference);
            joined.push(0xFF);
            joined.extend_from_slice(&key);
            match self.tally_index.get(joined.as_slice()) {
                Some(&at) => self.tallies[at].1.merge(tally),
                None => {
                    self.tally_index.insert(joined.clone(), self.tallies.len());
                    self.tallies.push(((reference, key), tally));
                }
            }
        }
        for (reference, rows) in other.clusters {
            let (at, per_ref) = match self.cluster_index.get_mut(&reference) {
                Some(found) => found,
                None => {
                    self.clusters.push((reference.clone(), Vec::new()));
                    let at = self.clusters.len() - 1;
                    self.cluster_index
                        .entry(reference)
                        .or_insert((at, FastMap::default()))
                }
            };
            let mine = &mut self.clusters[*at].1;
            for (keys, calls) in rows {
                joined.clear();
                for key in &keys {
                    joined.extend_from_slice(key);
                    joined.push(0xFF);
                }
                match per_ref.get(joined.as_slice()) {
                    Some(&row) => mine[row].1 += calls,
                    None => {
                        per_ref.insert(joined.clone(), mine.len());
                        mine.push((keys, calls));
                    }
                }
            }
        }
        self.scratch = joined;
        for mut sequence in other.sequences {
            match self.sequence_index.get(&sequence.identity) {
                Some(&at) => {
                    let entry = &mut self.sequences[at];
                    entry.occurrences += sequence.occurrences;
                    for execution in sequence.executions {
                        if entry.executions.len() >= FUSE_MIN_EXECUTIONS {
                            break;
                        }
                        if !entry.executions.contains(&(execution + offset)) {
                            entry.executions.push(execution + offset);
                        }
                    }
                }
                None => {
                    for execution in &mut sequence.executions {
                        *execution += offset;
                    }
                    self.sequence_index
                        .insert(sequence.identity.clone(), self.sequences.len());
                    self.sequences.push(sequence);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn key(raw: &str) -> String {
        let value = parse(raw.as_bytes()).unwrap().value;
        String::from_utf8(value_key(&value).unwrap()).unwrap()
    }

    #[test]
    fn value_keys_as_javascript() {
        assert_eq!(key("\"a\""), "string:a");
        assert_eq!(key("-0"), "number:0");
        assert_eq!(key("-0.0"), "number:0");
        assert_eq!(key("1e21"), "number:1e+21");
        assert_eq!(key("1.0"), "number:1");
        assert_eq!(key("9007199254740993"), "number:9007199254740992");
        assert_eq!(key("1e400"), "number:Infinity");
        assert_eq!(key("true"), "boolean:true");
        assert!(value_key(&Value::Null).is_none());
    }

    #[test]
    fn tally_overflows_past_eight_values() {
        let mut tally = Tally::default();
        for n in 0..8 {
            tally.add(&Value::Number(Number::Int(n)));
        }
        tally.add(&Value::Number(Number::Float(3.0)));
        assert_eq!((tally.counts.len(), tally.counts[3].2), (8, 2));
        assert_eq!(tally.counts[3].1, Value::Number(Number::Float(3.0)));
        tally.add(&Value::Number(Number::Int(9)));
        assert!(tally.overflowed && tally.counts.is_empty());
        tally.add(&Value::Bool(true));
        assert_eq!(tally.total, 11);
    }

    fn ops(raw: &str) -> Value<'_> {
        parse(raw.as_bytes()).unwrap().value
    }

    fn run(evidence: &mut Evidence, value: &Value) {
        let Value::Array(items) = value else { panic!() };
        let mut operations = Vec::new();
        for item in items {
            let Value::Array(parts) = item else { panic!() };
            let (Value::String(r), Value::Object(a), Value::Bool(ok)) =
                (&parts[0], &parts[1], &parts[2])
            else {
                panic!()
            };
            operations.push(Operation {
                reference: r,
                args: a,
                succeeded: *ok,
            });
        }
        evidence.add_operations(&operations);
    }

    #[test]
    fn windows_of_distinct_successful_refs() {
        let mut evidence = Evidence::new(true);
        let trace = ops(
            r#"[["a",{"x":1},true],["b",{},true],["c",{"y":"s","x":2},true],["a",{"x":1},true],
                ["pi.z",{},true],["d",{},true],["e",{},true],["f",{},false],
                ["fabric.q",{"v":1},true]]"#,
        );
        run(&mut evidence, &trace);
        run(&mut evidence, &trace);
        let names: Vec<String> = evidence
            .sequences
            .iter()
            .map(|s| String::from_utf8(s.identity.clone()).unwrap())
            .collect();
        assert_eq!(names, ["a→b→c", "b→c→a"]);
        assert_eq!(evidence.sequences[0].occurrences, 2);
        assert_eq!(evidence.sequences[0].executions, [0, 1]);
        let a = &evidence.clusters[0];
        assert_eq!((a.0.as_slice(), a.1[0].1), (&b"a"[..], 4));
        // c's keys as spelled, fabric. refs not tallied
        assert_eq!(evidence.clusters[2].1[0].0, [b"y".to_vec(), b"x".to_vec()]);
        assert!(evidence.tallies.iter().all(|((r, _), _)| r != b"fabric.q"));
        assert_eq!(evidence.tallies[0].1.total, 4);
    }

    #[test]
    fn merges_as_one_pass() {
        let traces = [
            r#"[["a",{"x":1},true],["b",{},true],["c",{"x":2},true]]"#,
            r#"[["a",{"x":"s"},true],["b",{"y":1},true],["c",{},true],["a",{"x":1.5},true]]"#,
            r#"[["a",{"x":1},true],["b",{},true],["c",{"x":2},true],["d",{},true]]"#,
        ];
        let parts = |from: usize, to: usize| {
            let mut evidence = Evidence::new(true);
            for trace in &traces[from..to] {
                run(&mut evidence, &ops(trace));
            }
            evidence
        };
        let view = |e: &Evidence| {
            let sequences: Vec<_> = e
                .sequences
                .iter()
                .map(|s| (s.identity.clone(), s.occurrences, s.executions.clone()))
                .collect();
            format!(
                "{} {:?} {:?} {:?}",
                e.executions, e.tallies, e.clusters, sequences
            )
        };
        let whole = parts(0, 3);
        for split in 0..=3 {
            let mut merged = parts(0, split);
            let offset = merged.executions;
            merged.merge(parts(split, 3), offset);
            assert_eq!(view(&merged), view(&whole), "split at {split}");
        }
    }
}
