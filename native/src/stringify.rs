//! `JSON.stringify(value)` text of a parsed value (`js_stringify` in `core/canonical.py`):
//! compact, members in JavaScript's own-key order, strings escaped as ES2019's well-formed
//! `JSON.stringify` does (`\"`, `\\`, `\b \f \n \r \t`, other controls as lowercase
//! `\u00xx`, a lone surrogate as lowercase `\udxxx`, everything else as itself).
//!
//! The canonical form that `stable_json_hash` hashes orders keys by ICU collation, which
//! stays in Python (issue 28 allows it); this writer has no canonical mode.

use crate::jsnum::json_number_text;
use crate::json::{JsString, Value};

/// The compact `JSON.stringify` text of `value`; iterative, so depth is no limit.
pub fn stringify(value: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value<'a>),
        Text(&'static str),
        Key(&'a JsString<'a>, bool),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(text) => out.push_str(text),
            Step::Key(key, first) => {
                out.push_str(if first { "{" } else { "," });
                write_string(&mut out, key);
                out.push(':');
            }
            Step::Value(value) => match value {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => out.push_str(&json_number_text(n)),
                Value::String(s) => write_string(&mut out, s),
                Value::Array(items) if items.is_empty() => out.push_str("[]"),
                Value::Object(object) if object.is_empty() => out.push_str("{}"),
                Value::Array(items) => {
                    stack.push(Step::Text("]"));
                    for (at, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Text(if at == 0 { "[" } else { "," }));
                    }
                }
                Value::Object(object) => {
                    stack.push(Step::Text("}"));
                    let order = object.js_order();
                    for (rank, &at) in order.iter().enumerate().rev() {
                        let (key, item) = &object.entries()[at];
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(key, rank == 0));
                    }
                }
            },
        }
    }
    out
}

/// A string literal as `JSON.stringify` writes it.
pub fn write_string(out: &mut String, s: &JsString) {
    out.push('"');
    for cp in s.code_points() {
        match cp {
            0x22 => out.push_str("\\\""),
            0x5C => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0x00..=0x1F | 0xD800..=0xDFFF => out.push_str(&format!("\\u{cp:04x}")),
            _ => out.push(char::from_u32(cp).unwrap_or('\u{FFFD}')),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn roundtrip(raw: &str) -> String {
        stringify(&parse(raw.as_bytes()).expect("valid JSON").value)
    }

    #[test]
    fn writes_as_javascript() {
        assert_eq!(
            roundtrip(r#" {"b":[1.0,-0,1e400,"\u0001\u007f"],"1":{},"a":[]} "#),
            "{\"1\":{},\"b\":[1,0,null,\"\\u0001\u{7f}\"],\"a\":[]}"
        );
        assert_eq!(
            roundtrip(r#""\ud800\udbff\udc00\"\\\/\b\f\n\r\t""#),
            "\"\\ud800\u{10FC00}\\\"\\\\/\\b\\f\\n\\r\\t\""
        );
        assert_eq!(roundtrip(r#"{"a":1,"a":2}"#), r#"{"a":2}"#);
    }

    #[test]
    fn deep_values() {
        let text = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(roundtrip(&text), text);
    }
}
