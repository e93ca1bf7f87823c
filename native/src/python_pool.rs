//! The PyO3 side of the pool's merge (`pool::Counts`, `pool::Entries`):
//!
//! * `WindowCounts(counts)`: a window's counts in the core (`counts` a dict, or what a scan
//!   gathered); `to_dict()`, `len()`, and it pickles as bytes (`window_counts_from_bytes`).
//! * `PoolEntries()`: `load(ref, key, total, [(identity, value, count)])` for each entry of
//!   the loaded pool, `apply(fresh, existing)` for each window merged (either counts a
//!   `WindowCounts` or a dict; `existing` None for a file new to the pool) and `rows()`, the
//!   entries as the pool file lists them: `(ref, key, total, [(value, count)])`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};

use crate::pool::{Counts, Entries};

/// 2**53, the bound of JavaScript's exact integers, as a double.
const SAFE: f64 = crate::jsnum::TWO_53 as f64;
use crate::python::text;
use crate::python_tallies::wtf8;

/// A window's counts, kept in the core until the pool writes them.
#[pyclass(module = "pytest_entropy._core")]
pub struct WindowCounts {
    pub(crate) inner: Counts,
}

/// A count of a dict: an int, or a float with an integer value (a loaded pool's `3.0`).
fn count_of(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Ok(count) = value.extract::<i64>() {
        return Ok(count);
    }
    let float = value.extract::<f64>()?;
    if float.fract() != 0.0 || float.abs() > SAFE {
        return Err(PyValueError::new_err("a pool count is not a safe integer"));
    }
    Ok(float as i64)
}

fn counts_of_dict(dict: &Bound<'_, PyDict>) -> PyResult<Counts> {
    let mut items = Vec::with_capacity(dict.len());
    for (identity, count) in dict {
        items.push((wtf8(identity.cast::<PyString>()?)?, count_of(&count)?));
    }
    Ok(Counts(items))
}

#[pymethods]
impl WindowCounts {
    #[new]
    fn new(counts: &Bound<'_, PyDict>) -> PyResult<Self> {
        Ok(WindowCounts {
            inner: counts_of_dict(counts)?,
        })
    }

    /// The counts as a dict, in first-seen order.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (identity, count) in &self.inner.0 {
            dict.set_item(text(py, identity)?, *count)?;
        }
        Ok(dict)
    }

    fn __len__(&self) -> usize {
        self.inner.0.len()
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let module = py.import("pytest_entropy._core")?;
        let data = PyBytes::new(py, &self.inner.to_bytes());
        Ok((module.getattr("window_counts_from_bytes")?, (data,)))
    }
}

/// The `WindowCounts` whose pickle gave `data`.
#[pyfunction]
fn window_counts_from_bytes(data: &[u8]) -> PyResult<WindowCounts> {
    match Counts::from_bytes(data) {
        Some(inner) => Ok(WindowCounts { inner }),
        None => Err(PyValueError::new_err("not the bytes of window counts")),
    }
}

/// Counts borrowed from a `WindowCounts` or read from a dict.
enum Held<'py> {
    Native(PyRef<'py, WindowCounts>),
    Read(Counts),
}

impl Held<'_> {
    fn counts(&self) -> &Counts {
        match self {
            Held::Native(native) => &native.inner,
            Held::Read(counts) => counts,
        }
    }
}

fn held<'py>(counts: &Bound<'py, PyAny>) -> PyResult<Held<'py>> {
    if let Ok(native) = counts.cast::<WindowCounts>() {
        return Ok(Held::Native(native.borrow()));
    }
    Ok(Held::Read(counts_of_dict(counts.cast::<PyDict>()?)?))
}

/// The pool's entries while windows merge into it.
#[pyclass(module = "pytest_entropy._core")]
pub struct PoolEntries {
    inner: Entries,
    /// The loaded pool's values, as it held them.
    loaded: Vec<Py<PyAny>>,
}

/// The value an identity's `typeof:String(value)` spells back (`_reconstruct` in
/// `core/pool.py`): a number as JavaScript's `Number(text)` reads it (an int when it is a
/// safe integer), a boolean, or the text.
fn reconstruct<'py>(py: Python<'py>, identity: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let (kind, rest) = match identity.iter().position(|&b| b == b':') {
        Some(at) => (&identity[..at], &identity[at + 1..]),
        None => (identity, &identity[identity.len()..]),
    };
    match kind {
        b"number" => {
            let number = match std::str::from_utf8(rest).ok().map(str::parse::<f64>) {
                Some(Ok(number)) => number,
                // Not a text String(number) gives: Python's float() decides, as the plain does.
                _ => <PyFloat as pyo3::PyTypeInfo>::type_object(py)
                    .call1((text(py, rest)?,))?
                    .extract()?,
            };
            if number.is_finite() && number.fract() == 0.0 && number.abs() <= SAFE {
                Ok((number as i64).into_pyobject(py)?.into_any())
            } else {
                Ok(PyFloat::new(py, number).into_any())
            }
        }
        b"boolean" => Ok(pyo3::types::PyBool::new(py, rest == b"true")
            .to_owned()
            .into_any()),
        _ => text(py, rest),
    }
}

#[pymethods]
impl PoolEntries {
    #[new]
    fn new() -> Self {
        PoolEntries {
            inner: Entries::default(),
            loaded: Vec::new(),
        }
    }

    /// One entry of the loaded pool: `values` are `(identity, value, count)`.
    fn load(
        &mut self,
        reference: &Bound<'_, PyString>,
        key: &Bound<'_, PyString>,
        total: i64,
        values: Vec<(Bound<'_, PyString>, Bound<'_, PyAny>, i64)>,
    ) -> PyResult<()> {
        let mut kept = Vec::with_capacity(values.len());
        for (identity, value, count) in values {
            kept.push((wtf8(&identity)?, count, self.loaded.len()));
            self.loaded.push(value.unbind());
        }
        self.inner.load(&wtf8(reference)?, &wtf8(key)?, total, kept);
        Ok(())
    }

    /// Merges one window's `fresh` counts over the file's `existing` ones.
    #[pyo3(signature = (fresh, existing = None))]
    fn apply(
        &mut self,
        fresh: &Bound<'_, PyAny>,
        existing: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let fresh = held(fresh)?;
        let existing = existing.map(held).transpose()?;
        self.inner
            .apply(fresh.counts(), existing.as_ref().map(Held::counts));
        Ok(())
    }

    /// `[(ref, key, total, [(value, count)])]` in the pool file's order.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = PyList::empty(py);
        for row in self.inner.rows() {
            let values = PyList::empty(py);
            for (identity, stored) in row.values {
                let value = match stored.loaded {
                    Some(at) => self.loaded[at].clone_ref(py).into_bound(py),
                    None => reconstruct(py, identity)?,
                };
                values.append((value, stored.count))?;
            }
            let items = [
                text(py, row.reference)?,
                text(py, row.key)?,
                row.total.into_pyobject(py)?.into_any(),
                values.into_any(),
            ];
            rows.append(PyTuple::new(py, items)?)?;
        }
        Ok(rows)
    }
}

/// Adds the pool's classes to the extension module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WindowCounts>()?;
    m.add_class::<PoolEntries>()?;
    m.add_function(wrap_pyfunction!(window_counts_from_bytes, m)?)?;
    Ok(())
}
