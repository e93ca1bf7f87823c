//! The three JSON text forms of `core/canonical.py`, written from a Python value read in
//! place (issue 28, item 5): `canonical_json` (and its UTF-8 bytes, which
//! `stable_json_hash` hashes), `js_stringify` and `file_text`.
//!
//! Only exact `dict`, `list`, `tuple`, `str`, `int`, `float`, `bool` and `None` are read,
//! and nothing of the value is changed. Anything else - another type, a subclass, a key
//! that is not a `str`, a cycle, nesting deeper than [`MAX_DEPTH`] - makes the function
//! return `None`, and the Python writer (the specification) writes the value or raises as
//! it always has.
//!
//! The canonical order of a key set that is not printable ASCII is ICU's, which stays in
//! Python: the canonical writers take `icu_order`, a Python function that gives such a key
//! set's positions in canonical order (`canonical._icu_positions`); without it, or when it
//! fails, the value is the Python writer's.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::writer::{
    canonical_order, hex_digest, own_order, push_double, push_int, push_string,
    push_surrogate_string, sha256_hex,
};

/// Containers nested deeper than this are left to the Python writer (hostile values nest
/// thousands deep; reports and schemas rarely pass 20). It also bounds the recursion.
const MAX_DEPTH: usize = 128;

/// The value is one the Python writer must take.
struct Fallback;

type Written = Result<(), Fallback>;

impl From<PyErr> for Fallback {
    fn from(_: PyErr) -> Self {
        Fallback
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Order {
    Canonical,
    Own,
}

struct Walk<'a, 'py> {
    out: String,
    order: Order,
    /// The canonical order of key sets only ICU orders (see the module).
    icu_order: Option<&'a Bound<'py, PyAny>>,
    /// The containers being written, outermost first (a cycle comes back to one of them).
    open: Vec<usize>,
}

impl<'a, 'py> Walk<'a, 'py> {
    fn new(order: Order, icu_order: Option<&'a Bound<'py, PyAny>>) -> Self {
        Walk {
            out: String::new(),
            order,
            icu_order,
            open: Vec::new(),
        }
    }

    fn enter(&mut self, container: &Bound<'_, PyAny>) -> Written {
        let address = container.as_ptr() as usize;
        if self.open.len() >= MAX_DEPTH || self.open.contains(&address) {
            return Err(Fallback);
        }
        self.open.push(address);
        Ok(())
    }

    fn leave(&mut self) {
        self.open.pop();
    }

    /// A scalar's text; `Ok(false)` when `value` is not a scalar.
    fn scalar(&mut self, value: &Bound<'_, PyAny>) -> Result<bool, Fallback> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            self.string(text)?;
        } else if value.is_exact_instance_of::<PyInt>() {
            match value.extract::<i64>() {
                Ok(number) => push_int(&mut self.out, number),
                // Beyond 64 bits: the nearest double, or null past the double range
                // (float() raises OverflowError there, as JavaScript reads Infinity).
                Err(_) => push_double(&mut self.out, value.extract::<f64>().unwrap_or(f64::NAN)),
            }
        } else if let Ok(number) = value.cast_exact::<PyFloat>() {
            push_double(&mut self.out, number.value());
        } else if let Ok(flag) = value.cast_exact::<PyBool>() {
            self.out
                .push_str(if flag.is_true() { "true" } else { "false" });
        } else if value.is_none() {
            self.out.push_str("null");
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    fn string(&mut self, text: &Bound<'_, PyString>) -> Written {
        match text.to_str() {
            Ok(valid) => push_string(&mut self.out, valid),
            Err(_) => push_surrogates(&mut self.out, text)?,
        }
        Ok(())
    }

    /// The text of `value` at `depth` (containers around it): a container less than
    /// `indent_until` deep is indented as `JSON.stringify(value, null, 2)`, a deeper one
    /// compact as `JSON.stringify(value)` (0: all compact; `file_text`'s `indent_depth`).
    fn write(&mut self, value: &Bound<'_, PyAny>, depth: usize, indent_until: usize) -> Written {
        if self.scalar(value)? {
            return Ok(());
        }
        let indented = depth < indent_until;
        let close = if let Ok(dict) = value.cast_exact::<PyDict>() {
            if dict.is_empty() {
                self.out.push_str("{}");
                return Ok(());
            }
            self.enter(value)?;
            let pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = dict.iter().collect();
            let keys = key_texts(&pairs)?;
            let views: Vec<Option<&str>> =
                keys.iter().map(|key| key.as_ref().ok().copied()).collect();
            let order = match self.order {
                Order::Canonical => match canonical_order(&views) {
                    Some(order) => order,
                    None => self.ask_icu(&pairs)?,
                },
                Order::Own => own_order(&views),
            };
            for (rank, &at) in order.iter().enumerate() {
                self.out.push(if rank == 0 { '{' } else { ',' });
                if indented {
                    self.newline(depth + 1);
                }
                match &keys[at] {
                    Ok(text) => push_string(&mut self.out, text),
                    Err(literal) => self.out.push_str(literal),
                }
                self.out.push_str(if indented { ": " } else { ":" });
                self.write(&pairs[at].1, depth + 1, indent_until)?;
            }
            '}'
        } else {
            let items = sequence(value)?;
            if items.is_empty() {
                self.out.push_str("[]");
                return Ok(());
            }
            self.enter(value)?;
            for (at, item) in items.iter().enumerate() {
                self.out.push(if at == 0 { '[' } else { ',' });
                if indented {
                    self.newline(depth + 1);
                }
                self.write(item, depth + 1, indent_until)?;
            }
            ']'
        };
        if indented {
            self.newline(depth);
        }
        self.out.push(close);
        self.leave();
        Ok(())
    }

    /// The positions of a key set in ICU's order, from `icu_order`: a permutation of the
    /// positions, or the value is the Python writer's.
    fn ask_icu(
        &self,
        pairs: &[(Bound<'_, PyAny>, Bound<'_, PyAny>)],
    ) -> Result<Vec<usize>, Fallback> {
        let icu_order = self.icu_order.ok_or(Fallback)?;
        let keys = PyTuple::new(icu_order.py(), pairs.iter().map(|(key, _)| key))?;
        let order: Vec<usize> = icu_order.call1((keys,))?.extract()?;
        let mut seen = vec![false; pairs.len()];
        for &at in &order {
            match seen.get_mut(at) {
                Some(slot) if !*slot => *slot = true,
                _ => return Err(Fallback),
            }
        }
        if order.len() != pairs.len() {
            return Err(Fallback);
        }
        Ok(order)
    }

    fn newline(&mut self, depth: usize) {
        self.out.push('\n');
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }
}

/// Each key's text: borrowed when it is valid UTF-8, else (a lone surrogate) its finished
/// JSON literal.
fn key_texts<'a>(
    pairs: &'a [(Bound<'_, PyAny>, Bound<'_, PyAny>)],
) -> Result<Vec<Result<&'a str, String>>, Fallback> {
    let mut keys = Vec::with_capacity(pairs.len());
    for (key, _) in pairs {
        let text = key.cast_exact::<PyString>().map_err(|_| Fallback)?;
        keys.push(match text.to_str() {
            Ok(valid) => Ok(valid),
            Err(_) => {
                let mut literal = String::new();
                push_surrogates(&mut literal, text)?;
                Err(literal)
            }
        });
    }
    Ok(keys)
}

/// The literal of a `str` that is not valid UTF-8 (it holds surrogates).
fn push_surrogates(out: &mut String, text: &Bound<'_, PyString>) -> Written {
    let bytes = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    push_surrogate_string(
        out,
        bytes.cast::<PyBytes>().map_err(|_| Fallback)?.as_bytes(),
    )
    .ok_or(Fallback)
}

/// The items of an exact list or tuple; anything else is for the Python writer.
fn sequence<'py>(value: &Bound<'py, PyAny>) -> Result<Vec<Bound<'py, PyAny>>, Fallback> {
    if let Ok(list) = value.cast_exact::<PyList>() {
        Ok(list.iter().collect())
    } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        Ok(tuple.iter().collect())
    } else {
        Err(Fallback)
    }
}

/// The text of `value` in `order`, indented to `indent_until` (see `Walk::write`), or
/// `None` for a value the Python writer must take.
fn text(
    value: &Bound<'_, PyAny>,
    order: Order,
    icu_order: Option<&Bound<'_, PyAny>>,
    indent_until: usize,
) -> Option<String> {
    let mut walk = Walk::new(order, icu_order);
    walk.write(value, 0, indent_until).ok()?;
    Some(walk.out)
}

/// `canonical_json(value)`, or `None` (see the module).
#[pyfunction]
#[pyo3(signature = (value, icu_order = None))]
fn canonical_json(
    value: &Bound<'_, PyAny>,
    icu_order: Option<&Bound<'_, PyAny>>,
) -> Option<String> {
    text(value, Order::Canonical, icu_order, 0)
}

/// `canonical_json(value)` in UTF-8 (what `stable_json_hash` hashes), or `None`.
#[pyfunction]
#[pyo3(signature = (value, icu_order = None))]
fn canonical_json_bytes<'py>(
    value: &Bound<'py, PyAny>,
    icu_order: Option<&Bound<'py, PyAny>>,
) -> Option<Bound<'py, PyBytes>> {
    text(value, Order::Canonical, icu_order, 0).map(|out| PyBytes::new(value.py(), out.as_bytes()))
}

/// `stable_json_hash(value)`: the hex SHA-256 of `canonical_json_bytes`, or `None`.
#[pyfunction]
#[pyo3(signature = (value, icu_order = None))]
fn stable_json_hash(
    value: &Bound<'_, PyAny>,
    icu_order: Option<&Bound<'_, PyAny>>,
) -> Option<String> {
    text(value, Order::Canonical, icu_order, 0).map(|out| sha256_hex(out.as_bytes()))
}

/// `js_stringify(value)`, or `None`.
#[pyfunction]
fn js_stringify(value: &Bound<'_, PyAny>) -> Option<String> {
    text(value, Order::Own, None, 0)
}

/// `file_text(value, indent_depth=indent_depth)`, or `None`.
#[pyfunction]
#[pyo3(signature = (value, indent_depth = None))]
fn file_text(value: &Bound<'_, PyAny>, indent_depth: Option<i64>) -> Option<String> {
    let indent_until = match indent_depth {
        None => usize::MAX,
        Some(limit) => usize::try_from(limit).unwrap_or(0),
    };
    let mut out = text(value, Order::Own, None, indent_until)?;
    out.push('\n');
    Some(out)
}

/// `file_text` in UTF-8, or `None`: a state file's bytes without a Python `str` between
/// (a text with one astral character is four bytes a character as a `str`).
#[pyfunction]
#[pyo3(signature = (value, indent_depth = None))]
fn file_bytes<'py>(
    value: &Bound<'py, PyAny>,
    indent_depth: Option<i64>,
) -> Option<Bound<'py, PyBytes>> {
    file_text(value, indent_depth).map(|out| PyBytes::new(value.py(), out.as_bytes()))
}

/// `Sha256(data=b"")`: SHA-256 fed piece by piece, as `hashlib.sha256` is, so that the
/// commands hash without loading `hashlib` (and with it OpenSSL's libcrypto, about 4 MB).
#[pyclass(module = "pytest_entropy._core")]
struct Sha256 {
    hasher: sha2::Sha256,
}

#[pymethods]
impl Sha256 {
    #[new]
    #[pyo3(signature = (data = None))]
    fn new(data: Option<&[u8]>) -> Self {
        use sha2::Digest;

        let mut hasher = sha2::Sha256::new();
        if let Some(data) = data {
            hasher.update(data);
        }
        Sha256 { hasher }
    }

    fn update(&mut self, data: &[u8]) {
        use sha2::Digest;

        self.hasher.update(data);
    }

    /// A hasher holding what this one was fed (each goes on alone).
    fn copy(&self) -> Self {
        Sha256 {
            hasher: self.hasher.clone(),
        }
    }

    /// The lowercase hex digest of what was fed so far (more may follow).
    fn hexdigest(&self) -> String {
        hex_digest(self.hasher.clone())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Sha256>()?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_json_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(stable_json_hash, m)?)?;
    m.add_function(wrap_pyfunction!(js_stringify, m)?)?;
    m.add_function(wrap_pyfunction!(file_text, m)?)?;
    m.add_function(wrap_pyfunction!(file_bytes, m)?)?;
    Ok(())
}
