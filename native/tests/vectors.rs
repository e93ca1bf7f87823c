//! The crate against the plain Python specification, on the vectors in `tests/data/`
//! (written by `tests/make_vectors.py`, which says how to regenerate them).
//!
//! The vector files are read with the crate's own parser: they are plain ASCII JSON, and a
//! parser that misread them would fail these comparisons rather than pass them.

use _core::jsnum::{double_text, number_text};
use _core::json::{parse, JsString, Number, Value};
use _core::lines::{may_mention, split_lines, Line, LineKind, LineSplitter, Prefilter};
use _core::stringify::stringify;
use std::fmt::Write;

fn load(name: &str) -> Value<'static> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let parsed = parse(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    parsed.value.into_owned()
}

fn field<'a>(value: &'a Value<'a>, name: &str) -> &'a Value<'a> {
    let Value::Object(object) = value else {
        panic!("not an object: {value:?}")
    };
    let key = JsString::from(name);
    &object
        .entries()
        .iter()
        .find(|(k, _)| *k == key)
        .unwrap_or_else(|| panic!("no field {name}"))
        .1
}

fn text<'a>(value: &'a Value<'a>) -> &'a str {
    match value {
        Value::String(s) => s.as_str().expect("ASCII"),
        other => panic!("not a string: {other:?}"),
    }
}

fn items<'a>(value: &'a Value<'a>) -> &'a [Value<'a>] {
    match value {
        Value::Array(items) => items,
        other => panic!("not an array: {other:?}"),
    }
}

fn flag(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        other => panic!("not a boolean: {other:?}"),
    }
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).expect("hex"))
        .collect()
}

/// `json.dumps(s)` (ASCII): how make_vectors.py describes a string.
fn describe_string(out: &mut String, s: &JsString) {
    out.push('"');
    for unit in s.code_units() {
        match unit {
            0x22 => out.push_str("\\\""),
            0x5C => out.push_str("\\\\"),
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            0x20..=0x7E => out.push(unit as u8 as char),
            _ => write!(out, "\\u{unit:04x}").expect("write to a String"),
        }
    }
    out.push('"');
}

/// The crate's twin of make_vectors.py's `describe`.
fn describe(root: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value<'a>),
        Text(&'static str),
        Key(&'a JsString<'a>, bool),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Value(root)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(key, first) => {
                out.push(if first { '{' } else { ',' });
                describe_string(&mut out, key);
                out.push(':');
            }
            Step::Value(value) => match value {
                Value::Null => out.push('n'),
                Value::Bool(true) => out.push('t'),
                Value::Bool(false) => out.push('f'),
                Value::Number(Number::Int(v)) => write!(out, "i{v}").expect("write"),
                Value::Number(Number::UInt(v)) => write!(out, "i{v}").expect("write"),
                Value::Number(Number::Big(v)) => write!(out, "i{v}").expect("write"),
                Value::Number(Number::Float(v)) => {
                    write!(out, "d{:016x}", v.to_bits()).expect("write")
                }
                Value::String(s) => {
                    out.push('s');
                    describe_string(&mut out, s);
                }
                Value::Array(items) => {
                    stack.push(Step::Text("]"));
                    for (at, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Text(if at == 0 { "[" } else { "," }));
                    }
                    if items.is_empty() {
                        stack.push(Step::Text("["));
                    }
                }
                Value::Object(object) => {
                    stack.push(Step::Text("}"));
                    for (at, (key, item)) in object.entries().iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(key, at == 0));
                    }
                    if object.is_empty() {
                        stack.push(Step::Text("{"));
                    }
                }
            },
        }
    }
    out
}

#[test]
fn json_as_the_specification() {
    let data = load("json.json");
    let cases = items(field(&data, "cases"));
    assert!(cases.len() > 2000, "too few vectors: {}", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let input = unhex(text(field(case, "input")));
        let got = parse(&input);
        let expected_ok = flag(field(case, "ok"));
        match (&got, expected_ok) {
            (Err(_), false) => continue,
            (Ok(parsed), true) => {
                let value = describe(&parsed.value);
                if parsed.fast != flag(field(case, "fast"))
                    || value != text(field(case, "value"))
                    || stringify(&parsed.value) != text(field(case, "stringify"))
                {
                    failures.push(format!(
                        "{}: fast {} value {}",
                        text(field(case, "input")),
                        parsed.fast,
                        &value[..value.len().min(200)]
                    ));
                }
            }
            (got, _) => failures.push(format!("{}: {got:?}", text(field(case, "input")))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// A selective read accepts and refuses what the full parse does, with the same `fast`,
/// and builds the selected members as the full parse builds them.
#[test]
fn selective_reads_decide_as_the_full_parse() {
    use _core::json::{parse_selected, Select};
    const NOTHING: Select = Select::Members(&[]);
    const SOME: Select = Select::Members(&[("a", Select::All), ("b", NOTHING)]);
    const ITEMS: Select = Select::Items(&Select::Shape);
    const OBJECT: Select = Select::Object(&[("a", ITEMS)], &Select::Shape);
    let data = load("json.json");
    let mut failures = Vec::new();
    for case in items(field(&data, "cases")) {
        let input = unhex(text(field(case, "input")));
        let full = parse(&input);
        for (at, select) in [&NOTHING, &SOME, &ITEMS, &OBJECT, &Select::Shape]
            .into_iter()
            .enumerate()
        {
            let got = parse_selected(&input, select);
            let same = match (&full, &got) {
                (Err(_), Err(_)) => true,
                (Ok(a), Ok(b)) if at >= 2 => a.fast == b.fast,
                (Ok(a), Ok(b)) => {
                    a.fast == b.fast
                        && match (&a.value, &b.value) {
                            (Value::Object(whole), Value::Object(part)) => {
                                part.entries().iter().all(|(k, v)| {
                                    k.as_wtf8() != b"a"
                                        || whole.entries().iter().any(|(wk, wv)| wk == k && wv == v)
                                })
                            }
                            (_, Value::Null) => true,
                            _ => false,
                        }
                }
                _ => false,
            };
            if !same {
                failures.push(format!(
                    "{}: {select:?} {got:?}",
                    text(field(case, "input"))
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn number_text_as_the_specification() {
    let data = load("jsnum.json");
    for pair in items(field(&data, "doubles")) {
        let [bits, expected] = items(pair) else {
            panic!("not a pair")
        };
        let x = f64::from_bits(u64::from_str_radix(text(bits), 16).expect("hex bits"));
        assert_eq!(double_text(x), text(expected), "{}", text(bits));
    }
    for pair in items(field(&data, "integers")) {
        let [digits, expected] = items(pair) else {
            panic!("not a pair")
        };
        let line = format!("\u{feff}{}", text(digits));
        let parsed = parse(line.as_bytes()).expect("an integer");
        let Value::Number(number) = &parsed.value else {
            panic!("not a number")
        };
        assert_eq!(number_text(number), text(expected), "{}", text(digits));
    }
}

fn owned(line: Line<'_>) -> Option<Vec<u8>> {
    match line {
        Line::Text(bytes) => Some(bytes.into_owned()),
        Line::Oversized => None,
    }
}

#[test]
fn lines_as_the_specification() {
    let data = load("lines.json");
    let mentions: Vec<Vec<u8>> = items(field(&data, "mentions"))
        .iter()
        .map(|m| text(m).as_bytes().to_vec())
        .collect();
    let mentions: Vec<&[u8]> = mentions.iter().map(Vec::as_slice).collect();
    let filter = Prefilter::default();
    for case in items(field(&data, "cases")) {
        let input = unhex(text(field(case, "input")));
        let cap = match field(case, "cap") {
            Value::Number(Number::Int(cap)) => *cap as usize,
            other => panic!("{other:?}"),
        };
        let expected: Vec<Option<Vec<u8>>> = items(field(case, "lines"))
            .iter()
            .map(|line| match line {
                Value::Null => None,
                other => Some(unhex(text(other))),
            })
            .collect();
        let terminated = flag(field(case, "terminated"));
        let (lines, whole_terminated) = split_lines(&input, cap);
        let kinds: Vec<&str> = lines
            .iter()
            .map(|line| match filter.classify(line) {
                LineKind::Trace => "trace",
                LineKind::Oversized => "oversized",
                LineKind::Empty => "empty",
                LineKind::Model => "model",
                LineKind::Ignored => "ignored",
            })
            .collect();
        let expected_kinds: Vec<&str> = items(field(case, "kinds")).iter().map(text).collect();
        assert_eq!(kinds, expected_kinds, "{}", text(field(case, "input")));
        let mention: Vec<bool> = lines
            .iter()
            .map(|line| may_mention(line.bytes(), &mentions))
            .collect();
        let expected_mention: Vec<bool> = items(field(case, "mentions")).iter().map(flag).collect();
        assert_eq!(mention, expected_mention);
        let whole: Vec<_> = lines.into_iter().map(owned).collect();
        assert_eq!((whole, whole_terminated), (expected.clone(), terminated));
        for size in items(field(case, "chunks")) {
            let Value::Number(Number::Int(size)) = size else {
                panic!("not a size")
            };
            let mut splitter = LineSplitter::new(cap);
            let mut got = Vec::new();
            for chunk in input.chunks(*size as usize) {
                let mut out = Vec::new();
                splitter.feed(chunk, &mut out);
                got.extend(out.into_iter().map(owned));
            }
            got.extend(splitter.finish().map(owned));
            assert_eq!(
                (got, splitter.terminated()),
                (expected.clone(), terminated),
                "chunk {size}"
            );
        }
    }
}
