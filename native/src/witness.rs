//! Metric v3's normal-form witness (notes §6.7): the shape an operation's `normalization`
//! member must have for the v3 guard to let the trace through.
//!
//! The specification is `is_normal_form_witness` in `pytest_entropy/core/v3/normal_form.py`:
//! an object of exactly five members (`version` 1, the three 64-character lowercase hex
//! digests `baseSchemaDigest`, `beforeShape` and `afterShape`, and `rules`), whose `rules`
//! hold 1 to 128 objects of exactly `kind` (one of the four rule kinds) and `key` (at most
//! 128 UTF-16 code units, never a key a JavaScript host could turn into a prototype write).

use crate::guard::get;
use crate::json::{JsString, Number, Value};

/// `MAX_NORMAL_FORM_RULES`.
const MAX_RULES: usize = 128;
/// `MAX_KEY_LENGTH`, in UTF-16 code units.
const MAX_KEY_LENGTH: usize = 128;
/// `NORMAL_FORM_RULE_KINDS`.
const RULE_KINDS: [&str; 4] = ["key-form", "enum-form", "numeric-string", "optional-null"];
/// `UNSAFE_KEYS`.
const UNSAFE_KEYS: [&str; 3] = ["__proto__", "prototype", "constructor"];

/// `String.prototype.length` of WTF-8 text: one unit per code point, two for an astral
/// one (a lone surrogate is one code point of three bytes).
fn utf16_length(text: &[u8]) -> usize {
    text.iter()
        .map(|&byte| match byte {
            0x80..=0xBF => 0,
            0xF0..=0xFF => 2,
            _ => 1,
        })
        .sum()
}

/// `value === 1`: a number equal to one (a boolean is not a number).
fn is_one(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Number(n @ (Number::Int(_) | Number::UInt(_) | Number::Float(_)))) => {
            n.to_f64() == 1.0
        }
        _ => false,
    }
}

/// Exactly 64 characters of `[a-f0-9]`.
fn is_digest(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::String(s))
        if s.as_wtf8().len() == 64
            && s.as_wtf8().iter().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')))
}

fn is_safe_key(key: &JsString) -> bool {
    let bytes = key.as_wtf8();
    utf16_length(bytes) <= MAX_KEY_LENGTH && !UNSAFE_KEYS.iter().any(|u| u.as_bytes() == bytes)
}

fn is_rule(value: &Value) -> bool {
    let Value::Object(rule) = value else {
        return false;
    };
    if rule.entries().len() != 2 {
        return false;
    }
    let key_ok = matches!(get(rule, "key"), Some(Value::String(key)) if is_safe_key(key));
    let kind_ok = matches!(get(rule, "kind"), Some(Value::String(kind))
        if RULE_KINDS.iter().any(|k| k.as_bytes() == kind.as_wtf8()));
    key_ok && kind_ok
}

fn are_rules(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Array(rules)) => {
            !rules.is_empty() && rules.len() <= MAX_RULES && rules.iter().all(is_rule)
        }
        _ => false,
    }
}

/// `is_normal_form_witness(value)`.
pub fn is_normal_form_witness(value: &Value) -> bool {
    let Value::Object(witness) = value else {
        return false;
    };
    if witness.entries().len() != 5 || !is_one(get(witness, "version")) {
        return false;
    }
    ["baseSchemaDigest", "beforeShape", "afterShape"]
        .iter()
        .all(|name| is_digest(get(witness, name)))
        && are_rules(get(witness, "rules"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn witness(raw: &str) -> bool {
        is_normal_form_witness(&parse(raw.as_bytes()).expect("valid JSON").value)
    }

    const D: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn text(version: &str, rules: &str) -> String {
        format!(
            r#"{{"version":{version},"baseSchemaDigest":"{D}","beforeShape":"{D}","afterShape":"{D}","rules":{rules}}}"#
        )
    }

    #[test]
    fn accepts_exactly_the_wire_shape() {
        let rule = r#"{"kind":"key-form","key":"path"}"#;
        assert!(witness(&text("1", &format!("[{rule}]"))));
        assert!(witness(&text("1.0", &format!("[{rule}]"))));
        assert!(!witness(&text("true", &format!("[{rule}]"))));
        assert!(!witness(&text("2", &format!("[{rule}]"))));
        assert!(!witness(&text("1", "[]")));
        assert!(!witness(&text(
            "1",
            &format!("[{}]", vec![rule; 129].join(","))
        )));
        assert!(witness(&text(
            "1",
            &format!("[{}]", vec![rule; 128].join(","))
        )));
        assert!(!witness(&text("1", r#"[{"kind":"other","key":"k"}]"#)));
        assert!(!witness(&text(
            "1",
            r#"[{"kind":"key-form","key":"__proto__"}]"#
        )));
        assert!(!witness(&text(
            "1",
            r#"[{"kind":"key-form","key":"k","x":1}]"#
        )));
        assert!(witness(&text("1", r#"[{"kind":"key-form","key":""}]"#)));
        let long = |n: usize, unit: &str| {
            text(
                "1",
                &format!(r#"[{{"kind":"key-form","key":"{}"}}]"#, unit.repeat(n)),
            )
        };
        assert!(witness(&long(128, "a")));
        assert!(!witness(&long(129, "a")));
        assert!(witness(&long(64, "\u{1F600}")));
        assert!(!witness(&long(65, "\u{1F600}")));
        assert!(witness(&long(128, "\\ud800")));
        assert!(!witness(
            &text("1", "[1]").replace(&format!("\"{D}\""), "\"A\"")
        ));
        assert!(!witness(&text("1", &format!("[{rule}]")).replacen(
            D,
            &D.to_uppercase(),
            1
        )));
        assert!(!witness(
            &text("1", &format!("[{rule}]")).replace("\"afterShape\"", "\"other\"")
        ));
        assert!(!witness("[]"));
    }
}
