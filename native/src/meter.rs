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

type Index = HashMap<Box<[u8]>, usize, BuildHasherDefault<WordHasher>>;

/// A map in first-seen order (a Python dict that only ever gains keys).
#[derive(Debug, Default, Clone)]
pub struct Ordered<V> {
    entries: Vec<(Box<[u8]>, V)>,
    index: Index,
}

impl<V: Default> Ordered<V> {
    /// The value of `key`, inserted (at the end) with its default when it is new.
    pub fn entry(&mut self, key: &[u8]) -> &mut V {
        let at = match self.index.get(key) {
            Some(&at) => at,
            None => {
                let at = self.entries.len();
                self.index.insert(key.into(), at);
                self.entries.push((key.into(), V::default()));
                at
            }
        };
        &mut self.entries[at].1
    }
}

impl<V> Ordered<V> {
    /// Entries in first-seen order.
    pub fn entries(&self) -> &[(Box<[u8]>, V)] {
        &self.entries
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
}
