//! Shape signatures (spec §2.3) and the argument-tree check the guard fuses with them.
//!
//! The specification is `shape_signature` in `pytest_entropy/core/fingerprint.py` and
//! `signed_args` / `value_floats` in `pytest_entropy/ingest/guard.py`:
//!
//! * a signature lists an object's first 32 keys in UTF-16 code-unit order as `key:tag`,
//!   joined by `,`, with `…+N` for the keys left out; `()` for empty arguments;
//! * tags: `null`, `str`, `bool`, `num`, `arr`; an object is expanded as `{...}` while its
//!   depth (the arguments' values are at depth 1) is below 3, and is `obj` from there on;
//! * an argument tree is valid when every number is finite for JavaScript (an integer at or
//!   beyond 2**1024 - 2**970 is Infinity there) and no container sits deeper than 14 levels
//!   below `args`; the check also counts the tree's doubles (the guard's size estimate).
//!
//! Signatures are WTF-8 bytes: keys may hold lone surrogates, which pass through unchanged.

use crate::json::{JsString, Number, Object, Value};
use std::cmp::Ordering;

/// `SIGNATURE_MAX_KEYS`.
pub const MAX_KEYS: usize = 32;
/// `SIGNATURE_MAX_DEPTH`.
pub const MAX_DEPTH: usize = 3;
/// `MAX_ARGS_DEPTH`: containers nested deeper than this below `args` are refused.
pub const MAX_ARGS_DEPTH: usize = 14;

/// JavaScript's `<` on strings: UTF-16 code units. UTF-8 byte order is code-point order,
/// which agrees with code-unit order unless one side holds a byte from 0xEE up (U+E000 and
/// above, or an astral character), so only those are compared unit by unit.
pub fn code_unit_cmp(a: &JsString, b: &JsString) -> Ordering {
    let (x, y) = (a.as_wtf8(), b.as_wtf8());
    if x.iter().chain(y).all(|&byte| byte < 0xEE) {
        return x.cmp(y);
    }
    a.code_units().cmp(b.code_units())
}

/// The type tag of a value at `depth`, written into `out`.
fn write_tag(out: &mut Vec<u8>, value: &Value, depth: usize) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::String(_) => out.extend_from_slice(b"str"),
        Value::Bool(_) => out.extend_from_slice(b"bool"),
        Value::Number(_) => out.extend_from_slice(b"num"),
        Value::Array(_) => out.extend_from_slice(b"arr"),
        Value::Object(_) if depth >= MAX_DEPTH => out.extend_from_slice(b"obj"),
        Value::Object(object) => {
            out.push(b'{');
            write_fields(out, object, depth + 1);
            out.push(b'}');
        }
    }
}

/// `_fields`: the first 32 keys in code-unit order, their values tagged at `child`.
fn write_fields(out: &mut Vec<u8>, object: &Object, child: usize) {
    let entries = object.entries();
    let mut order: Vec<usize> = (0..entries.len()).collect();
    if order.len() > 1 {
        order.sort_by(|&a, &b| code_unit_cmp(&entries[a].0, &entries[b].0));
    }
    for (rank, &at) in order.iter().take(MAX_KEYS).enumerate() {
        if rank > 0 {
            out.push(b',');
        }
        let (key, value) = &entries[at];
        out.extend_from_slice(key.as_wtf8());
        out.push(b':');
        write_tag(out, value, child);
    }
    if order.len() > MAX_KEYS {
        out.extend_from_slice(format!(",…+{}", order.len() - MAX_KEYS).as_bytes());
    }
}

/// `shape_signature(args)` as WTF-8 bytes.
pub fn shape_signature(args: &Object) -> Vec<u8> {
    if args.is_empty() {
        return b"()".to_vec();
    }
    let mut out = Vec::with_capacity(16 * args.len() + 2);
    out.push(b'(');
    write_fields(&mut out, args, 1);
    out.push(b')');
    out
}

/// Whether a number is finite for JavaScript, and whether it is a double (a Python float).
fn number_floats(number: &Number) -> Option<usize> {
    match number {
        Number::Int(_) | Number::UInt(_) => Some(0),
        Number::Big(_) => number.to_f64().is_finite().then_some(0),
        Number::Float(v) => v.is_finite().then_some(1),
    }
}

/// Whether a member of a container at `depth` is a non-empty container to descend into;
/// `None` when it makes the tree invalid. Counts the doubles of scalars into `floats`.
fn descend(value: &Value, depth: usize, floats: &mut usize) -> Option<bool> {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => Some(false),
        Value::Number(number) => {
            *floats += number_floats(number)?;
            Some(false)
        }
        Value::Array(items) if items.is_empty() => (depth < MAX_ARGS_DEPTH).then_some(false),
        Value::Object(object) if object.is_empty() => (depth < MAX_ARGS_DEPTH).then_some(false),
        _ => Some(true),
    }
}

/// `_tree_floats`: the doubles in a container's values, or `None` when the tree is not a
/// bounded JSON value. `depth` is the container's own depth (`args` is 0).
fn tree_floats(root: &Value, depth: usize) -> Option<usize> {
    let mut floats = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(root, depth)];
    while let Some((container, depth)) = stack.pop() {
        if depth > MAX_ARGS_DEPTH {
            return None;
        }
        match container {
            Value::Array(items) => {
                for item in items {
                    if descend(item, depth, &mut floats)? {
                        stack.push((item, depth + 1));
                    }
                }
            }
            Value::Object(object) => {
                for (_, item) in object.entries() {
                    if descend(item, depth, &mut floats)? {
                        stack.push((item, depth + 1));
                    }
                }
            }
            _ => {}
        }
    }
    Some(floats)
}

/// `value_floats`: the doubles of any JSON value, `None` when it is not a bounded one.
pub fn value_floats(value: &Value) -> Option<usize> {
    match value {
        Value::Array(_) | Value::Object(_) => tree_floats(value, 0),
        Value::Number(number) => number_floats(number),
        _ => Some(0),
    }
}

/// `signed_args`: the signature and the doubles of a valid argument tree, else `None`.
pub fn signed_args(args: &Value) -> Option<(Vec<u8>, usize)> {
    let Value::Object(object) = args else {
        return None;
    };
    if object.is_empty() {
        return Some((b"()".to_vec(), 0));
    }
    let floats = tree_floats(args, 0)?;
    Some((shape_signature(object), floats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn signature(raw: &str) -> String {
        let value = parse(raw.as_bytes()).expect("valid JSON").value;
        let Value::Object(object) = &value else {
            panic!("not an object")
        };
        String::from_utf8(shape_signature(object)).expect("UTF-8")
    }

    fn floats(raw: &str) -> Option<usize> {
        signed_args(&parse(raw.as_bytes()).expect("valid JSON").value).map(|(_, n)| n)
    }

    #[test]
    fn signatures_as_the_specification() {
        assert_eq!(
            signature(r#"{"path":"y","limit":10}"#),
            "(limit:num,path:str)"
        );
        assert_eq!(signature("{}"), "()");
        assert_eq!(
            signature(r#"{"a":{"b":{"c":{"d":1}}},"n":null,"t":true,"l":[1]}"#),
            "(a:{b:{c:obj}},l:arr,n:null,t:bool)"
        );
        // U+FF01 sorts after an astral character in code points, before it in code units.
        assert_eq!(
            signature("{\"\u{FF01}\":1,\"\u{1F600}\":2}"),
            "(\u{1F600}:num,\u{FF01}:num)"
        );
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i:02}\":1")).collect();
        let text = signature(&format!("{{{}}}", many.join(",")));
        assert!(text.ends_with("k31:num,…+8)"), "{text}");
    }

    #[test]
    fn argument_trees_are_bounded() {
        assert_eq!(floats(r#"{"a":1.5,"b":[2.5,{"c":0.5}],"d":3}"#), Some(3));
        let deep = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n), "]".repeat(n));
        assert_eq!(floats(&deep(14)), Some(0));
        assert_eq!(floats(&deep(15)), None);
        assert_eq!(floats(r#"{"a":1e400}"#), None);
        assert_eq!(floats(&format!("{{\"a\":{}}}", "9".repeat(309))), None);
        // A fast line reads an integer beyond 64 bits as a double (orjson).
        assert_eq!(floats(&format!("{{\"a\":{}}}", "9".repeat(308))), Some(1));
    }
}
