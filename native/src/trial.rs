//! The trial's per-call dispatch, verdict memo and counting (spec §10), as `TrialTally`'s
//! fast path in `core/trial.py` decides them.
//!
//! Every recorded call of a declared ref (trace calls of `fabric.` refs excepted) gets a
//! verdict against the ref's two checks: rejected by the declared schema, accepted by both,
//! or accepted by the declared and rejected by the compiled one (tighter). With whether the
//! call is known to have succeeded (audits count as succeeded) and whether the ref is
//! quarantined, the verdict gives the trial class counted per ref, trace calls and audit
//! calls apart. The checks themselves (TypeBox 1.3.8's decisions) stay with the caller,
//! behind [`Checks`]; the verdicts of pure checks are remembered per ref by the exact
//! bytes of the arguments ([`exact_bytes`]: equal bytes, equal Python values).

use crate::evidence::FastMap;

use crate::json::{Number, Object, Value};

/// The trial classes, in `_NATIVE_CLASSES`' order.
pub const CLASSES: [&str; 6] = [
    "both-accept",
    "both-reject",
    "tightening-cost",
    "typed-failure-win",
    "quarantine-win",
    "quarantine-cost",
];
const BOTH_ACCEPT: u8 = 0;
const BOTH_REJECT: u8 = 1;
const TIGHTENING_COST: u8 = 2;
const TYPED_FAILURE_WIN: u8 = 3;
const QUARANTINE_WIN: u8 = 4;
const QUARANTINE_COST: u8 = 5;

/// What a check is (`CallChecks.parts`): it rejects everything, it is called as it is, its
/// exception is a rejection, or that and a pure function of the arguments (remembered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Reject,
    Plain,
    Guarded,
    Pure,
}

/// Which of a ref's two checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Declared,
    Compiled,
}

/// A ref's checks as the caller describes them.
#[derive(Clone, Copy, Debug)]
pub struct RefSpec {
    pub declared: Kind,
    pub compiled: Kind,
    pub quarantined: bool,
    /// The compiled check is the declared one (equal schemas).
    pub same: bool,
}

/// The caller's side: the refs' checks, numbered by the tally in first-use order.
pub trait Checks {
    type Error;
    /// The checks of declared ref number `entry` (asked once per ref).
    fn resolve(&mut self, entry: usize, reference: &[u8]) -> Result<RefSpec, Self::Error>;
    /// Runs one check (never one of kind [`Kind::Reject`]).
    fn check(&mut self, entry: usize, side: Side, args: &Object) -> Result<bool, Self::Error>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Reject,
    Accept,
    Tighter,
}

struct Entry {
    spec: RefSpec,
    memo: Option<FastMap<Vec<u8>, Verdict>>,
}

/// At most this many remembered verdicts per ref (`MEMO_LIMIT`); then the memo restarts.
pub const MEMO_LIMIT: usize = 1 << 15;

/// Per ref, the classes counted, both in first-seen order.
pub type ClassCounts = Vec<(Vec<u8>, Vec<(u8, u64)>)>;

/// The declared refs and, per ref met, its checks and remembered verdicts: shared by the
/// tallies of one command (the verdicts of pure checks hold for every file).
pub struct Verdicts {
    declared: FastMap<Vec<u8>, Option<usize>>,
    entries: Vec<Entry>,
}

/// The trial tally of one input (see the module's comment).
#[derive(Default)]
pub struct TrialTally {
    pub trace_classes: ClassCounts,
    pub audit_classes: ClassCounts,
    trace_index: FastMap<Vec<u8>, usize>,
    audit_index: FastMap<Vec<u8>, usize>,
}

impl TrialTally {
    pub fn new() -> Self {
        TrialTally::default()
    }

    /// One trace call (`add_trace`'s loop body).
    pub fn add_trace_call<C: Checks>(
        &mut self,
        verdicts: &mut Verdicts,
        checks: &mut C,
        reference: &[u8],
        args: &Object,
        succeeded: bool,
    ) -> Result<(), C::Error> {
        if reference.starts_with(b"fabric.") {
            return Ok(());
        }
        if let Some(class) = verdicts.classify(checks, reference, args, succeeded)? {
            count(
                &mut self.trace_classes,
                &mut self.trace_index,
                reference,
                class,
            );
        }
        Ok(())
    }

    /// One audit call (`add_audit`): audits count as succeeded.
    pub fn add_audit_call<C: Checks>(
        &mut self,
        verdicts: &mut Verdicts,
        checks: &mut C,
        reference: &[u8],
        args: &Object,
    ) -> Result<(), C::Error> {
        if let Some(class) = verdicts.classify(checks, reference, args, true)? {
            count(
                &mut self.audit_classes,
                &mut self.audit_index,
                reference,
                class,
            );
        }
        Ok(())
    }
}

impl Verdicts {
    /// Over the declared refs (those of the live surface).
    pub fn new<'a>(declared: impl IntoIterator<Item = &'a [u8]>) -> Self {
        Verdicts {
            declared: declared.into_iter().map(|r| (r.to_vec(), None)).collect(),
            entries: Vec::new(),
        }
    }

    fn entry<C: Checks>(
        &mut self,
        checks: &mut C,
        reference: &[u8],
    ) -> Result<Option<usize>, C::Error> {
        let Some(slot) = self.declared.get_mut(reference) else {
            return Ok(None);
        };
        if let Some(at) = *slot {
            return Ok(Some(at));
        }
        let at = self.entries.len();
        let spec = checks.resolve(at, reference)?;
        let compiled_pure = spec.quarantined
            || spec.same
            || spec.compiled == Kind::Pure
            || spec.compiled == Kind::Reject;
        let declared_pure = spec.declared == Kind::Pure || spec.declared == Kind::Reject;
        let memo = (declared_pure && compiled_pure).then(FastMap::default);
        self.entries.push(Entry { spec, memo });
        *slot = Some(at);
        Ok(Some(at))
    }

    fn classify<C: Checks>(
        &mut self,
        checks: &mut C,
        reference: &[u8],
        args: &Object,
        succeeded: bool,
    ) -> Result<Option<u8>, C::Error> {
        let Some(at) = self.entry(checks, reference)? else {
            return Ok(None);
        };
        let key = self.entries[at]
            .memo
            .as_ref()
            .map(|_| exact_object_bytes(args));
        let remembered = match (&self.entries[at].memo, &key) {
            (Some(memo), Some(key)) => memo.get(key).copied(),
            _ => None,
        };
        let verdict = match remembered {
            Some(verdict) => verdict,
            None => {
                let verdict = judge(checks, at, self.entries[at].spec, args)?;
                if let (Some(memo), Some(key)) = (&mut self.entries[at].memo, key) {
                    if memo.len() >= MEMO_LIMIT {
                        memo.clear();
                    }
                    memo.insert(key, verdict);
                }
                verdict
            }
        };
        let quarantined = self.entries[at].spec.quarantined;
        Ok(Some(match verdict {
            Verdict::Reject => BOTH_REJECT,
            _ if quarantined => {
                if succeeded {
                    QUARANTINE_COST
                } else {
                    QUARANTINE_WIN
                }
            }
            Verdict::Accept => BOTH_ACCEPT,
            Verdict::Tighter if succeeded => TIGHTENING_COST,
            Verdict::Tighter => TYPED_FAILURE_WIN,
        }))
    }
}

fn judge<C: Checks>(
    checks: &mut C,
    at: usize,
    spec: RefSpec,
    args: &Object,
) -> Result<Verdict, C::Error> {
    let run = |checks: &mut C, side: Side, kind: Kind| -> Result<bool, C::Error> {
        match kind {
            Kind::Reject => Ok(false),
            _ => checks.check(at, side, args),
        }
    };
    if !run(checks, Side::Declared, spec.declared)? {
        return Ok(Verdict::Reject);
    }
    // A quarantined ref has no compiled check; equal schemas share one, which just accepted.
    if spec.quarantined || spec.same || run(checks, Side::Compiled, spec.compiled)? {
        return Ok(Verdict::Accept);
    }
    Ok(Verdict::Tighter)
}

fn count(into: &mut ClassCounts, index: &mut FastMap<Vec<u8>, usize>, reference: &[u8], class: u8) {
    let at = match index.get(reference) {
        Some(&at) => at,
        None => {
            index.insert(reference.to_vec(), into.len());
            into.push((reference.to_vec(), Vec::new()));
            into.len() - 1
        }
    };
    let classes = &mut into[at].1;
    match classes.iter_mut().find(|(c, _)| *c == class) {
        Some(slot) => slot.1 += 1,
        None => classes.push((class, 1)),
    }
}

/// [`exact_bytes`] of an argument object.
pub fn exact_object_bytes(object: &Object) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.push(b'{');
    out.extend_from_slice(&(object.len() as u64).to_le_bytes());
    for (key, _) in object.entries() {
        text_bytes(&mut out, key.as_wtf8());
    }
    for (_, value) in object.entries() {
        exact_into(&mut out, value);
    }
    out
}

/// Bytes that tell apart exactly the Python values the plain reader would build: a tag per
/// kind, integers and doubles apart (bit for bit: `-0.0` is not `0.0`), strings as WTF-8
/// with their length, members in insertion order.
pub fn exact_bytes(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    exact_into(&mut out, value);
    out
}

fn exact_into(out: &mut Vec<u8>, value: &Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Null => out.push(b'n'),
            Value::Bool(b) => out.push(if *b { b't' } else { b'f' }),
            Value::Number(Number::Int(v)) => {
                out.push(b'i');
                out.extend_from_slice(&v.to_le_bytes());
            }
            Value::Number(Number::UInt(v)) => {
                out.push(b'u');
                out.extend_from_slice(&v.to_le_bytes());
            }
            Value::Number(Number::Float(v)) => {
                out.push(b'd');
                out.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            Value::Number(Number::Big(text)) => {
                out.push(b'b');
                text_bytes(out, text.as_bytes());
            }
            Value::String(text) => {
                out.push(b's');
                text_bytes(out, text.as_wtf8());
            }
            Value::Array(items) => {
                out.push(b'[');
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                stack.extend(items.iter().rev());
            }
            Value::Object(object) => {
                out.push(b'{');
                out.extend_from_slice(&(object.len() as u64).to_le_bytes());
                for (key, _) in object.entries() {
                    text_bytes(out, key.as_wtf8());
                }
                stack.extend(object.entries().iter().rev().map(|(_, v)| v));
            }
        }
    }
}

fn text_bytes(out: &mut Vec<u8>, text: &[u8]) {
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    /// Declared accepts objects with "ok"; compiled also needs "n" to be 1.
    struct Fake {
        kinds: (Kind, Kind),
        calls: usize,
    }

    fn member<'a>(args: &'a Object<'a>, name: &str) -> Option<&'a Value<'a>> {
        crate::audit::member(args, name)
    }

    impl Checks for Fake {
        type Error = ();
        fn resolve(&mut self, _entry: usize, reference: &[u8]) -> Result<RefSpec, ()> {
            Ok(RefSpec {
                declared: self.kinds.0,
                compiled: self.kinds.1,
                quarantined: reference == b"q",
                same: reference == b"same",
            })
        }
        fn check(&mut self, _entry: usize, side: Side, args: &Object) -> Result<bool, ()> {
            self.calls += 1;
            let ok = member(args, "ok").is_some();
            Ok(match side {
                Side::Declared => ok,
                Side::Compiled => ok && member(args, "n") == Some(&Value::Number(Number::Int(1))),
            })
        }
    }

    fn v(raw: &str) -> Value<'_> {
        parse(raw.as_bytes()).unwrap().value
    }

    fn o(raw: &str) -> Object<'_> {
        match &v(raw) {
            Value::Object(object) => object.clone(),
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn classes_and_memo() {
        let mut checks = Fake {
            kinds: (Kind::Pure, Kind::Pure),
            calls: 0,
        };
        let refs: [&[u8]; 4] = [b"a", b"q", b"same", b"fabric.x"];
        let mut verdicts = Verdicts::new(refs);
        let mut tally = TrialTally::new();
        let calls = [
            (&b"a"[..], r#"{"ok":1,"n":1}"#, true),
            (b"a", r#"{"ok":1,"n":2}"#, true),
            (b"a", r#"{"ok":1,"n":2}"#, false),
            (b"a", r#"{"n":2}"#, false),
            (b"q", r#"{"ok":1}"#, false),
            (b"same", r#"{"ok":1}"#, true),
            (b"fabric.x", r#"{"ok":1}"#, true),
            (b"undeclared", r#"{"ok":1}"#, true),
        ];
        for (r, args, ok) in calls {
            tally
                .add_trace_call(&mut verdicts, &mut checks, r, &o(args), ok)
                .unwrap();
        }
        tally
            .add_audit_call(&mut verdicts, &mut checks, b"q", &o(r#"{"ok":1}"#))
            .unwrap();
        let a = &tally.trace_classes[0];
        assert_eq!(
            a.1,
            [
                (BOTH_ACCEPT, 1),
                (TIGHTENING_COST, 1),
                (TYPED_FAILURE_WIN, 1),
                (BOTH_REJECT, 1)
            ]
        );
        assert_eq!(tally.trace_classes[1].1, [(QUARANTINE_WIN, 1)]);
        assert_eq!(tally.trace_classes[2].1, [(BOTH_ACCEPT, 1)]);
        assert_eq!(tally.trace_classes.len(), 3);
        assert_eq!(tally.audit_classes[0].1, [(QUARANTINE_COST, 1)]);
        // the third call was remembered: a: 2+2+0+1, q: 1, same: 1, then the audit's q: 0
        assert_eq!(checks.calls, 7);
        // Another input's tally over the same verdicts asks no check it asked before.
        let mut again = TrialTally::new();
        again
            .add_trace_call(
                &mut verdicts,
                &mut checks,
                b"a",
                &o(r#"{"ok":1,"n":2}"#),
                true,
            )
            .unwrap();
        assert_eq!(
            (checks.calls, again.trace_classes[0].1[0]),
            (7, (TIGHTENING_COST, 1))
        );
    }

    #[test]
    fn exact_bytes_tell_python_values_apart() {
        let distinct = [
            "1",
            "1.0",
            "-0.0",
            "0",
            "\"1\"",
            "[1]",
            "{\"a\":1}",
            "{\"b\":1}",
            "null",
            "[[]]",
            "[[],[]]",
        ];
        let keys: Vec<Vec<u8>> = distinct.iter().map(|raw| exact_bytes(&v(raw))).collect();
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(exact_bytes(&v("-0")), exact_bytes(&v("-0.0")));
        let object = r#"{"a":[1,{"b":null}],"c":"d"}"#;
        assert_eq!(exact_object_bytes(&o(object)), exact_bytes(&v(object)));
        assert_eq!(
            exact_bytes(&v(r#"{"a":1,"a":2}"#)),
            exact_bytes(&v(r#"{"a":2}"#))
        );
    }
}
