//! The PyO3 binding: `pytest_entropy._core`. It converts at the boundary only: bytes in,
//! plain Python objects out (the same objects `ingest/jsonparse.py` builds), errors as
//! `pytest_entropy._core.JSONParseError` (a `ValueError`).

use crate::json::{self, JsString, Number, Value};
use crate::lines::{self, Line};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString};
use pyo3::IntoPyObjectExt;

pyo3::create_exception!(_core, JSONParseError, PyValueError);

/// `split_lines(data, line_cap=64 MiB) -> (lines, terminated)`: every line of a whole
/// buffer (bytes, or None for a line longer than the cap) and whether it ended with `\n`.
#[pyfunction]
#[pyo3(signature = (data, line_cap = lines::DEFAULT_LINE_CAP))]
fn split_lines<'py>(
    py: Python<'py>,
    data: &[u8],
    line_cap: usize,
) -> PyResult<(Bound<'py, PyList>, bool)> {
    let (found, terminated) = lines::split_lines(data, line_cap);
    let items = found.iter().map(|line| match line {
        Line::Text(bytes) => PyBytes::new(py, bytes).into_any(),
        Line::Oversized => py.None().into_bound(py),
    });
    Ok((PyList::new(py, items)?, terminated))
}

/// `parse_json(raw) -> (value, fast)`, as `parse_json_bytes`.
#[pyfunction]
fn parse_json<'py>(py: Python<'py>, raw: &[u8]) -> PyResult<(Bound<'py, PyAny>, bool)> {
    let parsed = json::parse(raw).map_err(|e| JSONParseError::new_err(e.to_string()))?;
    Ok((to_python(py, &parsed.value)?, parsed.fast))
}

fn string<'py>(py: Python<'py>, s: &JsString) -> PyResult<Bound<'py, PyAny>> {
    match s.as_str() {
        Some(text) => Ok(PyString::new(py, text).into_any()),
        // A lone surrogate: Python's UTF-8 codec reads the WTF-8 bytes with surrogatepass.
        None => PyBytes::new(py, s.as_wtf8()).call_method1("decode", ("utf-8", "surrogatepass")),
    }
}

/// Builds the Python object bottom-up with an explicit stack (no depth limit).
pub(crate) fn to_python<'py>(py: Python<'py>, root: &Value) -> PyResult<Bound<'py, PyAny>> {
    enum Step<'v> {
        Visit(&'v Value),
        List(usize),
        Dict(&'v json::Object),
    }
    let mut steps = vec![Step::Visit(root)];
    let mut done: Vec<Bound<'py, PyAny>> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Visit(value) => match value {
                Value::Null => done.push(py.None().into_bound(py)),
                Value::Bool(b) => done.push(b.into_bound_py_any(py)?),
                Value::Number(Number::Int(v)) => done.push(v.into_bound_py_any(py)?),
                Value::Number(Number::UInt(v)) => done.push(v.into_bound_py_any(py)?),
                Value::Number(Number::Float(v)) => done.push(v.into_bound_py_any(py)?),
                Value::Number(Number::Big(text)) => {
                    done.push(py.get_type::<PyInt>().call1((&**text,))?)
                }
                Value::String(s) => done.push(string(py, s)?),
                Value::Array(items) => {
                    steps.push(Step::List(items.len()));
                    steps.extend(items.iter().rev().map(Step::Visit));
                }
                Value::Object(object) => {
                    steps.push(Step::Dict(object));
                    steps.extend(object.entries().iter().rev().map(|(_, v)| Step::Visit(v)));
                }
            },
            Step::List(len) => {
                let list = PyList::new(py, done.drain(done.len() - len..))?;
                done.push(list.into_any());
            }
            Step::Dict(object) => {
                let dict = PyDict::new(py);
                let values = done.drain(done.len() - object.len()..);
                for ((key, _), value) in object.entries().iter().zip(values) {
                    dict.set_item(string(py, key)?, value)?;
                }
                done.push(dict.into_any());
            }
        }
    }
    done.pop()
        .ok_or_else(|| PyValueError::new_err("no value was built"))
}

/// The extension module. It holds no state, so free-threaded interpreters need no GIL.
#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(split_lines, m)?)?;
    m.add_function(wrap_pyfunction!(parse_json, m)?)?;
    m.add("JSONParseError", m.py().get_type::<JSONParseError>())?;
    crate::python_tallies::register(m)?;
    Ok(())
}
