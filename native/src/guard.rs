//! The trace-V1 guard (spec §1.2): which traces the meter hears, and why the others are
//! skipped.
//!
//! The specification is `_guard` in `pytest_entropy/ingest/guard.py`; every check runs in
//! its order and refuses with its reason text, so the rejection counts and notes are the
//! same. A passing trace comes back as its operations with their shape signatures.
//!
//! The 512 KiB bound is decided as the Python decides it: when the line was valid UTF-8
//! read by the fast reader, its length plus 24 bytes per double (the longest growth of one
//! number's JavaScript text) is an upper bound of the `JSON.stringify` text, and only a
//! trace above that estimate is serialised to be measured exactly.

use crate::json::{JsString, Number, Object, Value};
use crate::signature::{signed_args, value_floats};
use crate::stringify::stringify;
use crate::witness::is_normal_form_witness;

/// `TRACE_KIND`.
pub const TRACE_KIND: &str = "pi-fabric.execution";
/// `TRACE_SIZE_BOUND`: 512 KiB of `JSON.stringify(trace)` in UTF-8.
pub const TRACE_SIZE_BOUND: usize = 524_288;
/// `MAX_FLOAT_GROWTH`.
pub const MAX_FLOAT_GROWTH: usize = 24;
/// `MAX_SAFE_INTEGER` (2**53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

const ENVELOPE_KEYS: [&str; 7] = [
    "kind",
    "version",
    "outcome",
    "phases",
    "operations",
    "counts",
    "error",
];
/// The operation's keys; the last, a normal-form witness, only metric v3's guard allows.
const OPERATION_KEYS: [&str; 12] = [
    "type",
    "sequence",
    "ref",
    "provider",
    "action",
    "args",
    "outcome",
    "failureStage",
    "error",
    "result",
    "resultTruncated",
    "normalization",
];
const COUNT_KEYS: [&str; 4] = [
    "droppedValues",
    "truncatedValues",
    "redactedValues",
    "droppedOperations",
];
/// `OUTCOMES`.
pub const OUTCOMES: [&str; 4] = ["succeeded", "failed", "aborted", "timed_out"];
/// `FAILURE_STAGES`.
pub const FAILURE_STAGES: [&str; 6] = [
    "resolve", "prepare", "validate", "approve", "invoke", "guard",
];

/// One operation that passed, with its signature (`SignedOperation` without a copy of
/// anything but the signature).
#[derive(Debug)]
pub struct SignedOperation<'a> {
    pub reference: &'a JsString<'a>,
    pub args: &'a Object<'a>,
    pub outcome: &'static str,
    pub stage: Option<&'static str>,
    pub signature: Vec<u8>,
}

/// A passing trace: its operations and its task key (`phases[0]`, if any).
#[derive(Debug)]
pub struct Guarded<'a> {
    pub operations: Vec<SignedOperation<'a>>,
    pub task_key: Option<&'a JsString<'a>>,
}

/// Why a trace is not metered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The reason the diagnostics count.
    Reason(&'static str),
    /// The trace was read with its strings elided ([`crate::json::Select::Shape`]) and its
    /// exact `JSON.stringify` size is needed: guard the whole trace instead.
    NeedsWholeTrace,
}

/// The member `key` of an object (the last duplicate won at parse time).
pub fn get<'a>(object: &'a Object<'a>, key: &str) -> Option<&'a Value<'a>> {
    object
        .entries()
        .iter()
        .find(|(k, _)| k.as_wtf8() == key.as_bytes())
        .map(|(_, v)| v)
}

fn is_text(value: Option<&Value>, text: &str) -> bool {
    matches!(value, Some(Value::String(s)) if s.as_wtf8() == text.as_bytes())
}

/// The entry of `table` a string value names, if it is a string and names one.
fn one_of(value: Option<&Value>, table: &[&'static str]) -> Option<&'static str> {
    let Some(Value::String(s)) = value else {
        return None;
    };
    table.iter().copied().find(|t| t.as_bytes() == s.as_wtf8())
}

/// An object's members by the position of their key in `names`, found in one pass; `None`
/// when a key is not among them (keys are unique: the parser kept the last duplicate).
fn members<'a, const N: usize>(
    object: &'a Object<'a>,
    names: &[&str; N],
) -> Option<[Option<&'a Value<'a>>; N]> {
    let mut found = [None; N];
    for (key, value) in object.entries() {
        let at = names
            .iter()
            .position(|name| name.as_bytes() == key.as_wtf8())?;
        found[at] = Some(value);
    }
    Some(found)
}

/// `safe_count`: an integer (or integral double) from 0 to 2**53 - 1.
fn safe_count(value: &Value) -> bool {
    match value {
        Value::Number(Number::Int(v)) => (0..=MAX_SAFE_INTEGER as i64).contains(v),
        Value::Number(Number::UInt(v)) => *v <= MAX_SAFE_INTEGER as u64,
        Value::Number(Number::Float(v)) => {
            v.is_finite() && *v == v.trunc() && (0.0..=MAX_SAFE_INTEGER).contains(v)
        }
        _ => false,
    }
}

fn is_float(value: &Value) -> bool {
    matches!(value, Value::Number(Number::Float(_)))
}

/// The envelope's checks before its operations; returns its operations and the doubles
/// it holds.
fn check_envelope<'a>(trace: &'a Object<'a>) -> Result<(&'a [Value<'a>], usize), &'static str> {
    let [kind, version, outcome, phases, operations, counts, error] =
        members(trace, &ENVELOPE_KEYS).ok_or("unknown envelope key")?;
    if !is_text(kind, TRACE_KIND) {
        return Err("kind is not pi-fabric.execution");
    }
    let version_is_one = match version {
        Some(Value::Number(n @ (Number::Int(_) | Number::UInt(_) | Number::Float(_)))) => {
            n.to_f64() == 1.0
        }
        _ => false,
    };
    if !version_is_one {
        return Err("version is not 1");
    }
    if one_of(outcome, &OUTCOMES).is_none() {
        return Err("invalid envelope outcome");
    }
    let Some(Value::Array(phases)) = phases else {
        return Err("phases is not an array");
    };
    if !phases.iter().all(|p| matches!(p, Value::String(_))) {
        return Err("phases holds a non-string");
    }
    let Some(Value::Array(operations)) = operations else {
        return Err("operations is not an array");
    };
    let Some(Value::Object(counts)) = counts else {
        return Err("invalid counts");
    };
    let present = members(counts, &COUNT_KEYS).ok_or("invalid counts")?;
    if present.iter().any(Option::is_none) {
        return Err("invalid counts");
    }
    let mut floats = usize::from(version.is_some_and(is_float));
    for (_, count) in counts.entries() {
        if !safe_count(count) {
            return Err("invalid counts");
        }
        floats += usize::from(is_float(count));
    }
    if error.is_some_and(|e| !matches!(e, Value::String(_))) {
        return Err("envelope error is not a string");
    }
    Ok((operations, floats))
}

/// An operation's members, by their position in [`OPERATION_KEYS`].
type OperationMembers<'a> = [Option<&'a Value<'a>>; 12];

/// The checks of an operation's optional members; returns its failure stage and the
/// doubles of its result (under metric v3 its witness is checked last).
fn check_optional(
    op: &OperationMembers<'_>,
) -> Result<(Option<&'static str>, usize), &'static str> {
    let [_, _, _, provider, action, _, _, stage, error, result, truncated, witness] = *op;
    let not_text = |v: Option<&Value>| v.is_some_and(|v| !matches!(v, Value::String(_)));
    if not_text(provider) {
        return Err("provider is not a string");
    }
    if not_text(action) {
        return Err("action is not a string");
    }
    let stage = match stage {
        Some(value) => Some(one_of(Some(value), &FAILURE_STAGES).ok_or("invalid failureStage")?),
        None => None,
    };
    if not_text(error) {
        return Err("operation error is not a string");
    }
    let mut floats = 0;
    if let Some(result) = result {
        floats = value_floats(result).ok_or("result is not a bounded JSON value")?;
    }
    if truncated.is_some_and(|v| !matches!(v, Value::Bool(_))) {
        return Err("resultTruncated is not a boolean");
    }
    if witness.is_some_and(|w| !is_normal_form_witness(w)) {
        return Err("normalization is not a normal-form witness");
    }
    Ok((stage, floats))
}

/// The sequence rule: an integer (or integral double) above the previous one, at most
/// 2**53 - 1. Every accepted sequence is an exact double, so comparing doubles is exact.
fn check_sequence(value: Option<&Value>, previous: f64) -> Result<(f64, usize), &'static str> {
    const WHY: &str = "invalid or non-increasing sequence";
    match value {
        Some(Value::Number(Number::Int(v))) => {
            let v = *v;
            if (v as i128) <= previous as i128 || v as i128 > MAX_SAFE_INTEGER as i128 {
                return Err(WHY);
            }
            Ok((v as f64, 0))
        }
        Some(Value::Number(Number::UInt(_) | Number::Big(_))) => Err(WHY),
        Some(value @ Value::Number(Number::Float(v))) if safe_count(value) && *v > previous => {
            Ok((*v, 1))
        }
        _ => Err(WHY),
    }
}

fn check_operation<'a>(
    op: &'a Value<'a>,
    previous: &mut f64,
    v3: bool,
) -> Result<(SignedOperation<'a>, usize), &'static str> {
    let Value::Object(op) = op else {
        return Err("operation is not an object");
    };
    let found = members(op, &OPERATION_KEYS).ok_or("unknown operation key")?;
    if !v3 && found[11].is_some() {
        return Err("unknown operation key");
    }
    let [kind, sequence, reference, _, _, args_value, outcome, ..] = found;
    if !is_text(kind, "call") {
        return Err("operation type is not call");
    }
    let (sequence, mut floats) = check_sequence(sequence, *previous)?;
    *previous = sequence;
    let Some(Value::String(reference)) = reference else {
        return Err("ref is not a string");
    };
    let Some(args @ Value::Object(args_object)) = args_value else {
        return Err("args is not an object");
    };
    let outcome = one_of(outcome, &OUTCOMES).ok_or("invalid operation outcome")?;
    let (stage, result_floats) = check_optional(&found)?;
    floats += result_floats;
    let (signature, arg_floats) = signed_args(args).ok_or("args is not a bounded JSON value")?;
    floats += arg_floats;
    let signed = SignedOperation {
        reference,
        args: args_object,
        outcome,
        stage,
        signature,
    };
    Ok((signed, floats))
}

/// `guard_signed(trace, source_length, metric_version=...)`: the passing trace, or why it
/// is skipped. `source_length` is the line's byte length when the fast reader read it,
/// else `None`; `whole` says whether the trace's strings were all read (not elided); `v3`
/// is metric v3's guard, which also accepts an operation's normal-form witness.
pub fn guard<'a>(
    trace: &'a Value<'a>,
    source_length: Option<usize>,
    whole: bool,
    v3: bool,
) -> Result<Guarded<'a>, Refusal> {
    let Value::Object(envelope) = trace else {
        return Err(Refusal::Reason("trace is not an object"));
    };
    let (operations, mut floats) = check_envelope(envelope).map_err(Refusal::Reason)?;
    let mut signed = Vec::with_capacity(operations.len());
    let mut previous = -1.0;
    for op in operations {
        let (operation, op_floats) =
            check_operation(op, &mut previous, v3).map_err(Refusal::Reason)?;
        floats += op_floats;
        signed.push(operation);
    }
    let estimate_fits =
        source_length.is_some_and(|length| length + MAX_FLOAT_GROWTH * floats <= TRACE_SIZE_BOUND);
    if !estimate_fits {
        if !whole {
            return Err(Refusal::NeedsWholeTrace);
        }
        if stringify(trace).len() > TRACE_SIZE_BOUND {
            return Err(Refusal::Reason("trace larger than 512 KiB"));
        }
    }
    let task_key = match get(envelope, "phases") {
        Some(Value::Array(phases)) => match phases.first() {
            Some(Value::String(first)) => Some(first),
            _ => None,
        },
        _ => None,
    };
    Ok(Guarded {
        operations: signed,
        task_key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn reason(raw: &str) -> &'static str {
        reason_as(raw, false)
    }

    fn reason_as(raw: &str, v3: bool) -> &'static str {
        let value = parse(raw.as_bytes()).expect("valid JSON").value;
        match guard(&value, Some(raw.len()), true, v3) {
            Ok(_) => "",
            Err(Refusal::Reason(why)) => why,
            Err(Refusal::NeedsWholeTrace) => "needs the whole trace",
        }
    }

    const OK: &str = r#"{"kind":"pi-fabric.execution","version":1,"outcome":"succeeded","phases":["t"],"operations":[{"type":"call","sequence":0,"ref":"a","args":{"x":1},"outcome":"failed","failureStage":"validate"}],"counts":{"droppedValues":0,"truncatedValues":0,"redactedValues":0,"droppedOperations":0}}"#;

    #[test]
    fn passes_and_refuses_as_the_specification() {
        assert_eq!(reason(OK), "");
        assert_eq!(reason("[]"), "trace is not an object");
        assert_eq!(
            reason(&OK.replace("\"phases\"", "\"x\"")),
            "unknown envelope key"
        );
        assert_eq!(reason(&OK.replace("\"version\":1", "\"version\":1.0")), "");
        assert_eq!(
            reason(&OK.replace("\"version\":1", "\"version\":true")),
            "version is not 1"
        );
        assert_eq!(
            reason(&OK.replace("\"sequence\":0", "\"sequence\":-1")),
            "invalid or non-increasing sequence"
        );
        assert_eq!(
            reason(&OK.replace("\"sequence\":0", "\"sequence\":0.5")),
            "invalid or non-increasing sequence"
        );
        assert_eq!(
            reason(&OK.replace("\"validate\"", "\"x\"")),
            "invalid failureStage"
        );
        assert_eq!(
            reason(&OK.replace("\"droppedValues\":0", "\"droppedValues\":0.5")),
            "invalid counts"
        );
        assert_eq!(
            reason(&OK.replace("\"droppedValues\":0", "\"droppedValues\":-0")),
            ""
        );
        assert_eq!(
            reason(&OK.replace("\"droppedValues\":0,", "")),
            "invalid counts"
        );
        assert_eq!(
            reason(&OK.replace("{\"x\":1}", "{\"x\":1e400}")),
            "args is not a bounded JSON value"
        );
    }

    #[test]
    fn the_size_bound_is_exact() {
        let pad = |n: usize| OK.replace("\"t\"", &format!("\"{}\"", "x".repeat(n)));
        let base = stringify(&parse(pad(0).as_bytes()).unwrap().value).len();
        let fits = pad(TRACE_SIZE_BOUND - base);
        assert_eq!(reason(&fits), "");
        let value = parse(fits.as_bytes()).unwrap().value;
        assert!(guard(&value, None, true, false).is_ok());
        assert_eq!(
            guard(&value, None, false, false).err(),
            Some(Refusal::NeedsWholeTrace)
        );
        assert_eq!(
            reason(&pad(TRACE_SIZE_BOUND - base + 1)),
            "trace larger than 512 KiB"
        );
    }

    #[test]
    fn only_v3_allows_a_witness_and_checks_it_last() {
        let digest = "ab".repeat(32);
        let witness = format!(
            r#""normalization":{{"version":1,"baseSchemaDigest":"{digest}","beforeShape":"{digest}","afterShape":"{digest}","rules":[{{"kind":"enum-form","key":"mode"}}]}}"#
        );
        let with =
            |member: &str| OK.replace("\"failureStage\"", &format!("{member},\"failureStage\""));
        assert_eq!(reason_as(&with(&witness), true), "");
        assert_eq!(reason_as(&with(&witness), false), "unknown operation key");
        let bad = with(&witness.replace("\"version\":1", "\"version\":2"));
        assert_eq!(
            reason_as(&bad, true),
            "normalization is not a normal-form witness"
        );
        let both = bad.replace("\"validate\"", "\"x\"");
        assert_eq!(reason_as(&both, true), "invalid failureStage");
        let truncated = bad.replace("\"failureStage\"", "\"resultTruncated\":1,\"failureStage\"");
        assert_eq!(
            reason_as(&truncated, true),
            "resultTruncated is not a boolean"
        );
        assert_eq!(
            reason_as(&with("\"resultTruncated\":1"), true),
            "resultTruncated is not a boolean"
        );
    }
}
