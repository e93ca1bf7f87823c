//! The compile's replay (spec §7.5) as `ReplayTally` in `core/compiler.py` decides it: every
//! recorded call of a touched ref checked against the candidate surface.
//!
//! A succeeded trace call of a touched ref that has no audit call anywhere (and is no
//! `fabric.` ref) is a violation when the candidate lacks the ref ("absent") or rejects its
//! arguments ("invalid"); violations are kept as runs in corpus order. An audit call of a
//! touched ref makes the ref's count exist (in order of its first audit call); it counts one
//! more when the candidate has the ref, the surface before it has no schema for the ref or
//! accepts the arguments, and the candidate rejects them. The checks (TypeBox 1.3.8) stay
//! with the caller behind [`ReplayChecks`], each one built only when a call first needs
//! it (as the plain tally builds them); the verdicts of pure checks are remembered per ref
//! by the arguments' exact bytes ([`crate::trial::exact_object_bytes`]).

use crate::evidence::{FastMap, FastSet};
use crate::json::Object;
use crate::trial::{exact_object_bytes, Kind, MEMO_LIMIT};

/// The reasons of a trace violation, as codes (`ABSENT_REASON`, `INVALID_REASON`).
pub const ABSENT: u8 = 0;
pub const INVALID: u8 = 1;

/// The candidate's check, or the check of the surface before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    Candidate,
    Before,
}

/// The caller's side: which surfaces hold a touched ref, and each check when first needed.
pub trait ReplayChecks {
    type Error;
    /// `(in the candidate, in the surface before)` of touched ref number `entry`.
    fn presence(&mut self, entry: usize, reference: &[u8]) -> Result<(bool, bool), Self::Error>;
    /// Builds the check of `surface` for ref number `entry` (once) and says what it is.
    fn build(
        &mut self,
        entry: usize,
        reference: &[u8],
        surface: Surface,
    ) -> Result<Kind, Self::Error>;
    /// Runs a built check (never one of kind [`Kind::Reject`]).
    fn check(&mut self, entry: usize, surface: Surface, args: &Object)
        -> Result<bool, Self::Error>;
}

#[derive(Default)]
struct Side {
    kind: Option<Kind>,
    memo: Option<FastMap<Vec<u8>, bool>>,
}

struct Entry {
    reference: Vec<u8>,
    in_candidate: bool,
    in_before: bool,
    sides: [Side; 2],
}

/// The touched and audited refs and, per touched ref met, its checks and remembered
/// verdicts: shared by the tallies of one replay (the verdicts hold for every file).
pub struct ReplayVerdicts {
    touched: FastMap<Vec<u8>, Option<usize>>,
    audited: FastSet<Vec<u8>>,
    entries: Vec<Entry>,
}

impl ReplayVerdicts {
    pub fn new<'a>(
        touched: impl IntoIterator<Item = &'a [u8]>,
        audited: impl IntoIterator<Item = &'a [u8]>,
    ) -> Self {
        ReplayVerdicts {
            touched: touched.into_iter().map(|r| (r.to_vec(), None)).collect(),
            audited: audited.into_iter().map(<[u8]>::to_vec).collect(),
            entries: Vec::new(),
        }
    }

    fn entry<C: ReplayChecks>(
        &mut self,
        checks: &mut C,
        reference: &[u8],
    ) -> Result<Option<usize>, C::Error> {
        let Some(slot) = self.touched.get_mut(reference) else {
            return Ok(None);
        };
        if let Some(at) = *slot {
            return Ok(Some(at));
        }
        let at = self.entries.len();
        let (in_candidate, in_before) = checks.presence(at, reference)?;
        self.entries.push(Entry {
            reference: reference.to_vec(),
            in_candidate,
            in_before,
            sides: [Side::default(), Side::default()],
        });
        *slot = Some(at);
        Ok(Some(at))
    }

    /// Whether the check of `surface` accepts `args` (the ref holds a schema there).
    fn accepts<C: ReplayChecks>(
        &mut self,
        checks: &mut C,
        at: usize,
        surface: Surface,
        args: &Object,
    ) -> Result<bool, C::Error> {
        let index = match surface {
            Surface::Candidate => 0,
            Surface::Before => 1,
        };
        let kind = match self.entries[at].sides[index].kind {
            Some(kind) => kind,
            None => {
                let kind = checks.build(at, &self.entries[at].reference, surface)?;
                let side = &mut self.entries[at].sides[index];
                side.kind = Some(kind);
                side.memo = (kind == Kind::Pure).then(FastMap::default);
                kind
            }
        };
        if kind == Kind::Reject {
            return Ok(false);
        }
        let key = self.entries[at].sides[index]
            .memo
            .as_ref()
            .map(|_| exact_object_bytes(args));
        if let (Some(memo), Some(key)) = (&self.entries[at].sides[index].memo, &key) {
            if let Some(&verdict) = memo.get(key) {
                return Ok(verdict);
            }
        }
        let verdict = checks.check(at, surface, args)?;
        if let (Some(memo), Some(key)) = (&mut self.entries[at].sides[index].memo, key) {
            if memo.len() >= MEMO_LIMIT {
                memo.clear();
            }
            memo.insert(key, verdict);
        }
        Ok(verdict)
    }
}

/// The replay of one input: `ReplayCounts` (see the module's comment).
#[derive(Default)]
pub struct ReplayTally {
    /// Per touched ref with audit calls, how many the candidate rejects, first-seen order.
    pub audit_invalid: Vec<(Vec<u8>, u64)>,
    audit_index: FastMap<Vec<u8>, usize>,
    /// `(ref, reason, repeats)` runs of trace violations in order.
    pub trace_runs: Vec<(Vec<u8>, u8, u64)>,
}

impl ReplayTally {
    pub fn new() -> Self {
        ReplayTally::default()
    }

    /// One trace call (`ReplayTally.add_trace`'s loop body).
    pub fn add_trace_call<C: ReplayChecks>(
        &mut self,
        verdicts: &mut ReplayVerdicts,
        checks: &mut C,
        reference: &[u8],
        args: &Object,
        succeeded: bool,
    ) -> Result<(), C::Error> {
        if !succeeded || verdicts.audited.contains(reference) || reference.starts_with(b"fabric.") {
            return Ok(());
        }
        let Some(at) = verdicts.entry(checks, reference)? else {
            return Ok(());
        };
        let reason = if !verdicts.entries[at].in_candidate {
            ABSENT
        } else if !verdicts.accepts(checks, at, Surface::Candidate, args)? {
            INVALID
        } else {
            return Ok(());
        };
        match self.trace_runs.last_mut() {
            Some(run) if run.0 == reference && run.1 == reason => run.2 += 1,
            _ => self.trace_runs.push((reference.to_vec(), reason, 1)),
        }
        Ok(())
    }

    /// One audit call (`ReplayTally.add_audit`).
    pub fn add_audit_call<C: ReplayChecks>(
        &mut self,
        verdicts: &mut ReplayVerdicts,
        checks: &mut C,
        reference: &[u8],
        args: &Object,
    ) -> Result<(), C::Error> {
        let Some(at) = verdicts.entry(checks, reference)? else {
            return Ok(());
        };
        let slot = match self.audit_index.get(reference) {
            Some(&slot) => slot,
            None => {
                self.audit_index
                    .insert(reference.to_vec(), self.audit_invalid.len());
                self.audit_invalid.push((reference.to_vec(), 0));
                self.audit_invalid.len() - 1
            }
        };
        let entry = &verdicts.entries[at];
        if !entry.in_candidate {
            return Ok(()); // one "absent" violation for the ref, however many calls
        }
        if entry.in_before && !verdicts.accepts(checks, at, Surface::Before, args)? {
            return Ok(()); // never executed: the surface before refused it
        }
        if !verdicts.accepts(checks, at, Surface::Candidate, args)? {
            self.audit_invalid[slot].1 += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Number, Value};

    /// Before accepts objects with "ok"; the candidate also needs "n" to be 1; ref "gone"
    /// is absent from the candidate, "new" absent from the surface before.
    struct Fake {
        calls: usize,
        built: Vec<(usize, Surface)>,
    }

    impl ReplayChecks for Fake {
        type Error = ();
        fn presence(&mut self, _entry: usize, reference: &[u8]) -> Result<(bool, bool), ()> {
            Ok((reference != b"gone", reference != b"new"))
        }
        fn build(&mut self, entry: usize, _r: &[u8], surface: Surface) -> Result<Kind, ()> {
            self.built.push((entry, surface));
            Ok(Kind::Pure)
        }
        fn check(&mut self, _entry: usize, surface: Surface, args: &Object) -> Result<bool, ()> {
            self.calls += 1;
            let ok = crate::audit::member(args, "ok").is_some();
            Ok(match surface {
                Surface::Before => ok,
                Surface::Candidate => {
                    ok && crate::audit::member(args, "n") == Some(&Value::Number(Number::Int(1)))
                }
            })
        }
    }

    fn o(raw: &str) -> Object<'_> {
        match &parse(raw.as_bytes()).unwrap().value {
            Value::Object(object) => object.clone(),
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn runs_audits_and_memo() {
        let touched: [&[u8]; 4] = [b"a", b"gone", b"new", b"aud"];
        let mut verdicts = ReplayVerdicts::new(touched, [&b"aud"[..]]);
        let mut checks = Fake {
            calls: 0,
            built: Vec::new(),
        };
        let mut tally = ReplayTally::new();
        let calls = [
            (&b"a"[..], r#"{"ok":1,"n":2}"#, true),
            (b"a", r#"{"ok":1,"n":2}"#, true),
            (b"a", r#"{"ok":1,"n":1}"#, true),
            (b"a", r#"{"n":2}"#, false),
            (b"gone", r#"{}"#, true),
            (b"aud", r#"{}"#, true),
            (b"untouched", r#"{}"#, true),
            (b"a", r#"{}"#, true),
        ];
        for (r, args, ok) in calls {
            tally
                .add_trace_call(&mut verdicts, &mut checks, r, &o(args), ok)
                .unwrap();
        }
        let runs: Vec<(&[u8], u8, u64)> = tally
            .trace_runs
            .iter()
            .map(|(r, reason, n)| (r.as_slice(), *reason, *n))
            .collect();
        assert_eq!(
            runs,
            [
                (&b"a"[..], INVALID, 2),
                (b"gone", ABSENT, 1),
                (b"a", INVALID, 1)
            ]
        );
        // a: {"ok":1,"n":2} once (remembered), {"ok":1,"n":1}, {}; only candidate checks
        assert_eq!(checks.calls, 3);
        assert_eq!(checks.built, [(0, Surface::Candidate)]);
        for (r, args) in [
            (&b"aud"[..], r#"{"ok":1}"#),
            (b"gone", r#"{"ok":1}"#),
            (b"aud", r#"{"n":1}"#),
            (b"new", r#"{"n":1}"#),
            (b"aud", r#"{"ok":1,"n":1}"#),
        ] {
            tally
                .add_audit_call(&mut verdicts, &mut checks, r, &o(args))
                .unwrap();
        }
        let invalid: Vec<(&[u8], u64)> = tally
            .audit_invalid
            .iter()
            .map(|(r, n)| (r.as_slice(), *n))
            .collect();
        // aud: rejected by the candidate once, refused before once, accepted once; gone:
        // absent (no count); new: no schema before, rejected by the candidate
        assert_eq!(invalid, [(&b"aud"[..], 1), (b"gone", 0), (b"new", 1)]);
    }
}
