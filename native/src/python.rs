//! The PyO3 binding: `pytest_entropy._core`. It converts at the boundary only: bytes in,
//! plain Python objects out (the same objects `ingest/jsonparse.py` builds), errors as
//! `pytest_entropy._core.JSONParseError` (a `ValueError`).

use crate::json::{self, JsString, Number, Value};
use crate::lines::{self, Line};
use crate::meter::{MeterState, Ordered, RefAccumulator};
use crate::scan::{Problem, Scanner};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
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
    Ok((into_python(py, parsed.value)?, parsed.fast))
}

fn string<'py>(py: Python<'py>, s: &JsString) -> PyResult<Bound<'py, PyAny>> {
    match s.as_str() {
        Some(text) => Ok(PyString::new(py, text).into_any()),
        // A lone surrogate: Python's UTF-8 codec reads the WTF-8 bytes with surrogatepass.
        None => PyBytes::new(py, s.as_wtf8()).call_method1("decode", ("utf-8", "surrogatepass")),
    }
}

/// The keys of one parsed document's objects, each text built once (a schema repeats
/// `type` and `description` thousands of times): one `str`, its hash computed once, in every
/// dict. Only [`into_python`] keeps one; the tallies' small values build their keys as they
/// go.
#[derive(Default)]
struct Keys<'py> {
    built: std::collections::HashMap<Vec<u8>, Bound<'py, PyAny>>,
}

impl<'py> Keys<'py> {
    /// Keys this long or longer are rarely repeated: built each time.
    const LONGEST: usize = 64;

    fn get(&mut self, py: Python<'py>, key: &JsString) -> PyResult<Bound<'py, PyAny>> {
        let bytes = key.as_wtf8();
        if bytes.len() >= Self::LONGEST {
            return string(py, key);
        }
        if let Some(found) = self.built.get(bytes) {
            return Ok(found.clone());
        }
        let text = string(py, key)?;
        self.built.insert(bytes.to_vec(), text.clone());
        Ok(text)
    }
}

/// A scalar's Python object; `None` for an array or an object.
fn scalar<'py>(py: Python<'py>, value: &Value) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(Some(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_bound_py_any(py)?,
        Value::Number(Number::Int(v)) => v.into_bound_py_any(py)?,
        Value::Number(Number::UInt(v)) => v.into_bound_py_any(py)?,
        Value::Number(Number::Float(v)) => v.into_bound_py_any(py)?,
        Value::Number(Number::Big(text)) => py.get_type::<PyInt>().call1((&**text,))?,
        Value::String(s) => string(py, s)?,
        Value::Array(_) | Value::Object(_) => return Ok(None),
    }))
}

/// The list of the last `len` objects built, in their place.
fn finish_list<'py>(
    py: Python<'py>,
    done: &mut Vec<Bound<'py, PyAny>>,
    len: usize,
) -> PyResult<()> {
    let list = PyList::new(py, done.drain(done.len() - len..))?;
    done.push(list.into_any());
    Ok(())
}

/// The dict of the last objects built (one a key, in order), in their place.
fn finish_dict<'py, 'k>(
    py: Python<'py>,
    done: &mut Vec<Bound<'py, PyAny>>,
    names: impl ExactSizeIterator<Item = &'k JsString<'k>>,
    mut key: impl FnMut(&JsString) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<()> {
    let dict = PyDict::new(py);
    let values = done.drain(done.len() - names.len()..);
    for (name, value) in names.zip(values) {
        dict.set_item(key(name)?, value)?;
    }
    done.push(dict.into_any());
    Ok(())
}

/// Builds the Python object bottom-up with an explicit stack (no depth limit).
pub(crate) fn to_python<'py>(py: Python<'py>, root: &Value) -> PyResult<Bound<'py, PyAny>> {
    enum Step<'v> {
        Visit(&'v Value<'v>),
        List(usize),
        Dict(&'v json::Object<'v>),
    }
    let mut steps = vec![Step::Visit(root)];
    let mut done: Vec<Bound<'py, PyAny>> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Visit(value) => match value {
                Value::Array(items) => {
                    steps.push(Step::List(items.len()));
                    steps.extend(items.iter().rev().map(Step::Visit));
                }
                Value::Object(object) => {
                    steps.push(Step::Dict(object));
                    steps.extend(object.entries().iter().rev().map(|(_, v)| Step::Visit(v)));
                }
                scalar_value => done.extend(scalar(py, scalar_value)?),
            },
            Step::List(len) => finish_list(py, &mut done, len)?,
            Step::Dict(object) => {
                let names = object.entries().iter().map(|(name, _)| name);
                finish_dict(py, &mut done, names, |name| string(py, name))?;
            }
        }
    }
    done.pop()
        .ok_or_else(|| PyValueError::new_err("no value was built"))
}

/// [`to_python`] taking the value: each container's Rust memory is freed as its items
/// move to the stack and each item's once its Python object is built, so a large document
/// is never held whole twice (`parse_json` of a 3.4 MB pool file).
fn into_python<'py>(py: Python<'py>, root: Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    enum Step<'v> {
        Visit(Value<'v>),
        List(usize),
        Dict(Vec<JsString<'v>>),
    }
    let mut steps = vec![Step::Visit(root)];
    let mut done: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut keys = Keys::default();
    while let Some(step) = steps.pop() {
        match step {
            Step::Visit(mut value) => match &mut value {
                Value::Array(items) => {
                    let items = std::mem::take(items);
                    steps.push(Step::List(items.len()));
                    steps.extend(items.into_iter().rev().map(Step::Visit));
                }
                Value::Object(object) => {
                    let (names, values): (Vec<_>, Vec<_>) =
                        object.take_entries().into_iter().unzip();
                    steps.push(Step::Dict(names));
                    steps.extend(values.into_iter().rev().map(Step::Visit));
                }
                scalar_value => done.extend(scalar(py, scalar_value)?),
            },
            Step::List(len) => finish_list(py, &mut done, len)?,
            Step::Dict(names) => {
                finish_dict(py, &mut done, names.iter(), |name| keys.get(py, name))?;
            }
        }
    }
    done.pop()
        .ok_or_else(|| PyValueError::new_err("no value was built"))
}

/// WTF-8 bytes as a Python `str` (lone surrogates kept, as `surrogatepass` reads them).
pub(crate) fn text<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match std::str::from_utf8(bytes) {
        Ok(valid) => Ok(PyString::new(py, valid).into_any()),
        Err(_) => PyBytes::new(py, bytes).call_method1("decode", ("utf-8", "surrogatepass")),
    }
}

/// One Python `str` per distinct text of an export: a corpus's meter and evidence name the
/// same refs, models, stages and keys thousands of times (each model's accumulator of each
/// ref, each sequence's window), and one object each keeps the hand-over, and the Python
/// state built from it, to what is distinct.
pub(crate) struct Names<'py> {
    py: Python<'py>,
    made: std::collections::HashMap<Vec<u8>, Bound<'py, PyAny>>,
}

impl<'py> Names<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        Names {
            py,
            made: std::collections::HashMap::new(),
        }
    }

    pub(crate) fn get(&mut self, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        if let Some(made) = self.made.get(bytes) {
            return Ok(made.clone());
        }
        let made = text(self.py, bytes)?;
        self.made.insert(bytes.to_vec(), made.clone());
        Ok(made)
    }
}

/// An ordered count map as a dict in first-seen order (what `MeterState` keeps, so it is
/// taken as it is); each key is freed as soon as its text is built.
fn counts<'py>(
    py: Python<'py>,
    names: &mut Names<'py>,
    map: Ordered<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, count) in map.into_entries() {
        dict.set_item(names.get(&key)?, count)?;
    }
    Ok(dict)
}

fn accumulator<'py>(
    py: Python<'py>,
    names: &mut Names<'py>,
    name: &[u8],
    acc: RefAccumulator,
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            names.get(name)?,
            acc.calls.into_bound_py_any(py)?,
            acc.succeeded.into_bound_py_any(py)?,
            acc.failed.into_bound_py_any(py)?,
            counts(py, names, acc.signatures)?.into_any(),
            counts(py, names, acc.stages)?.into_any(),
            acc.churn_pairs.into_bound_py_any(py)?,
            acc.churn_sum.into_bound_py_any(py)?,
            PyList::new(py, &acc.churn_terms)?.into_any(),
        ],
    )
}

/// A meter state as plain data (`MeterState.from_plain` in `core/meter.py` reads it). The
/// state is given up piece by piece as its plain data is built, so the two are never both
/// held whole.
fn meter<'py>(py: Python<'py>, state: MeterState) -> PyResult<Bound<'py, PyTuple>> {
    meter_named(py, &mut Names::new(py), state)
}

fn meter_named<'py>(
    py: Python<'py>,
    names: &mut Names<'py>,
    state: MeterState,
) -> PyResult<Bound<'py, PyTuple>> {
    let totals = [
        state.traces,
        state.operations,
        state.action_operations,
        state.discovery_operations,
        state.workflow_operations,
        state.succeeded,
        state.failed,
        state.aborted,
        state.timed_out,
        state.invocation_rejections,
    ];
    let mut refs = Vec::with_capacity(state.refs.len());
    for (name, acc) in state.refs.into_entries() {
        refs.push(accumulator(py, names, &name, acc)?);
    }
    let churn_terms = PyList::new(py, &state.churn_terms)?.into_any();
    drop(state.churn_terms);
    let mut tasks = Vec::with_capacity(state.task_sequences.len());
    for (task, sequences) in state.task_sequences.into_entries() {
        tasks.push(PyTuple::new(
            py,
            [names.get(&task)?, counts(py, names, sequences)?.into_any()],
        )?);
    }
    let mut models = Vec::with_capacity(state.models.len());
    for (model, inner) in state.models.into_entries() {
        models.push(PyTuple::new(
            py,
            [
                names.get(&model)?,
                meter_named(py, names, inner)?.into_any(),
            ],
        )?);
    }
    PyTuple::new(
        py,
        [
            PyTuple::new(py, totals)?.into_any(),
            PyList::new(py, refs)?.into_any(),
            state.churn_pairs.into_bound_py_any(py)?,
            state.churn_sum.into_bound_py_any(py)?,
            churn_terms,
            PyList::new(py, tasks)?.into_any(),
            PyList::new(py, models)?.into_any(),
        ],
    )
}

/// `TraceScanner(model=None, mentions=None, line_cap=64 MiB)`: one session file in the
/// native trace format, fed in chunks (`feed`, then `finish` unless the read failed), its
/// meter state and diagnostics taken at the end as plain data (`result`).
#[pyclass(module = "pytest_entropy._core")]
struct TraceScanner {
    // Boxed: the prefilter's SIMD searchers need 32-byte alignment, which the memory of a
    // Python object does not promise.
    inner: Box<Scanner>,
    /// Whether a chunk was fed (`adopt` comes before the first).
    fed: bool,
}

#[pymethods]
impl TraceScanner {
    #[new]
    #[pyo3(signature = (model = None, mentions = None, line_cap = lines::DEFAULT_LINE_CAP,
        metric_version = 2))]
    fn new(
        model: Option<Vec<u8>>,
        mentions: Option<Vec<Vec<u8>>>,
        line_cap: usize,
        metric_version: i64,
    ) -> PyResult<Self> {
        let scanner = Scanner::new(line_cap, model, mentions);
        let scanner = match metric_version {
            2 => scanner,
            3 => scanner.v3(),
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "metric version {other} is not 2 or 3"
                )))
            }
        };
        Ok(TraceScanner {
            inner: Box::new(scanner),
            fed: false,
        })
    }

    /// Reads the lines a chunk completes (the interpreter is free meanwhile, but for the
    /// trial's checks, which attach to it). A trial check's error is raised here.
    fn feed(&mut self, py: Python<'_>, chunk: &[u8]) -> PyResult<()> {
        self.fed = true;
        let inner = &mut self.inner;
        py.detach(|| inner.feed(chunk));
        crate::python_tallies::raised(&mut self.inner.tallies)
    }

    /// What to gather beside the meter (before the first chunk): the audited refs, the
    /// proposals' evidence (of the traces' operations, with their top-level values when
    /// `trace_values`, and of the audits' values), the pool window (`window`: its value
    /// bound, or None for no bound) and the trial (`trial`: a `TrialVerdicts`).
    #[pyo3(signature = (*, audit_refs = false, operations = false, observation_values = false,
        trace_values = false, window = false, max_value_bytes = None, trial = None))]
    #[allow(clippy::too_many_arguments)]
    fn gather(
        &mut self,
        audit_refs: bool,
        operations: bool,
        observation_values: bool,
        trace_values: bool,
        window: bool,
        max_value_bytes: Option<i64>,
        trial: Option<PyRef<'_, crate::python_tallies::TrialVerdicts>>,
    ) -> PyResult<()> {
        crate::python_tallies::gather(
            &mut self.inner.tallies,
            audit_refs,
            operations,
            observation_values,
            trace_values,
            window.then_some(max_value_bytes),
            trial,
        )
    }

    /// What was gathered: see `python_tallies::gathered`.
    fn gathered<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        crate::python_tallies::gathered(py, &mut self.inner.tallies)
    }

    /// The end of the stream: the last line, if it had no `\n`.
    fn finish(&mut self) -> PyResult<()> {
        self.inner.finish();
        crate::python_tallies::raised(&mut self.inner.tallies)
    }

    /// `[(position, line bytes)]` of the notes that wait for a malformed line's error text.
    fn malformed_notes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut items = Vec::new();
        for (at, raw) in self.inner.malformed_notes() {
            items.push(PyTuple::new(
                py,
                [at.into_bound_py_any(py)?, PyBytes::new(py, raw).into_any()],
            )?);
        }
        PyList::new(py, items)
    }

    /// Gives the note at `at` its text.
    fn resolve_note(&mut self, at: usize, problem: String) {
        self.inner.resolve_note(at, problem);
    }

    /// The meter state, moved out of the scanner into a `NativeMeter` (the scanner's is
    /// empty afterwards).
    fn take_meter(&mut self) -> NativeMeter {
        NativeMeter {
            state: std::mem::take(&mut self.inner.meter),
        }
    }

    /// Carries a corpus's accumulators through this scan instead of merging the scan's own
    /// after it (after `gather`, before the first chunk): `meter`'s state and `evidence`'s
    /// (gathered: `gather(operations=...)` or `observation_values`) move into the scanner,
    /// the file's executions numbered as file `origin`'s (see `take_evidence`), and leave
    /// it through `take_meter_into` and `take_evidence_into`. One pass over the corpus
    /// either way; a scan that fails midway leaves them holding part of the file.
    #[pyo3(signature = (*, meter = None, evidence = None, origin = 0))]
    fn adopt(
        &mut self,
        meter: Option<PyRefMut<'_, NativeMeter>>,
        evidence: Option<PyRefMut<'_, NativeEvidence>>,
        origin: u32,
    ) -> PyResult<()> {
        if self.fed {
            return Err(PyValueError::new_err("adopt comes before the first chunk"));
        }
        if let Some(mut evidence) = evidence {
            let Some(mine) = self.inner.tallies.evidence.as_mut() else {
                return Err(PyValueError::new_err("the scanner gathers no evidence"));
            };
            if mine.trace_values != evidence.inner.trace_values {
                return Err(PyValueError::new_err(
                    "the evidence tallies trace values differently",
                ));
            }
            let fresh = crate::evidence::Evidence::new(mine.trace_values);
            *mine = std::mem::replace(&mut evidence.inner, fresh);
            mine.number_from(origin);
        }
        if let Some(mut meter) = meter {
            self.inner.meter = std::mem::take(&mut meter.state);
        }
        Ok(())
    }

    /// The meter state moved into `target` (what `adopt` carried, and this scan's).
    fn take_meter_into(&mut self, mut target: PyRefMut<'_, NativeMeter>) {
        target.state = std::mem::take(&mut self.inner.meter);
    }

    /// The evidence moved into `target` (what `adopt` carried, and this scan's).
    fn take_evidence_into(&mut self, mut target: PyRefMut<'_, NativeEvidence>) -> PyResult<()> {
        let Some(mut inner) = self.inner.tallies.evidence.take() else {
            return Err(PyValueError::new_err("the scanner gathers no evidence"));
        };
        if inner.file_executions() > u64::from(u32::MAX) {
            return Err(PyValueError::new_err(
                "more than 2**32 executions in one file",
            ));
        }
        inner.number_from(0);
        target.inner = inner;
        Ok(())
    }

    /// The proposals' evidence gathered so far, moved out of the scanner into a
    /// `NativeEvidence` of the file numbered `origin` (None when not gathered; `gathered`
    /// reports none afterwards). Its executions become `origin << 32 | number`, the
    /// plain path's `(origin, number)`, so files' executions stay apart when they merge.
    fn take_evidence(&mut self, origin: u32) -> PyResult<Option<NativeEvidence>> {
        let Some(mut inner) = self.inner.tallies.evidence.take() else {
            return Ok(None);
        };
        if inner.executions > u64::from(u32::MAX) {
            return Err(PyValueError::new_err(
                "more than 2**32 executions in one file",
            ));
        }
        for sequence in &mut inner.sequences {
            for execution in &mut sequence.executions {
                *execution |= u64::from(origin) << 32;
            }
        }
        Ok(Some(NativeEvidence {
            inner,
            origin: i64::from(origin),
        }))
    }

    /// `(model, counters, reasons, notes, meter)`: the model cursor at the end (None if no
    /// model was ever announced), the diagnostics' counters by name, the rejection reasons
    /// `[(reason, count)]` in first-seen order, the notes `[(line, problem)]` and the meter
    /// state as plain data (None when not `with_meter`).
    #[pyo3(signature = (with_meter = true))]
    fn result<'py>(&self, py: Python<'py>, with_meter: bool) -> PyResult<Bound<'py, PyTuple>> {
        let scan = &self.inner;
        let model = match &scan.model {
            Some(model) => text(py, model)?,
            None => py.None().into_bound(py),
        };
        let c = &scan.counts;
        let counters = PyDict::new(py);
        for (name, value) in [
            ("lines", c.lines),
            ("empty_lines", c.empty_lines),
            ("ignored_lines", c.ignored_lines),
            ("model_lines", c.model_lines),
            ("trace_lines", c.trace_lines),
            ("oversized_lines", c.oversized_lines),
            ("malformed_lines", c.malformed_lines),
            ("non_object_lines", c.non_object_lines),
            ("lines_without_details", c.lines_without_details),
            ("lines_without_trace", c.lines_without_trace),
            ("fallback_parsed_lines", c.fallback_parsed_lines),
            ("traces", c.traces),
            ("rejected_traces", c.rejected_traces),
        ] {
            counters.set_item(name, value)?;
        }
        let reasons = PyList::new(py, scan.reasons.iter().map(|(r, n)| (*r, *n)))?;
        let mut notes = Vec::with_capacity(scan.notes.len());
        for note in &scan.notes {
            let problem = match &note.problem {
                Problem::Text(problem) => PyString::new(py, problem).into_any(),
                Problem::Malformed(_) => py.None().into_bound(py),
            };
            notes.push(PyTuple::new(
                py,
                [note.line.into_bound_py_any(py)?, problem],
            )?);
        }
        PyTuple::new(
            py,
            [
                model,
                counters.into_any(),
                reasons.into_any(),
                PyList::new(py, notes)?.into_any(),
                if with_meter {
                    meter(py, scan.meter.clone())?.into_any()
                } else {
                    py.None().into_bound(py)
                },
            ],
        )
    }
}

/// A meter state that stays in the core across files (`NativeMeter()` is empty): files'
/// states merge into it in corpus order (`merge`), it leaves as plain data once (`export`,
/// what `MeterState.from_plain` reads) and pickles as bytes (`to_bytes`,
/// `meter_from_bytes`), so a process or a Dask worker hands it on unchanged.
#[pyclass(module = "pytest_entropy._core")]
struct NativeMeter {
    state: MeterState,
}

#[pymethods]
impl NativeMeter {
    #[new]
    fn new() -> Self {
        NativeMeter {
            state: MeterState::default(),
        }
    }

    /// Folds `other` (the files that follow this state's) in; `other` is left empty.
    fn merge(&mut self, mut other: PyRefMut<'_, NativeMeter>) {
        if self.state.traces == 0 && self.state.refs.is_empty() && self.state.models.is_empty() {
            self.state = std::mem::take(&mut other.state);
        } else {
            self.state.merge(&other.state);
            other.state = MeterState::default();
        }
    }

    /// The number of traces metered so far.
    #[getter]
    fn traces(&self) -> i64 {
        self.state.traces
    }

    /// The state as plain data (see `TraceScanner.result`), moved out: the meter is left
    /// empty, its state freed as the plain data is built.
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        meter(py, std::mem::take(&mut self.state))
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.state.to_bytes())
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let module = py.import("pytest_entropy._core")?;
        Ok((module.getattr("meter_from_bytes")?, (self.to_bytes(py),)))
    }
}

/// The proposals' evidence that stays in the core across files: the files' evidence merges
/// into it in corpus order (`merge`, each file's executions numbered after the ones before)
/// and leaves it once as plain data (`export`, as `Evidence.export`, but each execution
/// number is `origin << 32 | number`: see `TraceScanner.take_evidence`). `origin` is the
/// first file's number. It pickles as that plain data, which becomes a `ProposalEvidence`
/// (`ingest/native_tallies.settled_evidence`).
#[pyclass(module = "pytest_entropy._core")]
struct NativeEvidence {
    inner: crate::evidence::Evidence,
    #[pyo3(get)]
    origin: i64,
}

#[pymethods]
impl NativeEvidence {
    /// Folds `other` (the evidence of the files that follow) in; `other` is left empty.
    fn merge(&mut self, mut other: PyRefMut<'_, NativeEvidence>) {
        let trace_values = other.inner.trace_values;
        let theirs = std::mem::replace(
            &mut other.inner,
            crate::evidence::Evidence::new(trace_values),
        );
        self.inner.merge(theirs, 0);
    }

    /// Whether the evidence tallies the traces' top-level values.
    #[getter]
    fn trace_values(&self) -> bool {
        self.inner.trace_values
    }

    /// `(executions, tallies, clusters, sequences)`: see `Evidence.export`.
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        crate::python_tallies::export_evidence(py, &self.inner)
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let module = py.import("pytest_entropy.ingest.native_tallies")?;
        let args = (self.origin, self.inner.trace_values, self.export(py)?);
        PyTuple::new(
            py,
            [
                module.getattr("settled_evidence")?,
                args.into_pyobject(py)?.into_any(),
            ],
        )
    }
}

/// The `NativeMeter` whose `to_bytes` gave `data`.
#[pyfunction]
fn meter_from_bytes(data: &[u8]) -> PyResult<NativeMeter> {
    match MeterState::from_bytes(data) {
        Some(state) => Ok(NativeMeter { state }),
        None => Err(pyo3::exceptions::PyValueError::new_err(
            "not the bytes of a native meter state",
        )),
    }
}

/// What [`crate::alloc::configure`] set when the module was first initialised.
static ALLOCATOR: std::sync::OnceLock<crate::alloc::Settings> = std::sync::OnceLock::new();

/// `allocator() -> dict`: the extension's allocator and its purge delay (ms) before and
/// after the module set it (`name`, `version`, `purge_delay_default`, `purge_delay`).
#[pyfunction]
fn allocator(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let settings = ALLOCATOR.get_or_init(crate::alloc::configure);
    let out = PyDict::new(py);
    out.set_item("name", "mimalloc")?;
    out.set_item("version", settings.version)?;
    out.set_item("purge_delay_default", settings.purge_delay_default)?;
    out.set_item("purge_delay", settings.purge_delay)?;
    Ok(out)
}

/// The extension module. Its one state is the allocator's settings, set once behind a
/// lock, so free-threaded interpreters need no GIL.
#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ALLOCATOR.get_or_init(crate::alloc::configure);
    m.add_function(wrap_pyfunction!(allocator, m)?)?;
    m.add_function(wrap_pyfunction!(split_lines, m)?)?;
    m.add_function(wrap_pyfunction!(parse_json, m)?)?;
    m.add_class::<TraceScanner>()?;
    m.add_class::<NativeMeter>()?;
    m.add_class::<NativeEvidence>()?;
    m.add_function(wrap_pyfunction!(meter_from_bytes, m)?)?;
    m.add("JSONParseError", m.py().get_type::<JSONParseError>())?;
    crate::python_tallies::register(m)?;
    crate::python_pool::register(m)?;
    crate::python_writer::register(m)?;
    Ok(())
}
