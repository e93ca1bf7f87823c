//! The audit harvest of spec §1.4, as `audit_records` in `ingest/native.py` decides it.
//!
//! A trace line's `details.audits` is read only when it is an array. Each member is kept
//! when it is an object whose `ref` is a non-empty string and whose `args` is an object;
//! anything else is skipped (both are counted in the scan's diagnostics). Every kept call
//! yields, in JavaScript's own-key order of its arguments, one value observation per
//! argument that is a string, a number or a boolean (`null`, arrays and objects are not
//! observed). Everything here borrows from the parsed line: nothing is copied.

use crate::json::{JsString, Object, Value};

/// One kept audit call: its ref and its argument object.
#[derive(Clone, Copy, Debug)]
pub struct AuditCall<'a> {
    pub reference: &'a JsString<'a>,
    pub args: &'a Object<'a>,
    /// The same arguments as the value that holds them (what a check is handed).
    pub value: &'a Value<'a>,
}

/// One value observation: `(ref, key, value)` of weight 1.
#[derive(Clone, Copy, Debug)]
pub struct Observation<'a> {
    pub reference: &'a JsString<'a>,
    pub key: &'a JsString<'a>,
    pub value: &'a Value<'a>,
}

/// What one line's audits hold.
#[derive(Debug, Default)]
pub struct Harvest<'a> {
    pub kept: u64,
    pub skipped: u64,
    pub calls: Vec<AuditCall<'a>>,
    pub values: Vec<Observation<'a>>,
}

/// Whether a value is observed: `type(value) in (str, int, float, bool)` in Python.
pub fn is_primitive(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

/// A member of an object by key (the last duplicate already won in the parser).
pub fn member<'a>(object: &'a Object<'a>, key: &str) -> Option<&'a Value<'a>> {
    object
        .entries()
        .iter()
        .find(|(k, _)| k.as_wtf8() == key.as_bytes())
        .map(|(_, v)| v)
}

/// The observations of one argument object, in own-key order, appended to `into`.
pub fn observe<'a>(
    reference: &'a JsString<'a>,
    args: &'a Object<'a>,
    into: &mut Vec<Observation<'a>>,
) {
    let entries = args.entries();
    for at in args.js_order() {
        let (key, value) = &entries[at];
        if is_primitive(value) {
            into.push(Observation {
                reference,
                key,
                value,
            });
        }
    }
}

/// Harvests `audits` (the `audits` member of a line's details, or `None` when absent);
/// `values` says whether the observations are wanted.
pub fn harvest<'a>(audits: Option<&'a Value<'a>>, values: bool) -> Harvest<'a> {
    let mut found = Harvest::default();
    let Some(Value::Array(records)) = audits else {
        return found;
    };
    for record in records {
        let Value::Object(record) = record else {
            found.skipped += 1;
            continue;
        };
        let reference = match member(record, "ref") {
            Some(Value::String(text)) if !text.as_wtf8().is_empty() => text,
            _ => {
                found.skipped += 1;
                continue;
            }
        };
        let (value, args) = match member(record, "args") {
            Some(value @ Value::Object(args)) => (value, args),
            _ => {
                found.skipped += 1;
                continue;
            }
        };
        found.kept += 1;
        found.calls.push(AuditCall {
            reference,
            args,
            value,
        });
        if values {
            observe(reference, args, &mut found.values);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn text(s: &JsString) -> String {
        String::from_utf8_lossy(s.as_wtf8()).into_owned()
    }

    #[test]
    fn keeps_calls_with_a_ref_and_object_args() {
        let line = br#"[{"ref":"a","args":{"x":1,"2":"two","1":true,"n":null,"o":{},"l":[]}},
            {"ref":"","args":{}},{"ref":"b","args":[]},{"ref":3,"args":{}},7,null,
            {"args":{"k":"v"},"ref":"c","ref":"d"}]"#;
        let parsed = parse(line).unwrap();
        let found = harvest(Some(&parsed.value), true);
        assert_eq!((found.kept, found.skipped), (2, 5));
        let refs: Vec<String> = found.calls.iter().map(|c| text(c.reference)).collect();
        assert_eq!(refs, ["a", "d"]);
        let keys: Vec<String> = found.values.iter().map(|o| text(o.key)).collect();
        assert_eq!(keys, ["1", "2", "x", "k"]);
    }

    #[test]
    fn no_array_no_harvest() {
        for raw in [&b"{}"[..], b"null", b"\"x\""] {
            let parsed = parse(raw).unwrap();
            let found = harvest(Some(&parsed.value), true);
            assert_eq!((found.kept, found.skipped), (0, 0));
        }
        assert_eq!(harvest(None, true).kept, 0);
    }

    #[test]
    fn values_only_when_asked() {
        let parsed = parse(br#"[{"ref":"a","args":{"x":1}}]"#).unwrap();
        let found = harvest(Some(&parsed.value), false);
        assert_eq!((found.kept, found.values.len()), (1, 0));
    }
}
