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
const OPERATION_KEYS: [&str; 11] = [
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
    pub reference: &'a JsString,
    pub args: &'a Object,
    pub outcome: &'static str,
    pub stage: Option<&'static str>,
    pub signature: Vec<u8>,
}

/// A passing trace: its operations and its task key (`phases[0]`, if any).
#[derive(Debug)]
pub struct Guarded<'a> {
    pub operations: Vec<SignedOperation<'a>>,
    pub task_key: Option<&'a JsString>,
}

/// The member `key` of an object (the last duplicate won at parse time).
pub fn get<'a>(object: &'a Object, key: &str) -> Option<&'a Value> {
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

fn keys_within(object: &Object, allowed: &[&str]) -> bool {
    object
        .entries()
        .iter()
        .all(|(k, _)| allowed.iter().any(|a| a.as_bytes() == k.as_wtf8()))
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

/// The envelope's checks before its operations; returns the doubles it holds.
fn check_envelope(trace: &Object) -> Result<usize, &'static str> {
    if !keys_within(trace, &ENVELOPE_KEYS) {
        return Err("unknown envelope key");
    }
    if !is_text(get(trace, "kind"), TRACE_KIND) {
        return Err("kind is not pi-fabric.execution");
    }
    let version = get(trace, "version");
    let version_is_one = match version {
        Some(Value::Number(n @ (Number::Int(_) | Number::UInt(_) | Number::Float(_)))) => {
            n.to_f64() == 1.0
        }
        _ => false,
    };
    if !version_is_one {
        return Err("version is not 1");
    }
    if one_of(get(trace, "outcome"), &OUTCOMES).is_none() {
        return Err("invalid envelope outcome");
    }
    let Some(Value::Array(phases)) = get(trace, "phases") else {
        return Err("phases is not an array");
    };
    if !phases.iter().all(|p| matches!(p, Value::String(_))) {
        return Err("phases holds a non-string");
    }
    if !matches!(get(trace, "operations"), Some(Value::Array(_))) {
        return Err("operations is not an array");
    }
    let Some(Value::Object(counts)) = get(trace, "counts") else {
        return Err("invalid counts");
    };
    if counts.len() != COUNT_KEYS.len() || !keys_within(counts, &COUNT_KEYS) {
        return Err("invalid counts");
    }
    let mut floats = usize::from(version.is_some_and(is_float));
    for (_, count) in counts.entries() {
        if !safe_count(count) {
            return Err("invalid counts");
        }
        floats += usize::from(is_float(count));
    }
    if get(trace, "error").is_some_and(|e| !matches!(e, Value::String(_))) {
        return Err("envelope error is not a string");
    }
    Ok(floats)
}

/// The checks of an operation's optional members; returns its failure stage and the
/// doubles of its result.
fn check_optional(op: &Object) -> Result<(Option<&'static str>, usize), &'static str> {
    let not_text = |key: &str| get(op, key).is_some_and(|v| !matches!(v, Value::String(_)));
    if not_text("provider") {
        return Err("provider is not a string");
    }
    if not_text("action") {
        return Err("action is not a string");
    }
    let mut stage = None;
    if let Some(value) = get(op, "failureStage") {
        stage = Some(one_of(Some(value), &FAILURE_STAGES).ok_or("invalid failureStage")?);
    }
    if not_text("error") {
        return Err("operation error is not a string");
    }
    let mut floats = 0;
    if let Some(result) = get(op, "result") {
        floats = value_floats(result).ok_or("result is not a bounded JSON value")?;
    }
    if get(op, "resultTruncated").is_some_and(|v| !matches!(v, Value::Bool(_))) {
        return Err("resultTruncated is not a boolean");
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
    op: &'a Value,
    previous: &mut f64,
) -> Result<(SignedOperation<'a>, usize), &'static str> {
    let Value::Object(op) = op else {
        return Err("operation is not an object");
    };
    if !keys_within(op, &OPERATION_KEYS) {
        return Err("unknown operation key");
    }
    if !is_text(get(op, "type"), "call") {
        return Err("operation type is not call");
    }
    let (sequence, mut floats) = check_sequence(get(op, "sequence"), *previous)?;
    *previous = sequence;
    let Some(Value::String(reference)) = get(op, "ref") else {
        return Err("ref is not a string");
    };
    let args_value = get(op, "args");
    let Some(Value::Object(args)) = args_value else {
        return Err("args is not an object");
    };
    let outcome = one_of(get(op, "outcome"), &OUTCOMES).ok_or("invalid operation outcome")?;
    let (stage, result_floats) = check_optional(op)?;
    floats += result_floats;
    let (signature, arg_floats) = signed_args(args_value.unwrap_or(&Value::Null))
        .ok_or("args is not a bounded JSON value")?;
    floats += arg_floats;
    let signed = SignedOperation {
        reference,
        args,
        outcome,
        stage,
        signature,
    };
    Ok((signed, floats))
}

/// `guard_signed(trace, source_length)`: the passing trace, or the reason it is skipped.
/// `source_length` is the line's byte length when the fast reader read it, else `None`.
pub fn guard(trace: &Value, source_length: Option<usize>) -> Result<Guarded<'_>, &'static str> {
    let Value::Object(envelope) = trace else {
        return Err("trace is not an object");
    };
    let mut floats = check_envelope(envelope)?;
    let Some(Value::Array(operations)) = get(envelope, "operations") else {
        return Err("operations is not an array");
    };
    let mut signed = Vec::with_capacity(operations.len());
    let mut previous = -1.0;
    for op in operations {
        let (operation, op_floats) = check_operation(op, &mut previous)?;
        floats += op_floats;
        signed.push(operation);
    }
    let estimate_fits =
        source_length.is_some_and(|length| length + MAX_FLOAT_GROWTH * floats <= TRACE_SIZE_BOUND);
    if !estimate_fits && stringify(trace).len() > TRACE_SIZE_BOUND {
        return Err("trace larger than 512 KiB");
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
        let value = parse(raw.as_bytes()).expect("valid JSON").value;
        match guard(&value, Some(raw.len())) {
            Ok(_) => "",
            Err(why) => why,
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
        assert!(guard(&value, None).is_ok());
        assert_eq!(
            reason(&pad(TRACE_SIZE_BOUND - base + 1)),
            "trace larger than 512 KiB"
        );
    }
}
