/* The trial's classification and counting loops (pytest_entropy.core.trial).
 *
 * The Python twin is TrialTally's fast path in core/trial.py: for each recorded call of a
 * declared ref, the declared check and (unless the ref is quarantined or its compiled
 * schema equals the declared one) the compiled check decide its trial class, which is
 * counted into the tally's per-ref dicts. The checks stay Python callables (the compiled
 * TypeBox closures of core/typebox.py, or accepts itself); this module does the per-call
 * dispatch, the verdict memo of the pure compiled checks (keyed by orjson's bytes of the
 * arguments, never for bytes holding "null"), and the counting.
 *
 * Objects:
 *   Classifier(declared, resolve, dumps, classes, operation_type, trace_type, audit_type,
 *              operations_of, memo_limit)
 *       one per command and process; resolve(ref) gives the ref's checks as
 *       (declared kind, declared function, compiled kind, compiled function, quarantined,
 *       same). Kinds: 0 rejects everything, 1 a plain callable (its exceptions propagate),
 *       2 a compiled check whose Exception is a rejection, 3 as 2 and pure (remembered).
 *   Classifier.tally(trace_classes, audit_classes) -> Tally with add_signed, add_trace,
 *       add_audit counting into those dicts.
 *   merge_counts(mine, theirs) -> None, or NotImplemented (nothing changed) for inputs
 *       outside the exact domain (TrialCounts.merge then runs its Python loop).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

enum { BOTH_ACCEPT, BOTH_REJECT, TIGHTENING_COST, TYPED_FAILURE_WIN, QUARANTINE_WIN,
       QUARANTINE_COST, N_CLASSES };

enum { KIND_REJECT = 0, KIND_PLAIN = 1, KIND_GUARDED = 2, KIND_PURE = 3 };

/* Verdict codes of one call against a ref's checks. */
enum { CODE_REJECT = 0, CODE_ACCEPT = 1, CODE_TIGHTER = 2 };

static PyObject *str_succeeded;   /* "succeeded" */
static PyObject *str_fabric;      /* "fabric." */
static PyObject *str_startswith;  /* "startswith" */
static PyObject *str_ref;
static PyObject *str_args;
static PyObject *str_operations;

/* ------------------------------------------------------------------------ entry */

typedef struct {
    PyObject_HEAD
    int dkind;
    int ckind;
    int quarantined;
    int same;
    int pure;
    PyObject *dfunc;  /* may be None */
    PyObject *cfunc;  /* may be None */
    PyObject *memo;   /* dict bytes -> int code, or NULL when not pure */
} EntryObject;

static int
entry_traverse(EntryObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->dfunc);
    Py_VISIT(self->cfunc);
    Py_VISIT(self->memo);
    return 0;
}

static int
entry_clear(EntryObject *self)
{
    Py_CLEAR(self->dfunc);
    Py_CLEAR(self->cfunc);
    Py_CLEAR(self->memo);
    return 0;
}

static void
entry_dealloc(EntryObject *self)
{
    PyObject_GC_UnTrack(self);
    entry_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pytest_entropy.core._trial_native._Entry",
    .tp_basicsize = sizeof(EntryObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_traverse = (traverseproc)entry_traverse,
    .tp_clear = (inquiry)entry_clear,
    .tp_dealloc = (destructor)entry_dealloc,
};

static int
kind_of(PyObject *value, int *kind)
{
    long k;
    if (!PyLong_CheckExact(value)) {
        PyErr_SetString(PyExc_TypeError, "a check kind must be an int");
        return -1;
    }
    k = PyLong_AsLong(value);
    if (k == -1 && PyErr_Occurred())
        return -1;
    if (k < KIND_REJECT || k > KIND_PURE) {
        PyErr_SetString(PyExc_ValueError, "unknown check kind");
        return -1;
    }
    *kind = (int)k;
    return 0;
}

/* An entry from resolve(ref)'s tuple. */
static EntryObject *
entry_from_tuple(PyObject *spec)
{
    EntryObject *entry;
    int dkind, ckind, quarantined, same;
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 6) {
        PyErr_SetString(PyExc_TypeError, "resolve must return a 6-tuple");
        return NULL;
    }
    if (kind_of(PyTuple_GET_ITEM(spec, 0), &dkind) < 0
        || kind_of(PyTuple_GET_ITEM(spec, 2), &ckind) < 0)
        return NULL;
    quarantined = PyObject_IsTrue(PyTuple_GET_ITEM(spec, 4));
    if (quarantined < 0)
        return NULL;
    same = PyObject_IsTrue(PyTuple_GET_ITEM(spec, 5));
    if (same < 0)
        return NULL;
    entry = PyObject_GC_New(EntryObject, &EntryType);
    if (entry == NULL)
        return NULL;
    entry->dkind = dkind;
    entry->ckind = ckind;
    entry->quarantined = quarantined;
    entry->same = same;
    entry->dfunc = Py_NewRef(PyTuple_GET_ITEM(spec, 1));
    entry->cfunc = Py_NewRef(PyTuple_GET_ITEM(spec, 3));
    entry->memo = NULL;
    /* Remembered only when every check a call can reach records nothing on the side. */
    entry->pure = (dkind == KIND_PURE || dkind == KIND_REJECT)
                  && (quarantined || same || ckind == KIND_PURE || ckind == KIND_REJECT);
    if (entry->pure) {
        entry->memo = PyDict_New();
        if (entry->memo == NULL) {
            Py_DECREF(entry);
            return NULL;
        }
    }
    PyObject_GC_Track(entry);
    return entry;
}

/* ------------------------------------------------------------------- classifier */

typedef struct {
    PyObject_HEAD
    PyObject *declared;       /* dict ref -> schema */
    PyObject *resolve;        /* callable ref -> spec tuple */
    PyObject *dumps;          /* orjson.dumps */
    PyObject *classes[N_CLASSES];
    PyObject *operation_type;
    PyObject *trace_type;
    PyObject *audit_type;
    PyObject *operations_of;  /* callable for a trace that is not a Trace */
    PyObject *entries;        /* dict ref -> EntryObject */
    Py_ssize_t memo_limit;
    Py_ssize_t memo_size;
} ClassifierObject;

static int
classifier_traverse(ClassifierObject *self, visitproc visit, void *arg)
{
    int i;
    Py_VISIT(self->declared);
    Py_VISIT(self->resolve);
    Py_VISIT(self->dumps);
    for (i = 0; i < N_CLASSES; i++)
        Py_VISIT(self->classes[i]);
    Py_VISIT(self->operation_type);
    Py_VISIT(self->trace_type);
    Py_VISIT(self->audit_type);
    Py_VISIT(self->operations_of);
    Py_VISIT(self->entries);
    return 0;
}

static int
classifier_clear(ClassifierObject *self)
{
    int i;
    Py_CLEAR(self->declared);
    Py_CLEAR(self->resolve);
    Py_CLEAR(self->dumps);
    for (i = 0; i < N_CLASSES; i++)
        Py_CLEAR(self->classes[i]);
    Py_CLEAR(self->operation_type);
    Py_CLEAR(self->trace_type);
    Py_CLEAR(self->audit_type);
    Py_CLEAR(self->operations_of);
    Py_CLEAR(self->entries);
    return 0;
}

static void
classifier_dealloc(ClassifierObject *self)
{
    PyObject_GC_UnTrack(self);
    classifier_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
classifier_init(ClassifierObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"declared", "resolve", "dumps", "classes", "operation_type",
                               "trace_type", "audit_type", "operations_of", "memo_limit",
                               NULL};
    PyObject *declared, *resolve, *dumps, *classes, *operation_type, *trace_type,
        *audit_type, *operations_of;
    Py_ssize_t memo_limit;
    int i;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OOO!O!O!O!On:Classifier", keywords,
                                     &PyDict_Type, &declared, &resolve, &dumps,
                                     &PyTuple_Type, &classes, &PyType_Type, &operation_type,
                                     &PyType_Type, &trace_type, &PyType_Type, &audit_type,
                                     &operations_of, &memo_limit))
        return -1;
    if (PyTuple_GET_SIZE(classes) != N_CLASSES) {
        PyErr_SetString(PyExc_ValueError, "classes must name the six trial classes");
        return -1;
    }
    classifier_clear(self);
    self->declared = Py_NewRef(declared);
    self->resolve = Py_NewRef(resolve);
    self->dumps = Py_NewRef(dumps);
    for (i = 0; i < N_CLASSES; i++)
        self->classes[i] = Py_NewRef(PyTuple_GET_ITEM(classes, i));
    self->operation_type = Py_NewRef(operation_type);
    self->trace_type = Py_NewRef(trace_type);
    self->audit_type = Py_NewRef(audit_type);
    self->operations_of = Py_NewRef(operations_of);
    self->entries = PyDict_New();
    if (self->entries == NULL)
        return -1;
    self->memo_limit = memo_limit;
    self->memo_size = 0;
    return 0;
}

/* 1 accepted, 0 rejected, -1 an error to propagate. */
static int
run_check(int kind, PyObject *func, PyObject *args)
{
    PyObject *result;
    int truth;
    if (kind == KIND_REJECT)
        return 0;
    result = PyObject_CallOneArg(func, args);
    if (result == NULL) {
        if (kind != KIND_PLAIN && PyErr_ExceptionMatches(PyExc_Exception)) {
            PyErr_Clear();  /* any exception while validating is a rejection */
            return 0;
        }
        return -1;
    }
    truth = PyObject_IsTrue(result);
    Py_DECREF(result);
    return truth;
}

static int
compute_code(EntryObject *entry, PyObject *args)
{
    int verdict = run_check(entry->dkind, entry->dfunc, args);
    if (verdict <= 0)
        return verdict < 0 ? -1 : CODE_REJECT;
    if (entry->quarantined || entry->same)
        return CODE_ACCEPT;
    verdict = run_check(entry->ckind, entry->cfunc, args);
    if (verdict < 0)
        return -1;
    return verdict ? CODE_ACCEPT : CODE_TIGHTER;
}

static int
holds_null(PyObject *key)
{
    const char *data = PyBytes_AS_STRING(key);
    Py_ssize_t n = PyBytes_GET_SIZE(key), i;
    for (i = 0; i + 4 <= n; i++) {
        if (data[i] == 'n' && memcmp(data + i, "null", 4) == 0)
            return 1;
    }
    return 0;
}

static int
clear_memos(ClassifierObject *self)
{
    Py_ssize_t pos = 0;
    PyObject *ref, *value;
    while (PyDict_Next(self->entries, &pos, &ref, &value)) {
        EntryObject *entry = (EntryObject *)value;
        if (entry->memo != NULL)
            PyDict_Clear(entry->memo);
    }
    self->memo_size = 0;
    return 0;
}

static EntryObject *
entry_for(ClassifierObject *self, PyObject *ref)
{
    PyObject *found = PyDict_GetItemWithError(self->entries, ref);
    PyObject *spec;
    EntryObject *entry;
    if (found != NULL)
        return (EntryObject *)found;  /* borrowed */
    if (PyErr_Occurred())
        return NULL;
    spec = PyObject_CallOneArg(self->resolve, ref);
    if (spec == NULL)
        return NULL;
    entry = entry_from_tuple(spec);
    Py_DECREF(spec);
    if (entry == NULL)
        return NULL;
    if (PyDict_SetItem(self->entries, ref, (PyObject *)entry) < 0) {
        Py_DECREF(entry);
        return NULL;
    }
    Py_DECREF(entry);  /* the dict holds it */
    return entry;
}

/* The verdict code of one call of ``ref`` (a declared ref), or -1. */
static int
verdict_code(ClassifierObject *self, PyObject *ref, PyObject *args, int *quarantined)
{
    EntryObject *entry = entry_for(self, ref);
    PyObject *key = NULL, *found, *value;
    int code;
    if (entry == NULL)
        return -1;
    Py_INCREF(entry);  /* a check may call back into anything */
    *quarantined = entry->quarantined;
    if (entry->pure) {
        key = PyObject_CallOneArg(self->dumps, args);
        if (key == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_Exception))
                goto error;
            PyErr_Clear();  /* not plain JSON: not remembered */
        }
        else if (!PyBytes_CheckExact(key) || holds_null(key)) {
            Py_CLEAR(key);
        }
        else {
            found = PyDict_GetItemWithError(entry->memo, key);
            if (found != NULL) {
                code = (int)PyLong_AsLong(found);
                Py_DECREF(key);
                Py_DECREF(entry);
                return code;
            }
            if (PyErr_Occurred())
                goto error;
        }
    }
    code = compute_code(entry, args);
    if (code < 0)
        goto error;
    if (key != NULL && entry->memo != NULL) {
        if (self->memo_size >= self->memo_limit)
            clear_memos(self);
        value = PyLong_FromLong(code);
        if (value == NULL)
            goto error;
        if (PyDict_SetItem(entry->memo, key, value) < 0) {
            Py_DECREF(value);
            goto error;
        }
        Py_DECREF(value);
        self->memo_size++;
    }
    Py_XDECREF(key);
    Py_DECREF(entry);
    return code;
error:
    Py_XDECREF(key);
    Py_DECREF(entry);
    return -1;
}

static int
class_of(ClassifierObject *self, PyObject *ref, PyObject *args, int ok)
{
    int quarantined = 0;
    int code = verdict_code(self, ref, args, &quarantined);
    if (code < 0)
        return -1;
    if (code == CODE_REJECT)
        return BOTH_REJECT;
    if (quarantined)
        return ok ? QUARANTINE_COST : QUARANTINE_WIN;
    if (code == CODE_ACCEPT)
        return BOTH_ACCEPT;
    return ok ? TIGHTENING_COST : TYPED_FAILURE_WIN;
}

/* ``into[ref][trial_class] = into[ref].get(trial_class, 0) + n`` (``n`` NULL: 1). */
static int
count_into(PyObject *into, PyObject *ref, PyObject *trial_class, PyObject *n)
{
    PyObject *per_ref, *old, *updated;
    per_ref = PyDict_GetItemWithError(into, ref);
    if (per_ref == NULL || per_ref == Py_None) {
        if (per_ref == NULL && PyErr_Occurred())
            return -1;
        per_ref = PyDict_New();
        if (per_ref == NULL)
            return -1;
        if (PyDict_SetItem(into, ref, per_ref) < 0) {
            Py_DECREF(per_ref);
            return -1;
        }
        Py_DECREF(per_ref);
    }
    if (!PyDict_CheckExact(per_ref)) {
        PyErr_SetString(PyExc_TypeError, "trial counts must be plain dicts");
        return -1;
    }
    Py_INCREF(per_ref);
    old = PyDict_GetItemWithError(per_ref, trial_class);
    if (old == NULL) {
        if (PyErr_Occurred())
            goto error;
        if (n == NULL)
            updated = PyLong_FromLong(1);
        else if (PyLong_CheckExact(n))
            updated = Py_NewRef(n);
        else {
            PyObject *zero = PyLong_FromLong(0);
            if (zero == NULL)
                goto error;
            updated = PyNumber_Add(zero, n);
            Py_DECREF(zero);
        }
    }
    else if (n == NULL && PyLong_CheckExact(old)) {
        int overflow = 0;
        long value = PyLong_AsLongAndOverflow(old, &overflow);
        if (value == -1 && PyErr_Occurred())
            goto error;
        if (!overflow && value < LONG_MAX)
            updated = PyLong_FromLong(value + 1);
        else {
            PyObject *one = PyLong_FromLong(1);
            if (one == NULL)
                goto error;
            updated = PyNumber_Add(old, one);
            Py_DECREF(one);
        }
    }
    else if (n == NULL) {
        PyObject *one = PyLong_FromLong(1);
        if (one == NULL)
            goto error;
        Py_INCREF(old);
        updated = PyNumber_Add(old, one);
        Py_DECREF(old);
        Py_DECREF(one);
    }
    else {
        Py_INCREF(old);
        updated = PyNumber_Add(old, n);
        Py_DECREF(old);
    }
    if (updated == NULL)
        goto error;
    if (PyDict_SetItem(per_ref, trial_class, updated) < 0) {
        Py_DECREF(updated);
        goto error;
    }
    Py_DECREF(updated);
    Py_DECREF(per_ref);
    return 0;
error:
    Py_DECREF(per_ref);
    return -1;
}

static PyTypeObject ClassifierType;

/* ------------------------------------------------------------------------ tally */

typedef struct {
    PyObject_HEAD
    ClassifierObject *classifier;
    PyObject *trace_classes;
    PyObject *audit_classes;
} TallyObject;

static PyTypeObject TallyType;

static int
tally_traverse(TallyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->classifier);
    Py_VISIT(self->trace_classes);
    Py_VISIT(self->audit_classes);
    return 0;
}

static int
tally_clear(TallyObject *self)
{
    Py_CLEAR(self->classifier);
    Py_CLEAR(self->trace_classes);
    Py_CLEAR(self->audit_classes);
    return 0;
}

static void
tally_dealloc(TallyObject *self)
{
    PyObject_GC_UnTrack(self);
    tally_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ``ref.startswith("fabric.")`` as Python evaluates it: 1, 0 or -1. */
static int
is_fabric(PyObject *ref)
{
    PyObject *result;
    int truth;
    if (PyUnicode_CheckExact(ref))
        return (int)PyUnicode_Tailmatch(ref, str_fabric, 0, PY_SSIZE_T_MAX, -1);
    result = PyObject_CallMethodOneArg(ref, str_startswith, str_fabric);
    if (result == NULL)
        return -1;
    truth = PyObject_IsTrue(result);
    Py_DECREF(result);
    return truth;
}

/* ``outcome == "succeeded"`` as a truth value: 1, 0 or -1. */
static int
succeeded(PyObject *outcome)
{
    PyObject *result;
    int truth;
    if (PyUnicode_CheckExact(outcome))
        return PyUnicode_Compare(outcome, str_succeeded) == 0;
    result = PyObject_RichCompare(outcome, str_succeeded, Py_EQ);
    if (result == NULL)
        return -1;
    truth = PyObject_IsTrue(result);
    Py_DECREF(result);
    return truth;
}

/* One trace operation: skipped unless its ref is declared and not a fabric ref. */
static int
trace_call(TallyObject *self, PyObject *ref, PyObject *args, PyObject *outcome)
{
    ClassifierObject *classifier = self->classifier;
    int skip, ok, trial_class;
    skip = is_fabric(ref);
    if (skip < 0)
        return -1;
    if (skip)
        return 0;
    skip = PyDict_Contains(classifier->declared, ref);
    if (skip < 0)
        return -1;
    if (!skip)
        return 0;
    ok = succeeded(outcome);
    if (ok < 0)
        return -1;
    trial_class = class_of(classifier, ref, args, ok);
    if (trial_class < 0)
        return -1;
    return count_into(self->trace_classes, ref, classifier->classes[trial_class], NULL);
}

static PyObject *
item_of(PyObject *op, Py_ssize_t index)
{
    PyObject *key = PyLong_FromSsize_t(index), *value;
    if (key == NULL)
        return NULL;
    value = PyObject_GetItem(op, key);
    Py_DECREF(key);
    return value;
}

/* Every operation of ``operations`` (an iterable of (ref, args, outcome, ...)). */
static int
trace_operations(TallyObject *self, PyObject *operations)
{
    PyObject *iterator, *op;
    PyTypeObject *operation_type = (PyTypeObject *)self->classifier->operation_type;
    int status = 0;
    if (PyList_CheckExact(operations) || PyTuple_CheckExact(operations)) {
        Py_ssize_t i;
        Py_INCREF(operations);
        for (i = 0; status == 0 && i < PySequence_Fast_GET_SIZE(operations); i++) {
            op = PySequence_Fast_GET_ITEM(operations, i);
            Py_INCREF(op);
            if ((Py_IS_TYPE(op, &PyTuple_Type) || Py_IS_TYPE(op, operation_type))
                && PyTuple_GET_SIZE(op) >= 3) {
                PyObject *ref = Py_NewRef(PyTuple_GET_ITEM(op, 0));
                PyObject *args = Py_NewRef(PyTuple_GET_ITEM(op, 1));
                PyObject *outcome = Py_NewRef(PyTuple_GET_ITEM(op, 2));
                status = trace_call(self, ref, args, outcome);
                Py_DECREF(ref);
                Py_DECREF(args);
                Py_DECREF(outcome);
            }
            else {
                PyObject *ref = item_of(op, 0), *args = NULL, *outcome = NULL;
                if (ref != NULL)
                    args = item_of(op, 1);
                if (args != NULL)
                    outcome = item_of(op, 2);
                status = outcome == NULL ? -1 : trace_call(self, ref, args, outcome);
                Py_XDECREF(ref);
                Py_XDECREF(args);
                Py_XDECREF(outcome);
            }
            Py_DECREF(op);
        }
        Py_DECREF(operations);
        return status;
    }
    iterator = PyObject_GetIter(operations);
    if (iterator == NULL)
        return -1;
    while (status == 0 && (op = PyIter_Next(iterator)) != NULL) {
        PyObject *ref = item_of(op, 0), *args = NULL, *outcome = NULL;
        if (ref != NULL)
            args = item_of(op, 1);
        if (args != NULL)
            outcome = item_of(op, 2);
        status = outcome == NULL ? -1 : trace_call(self, ref, args, outcome);
        Py_XDECREF(ref);
        Py_XDECREF(args);
        Py_XDECREF(outcome);
        Py_DECREF(op);
    }
    Py_DECREF(iterator);
    if (status == 0 && PyErr_Occurred())
        return -1;
    return status;
}

static PyObject *
tally_add_signed(TallyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "add_signed(signed, task_key, model)");
        return NULL;
    }
    if (trace_operations(self, args[0]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
tally_add_trace(TallyObject *self, PyObject *trace)
{
    PyObject *operations;
    int status, is_trace;
    PyObject *trace_type = self->classifier->trace_type;
    if (Py_IS_TYPE(trace, (PyTypeObject *)trace_type) && PyTuple_GET_SIZE(trace) >= 1) {
        operations = Py_NewRef(PyTuple_GET_ITEM(trace, 0));
    }
    else {
        is_trace = PyObject_IsInstance(trace, trace_type);
        if (is_trace < 0)
            return NULL;
        if (is_trace)
            operations = PyObject_GetAttr(trace, str_operations);
        else
            operations = PyObject_CallOneArg(self->classifier->operations_of, trace);
        if (operations == NULL)
            return NULL;
    }
    status = trace_operations(self, operations);
    Py_DECREF(operations);
    if (status < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
tally_add_audit(TallyObject *self, PyObject *call)
{
    ClassifierObject *classifier = self->classifier;
    PyObject *audit_type = classifier->audit_type;
    PyObject *ref, *args;
    int status, trial_class;
    if (Py_IS_TYPE(call, (PyTypeObject *)audit_type) && PyTuple_GET_SIZE(call) >= 2) {
        ref = Py_NewRef(PyTuple_GET_ITEM(call, 0));
        args = Py_NewRef(PyTuple_GET_ITEM(call, 1));
    }
    else {
        int is_audit = PyObject_IsInstance(call, audit_type);
        if (is_audit < 0)
            return NULL;
        ref = is_audit ? PyObject_GetAttr(call, str_ref) : PyObject_GetItem(call, str_ref);
        if (ref == NULL)
            return NULL;
        args = is_audit ? PyObject_GetAttr(call, str_args) : PyObject_GetItem(call, str_args);
        if (args == NULL) {
            Py_DECREF(ref);
            return NULL;
        }
    }
    status = PyDict_Contains(classifier->declared, ref);
    if (status > 0) {
        trial_class = class_of(classifier, ref, args, 1);
        status = trial_class < 0 ? -1
                                 : count_into(self->audit_classes, ref,
                                              classifier->classes[trial_class], NULL);
    }
    Py_DECREF(ref);
    Py_DECREF(args);
    if (status < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef tally_methods[] = {
    {"add_signed", (PyCFunction)(void (*)(void))tally_add_signed, METH_FASTCALL,
     "add_signed(signed, task_key, model): count a guarded trace's operations"},
    {"add_trace", (PyCFunction)tally_add_trace, METH_O,
     "add_trace(trace): count a Trace's (or a spec-shaped trace's) operations"},
    {"add_audit", (PyCFunction)tally_add_audit, METH_O,
     "add_audit(call): count an audit call"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TallyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pytest_entropy.core._trial_native.Tally",
    .tp_basicsize = sizeof(TallyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_doc = "One tally's counting into its trace and audit class dicts.",
    .tp_traverse = (traverseproc)tally_traverse,
    .tp_clear = (inquiry)tally_clear,
    .tp_dealloc = (destructor)tally_dealloc,
    .tp_methods = tally_methods,
};

static PyObject *
classifier_tally(ClassifierObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    TallyObject *tally;
    if (nargs != 2 || !PyDict_CheckExact(args[0]) || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "tally(trace_classes: dict, audit_classes: dict)");
        return NULL;
    }
    if (self->declared == NULL) {
        PyErr_SetString(PyExc_ValueError, "the classifier was not initialised");
        return NULL;
    }
    tally = PyObject_GC_New(TallyObject, &TallyType);
    if (tally == NULL)
        return NULL;
    tally->classifier = (ClassifierObject *)Py_NewRef(self);
    tally->trace_classes = Py_NewRef(args[0]);
    tally->audit_classes = Py_NewRef(args[1]);
    PyObject_GC_Track(tally);
    return (PyObject *)tally;
}

static PyMethodDef classifier_methods[] = {
    {"tally", (PyCFunction)(void (*)(void))classifier_tally, METH_FASTCALL,
     "tally(trace_classes, audit_classes): a Tally counting into those dicts"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ClassifierType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pytest_entropy.core._trial_native.Classifier",
    .tp_basicsize = sizeof(ClassifierObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The trial classification of one command's calls (see the module docstring).",
    .tp_traverse = (traverseproc)classifier_traverse,
    .tp_clear = (inquiry)classifier_clear,
    .tp_dealloc = (destructor)classifier_dealloc,
    .tp_methods = classifier_methods,
    .tp_init = (initproc)classifier_init,
    .tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------------------- merging */

static PyObject *
merge_counts(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *mine, *theirs, *ref, *classes, *trial_class, *n, *existing;
    Py_ssize_t pos = 0, inner;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "merge_counts(mine, theirs)");
        return NULL;
    }
    mine = args[0];
    theirs = args[1];
    if (!PyDict_CheckExact(mine) || !PyDict_CheckExact(theirs) || mine == theirs)
        Py_RETURN_NOTIMPLEMENTED;
    /* The exact domain first, so that nothing changes before a hand-back. */
    while (PyDict_Next(theirs, &pos, &ref, &classes)) {
        if (!PyUnicode_CheckExact(ref) || !PyDict_CheckExact(classes))
            Py_RETURN_NOTIMPLEMENTED;
        existing = PyDict_GetItemWithError(mine, ref);
        if (existing == NULL && PyErr_Occurred())
            return NULL;
        if (existing == classes || (existing != NULL && !PyDict_CheckExact(existing)))
            Py_RETURN_NOTIMPLEMENTED;
        inner = 0;
        while (PyDict_Next(classes, &inner, &trial_class, &n)) {
            if (!PyUnicode_CheckExact(trial_class) || !PyLong_CheckExact(n))
                Py_RETURN_NOTIMPLEMENTED;
        }
    }
    pos = 0;
    while (PyDict_Next(theirs, &pos, &ref, &classes)) {
        inner = 0;
        while (PyDict_Next(classes, &inner, &trial_class, &n)) {
            if (count_into(mine, ref, trial_class, n) < 0)
                return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"merge_counts", (PyCFunction)(void (*)(void))merge_counts, METH_FASTCALL,
     "merge_counts(mine, theirs): TrialCounts.merge of one pair of class dicts"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef trial_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pytest_entropy.core._trial_native",
    .m_doc = "The trial's classification and counting loops (core/trial.py's fast path).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__trial_native(void)
{
    PyObject *module;
    if (PyType_Ready(&EntryType) < 0 || PyType_Ready(&ClassifierType) < 0
        || PyType_Ready(&TallyType) < 0)
        return NULL;
    str_succeeded = PyUnicode_InternFromString("succeeded");
    str_fabric = PyUnicode_InternFromString("fabric.");
    str_startswith = PyUnicode_InternFromString("startswith");
    str_ref = PyUnicode_InternFromString("ref");
    str_args = PyUnicode_InternFromString("args");
    str_operations = PyUnicode_InternFromString("operations");
    if (str_succeeded == NULL || str_fabric == NULL || str_startswith == NULL
        || str_ref == NULL || str_args == NULL || str_operations == NULL)
        return NULL;
    module = PyModule_Create(&trial_module);
    if (module == NULL)
        return NULL;
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0
        || PyModule_AddIntConstant(module, "MEMO_LIMIT_DEFAULT", 1 << 15) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&ClassifierType);
    if (PyModule_AddObject(module, "Classifier", (PyObject *)&ClassifierType) < 0) {
        Py_DECREF(&ClassifierType);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&TallyType);
    if (PyModule_AddObject(module, "Tally", (PyObject *)&TallyType) < 0) {
        Py_DECREF(&TallyType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
