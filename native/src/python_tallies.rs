//! The PyO3 side of the tallies (`audit`, `evidence`, `pool`, `trial`): each one's finished
//! data as plain Python objects, and entry points that take JSON text so that a Python
//! differential test can feed the native and the plain code the same input.
//!
//! * `audit_harvest(raw, values=True) -> (kept, skipped, calls, values)`: `raw` is a
//!   details' `audits` member as JSON; `calls` the kept `(ref, args)` in order, `values`
//!   the flat `(ref, key, value, ...)` tuple of `harvest_values` (or None).
//! * `Evidence(trace_values)`: `add_operations_json(raw)` (one execution: a JSON array of
//!   `[ref, args, outcome]`), `add_audits_json(raw)` (the audits' values), `export()`.
//! * `WindowTally(drop_unloadable, max_value_bytes)`: `add_audits_json(raw)`, `summary()`
//!   (as `pool_window.WindowTally.summary`), `digest_summary()` (the identities' digest:
//!   the SHA-256 hex of the JSON text orjson writes of them, see
//!   `pool::WindowTally::write_digest`, or their list when orjson has no text for them).
//! * `TrialVerdicts(declared, resolve)`: `resolve(ref)` gives `TrialSurfaces._native_parts`;
//!   the checks and remembered verdicts one command's files share.
//! * `TrialTally(declared, resolve)` or `TrialTally.over(verdicts)`: `add_trace_json(raw)`,
//!   `add_audits_json(raw)`, `counts()`.
//! * `TrialVerdicts.replay(touched, audited, presence, build)`: the compile's replay
//!   instead (`presence(ref)` gives `(in candidate, in before)`, `build(ref, before)` a
//!   check's `(kind, function)`); a scan given it gathers `(audit_invalid, trace_runs)`
//!   (`ReplayCounts`, reasons as codes), and `ReplayTally.over(verdicts)` feeds it JSON.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::audit::{self, Observation};
use crate::evidence::{self, Operation};
use crate::json::{self, JsString, Object, Value};
use crate::pool;
use crate::python::{text, to_python, Names};
use crate::replay::{self, ReplayChecks, Surface};
use crate::tallies::{Tallies, TrialCalls};
use crate::trial::{self, Checks, Kind, RefSpec, Side};

/// A Python `str` as WTF-8 bytes (a lone surrogate through `surrogatepass`).
pub(crate) fn wtf8(text: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    match text.to_str() {
        Ok(text) => Ok(text.as_bytes().to_vec()),
        Err(_) => Ok(text
            .call_method1("encode", ("utf-8", "surrogatepass"))?
            .extract::<Vec<u8>>()?),
    }
}

fn parse(raw: &[u8]) -> PyResult<Value<'_>> {
    json::parse(raw)
        .map(|parsed| parsed.value)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The flat `(ref, key, value, ...)` tuple of observations, or None when there is none.
pub(crate) fn values_tuple<'py>(
    py: Python<'py>,
    found: &[Observation<'_>],
) -> PyResult<Bound<'py, PyAny>> {
    if found.is_empty() {
        return Ok(py.None().into_bound(py));
    }
    let mut items = Vec::with_capacity(found.len() * 3);
    for seen in found {
        items.push(text(py, seen.reference.as_wtf8())?);
        items.push(text(py, seen.key.as_wtf8())?);
        items.push(to_python(py, seen.value)?);
    }
    Ok(PyTuple::new(py, items)?.into_any())
}

#[pyfunction]
#[pyo3(signature = (raw, values = true))]
fn audit_harvest<'py>(
    py: Python<'py>,
    raw: &[u8],
    values: bool,
) -> PyResult<(u64, u64, Bound<'py, PyList>, Bound<'py, PyAny>)> {
    let parsed = parse(raw)?;
    let found = audit::harvest(Some(&parsed), values);
    let calls = PyList::empty(py);
    for call in &found.calls {
        let args = to_python(py, call.value)?;
        calls.append((text(py, call.reference.as_wtf8())?, args))?;
    }
    Ok((
        found.kept,
        found.skipped,
        calls,
        values_tuple(py, &found.values)?,
    ))
}

/// The operations of a JSON array of `[ref, args, outcome]` (what a guard has checked).
fn operations<'a>(value: &'a Value<'a>) -> PyResult<Vec<Operation<'a>>> {
    let bad = || PyValueError::new_err("expected an array of [ref, args, outcome]");
    let Value::Array(items) = value else {
        return Err(bad());
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Value::Array(parts) = item else {
            return Err(bad());
        };
        match parts.as_slice() {
            [Value::String(reference), Value::Object(args), Value::String(outcome)] => {
                out.push(Operation {
                    reference,
                    args,
                    succeeded: outcome.as_wtf8() == b"succeeded",
                })
            }
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

/// The proposals' evidence of one input.
#[pyclass(module = "pytest_entropy._core")]
pub struct Evidence {
    pub(crate) inner: evidence::Evidence,
}

#[pymethods]
impl Evidence {
    #[new]
    #[pyo3(signature = (trace_values = false))]
    fn new(trace_values: bool) -> Self {
        Evidence {
            inner: evidence::Evidence::new(trace_values),
        }
    }

    fn add_operations_json(&mut self, raw: &[u8]) -> PyResult<()> {
        let parsed = parse(raw)?;
        self.inner.add_operations(&operations(&parsed)?);
        Ok(())
    }

    fn add_audits_json(&mut self, raw: &[u8]) -> PyResult<()> {
        let parsed = parse(raw)?;
        for seen in audit::harvest(Some(&parsed), true).values {
            self.inner
                .add_value(seen.reference.as_wtf8(), seen.key.as_wtf8(), seen.value);
        }
        Ok(())
    }

    /// `(executions, tallies, clusters, sequences)`: tallies as `(ref, key, total,
    /// overflowed, [(identity, value, count)])`, clusters as `(ref, [(keys, calls)])`,
    /// sequences as `(identity, window, occurrences, [execution numbers])`.
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        export_evidence(py, &self.inner)
    }
}

pub(crate) fn export_evidence<'py>(
    py: Python<'py>,
    found: &evidence::Evidence,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut names = Names::new(py);
    let tallies = PyList::empty(py);
    for ((reference, key), tally) in &found.tallies {
        let counts = PyList::empty(py);
        for (identity, value, count) in &tally.counts {
            counts.append((text(py, identity)?, to_python(py, value)?, *count))?;
        }
        tallies.append((
            names.get(reference)?,
            names.get(key)?,
            tally.total,
            tally.overflowed,
            counts,
        ))?;
    }
    let clusters = PyList::empty(py);
    for (reference, rows) in &found.clusters {
        let per_ref = PyList::empty(py);
        for (keys, calls) in rows {
            let row = keys
                .iter()
                .map(|k| names.get(k))
                .collect::<PyResult<Vec<_>>>()?;
            per_ref.append((PyTuple::new(py, row)?, *calls))?;
        }
        clusters.append((names.get(reference)?, per_ref))?;
    }
    let sequences = PyList::empty(py);
    for sequence in &found.sequences {
        let window = sequence
            .window
            .iter()
            .map(|r| names.get(r))
            .collect::<PyResult<Vec<_>>>()?;
        sequences.append((
            text(py, &sequence.identity)?,
            PyList::new(py, window)?,
            sequence.occurrences,
            PyList::new(py, &sequence.executions)?,
        ))?;
    }
    PyTuple::new(
        py,
        [
            found.executions.into_pyobject(py)?.into_any(),
            tallies.into_any(),
            clusters.into_any(),
            sequences.into_any(),
        ],
    )
}

/// One session window's tally for the pool.
#[pyclass(module = "pytest_entropy._core")]
pub struct WindowTally {
    pub(crate) inner: pool::WindowTally,
}

#[pymethods]
impl WindowTally {
    #[new]
    #[pyo3(signature = (drop_unloadable = true, max_value_bytes = None))]
    fn new(drop_unloadable: bool, max_value_bytes: Option<i64>) -> Self {
        WindowTally {
            inner: pool::WindowTally::new(drop_unloadable, max_value_bytes),
        }
    }

    fn add_audits_json(&mut self, raw: &[u8]) -> PyResult<()> {
        let parsed = parse(raw)?;
        for seen in audit::harvest(Some(&parsed), true).values {
            self.inner.add(seen.reference, seen.key, seen.value, 1);
        }
        Ok(())
    }

    /// `(counts, identities in code-unit order, dropped, oversized)`.
    fn summary<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyList>, u64, u64)> {
        let tally = &self.inner;
        let identities = PyList::empty(py);
        for at in tally.sorted() {
            let entry = &tally.entries[at];
            let item = text(py, &entry.identity)?;
            for _ in 0..entry.seen {
                identities.append(&item)?;
            }
        }
        Ok((
            window_counts(py, tally)?,
            identities,
            tally.dropped,
            tally.oversized,
        ))
    }

    /// `(counts, the sorted identities' digest or their list, dropped, oversized)`.
    fn digest_summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        window_digest_summary(py, &self.inner)
    }
}

fn window_counts<'py>(py: Python<'py>, tally: &pool::WindowTally) -> PyResult<Bound<'py, PyDict>> {
    let counts = PyDict::new(py);
    for entry in tally.entries.iter().filter(|e| !e.oversized) {
        counts.set_item(text(py, &entry.identity)?, entry.count)?;
    }
    Ok(counts)
}

/// `(counts, the SHA-256 hex of the sorted identities' JSON text, dropped, oversized)`; the
/// identities as a list instead when one holds a lone surrogate (orjson has no text for it).
pub(crate) fn window_digest_summary<'py>(
    py: Python<'py>,
    tally: &pool::WindowTally,
) -> PyResult<Bound<'py, PyTuple>> {
    let digest = window_digest(py, tally)?;
    let counts = window_counts(py, tally)?.into_any();
    window_summary(py, tally, counts, digest)
}

/// [`window_digest_summary`] with the counts left in the core (a `WindowCounts`), taken
/// out of the tally (after its digest): what a scan gathers for the pool.
fn window_taken_summary<'py>(
    py: Python<'py>,
    tally: &mut pool::WindowTally,
) -> PyResult<Bound<'py, PyTuple>> {
    let digest = window_digest(py, tally)?;
    let inner = tally.take_counts();
    let counts = Bound::new(py, crate::python_pool::WindowCounts { inner })?.into_any();
    window_summary(py, tally, counts, digest)
}

/// `(counts, digest, dropped, oversized)`.
fn window_summary<'py>(
    py: Python<'py>,
    tally: &pool::WindowTally,
    counts: Bound<'py, PyAny>,
    digest: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let items = [
        counts,
        digest,
        tally.dropped.into_pyobject(py)?.into_any(),
        tally.oversized.into_pyobject(py)?.into_any(),
    ];
    PyTuple::new(py, items)
}

/// The SHA-256 hex of the sorted identities' JSON text, or their list.
fn window_digest<'py>(py: Python<'py>, tally: &pool::WindowTally) -> PyResult<Bound<'py, PyAny>> {
    Ok(match tally.digest_hex() {
        Some(hex) => PyString::new(py, &hex).into_any(),
        None => {
            let identities = PyList::empty(py);
            for at in tally.sorted() {
                let entry = &tally.entries[at];
                let item = text(py, &entry.identity)?;
                for _ in 0..entry.seen {
                    identities.append(&item)?;
                }
            }
            identities.into_any()
        }
    })
}

/// What a scan should gather beside the meter (`TraceScanner.gather`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather(
    tallies: &mut Tallies,
    audit_refs: bool,
    operations: bool,
    observation_values: bool,
    trace_values: bool,
    window: Option<Option<i64>>,
    trial: Option<PyRef<'_, TrialVerdicts>>,
) -> PyResult<()> {
    tallies.audit_refs = audit_refs.then(Vec::new);
    tallies.operations = operations;
    tallies.observation_values = observation_values;
    tallies.evidence =
        (operations || observation_values).then(|| evidence::Evidence::new(trace_values));
    tallies.window = window.map(|limit| pool::WindowTally::new(true, limit));
    tallies.trial = match trial.as_deref().map(|v| &v.shared) {
        Some(Mode::Trial(shared)) => Some(Box::new(CheckedTrial::over_shared(shared))),
        Some(Mode::Replay(shared)) => Some(Box::new(CheckedReplay::over(shared))),
        None => None,
    };
    Ok(())
}

/// The error a trial check raised during the last chunk, if any.
pub(crate) fn raised(tallies: &mut Tallies) -> PyResult<()> {
    match tallies.trial.as_mut() {
        Some(trial) => {
            let any = trial.as_any();
            if let Some(checked) = any.downcast_mut::<CheckedTrial>() {
                return checked.raised();
            }
            match any.downcast_mut::<CheckedReplay>() {
                Some(checked) => checked.error.take().map_or(Ok(()), Err),
                None => Ok(()),
            }
        }
        None => Ok(()),
    }
}

/// `(audit_refs, evidence, window, trial, audit_calls, skipped_audits)`, each None when not
/// gathered: the refs as a list, the evidence as `Evidence.export()`, the window as
/// [`window_digest_summary`], the trial as `TrialTally.counts()`.
pub(crate) fn gathered<'py>(
    py: Python<'py>,
    tallies: &mut Tallies,
) -> PyResult<Bound<'py, PyTuple>> {
    let none = || py.None().into_bound(py);
    let refs = match &tallies.audit_refs {
        Some(refs) => {
            let names = refs
                .iter()
                .map(|r| text(py, r))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, names)?.into_any()
        }
        None => none(),
    };
    let found = match &tallies.evidence {
        Some(found) => export_evidence(py, found)?.into_any(),
        None => none(),
    };
    let window = match tallies.window.as_mut() {
        Some(window) => window_taken_summary(py, window)?.into_any(),
        None => none(),
    };
    let trial = match tallies.trial.as_mut() {
        Some(trial) => {
            let any = trial.as_any();
            if let Some(checked) = any.downcast_mut::<CheckedTrial>() {
                trial_counts(py, &checked.tally)?
                    .into_pyobject(py)?
                    .into_any()
            } else if let Some(checked) = any.downcast_mut::<CheckedReplay>() {
                replay_counts(py, &checked.tally)?.into_any()
            } else {
                none()
            }
        }
        None => none(),
    };
    PyTuple::new(
        py,
        [
            refs,
            found,
            window,
            trial,
            tallies.audit_calls.into_pyobject(py)?.into_any(),
            tallies.skipped_audits.into_pyobject(py)?.into_any(),
        ],
    )
}

/// The caller's checks: `resolve(ref)` once per declared ref, its functions kept here.
/// Each call attaches to the interpreter itself, so a scan may run detached from it.
pub(crate) struct PyChecks {
    resolve: Py<PyAny>,
    functions: Vec<(Kind, Py<PyAny>, Kind, Py<PyAny>)>,
}

fn kind(code: u8) -> PyResult<Kind> {
    Ok(match code {
        0 => Kind::Reject,
        1 => Kind::Plain,
        2 => Kind::Guarded,
        3 => Kind::Pure,
        _ => return Err(PyValueError::new_err("unknown check kind")),
    })
}

/// An argument object as the plain reader's dict.
fn object_to_python<'py>(py: Python<'py>, args: &Object) -> PyResult<Bound<'py, PyAny>> {
    let dict = PyDict::new(py);
    for (key, value) in args.entries() {
        dict.set_item(text(py, key.as_wtf8())?, to_python(py, value)?)?;
    }
    Ok(dict.into_any())
}

impl Checks for PyChecks {
    type Error = PyErr;

    fn resolve(&mut self, entry: usize, reference: &[u8]) -> PyResult<RefSpec> {
        Python::attach(|py| {
            let parts = self.resolve.bind(py).call1((text(py, reference)?,))?;
            let (dkind, dfunc, ckind, cfunc, quarantined, same): (
                u8,
                Py<PyAny>,
                u8,
                Py<PyAny>,
                bool,
                bool,
            ) = parts.extract()?;
            let spec = RefSpec {
                declared: kind(dkind)?,
                compiled: kind(ckind)?,
                quarantined,
                same,
            };
            if entry != self.functions.len() {
                return Err(PyValueError::new_err("checks resolved out of order"));
            }
            self.functions
                .push((spec.declared, dfunc, spec.compiled, cfunc));
            Ok(spec)
        })
    }

    fn check(&mut self, entry: usize, side: Side, args: &Object) -> PyResult<bool> {
        let (dkind, dfunc, ckind, cfunc) = &self.functions[entry];
        match side {
            Side::Declared => call_check(*dkind, dfunc, args),
            Side::Compiled => call_check(*ckind, cfunc, args),
        }
    }
}

/// Runs a check on the plain reader's dict of `args`: a compiled check's exception is a
/// rejection (as in `accepts`), a plain one's propagates.
fn call_check(kind: Kind, function: &Py<PyAny>, args: &Object) -> PyResult<bool> {
    Python::attach(|py| {
        let value = object_to_python(py, args)?;
        match function
            .bind(py)
            .call1((value,))
            .and_then(|v| v.is_truthy())
        {
            Ok(verdict) => Ok(verdict),
            Err(error) if kind != Kind::Plain && error.is_instance_of::<PyException>(py) => {
                Ok(false)
            }
            Err(error) => Err(error),
        }
    })
}

/// The verdicts of one command's trial and the checks that give them, shared by the tallies
/// of its files (`TrialVerdicts`).
pub(crate) struct SharedVerdicts {
    verdicts: trial::Verdicts,
    checks: PyChecks,
}

type Shared = std::sync::Arc<std::sync::Mutex<SharedVerdicts>>;

/// `TrialVerdicts(declared, resolve)`: the declared refs and `resolve(ref)` (see the
/// module's comment), remembered across the files of one command.
#[pyclass(module = "pytest_entropy._core")]
pub struct TrialVerdicts {
    shared: Mode,
}

/// What a `TrialVerdicts` decides: the trial's classes or the compile's replay.
enum Mode {
    Trial(Shared),
    Replay(SharedReplay),
}

#[pymethods]
impl TrialVerdicts {
    #[new]
    fn new(declared: Vec<Bound<'_, PyString>>, resolve: Py<PyAny>) -> PyResult<Self> {
        let refs = declared.iter().map(wtf8).collect::<PyResult<Vec<_>>>()?;
        let shared = SharedVerdicts {
            verdicts: trial::Verdicts::new(refs.iter().map(Vec::as_slice)),
            checks: PyChecks {
                resolve,
                functions: Vec::new(),
            },
        };
        Ok(TrialVerdicts {
            shared: Mode::Trial(std::sync::Arc::new(std::sync::Mutex::new(shared))),
        })
    }

    /// The compile's replay of the touched refs (see the module's comment).
    #[staticmethod]
    fn replay(
        touched: Vec<Bound<'_, PyString>>,
        audited: Vec<Bound<'_, PyString>>,
        presence: Py<PyAny>,
        build: Py<PyAny>,
    ) -> PyResult<Self> {
        let touched = touched.iter().map(wtf8).collect::<PyResult<Vec<_>>>()?;
        let audited = audited.iter().map(wtf8).collect::<PyResult<Vec<_>>>()?;
        let shared = SharedReplayVerdicts {
            verdicts: replay::ReplayVerdicts::new(
                touched.iter().map(Vec::as_slice),
                audited.iter().map(Vec::as_slice),
            ),
            checks: PyReplayChecks {
                presence,
                build,
                functions: Vec::new(),
            },
        };
        Ok(TrialVerdicts {
            shared: Mode::Replay(std::sync::Arc::new(std::sync::Mutex::new(shared))),
        })
    }
}

/// A trial tally with its checks; the first error stops it and waits in `error`.
pub(crate) struct CheckedTrial {
    pub(crate) tally: trial::TrialTally,
    shared: Shared,
    pub(crate) error: Option<PyErr>,
}

impl CheckedTrial {
    pub(crate) fn over(verdicts: &TrialVerdicts) -> PyResult<Self> {
        match &verdicts.shared {
            Mode::Trial(shared) => Ok(CheckedTrial::over_shared(shared)),
            Mode::Replay(_) => Err(PyValueError::new_err("these are a replay's verdicts")),
        }
    }

    fn over_shared(shared: &Shared) -> Self {
        CheckedTrial {
            tally: trial::TrialTally::new(),
            shared: shared.clone(),
            error: None,
        }
    }

    /// The first error a check raised, taken.
    pub(crate) fn raised(&mut self) -> PyResult<()> {
        self.error.take().map_or(Ok(()), Err)
    }

    fn with_shared(
        &mut self,
        call: impl FnOnce(&mut trial::TrialTally, &mut SharedVerdicts) -> PyResult<()>,
    ) {
        if self.error.is_some() {
            return;
        }
        let done = match self.shared.lock() {
            Ok(mut shared) => call(&mut self.tally, &mut shared),
            Err(_) => Err(PyValueError::new_err("the trial's verdicts were poisoned")),
        };
        self.error = done.err();
    }
}

impl TrialCalls for CheckedTrial {
    fn trace_call(&mut self, reference: &JsString, args: &Object, succeeded: bool) {
        self.with_shared(|tally, shared| {
            let SharedVerdicts { verdicts, checks } = shared;
            tally.add_trace_call(verdicts, checks, reference.as_wtf8(), args, succeeded)
        });
    }

    fn audit_call(&mut self, reference: &JsString, args: &Object) {
        self.with_shared(|tally, shared| {
            let SharedVerdicts { verdicts, checks } = shared;
            tally.add_audit_call(verdicts, checks, reference.as_wtf8(), args)
        });
    }

    fn as_any(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// The trial tally of one input, with its checks.
#[pyclass(module = "pytest_entropy._core")]
pub struct TrialTally {
    pub(crate) inner: CheckedTrial,
}

#[pymethods]
impl TrialTally {
    #[new]
    fn new(declared: Vec<Bound<'_, PyString>>, resolve: Py<PyAny>) -> PyResult<Self> {
        let verdicts = TrialVerdicts::new(declared, resolve)?;
        Ok(TrialTally {
            inner: CheckedTrial::over(&verdicts)?,
        })
    }

    /// A tally of another input over the same verdicts.
    #[staticmethod]
    fn over(verdicts: PyRef<'_, TrialVerdicts>) -> PyResult<Self> {
        Ok(TrialTally {
            inner: CheckedTrial::over(&verdicts)?,
        })
    }

    fn add_trace_json(&mut self, raw: &[u8]) -> PyResult<()> {
        let parsed = parse(raw)?;
        for op in operations(&parsed)? {
            self.inner.trace_call(op.reference, op.args, op.succeeded);
        }
        self.inner.raised()
    }

    fn add_audits_json(&mut self, raw: &[u8]) -> PyResult<()> {
        let parsed = parse(raw)?;
        for call in audit::harvest(Some(&parsed), false).calls {
            self.inner.audit_call(call.reference, call.args);
        }
        self.inner.raised()
    }

    /// `(trace_classes, audit_classes)` as `TrialCounts` holds them.
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        trial_counts(py, &self.inner.tally)
    }
}

pub(crate) fn trial_counts<'py>(
    py: Python<'py>,
    tally: &trial::TrialTally,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let convert = |found: &trial::ClassCounts| -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (reference, classes) in found {
            let per_ref = PyDict::new(py);
            for (class, n) in classes {
                per_ref.set_item(trial::CLASSES[usize::from(*class)], *n)?;
            }
            out.set_item(text(py, reference)?, per_ref)?;
        }
        Ok(out)
    };
    Ok((
        convert(&tally.trace_classes)?,
        convert(&tally.audit_classes)?,
    ))
}

/// The replay's checks: `presence(ref)` once per touched ref, `build(ref, before)` once per
/// check needed, the functions kept here.
pub(crate) struct PyReplayChecks {
    presence: Py<PyAny>,
    build: Py<PyAny>,
    functions: Vec<[Option<BuiltCheck>; 2]>,
}

/// A built check: its kind and function.
type BuiltCheck = (Kind, Py<PyAny>);

fn surface_index(surface: Surface) -> usize {
    match surface {
        Surface::Candidate => 0,
        Surface::Before => 1,
    }
}

impl ReplayChecks for PyReplayChecks {
    type Error = PyErr;

    fn presence(&mut self, entry: usize, reference: &[u8]) -> PyResult<(bool, bool)> {
        if entry != self.functions.len() {
            return Err(PyValueError::new_err("refs resolved out of order"));
        }
        let found = Python::attach(|py| {
            self.presence
                .bind(py)
                .call1((text(py, reference)?,))?
                .extract::<(bool, bool)>()
        })?;
        self.functions.push([None, None]);
        Ok(found)
    }

    fn build(&mut self, entry: usize, reference: &[u8], surface: Surface) -> PyResult<Kind> {
        let (code, function) = Python::attach(|py| {
            self.build
                .bind(py)
                .call1((text(py, reference)?, surface == Surface::Before))?
                .extract::<(u8, Py<PyAny>)>()
        })?;
        let found = kind(code)?;
        self.functions[entry][surface_index(surface)] = Some((found, function));
        Ok(found)
    }

    fn check(&mut self, entry: usize, surface: Surface, args: &Object) -> PyResult<bool> {
        match &self.functions[entry][surface_index(surface)] {
            Some((kind, function)) => call_check(*kind, function, args),
            None => Err(PyValueError::new_err(
                "a replay check ran before it was built",
            )),
        }
    }
}

pub(crate) struct SharedReplayVerdicts {
    verdicts: replay::ReplayVerdicts,
    checks: PyReplayChecks,
}

type SharedReplay = std::sync::Arc<std::sync::Mutex<SharedReplayVerdicts>>;

/// A replay tally with its checks; the first error stops it and waits in `error`.
pub(crate) struct CheckedReplay {
    pub(crate) tally: replay::ReplayTally,
    shared: SharedReplay,
    pub(crate) error: Option<PyErr>,
}

impl CheckedReplay {
    fn over(shared: &SharedReplay) -> Self {
        CheckedReplay {
            tally: replay::ReplayTally::new(),
            shared: shared.clone(),
            error: None,
        }
    }

    fn with_shared(
        &mut self,
        call: impl FnOnce(&mut replay::ReplayTally, &mut SharedReplayVerdicts) -> PyResult<()>,
    ) {
        if self.error.is_some() {
            return;
        }
        let done = match self.shared.lock() {
            Ok(mut shared) => call(&mut self.tally, &mut shared),
            Err(_) => Err(PyValueError::new_err("the replay's verdicts were poisoned")),
        };
        self.error = done.err();
    }
}

impl TrialCalls for CheckedReplay {
    fn trace_call(&mut self, reference: &JsString, args: &Object, succeeded: bool) {
        self.with_shared(|tally, shared| {
            let SharedReplayVerdicts { verdicts, checks } = shared;
            tally.add_trace_call(verdicts, checks, reference.as_wtf8(), args, succeeded)
        });
    }

    fn audit_call(&mut self, reference: &JsString, args: &Object) {
        self.with_shared(|tally, shared| {
            let SharedReplayVerdicts { verdicts, checks } = shared;
            tally.add_audit_call(verdicts, checks, reference.as_wtf8(), args)
        });
    }

    fn as_any(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// The replay of one input, with its checks (for the differential tests).
#[pyclass(module = "pytest_entropy._core")]
pub struct ReplayTally {
    inner: CheckedReplay,
}

#[pymethods]
impl ReplayTally {
    #[staticmethod]
    fn over(verdicts: PyRef<'_, TrialVerdicts>) -> PyResult<Self> {
        match &verdicts.shared {
            Mode::Replay(shared) => Ok(ReplayTally {
                inner: CheckedReplay::over(shared),
            }),
            Mode::Trial(_) => Err(PyValueError::new_err("these are a trial's verdicts")),
        }
    }

    fn add_trace_json(&mut self, raw: &[u8]) -> PyResult<()> {
        let parsed = parse(raw)?;
        for op in operations(&parsed)? {
            self.inner.trace_call(op.reference, op.args, op.succeeded);
        }
        self.inner.error.take().map_or(Ok(()), Err)
    }

    fn add_audits_json(&mut self, raw: &[u8]) -> PyResult<()> {
        let parsed = parse(raw)?;
        for call in audit::harvest(Some(&parsed), false).calls {
            self.inner.audit_call(call.reference, call.args);
        }
        self.inner.error.take().map_or(Ok(()), Err)
    }

    /// `(audit_invalid, trace_runs)` as `ReplayCounts` holds them, reasons as codes.
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        replay_counts(py, &self.inner.tally)
    }
}

/// `(audit_invalid, trace_runs)`: a dict of ref to count in first-seen order and a list of
/// `[ref, reason code, repeats]` runs.
fn replay_counts<'py>(
    py: Python<'py>,
    tally: &replay::ReplayTally,
) -> PyResult<Bound<'py, PyTuple>> {
    let invalid = PyDict::new(py);
    for (reference, n) in &tally.audit_invalid {
        invalid.set_item(text(py, reference)?, *n)?;
    }
    let runs = PyList::empty(py);
    for (reference, reason, repeats) in &tally.trace_runs {
        let run = PyList::empty(py);
        run.append(text(py, reference)?)?;
        run.append(*reason)?;
        run.append(*repeats)?;
        runs.append(run)?;
    }
    PyTuple::new(py, [invalid.into_any(), runs.into_any()])
}

/// Adds the tallies' functions and classes to the extension module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(audit_harvest, m)?)?;
    m.add_class::<Evidence>()?;
    m.add_class::<WindowTally>()?;
    m.add_class::<TrialTally>()?;
    m.add_class::<TrialVerdicts>()?;
    m.add_class::<ReplayTally>()?;
    Ok(())
}
