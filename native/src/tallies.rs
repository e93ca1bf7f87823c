//! What a scan gathers beside the meter: the refs with audit calls, the proposals'
//! evidence, the pool window and the trial counts, each only when the plan asks for it.
//!
//! The scanner hands every guarded trace's operations to [`Tallies::trace`] and every
//! trace line's `details.audits` (present or not, whatever the trace's fate) to
//! [`Tallies::audits`], in line order, as `SessionScanner._emit` and `_harvest` hand them
//! to their listeners. Audits are harvested, and counted, only when a tally listens to
//! them (`_want_audits`).

use crate::evidence::FastSet;

use crate::audit;
use crate::evidence::{Evidence, Operation};
use crate::json::{JsString, Object, Value};
use crate::pool::WindowTally;

/// The trial as the scan sees it: one call at a time. Its checks live with it (the Python
/// binding's call back into the interpreter); the first error stops the counting and is
/// kept for the caller.
pub trait TrialCalls: Send + Sync {
    fn trace_call(&mut self, reference: &JsString, args: &Object, succeeded: bool);
    fn audit_call(&mut self, reference: &JsString, args: &Object);
    /// The implementation itself (its owner takes its counts and errors back through it).
    fn as_any(&mut self) -> &mut dyn std::any::Any;
}

/// The tallies of one scan (see the module's comment).
#[derive(Default)]
pub struct Tallies {
    /// The refs of the kept audit calls, in first-seen order.
    pub audit_refs: Option<Vec<Vec<u8>>>,
    audit_ref_set: FastSet<Vec<u8>>,
    /// The proposals' evidence.
    pub evidence: Option<Evidence>,
    /// The traces' operations go into the evidence (`proposals`).
    pub operations: bool,
    /// The audits' value observations go into the evidence too (`observation_values`).
    pub observation_values: bool,
    pub window: Option<WindowTally>,
    pub trial: Option<Box<dyn TrialCalls>>,
    /// `ScanDiagnostics.audit_calls` and `skipped_audits`.
    pub audit_calls: u64,
    pub skipped_audits: u64,
}

impl Tallies {
    /// Whether anything listens to audits (so they are harvested and counted).
    pub fn wants_audits(&self) -> bool {
        self.audit_refs.is_some()
            || (self.evidence.is_some() && self.observation_values)
            || self.window.is_some()
            || self.trial.is_some()
    }

    /// Whether anything reads the operations' argument values (not only their keys): the
    /// trial, and the evidence's trace-value tallies.
    pub fn wants_arguments(&self) -> bool {
        self.trial.is_some()
            || self
                .evidence
                .as_ref()
                .is_some_and(|evidence| self.operations && evidence.trace_values)
    }

    /// One guarded trace's operations: `(ref, args, outcome)` in order.
    pub fn trace<'a>(
        &mut self,
        operations: impl Iterator<Item = (&'a JsString<'a>, &'a Object<'a>, &'a str)>,
    ) {
        if !(self.evidence.is_some() && self.operations) && self.trial.is_none() {
            return;
        }
        let found: Vec<Operation<'a>> = operations
            .map(|(reference, args, outcome)| Operation {
                reference,
                args,
                succeeded: outcome == "succeeded",
            })
            .collect();
        if let (Some(evidence), true) = (&mut self.evidence, self.operations) {
            evidence.add_operations(&found);
        }
        if let Some(trial) = &mut self.trial {
            for op in &found {
                trial.trace_call(op.reference, op.args, op.succeeded);
            }
        }
    }

    /// One trace line's `details.audits` (`None`: the line has none).
    pub fn audits(&mut self, audits: Option<&Value>) {
        if !self.wants_audits() {
            return;
        }
        let values = (self.evidence.is_some() && self.observation_values) || self.window.is_some();
        let found = audit::harvest(audits, values);
        self.audit_calls += found.kept;
        self.skipped_audits += found.skipped;
        for call in &found.calls {
            if let Some(refs) = &mut self.audit_refs {
                let reference = call.reference.as_wtf8();
                if !self.audit_ref_set.contains(reference) {
                    self.audit_ref_set.insert(reference.to_vec());
                    refs.push(reference.to_vec());
                }
            }
            if let Some(trial) = &mut self.trial {
                trial.audit_call(call.reference, call.args);
            }
        }
        for seen in &found.values {
            if self.observation_values {
                if let Some(evidence) = &mut self.evidence {
                    evidence.add_value(seen.reference.as_wtf8(), seen.key.as_wtf8(), seen.value);
                }
            }
            if let Some(window) = &mut self.window {
                window.add(seen.reference, seen.key, seen.value, 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    #[test]
    fn audits_only_when_someone_listens() {
        let audits = parse(
            br#"[{"ref":"a","args":{"k":"v"}},{"ref":"b","args":{}},3,{"ref":"a","args":{}}]"#,
        )
        .unwrap()
        .value;
        let mut none = Tallies::default();
        none.audits(Some(&audits));
        assert_eq!((none.audit_calls, none.skipped_audits), (0, 0));
        let mut tallies = Tallies {
            audit_refs: Some(Vec::new()),
            evidence: Some(Evidence::new(false)),
            observation_values: true,
            window: Some(WindowTally::new(true, None)),
            ..Tallies::default()
        };
        tallies.audits(Some(&audits));
        tallies.audits(None);
        assert_eq!((tallies.audit_calls, tallies.skipped_audits), (3, 1));
        assert_eq!(tallies.audit_refs, Some(vec![b"a".to_vec(), b"b".to_vec()]));
        assert_eq!(tallies.evidence.as_ref().unwrap().tallies.len(), 1);
        assert_eq!(tallies.window.as_ref().unwrap().entries.len(), 1);
    }
}
