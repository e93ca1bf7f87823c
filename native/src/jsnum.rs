//! JavaScript's Number-to-String (`String(x)`), as `js_string` in `core/jscompat.py`.
//!
//! Doubles go through `ryu-js`, which implements ECMAScript's algorithm (shortest
//! round-trip digits, `1e+21` past 21 integer digits, `1e-7` below 1e-6, `-0` as `0`,
//! `NaN`, `Infinity`). Python `int`s are exact: up to 2**53 in magnitude they print as
//! themselves; beyond that JavaScript only ever had the nearest double, and prints that.

use crate::json::Number;

/// 2**53: the largest magnitude `js_string` prints as the integer itself.
pub const TWO_53: u64 = 1 << 53;

/// `String(x)` for a double.
pub fn double_text(x: f64) -> String {
    ryu_js::Buffer::new().format(x).to_owned()
}

/// `String(n)` for a parsed number (`js_string` of the Python value).
pub fn number_text(number: &Number) -> String {
    match number {
        Number::Int(v) if v.unsigned_abs() <= TWO_53 => v.to_string(),
        Number::UInt(v) if *v <= TWO_53 => v.to_string(),
        Number::Float(v) => double_text(*v),
        other => double_text(other.to_f64()),
    }
}

/// `json_number_text`: what `JSON.stringify` writes (a non-finite double is `null`).
pub fn json_number_text(number: &Number) -> String {
    match number {
        Number::Float(v) if !v.is_finite() => "null".to_owned(),
        other => number_text(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_as_javascript() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (5e-324, "5e-324"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1.5, "-1.5"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (x, text) in cases {
            assert_eq!(double_text(x), text);
        }
    }

    #[test]
    fn integers_beyond_two_53_print_their_double() {
        assert_eq!(
            number_text(&Number::Int(9007199254740992)),
            "9007199254740992"
        );
        assert_eq!(
            number_text(&Number::Int(-9007199254740993)),
            "-9007199254740992"
        );
        assert_eq!(number_text(&Number::UInt(u64::MAX)), "18446744073709552000");
        assert_eq!(
            number_text(&Number::Big("1".repeat(25).into())),
            "1.1111111111111111e+24"
        );
        assert_eq!(json_number_text(&Number::Float(f64::INFINITY)), "null");
    }
}
