//! The meter's accumulation (spec §3.1-§3.2): one file's `MeterState`, owned here.
//!
//! The specification is `MeterState.add_signed` and `MeterState._apply` in
//! `pytest_entropy/core/meter.py`. Every count, every map's first-seen order and every
//! float sum (one term at a time, in the Python's order) comes out as the Python leaves
//! it; churn terms are always kept, because the state handed to Python is merged into the
//! corpus's state as the right-hand side (`MeterState.merge`).
//!
//! Strings (refs, signatures, stages, task keys, action sequences, models) are WTF-8 bytes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const DISCOVERY_PREFIX: &[u8] = b"fabric.discovery.";
const WORKFLOW_PREFIX: &[u8] = b"fabric.workflow.";
const NO_TASK: &[u8] = b"(none)";
const SEQUENCE_JOIN: &str = "→";
/// `INVOCATION_REJECTION_STAGES`.
const REJECTION_STAGES: [&str; 3] = ["resolve", "prepare", "validate"];

/// A small, fast hash for the maps' byte keys (FNV-1a over 8-byte words): the keys are
/// our own data, never an attacker's choice of collisions that matters for correctness.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = self.0 ^ 0xcbf2_9ce4_8422_2325;
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
            hash = (hash ^ w).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
        }
        for &b in words.remainder() {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash ^ (hash >> 31);
    }
}

/// A hash of the maps' `u64` key hashes: they are already well mixed, so taken as they are.
#[derive(Default)]
pub struct SpreadHasher(u64);

impl Hasher for SpreadHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

fn key_hash(key: &[u8]) -> u64 {
    let mut hasher = WordHasher::default();
    hasher.write(key);
    hasher.finish()
}

/// A map in first-seen order (a Python dict that only ever gains keys). Each key is held
/// once, in `entries`: `index` finds an entry by the key's hash, and the rare key whose
/// hash another key already holds is found in `overflow` instead.
#[derive(Debug, Default, Clone)]
pub struct Ordered<V> {
    entries: Vec<(Box<[u8]>, V)>,
    index: HashMap<u64, usize, BuildHasherDefault<SpreadHasher>>,
    overflow: HashMap<Box<[u8]>, usize, BuildHasherDefault<WordHasher>>,
}

impl<V: Default> Ordered<V> {
    /// The value of `key`, inserted (at the end) with its default when it is new.
    pub fn entry(&mut self, key: &[u8]) -> &mut V {
        let next = self.entries.len();
        let at = match self.index.entry(key_hash(key)) {
            std::collections::hash_map::Entry::Occupied(found) => {
                let at = *found.get();
                if &*self.entries[at].0 == key {
                    at
                } else {
                    *self.overflow.entry(key.into()).or_insert(next)
                }
            }
            std::collections::hash_map::Entry::Vacant(slot) => *slot.insert(next),
        };
        if at == next {
            self.entries.push((key.into(), V::default()));
        }
        &mut self.entries[at].1
    }
}

impl<V> Ordered<V> {
    /// Entries in first-seen order.
    pub fn entries(&self) -> &[(Box<[u8]>, V)] {
        &self.entries
    }

    /// The entries in first-seen order, the map given up (its index freed first).
    pub fn into_entries(self) -> Vec<(Box<[u8]>, V)> {
        let Ordered { entries, .. } = self;
        entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `_RefAccumulator`.
#[derive(Debug, Default, Clone)]
pub struct RefAccumulator {
    pub calls: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub signatures: Ordered<i64>,
    pub stages: Ordered<i64>,
    pub churn_pairs: i64,
    pub churn_sum: f64,
    pub churn_terms: Vec<f64>,
}

/// `MeterState(retain_terms=True)`.
#[derive(Debug, Default, Clone)]
pub struct MeterState {
    pub traces: i64,
    pub operations: i64,
    pub action_operations: i64,
    pub discovery_operations: i64,
    pub workflow_operations: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub aborted: i64,
    pub timed_out: i64,
    pub invocation_rejections: i64,
    pub refs: Ordered<RefAccumulator>,
    pub churn_pairs: i64,
    pub churn_sum: f64,
    pub churn_terms: Vec<f64>,
    pub task_sequences: Ordered<Ordered<i64>>,
    pub models: Ordered<MeterState>,
}

/// One guarded operation as the meter reads it.
#[derive(Clone, Copy, Debug)]
pub struct Operation<'a> {
    pub reference: &'a [u8],
    pub outcome: &'a str,
    pub stage: Option<&'a str>,
    pub signature: &'a [u8],
}

struct Item<'a> {
    reference: &'a [u8],
    signature: &'a [u8],
    outcome: &'a str,
    stage: &'a str,
    distance: Option<f64>,
}

/// The UTF-16 code units of WTF-8 text (lone surrogates as themselves).
pub fn utf16_units(bytes: &[u8]) -> Vec<u16> {
    let mut units = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let first = u32::from(bytes[at]);
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
            units.push(0xD800 + (v >> 10) as u16);
            units.push(0xDC00 + (v & 0x3FF) as u16);
        } else {
            units.push(cp as u16);
        }
    }
    units
}

/// `round_metric`: JavaScript's `Math.round(x * 1e6) / 1e6`, `-0` as `0`.
pub fn round_metric(x: f64) -> f64 {
    let y = x * 1e6;
    if !y.is_finite() {
        return y;
    }
    let f = y.floor();
    let r = (if y - f >= 0.5 { f + 1.0 } else { f }) / 1e6;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

fn levenshtein(a: &[u16], b: &[u16]) -> usize {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    if a.is_empty() || b.is_empty() {
        return a.len().max(b.len());
    }
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = previous[j] + usize::from(ca != cb);
            current[j + 1] = cost.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// `signature_distance`: normalised Levenshtein over UTF-16 code units, rounded.
pub fn signature_distance(a: &[u8], b: &[u8]) -> f64 {
    if a == b {
        return 0.0;
    }
    let (x, y) = (utf16_units(a), utf16_units(b));
    let longest = x.len().max(y.len());
    if longest == 0 {
        return 0.0;
    }
    round_metric(levenshtein(&x, &y) as f64 / longest as f64)
}

impl MeterState {
    /// `add_signed(operations, task_key, model)`: one guarded trace.
    pub fn add_signed(
        &mut self,
        operations: &[Operation<'_>],
        task_key: Option<&[u8]>,
        model: Option<&[u8]>,
    ) {
        let mut pending: Vec<(&[u8], &[u8])> = Vec::new();
        let mut sequence: Vec<&[u8]> = Vec::new();
        let mut items = Vec::with_capacity(operations.len());
        let (mut discovery, mut workflow) = (0, 0);
        for op in operations {
            let reference = op.reference;
            if reference.starts_with(b"fabric.") {
                if reference.starts_with(DISCOVERY_PREFIX) {
                    discovery += 1;
                    continue;
                }
                if reference.starts_with(WORKFLOW_PREFIX) {
                    workflow += 1;
                    continue;
                }
            }
            sequence.push(reference);
            let mut distance = None;
            if let Some(at) = pending.iter().position(|(r, _)| *r == reference) {
                let (_, previous) = pending.swap_remove(at);
                distance = Some(signature_distance(previous, op.signature));
            }
            let mut stage = op.stage.unwrap_or("");
            if op.outcome == "failed" {
                stage = op.stage.unwrap_or("unknown");
                pending.push((reference, op.signature));
            }
            items.push(Item {
                reference,
                signature: op.signature,
                outcome: op.outcome,
                stage,
                distance,
            });
        }
        let key = (!sequence.is_empty()).then(|| sequence.join(SEQUENCE_JOIN.as_bytes()));
        let task = task_key.unwrap_or(NO_TASK);
        self.apply(&items, discovery, workflow, key.as_deref(), task);
        if let Some(model) = model.filter(|m| !m.is_empty()) {
            self.models
                .entry(model)
                .apply(&items, discovery, workflow, key.as_deref(), task);
        }
    }

    fn apply(
        &mut self,
        items: &[Item<'_>],
        discovery: i64,
        workflow: i64,
        sequence_key: Option<&[u8]>,
        task: &[u8],
    ) {
        self.traces += 1;
        let actions = items.len() as i64;
        self.operations += actions + discovery + workflow;
        self.action_operations += actions;
        self.discovery_operations += discovery;
        self.workflow_operations += workflow;
        if items.is_empty() {
            return;
        }
        for item in items {
            let acc = self.refs.entry(item.reference);
            acc.calls += 1;
            match item.outcome {
                "succeeded" => {
                    self.succeeded += 1;
                    acc.succeeded += 1;
                }
                "failed" => {
                    self.failed += 1;
                    acc.failed += 1;
                    *acc.stages.entry(item.stage.as_bytes()) += 1;
                    if REJECTION_STAGES.contains(&item.stage) {
                        self.invocation_rejections += 1;
                    }
                }
                "aborted" => self.aborted += 1,
                _ => self.timed_out += 1,
            }
            *acc.signatures.entry(item.signature) += 1;
            if let Some(distance) = item.distance {
                acc.churn_pairs += 1;
                acc.churn_sum += distance;
                acc.churn_terms.push(distance);
                self.churn_pairs += 1;
                self.churn_sum += distance;
                self.churn_terms.push(distance);
            }
        }
        if let Some(key) = sequence_key {
            *self.task_sequences.entry(task).entry(key) += 1;
        }
    }
}

/// Counts of `other` onto `into` (`_merge_counts`): known keys keep their place, new keys
/// follow in `other`'s order.
fn merge_counts(into: &mut Ordered<i64>, other: &Ordered<i64>) {
    for (key, count) in other.entries() {
        *into.entry(key) += count;
    }
}

/// `running + term` for each term in order, as the Python's merge replays them.
fn replay(running: f64, terms: &[f64]) -> f64 {
    terms.iter().fold(running, |sum, term| sum + term)
}

impl RefAccumulator {
    fn merge(&mut self, other: &RefAccumulator) {
        self.calls += other.calls;
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        merge_counts(&mut self.signatures, &other.signatures);
        merge_counts(&mut self.stages, &other.stages);
        self.churn_pairs += other.churn_pairs;
        self.churn_sum = replay(self.churn_sum, &other.churn_terms);
        self.churn_terms.extend_from_slice(&other.churn_terms);
    }
}

impl MeterState {
    /// `MeterState.merge(other)`: `other` is the slice that follows this one; the result is
    /// one pass over both (counters add, maps keep first-seen order, churn sums replay
    /// `other`'s terms onto this state's). Terms are kept, so the result merges on.
    pub fn merge(&mut self, other: &MeterState) {
        self.traces += other.traces;
        self.operations += other.operations;
        self.action_operations += other.action_operations;
        self.discovery_operations += other.discovery_operations;
        self.workflow_operations += other.workflow_operations;
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        self.aborted += other.aborted;
        self.timed_out += other.timed_out;
        self.invocation_rejections += other.invocation_rejections;
        for (reference, theirs) in other.refs.entries() {
            self.refs.entry(reference).merge(theirs);
        }
        self.churn_pairs += other.churn_pairs;
        self.churn_sum = replay(self.churn_sum, &other.churn_terms);
        self.churn_terms.extend_from_slice(&other.churn_terms);
        for (task, sequences) in other.task_sequences.entries() {
            merge_counts(self.task_sequences.entry(task), sequences);
        }
        for (model, theirs) in other.models.entries() {
            self.models.entry(model).merge(theirs);
        }
    }

    /// The state as bytes (`from_bytes` reads them back): what a process or a Dask worker
    /// sends of a native meter.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// A state `to_bytes` wrote, or `None` for bytes it did not write.
    pub fn from_bytes(bytes: &[u8]) -> Option<MeterState> {
        let mut input = Reader(bytes);
        let state = MeterState::decode(&mut input)?;
        input.0.is_empty().then_some(state)
    }

    fn totals(&mut self) -> [&mut i64; 10] {
        [
            &mut self.traces,
            &mut self.operations,
            &mut self.action_operations,
            &mut self.discovery_operations,
            &mut self.workflow_operations,
            &mut self.succeeded,
            &mut self.failed,
            &mut self.aborted,
            &mut self.timed_out,
            &mut self.invocation_rejections,
        ]
    }

    fn encode(&self, out: &mut Vec<u8>) {
        for n in [
            self.traces,
            self.operations,
            self.action_operations,
            self.discovery_operations,
            self.workflow_operations,
            self.succeeded,
            self.failed,
            self.aborted,
            self.timed_out,
            self.invocation_rejections,
        ] {
            put_int(out, n);
        }
        put_len(out, self.refs.len());
        for (reference, acc) in self.refs.entries() {
            put_bytes(out, reference);
            [acc.calls, acc.succeeded, acc.failed, acc.churn_pairs]
                .iter()
                .for_each(|&n| put_int(out, n));
            put_counts(out, &acc.signatures);
            put_counts(out, &acc.stages);
            put_floats(out, acc.churn_sum, &acc.churn_terms);
        }
        put_int(out, self.churn_pairs);
        put_floats(out, self.churn_sum, &self.churn_terms);
        put_len(out, self.task_sequences.len());
        for (task, sequences) in self.task_sequences.entries() {
            put_bytes(out, task);
            put_counts(out, sequences);
        }
        put_len(out, self.models.len());
        for (model, inner) in self.models.entries() {
            put_bytes(out, model);
            inner.encode(out);
        }
    }

    fn decode(input: &mut Reader<'_>) -> Option<MeterState> {
        let mut state = MeterState::default();
        for slot in state.totals() {
            *slot = input.int()?;
        }
        for _ in 0..input.len()? {
            let acc = state.refs.entry(input.bytes()?);
            acc.calls = input.int()?;
            acc.succeeded = input.int()?;
            acc.failed = input.int()?;
            acc.churn_pairs = input.int()?;
            input.counts(&mut acc.signatures)?;
            input.counts(&mut acc.stages)?;
            (acc.churn_sum, acc.churn_terms) = input.floats()?;
        }
        state.churn_pairs = input.int()?;
        (state.churn_sum, state.churn_terms) = input.floats()?;
        for _ in 0..input.len()? {
            let task = input.bytes()?;
            input.counts(state.task_sequences.entry(task))?;
        }
        for _ in 0..input.len()? {
            let model = input.bytes()?.to_vec();
            let inner = MeterState::decode(input)?;
            *state.models.entry(&model) = inner;
        }
        Some(state)
    }
}

fn put_int(out: &mut Vec<u8>, n: i64) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u64).to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len(out, bytes.len());
    out.extend_from_slice(bytes);
}

fn put_counts(out: &mut Vec<u8>, map: &Ordered<i64>) {
    put_len(out, map.len());
    for (key, count) in map.entries() {
        put_bytes(out, key);
        put_int(out, *count);
    }
}

fn put_floats(out: &mut Vec<u8>, sum: f64, terms: &[f64]) {
    out.extend_from_slice(&sum.to_bits().to_le_bytes());
    put_len(out, terms.len());
    for term in terms {
        out.extend_from_slice(&term.to_bits().to_le_bytes());
    }
}

/// What `MeterState::from_bytes` reads from.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn word(&mut self) -> Option<[u8; 8]> {
        let word: [u8; 8] = self.0.get(..8)?.try_into().ok()?;
        self.0 = &self.0[8..];
        Some(word)
    }

    fn int(&mut self) -> Option<i64> {
        self.word().map(i64::from_le_bytes)
    }

    fn len(&mut self) -> Option<usize> {
        usize::try_from(u64::from_le_bytes(self.word()?)).ok()
    }

    fn float(&mut self) -> Option<f64> {
        self.word().map(|w| f64::from_bits(u64::from_le_bytes(w)))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        if n > self.0.len() {
            return None;
        }
        let (bytes, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(bytes)
    }

    fn counts(&mut self, into: &mut Ordered<i64>) -> Option<()> {
        for _ in 0..self.len()? {
            let key = self.bytes()?;
            *into.entry(key) = self.int()?;
        }
        Some(())
    }

    fn floats(&mut self) -> Option<(f64, Vec<f64>)> {
        let sum = self.float()?;
        let n = self.len()?;
        if n > self.0.len() / 8 {
            return None;
        }
        let terms = (0..n).map(|_| self.float()).collect::<Option<Vec<_>>>()?;
        Some((sum, terms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op<'a>(reference: &'a str, outcome: &'a str, signature: &'a str) -> Operation<'a> {
        Operation {
            reference: reference.as_bytes(),
            outcome,
            stage: None,
            signature: signature.as_bytes(),
        }
    }

    #[test]
    fn a_key_whose_hash_is_taken_is_found_apart() {
        let mut map = Ordered::<i64>::default();
        *map.entry(b"a") += 1;
        // As if "b" hashed as "a" does: the index slot of "b"'s hash holds "a"'s entry.
        map.index.insert(key_hash(b"b"), 0);
        *map.entry(b"b") += 2;
        *map.entry(b"b") += 3;
        *map.entry(b"a") += 4;
        let entries: Vec<(&[u8], i64)> = map.entries().iter().map(|(k, v)| (&**k, *v)).collect();
        assert_eq!(entries, vec![(&b"a"[..], 5), (&b"b"[..], 5)]);
        assert_eq!(map.overflow.len(), 1);
        assert_eq!(map.into_entries().len(), 2);
    }

    #[test]
    fn distances_as_the_specification() {
        assert_eq!(
            signature_distance(b"(session:str)", b"(entryId:str,session:str)"),
            0.48
        );
        assert_eq!(signature_distance(b"()", b"()"), 0.0);
        assert_eq!(round_metric(0.8112781244591328), 0.811278);
        assert_eq!(round_metric(-1e-9), 0.0);
        assert_eq!(
            utf16_units("a\u{1F600}".as_bytes()),
            vec![0x61, 0xD83D, 0xDE00]
        );
    }

    #[test]
    fn accumulates_as_the_specification() {
        let mut state = MeterState::default();
        let trace = [
            op("fabric.discovery.list", "succeeded", "()"),
            op("pi.read", "failed", "(path:str)"),
            op("pi.read", "succeeded", "(path:str,limit:num)"),
            op("pi.write", "timed_out", "()"),
        ];
        state.add_signed(&trace, Some(b"task"), Some(b"p/m"));
        state.add_signed(&trace[..1], None, None);
        assert_eq!(
            (state.traces, state.operations, state.action_operations),
            (2, 5, 3)
        );
        assert_eq!(
            (state.discovery_operations, state.failed, state.timed_out),
            (2, 1, 1)
        );
        let (name, read) = &state.refs.entries()[0];
        assert_eq!(&**name, b"pi.read");
        assert_eq!(read.stages.entries()[0].0.as_ref(), b"unknown");
        assert_eq!(
            read.churn_terms,
            vec![signature_distance(b"(path:str)", b"(path:str,limit:num)")]
        );
        let (task, sequences) = &state.task_sequences.entries()[0];
        assert_eq!(&**task, b"task");
        assert_eq!(
            &*sequences.entries()[0].0,
            "pi.read→pi.read→pi.write".as_bytes()
        );
        let model = &state.models.entries()[0].1;
        assert_eq!((model.traces, model.churn_pairs), (1, 1));
    }

    #[test]
    fn merges_and_travels_as_one_pass() {
        let traces = [
            vec![
                op("a", "failed", "(x:str)"),
                op("a", "succeeded", "(x:num)"),
            ],
            vec![op("b", "succeeded", "()"), op("a", "aborted", "()")],
            vec![op("a", "failed", "()"), op("a", "failed", "(y:str)")],
        ];
        let run = |from: usize, to: usize| {
            let mut state = MeterState::default();
            for (at, trace) in traces[from..to].iter().enumerate() {
                let model: &[u8] = if (from + at) % 2 == 0 { b"p/m" } else { b"p/n" };
                state.add_signed(trace, Some(b"t"), Some(model));
            }
            state
        };
        let whole = run(0, 3);
        let mut merged = run(0, 1);
        merged.merge(&MeterState::from_bytes(&run(1, 3).to_bytes()).expect("decodes"));
        assert_eq!(merged.to_bytes(), whole.to_bytes());
        assert_eq!(merged.churn_sum.to_bits(), whole.churn_sum.to_bits());
        let bytes = whole.to_bytes();
        assert!(MeterState::from_bytes(&bytes[..bytes.len() - 1]).is_none());
    }
}
