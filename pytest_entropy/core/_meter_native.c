/*
 * The meter's per-trace accumulation, native: MeterState.add_signed in one C call.
 *
 * add_signed(state, operations, task_key, model) does what the Python method
 * (pytest_entropy/core/meter.py, with apply_twice of meter_apply.py for a stamped trace)
 * does for one trace of (ref, args, outcome, failure_stage, signature) operations: the
 * discovery/workflow prefixes, the churn distance of a call that follows a failure of the
 * same ref (signature_distance is called back in Python: failures are rare), the action
 * sequence key, stage "unknown", then the counts into the state and, for a model-stamped
 * trace, into the model's own state (created by calling MeterState(retain_terms=...)).
 * Every count, every map's insertion order and every float sum (added one term at a time
 * in the Python's order) comes out as the Python leaves it.
 *
 * It returns None when it did the work and NotImplemented, before changing anything, for
 * an input outside its exact domain: operations that are not an exact list or tuple of
 * exact 5-tuples/lists, a ref, outcome or signature that is not an exact str, a failure
 * stage that is neither None nor an exact str, a task key or model that is neither None
 * nor an exact str, a state (or model state) that is not exactly a MeterState whose maps
 * are exact dicts and whose retain_terms is a bool. The caller then runs the Python twin.
 * Counters and accumulators are updated with the Python's own operations (int and float
 * fast paths, the generic number protocol otherwise), so odd values behave as in Python.
 *
 * The states' and accumulators' __slots__ are read through their member descriptors'
 * offsets (checked at import), which is the fastest access; an accumulator that is not
 * exactly a _RefAccumulator is reached through ordinary attribute access.
 *
 * add_signed_many(state, entries, start) does a list of traces in one call. Its states'
 * totals (traces, operations, outcomes, churn pairs) wait as C longs while the slots they
 * go to hold exact ints and reach the states once, and what a lookup found (the last
 * model's state, a state's counts of the last task, the accumulators of a ref met again in
 * a trace) is reused while no Python code ran; see run_t. Before anything that may run
 * Python code the kernel knows of, and on every way out, the states are made whole, so
 * Python code sees them as the Python twin leaves them. The automatic garbage collection
 * is held off in between (hold_gc), so code a collection runs sees whole states too; only
 * the __eq__ of a foreign key someone put into a state's map may see the totals of the
 * call's earlier traces late (nothing in the package does that).
 *
 * A new _RefAccumulator or model MeterState is built in C (make_instance) while its class
 * is as the kernel checked it at import (maker_t: the same __init__ and code, which sets
 * constants only): no Python code runs, so nothing needs settling and the lookups stay
 * valid. A class whose __init__ was replaced is called, after settling, as before.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

enum {
    S_TRACES,
    S_OPERATIONS,
    S_ACTION_OPERATIONS,
    S_DISCOVERY_OPERATIONS,
    S_WORKFLOW_OPERATIONS,
    S_SUCCEEDED,
    S_FAILED,
    S_ABORTED,
    S_TIMED_OUT,
    S_INVOCATION_REJECTIONS,
    S_REFS,
    S_CHURN_PAIRS,
    S_CHURN_SUM,
    S_CHURN_TERMS,
    S_TASK_SEQUENCES,
    S_MODELS,
    S_RETAIN_TERMS,
    S_COUNT
};

static const char *const STATE_FIELDS[S_COUNT] = {
    "traces",
    "operations",
    "action_operations",
    "discovery_operations",
    "workflow_operations",
    "succeeded",
    "failed",
    "aborted",
    "timed_out",
    "invocation_rejections",
    "refs",
    "churn_pairs",
    "churn_sum",
    "churn_terms",
    "task_sequences",
    "models",
    "retain_terms",
};

enum {
    A_CALLS,
    A_SUCCEEDED,
    A_FAILED,
    A_SIGNATURES,
    A_STAGES,
    A_CHURN_PAIRS,
    A_CHURN_SUM,
    A_CHURN_TERMS,
    A_COUNT
};

static const char *const ACC_FIELDS[A_COUNT] = {
    "calls",
    "succeeded",
    "failed",
    "signatures",
    "stages",
    "churn_pairs",
    "churn_sum",
    "churn_terms",
};

enum { OUT_SUCCEEDED, OUT_FAILED, OUT_ABORTED, OUT_OTHER };

/* What a class's constructor is known to do (checked at import on an instance it made),
   so that the kernel may build an instance itself while the class stays as it was: the
   same type of type, the same allocation and attribute setting, the same __init__ (the
   function and its code). ``init`` is NULL when the kernel must call the class. */
typedef struct {
    PyObject *init;             /* the class's own __init__ at import (strong) */
    PyObject *code;             /* its __code__ (strong) */
    PyObject *zero;             /* the 0.0 its churn_sum starts from (strong) */
    newfunc tp_new;
    initproc tp_init;
    allocfunc tp_alloc;
    setattrofunc tp_setattro;
} maker_t;

typedef struct {
    PyObject *meter_type;     /* MeterState */
    PyObject *acc_type;       /* _RefAccumulator */
    PyObject *meter_globals;  /* meter's namespace: signature_distance is looked up per use */
    PyObject *rejections;     /* INVOCATION_REJECTION_STAGES */
    PyObject *fabric;         /* "fabric." */
    PyObject *discovery;      /* DISCOVERY_PREFIX */
    PyObject *workflow;       /* WORKFLOW_PREFIX */
    PyObject *succeeded;
    PyObject *failed;
    PyObject *aborted;
    PyObject *unknown;
    PyObject *no_task;        /* _NO_TASK */
    PyObject *join;           /* _SEQUENCE_JOIN */
    PyObject *distance_name;  /* "signature_distance" */
    PyObject *get_name;
    PyObject *append_name;
    PyObject *retain_kwnames; /* ("retain_terms",) */
    PyObject *init_name;      /* "__init__" */
    maker_t acc_maker;        /* _RefAccumulator() without calling its __init__ */
    maker_t meter_maker;      /* MeterState(retain_terms=...) likewise */
    PyObject *state_names[S_COUNT];
    Py_ssize_t state_offsets[S_COUNT];
    PyObject *acc_names[A_COUNT];
    Py_ssize_t acc_offsets[A_COUNT];
} module_state;

typedef struct {
    PyObject *ref;
    PyObject *signature;
    PyObject *stage;    /* the failure's stage ("unknown" for None), NULL otherwise */
    PyObject *distance; /* NULL when the Python's distance is None */
    int outcome;
} item_t;

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* A state's per-trace totals, in the order of the slots they go to (TOTAL_SLOTS). */
enum {
    T_TRACES,
    T_OPERATIONS,
    T_ACTION_OPERATIONS,
    T_DISCOVERY_OPERATIONS,
    T_WORKFLOW_OPERATIONS,
    T_CHURN_PAIRS,
    T_SUCCEEDED,
    T_FAILED,
    T_ABORTED,
    T_TIMED_OUT,
    T_INVOCATION_REJECTIONS,
    T_COUNT
};

static const int TOTAL_SLOTS[T_COUNT] = {
    S_TRACES,
    S_OPERATIONS,
    S_ACTION_OPERATIONS,
    S_DISCOVERY_OPERATIONS,
    S_WORKFLOW_OPERATIONS,
    S_CHURN_PAIRS,
    S_SUCCEEDED,
    S_FAILED,
    S_ABORTED,
    S_TIMED_OUT,
    S_INVOCATION_REJECTIONS,
};

/* The totals a batch owes a state: added up here as C longs and added to the state's
   int slots at once (settle). */
typedef struct {
    PyObject *state; /* a strong reference */
    long totals[T_COUNT];
} pending_t;

#define PENDING_STATES 16
#define SEQUENCE_CACHE 16

/* state.task_sequences[task] as found (every reference strong). */
typedef struct {
    PyObject *state;
    PyObject *task;
    PyObject *counts;
    unsigned long epoch;
} sequence_cache_t;

/* One kernel call. With ``batching`` (add_signed_many), a state's totals wait in
   ``pending`` while every slot they go to holds an exact int: int additions commute, so
   adding a batch's sum once leaves the value that adding trace by trace leaves. They are
   settled when the call returns (whatever it returns) and before the kernel calls
   anything that may run Python code: signature_distance, the classes' constructors, the
   generic protocol on a value or an object that is not of the exact expected type.

   ``epoch`` counts those moments (settle() counts them). Between two of them nothing but
   this kernel touches the states, and the kernel only adds keys to their maps, so what a
   lookup found stays what the same lookup would find: the model's state of the last
   model, a state's counts map of the last task, the accumulators of the last ref are
   reused while the epoch they were found in lasts (and only for an equal key). */
typedef struct {
    module_state *ms;
    int batching;
    int count;
    unsigned long epoch;
    PyObject *model;       /* the last model looked up in ``model_of`` (strong) */
    PyObject *model_of;    /* the state whose models map it was looked up in (strong) */
    PyObject *model_state; /* what the lookup found (strong) */
    unsigned long model_epoch;
    int cached;
    int gc_held; /* this call turned the automatic garbage collection off (hold_gc) */
    sequence_cache_t sequences[SEQUENCE_CACHE];
    pending_t pending[PENDING_STATES];
} run_t;

/* Allocating an object the garbage collector tracks may start a collection, and a
   collection may run Python code (finalizers, weakref callbacks) that could look at the
   states while totals wait. The kernel turns the automatic collection off before such an
   allocation and back on (when it was on) at settle() and on the way out, so a collection
   happens only where Python code may run anyway; a collection it put off happens at the
   next allocation after that. Nothing else sees the switch: no Python code runs while it
   is off. */
static void
hold_gc(run_t *run)
{
    if (!run->gc_held && PyGC_Disable()) {
        run->gc_held = 1;
    }
}

static void
release_gc(run_t *run)
{
    if (run->gc_held) {
        run->gc_held = 0;
        PyGC_Enable();
    }
}

static void
run_start(run_t *run, module_state *ms, int batching)
{
    run->ms = ms;
    run->batching = batching;
    run->count = 0;
    run->epoch = 0;
    run->model = NULL;
    run->model_of = NULL;
    run->model_state = NULL;
    run->model_epoch = 0;
    run->cached = 0;
    run->gc_held = 0;
}

/* Drops the caches' references (after the pending totals are settled). */
static void
run_end(run_t *run)
{
    int i;
    release_gc(run);
    Py_CLEAR(run->model);
    Py_CLEAR(run->model_of);
    Py_CLEAR(run->model_state);
    for (i = 0; i < run->cached; i++) {
        Py_CLEAR(run->sequences[i].state);
        Py_CLEAR(run->sequences[i].task);
        Py_CLEAR(run->sequences[i].counts);
    }
    run->cached = 0;
}

/* ------------------------------------------------------------------ small operations */

static inline int
str_equal(PyObject *a, PyObject *b)
{
    /* Two ready exact strs: CPython keeps each in its narrowest kind, so equal strings
       have the same kind and the same bytes (what str.__eq__ compares). */
    Py_ssize_t length = PyUnicode_GET_LENGTH(a);
    if (a == b) {
        return 1;
    }
    if (length != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b)) {
        return 0;
    }
    return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)length * PyUnicode_KIND(a)) == 0;
}

static inline int
starts_with(PyObject *text, PyObject *prefix)
{
    /* str.startswith for two ready exact strs. */
    Py_ssize_t length = PyUnicode_GET_LENGTH(prefix);
    int text_kind, prefix_kind;
    const void *text_data, *prefix_data;
    Py_ssize_t i;
    if (PyUnicode_GET_LENGTH(text) < length) {
        return 0;
    }
    text_kind = PyUnicode_KIND(text);
    prefix_kind = PyUnicode_KIND(prefix);
    text_data = PyUnicode_DATA(text);
    prefix_data = PyUnicode_DATA(prefix);
    if (text_kind == PyUnicode_1BYTE_KIND && prefix_kind == PyUnicode_1BYTE_KIND) {
        return memcmp(text_data, prefix_data, (size_t)length) == 0;
    }
    for (i = 0; i < length; i++) {
        if (PyUnicode_READ(text_kind, text_data, i) != PyUnicode_READ(prefix_kind, prefix_data, i)) {
            return 0;
        }
    }
    return 1;
}

static inline int
exact_str(PyObject *value)
{
    if (!PyUnicode_CheckExact(value)) {
        return 0;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(value) < 0) {
        PyErr_Clear();
        return 0;
    }
#endif
    return 1;
}

/* An exact int's value as a C long: 1 (and *out), 0 when it does not fit, -1 on an error.
   On CPython 3.11 an int of one digit (the counters) is read in place (longintrepr.h). */
static inline int
long_of(PyObject *value, long *out)
{
    int overflow = 0;
    long current;
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
    Py_ssize_t size = Py_SIZE(value);
    if (size == 0) {
        *out = 0;
        return 1;
    }
    if (size == 1) {
        *out = (long)((PyLongObject *)value)->ob_digit[0];
        return 1;
    }
#endif
    current = PyLong_AsLongAndOverflow(value, &overflow);
    if (overflow) {
        return 0;
    }
    if (current == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = current;
    return 1;
}

/* value + n (``inplace``: value += n), as Python computes it; a new reference. */
static int settle(run_t *run);

static PyObject *
add_small(run_t *run, PyObject *value, long n, int inplace)
{
    PyObject *amount, *result;
    if (!PyLong_CheckExact(value) && settle(run) < 0) {
        return NULL; /* the number protocol may run Python code */
    }
    if (PyLong_CheckExact(value)) {
        long current;
        int fits = long_of(value, &current);
        if (fits < 0) {
            return NULL;
        }
        if (fits && n >= 0 && current <= LONG_MAX - n) {
            return PyLong_FromLong(current + n);
        }
    }
    amount = PyLong_FromLong(n);
    if (amount == NULL) {
        return NULL;
    }
    result = inplace ? PyNumber_InPlaceAdd(value, amount) : PyNumber_Add(value, amount);
    Py_DECREF(amount);
    return result;
}

/* obj.<field> (a new reference): the slot when obj's type is exact, else getattr. */
static PyObject *
field_get(run_t *run, PyObject *obj, int exact, Py_ssize_t offset, PyObject *name)
{
    if (exact) {
        PyObject *value = SLOT(obj, offset);
        if (value != NULL) {
            Py_INCREF(value);
            return value;
        }
    }
    if (settle(run) < 0) {
        return NULL;
    }
    return PyObject_GetAttr(obj, name);
}

/* obj.<field> = value, stealing value (NULL: an error already set). */
static int
field_set(run_t *run, PyObject *obj, int exact, Py_ssize_t offset, PyObject *name, PyObject *value)
{
    int result;
    if (value == NULL) {
        return -1;
    }
    if (exact) {
        PyObject *old = SLOT(obj, offset);
        SLOT(obj, offset) = value;
        Py_XDECREF(old);
        return 0;
    }
    if (settle(run) < 0) {
        Py_DECREF(value);
        return -1;
    }
    result = PyObject_SetAttr(obj, name, value);
    Py_DECREF(value);
    return result;
}

/* obj.<field> += n (n >= 0) */
static int
field_add(run_t *run, PyObject *obj, int exact, Py_ssize_t offset, PyObject *name, long n)
{
    PyObject *value, *sum;
    if (exact) {
        /* The common case in place: an exact int slot of an exact type. */
        PyObject **slot = &SLOT(obj, offset);
        value = *slot;
        if (value != NULL && PyLong_CheckExact(value)) {
            long current;
            int fits;
            if (n == 0) {
                return 0; /* int += 0 is an equal int (most of a trace's totals are 0) */
            }
            fits = long_of(value, &current);
            if (fits < 0) {
                return -1;
            }
            if (fits && current <= LONG_MAX - n) {
                sum = PyLong_FromLong(current + n);
                if (sum == NULL) {
                    return -1;
                }
                *slot = sum;
                Py_DECREF(value);
                return 0;
            }
        }
    }
    value = field_get(run, obj, exact, offset, name);
    if (value == NULL) {
        return -1;
    }
    if (n == 0 && PyLong_CheckExact(value)) {
        Py_DECREF(value);
        return 0;
    }
    sum = add_small(run, value, n, 1);
    Py_DECREF(value);
    return field_set(run, obj, exact, offset, name, sum);
}

/* obj.<field> += term (the churn sums: one float addition per term, in order). */
static int
field_add_term(run_t *run, PyObject *obj, int exact, Py_ssize_t offset, PyObject *name,
               PyObject *term)
{
    PyObject *value = field_get(run, obj, exact, offset, name);
    PyObject *sum;
    if (value == NULL) {
        return -1;
    }
    if (PyFloat_CheckExact(value) && PyFloat_CheckExact(term)) {
        sum = PyFloat_FromDouble(PyFloat_AS_DOUBLE(value) + PyFloat_AS_DOUBLE(term));
    } else if (settle(run) < 0) {
        sum = NULL;
    } else {
        sum = PyNumber_InPlaceAdd(value, term);
    }
    Py_DECREF(value);
    return field_set(run, obj, exact, offset, name, sum);
}

/* obj.<field>.append(term) */
static int
field_append(run_t *run, PyObject *obj, int exact, Py_ssize_t offset, PyObject *name,
             PyObject *term)
{
    PyObject *terms = field_get(run, obj, exact, offset, name);
    int result;
    if (terms == NULL) {
        return -1;
    }
    if (PyList_CheckExact(terms)) {
        result = PyList_Append(terms, term);
    } else if (settle(run) < 0) {
        result = -1;
    } else {
        PyObject *done = PyObject_CallMethodOneArg(terms, run->ms->append_name, term);
        result = done == NULL ? -1 : 0;
        Py_XDECREF(done);
    }
    Py_DECREF(terms);
    return result;
}

/* The dict operations with a hash known (the private API of CPython 3.11 and 3.12; the
   public calls elsewhere, which hash the str again: its hash is cached in it). */
#if PY_VERSION_HEX < 0x030D0000
#define GET_KNOWN(dict, key, hash) _PyDict_GetItem_KnownHash((dict), (key), (hash))
#define SET_KNOWN(dict, key, value, hash) _PyDict_SetItem_KnownHash((dict), (key), (value), (hash))
#else
#define GET_KNOWN(dict, key, hash) PyDict_GetItemWithError((dict), (key))
#define SET_KNOWN(dict, key, value, hash) PyDict_SetItem((dict), (key), (value))
#endif

/* counts[key] = counts.get(key, 0) + 1 (key: an exact str) */
static int
count_key(run_t *run, PyObject *counts, PyObject *key)
{
    PyObject *value, *updated;
    int result;
    if (PyDict_CheckExact(counts)) {
        /* The str's hash (cached in it) once for both dict operations. */
        Py_hash_t hash = PyObject_Hash(key);
        if (hash == -1) {
            return -1;
        }
        value = GET_KNOWN(counts, key, hash);
        if (value == NULL) {
            if (PyErr_Occurred()) {
                return -1;
            }
            updated = PyLong_FromLong(1);
        } else {
            Py_INCREF(value);
            updated = add_small(run, value, 1, 0);
            Py_DECREF(value);
        }
        if (updated == NULL) {
            return -1;
        }
        result = SET_KNOWN(counts, key, updated, hash);
        Py_DECREF(updated);
        return result;
    }
    if (settle(run) < 0) {
        return -1;
    }
    {
        PyObject *zero = PyLong_FromLong(0);
        if (zero == NULL) {
            return -1;
        }
        value = PyObject_CallMethodObjArgs(counts, run->ms->get_name, key, zero, NULL);
        Py_DECREF(zero);
    }
    if (value == NULL) {
        return -1;
    }
    updated = add_small(run, value, 1, 0);
    Py_DECREF(value);
    if (updated == NULL) {
        return -1;
    }
    result = PyObject_SetItem(counts, key, updated);
    Py_DECREF(updated);
    return result;
}

/* ------------------------------------------------------------------------ accumulation */

/* Whether the class can still be built as the kernel builds it (see maker_t). */
static int
maker_usable(const maker_t *maker, PyObject *type, PyObject *init_name)
{
    PyTypeObject *tp = (PyTypeObject *)type;
    PyObject *init;
    if (maker->init == NULL || !Py_IS_TYPE(type, &PyType_Type) || tp->tp_new != maker->tp_new
        || tp->tp_init != maker->tp_init || tp->tp_alloc != maker->tp_alloc
        || tp->tp_setattro != maker->tp_setattro || (tp->tp_flags & Py_TPFLAGS_IS_ABSTRACT)) {
        return 0;
    }
    init = _PyType_Lookup(tp, init_name); /* borrowed; it sets no error */
    return init == maker->init && PyFunction_GET_CODE(init) == maker->code;
}

/* Kinds of the values an __init__ the kernel knows sets (ACC_KINDS, STATE_KINDS). */
enum { K_ZERO, K_FLOAT_ZERO, K_DICT, K_LIST, K_FLAG };

static const int ACC_KINDS[A_COUNT] = {
    K_ZERO, K_ZERO, K_ZERO, K_DICT, K_DICT, K_ZERO, K_FLOAT_ZERO, K_LIST,
};

static const int STATE_KINDS[S_COUNT] = {
    K_ZERO, K_ZERO, K_ZERO, K_ZERO, K_ZERO, K_ZERO, K_ZERO, K_ZERO, K_ZERO, K_ZERO,
    K_DICT, /* refs */
    K_ZERO, /* churn_pairs */
    K_FLOAT_ZERO, K_LIST,
    K_DICT, K_DICT, /* task_sequences, models */
    K_FLAG,
};

/* A new instance of ``type`` with every slot set as its __init__ sets it (``flag`` for the
   retain_terms argument), fields in the order of ``offsets``: what calling the class
   leaves when maker_usable() holds (the values are the ones the code's constants and
   empty displays make; no Python code runs). The collection is held off (hold_gc). */
static PyObject *
make_instance(run_t *run, PyObject *type, const maker_t *maker, const int *kinds,
              const Py_ssize_t *offsets, int count, PyObject *flag)
{
    PyTypeObject *tp = (PyTypeObject *)type;
    PyObject *obj;
    int i;
    hold_gc(run);
    obj = tp->tp_alloc(tp, 0);
    if (obj == NULL) {
        return NULL;
    }
    for (i = 0; i < count; i++) {
        PyObject *value;
        switch (kinds[i]) {
        case K_ZERO:
            value = PyLong_FromLong(0);
            break;
        case K_FLOAT_ZERO:
            value = maker->zero;
            Py_INCREF(value);
            break;
        case K_DICT:
            value = PyDict_New();
            break;
        case K_LIST:
            value = PyList_New(0);
            break;
        default:
            value = flag;
            Py_INCREF(value);
        }
        if (value == NULL) {
            Py_DECREF(obj);
            return NULL;
        }
        SLOT(obj, offsets[i]) = value;
    }
    return obj;
}


/* refs.get(ref), or a new _RefAccumulator() stored under ref; a new reference. */
static PyObject *
ref_accumulator(run_t *run, PyObject *refs, PyObject *ref)
{
    PyObject *acc = PyDict_GetItemWithError(refs, ref);
    if (acc != NULL && acc != Py_None) {
        Py_INCREF(acc);
        return acc;
    }
    if (acc == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (maker_usable(&run->ms->acc_maker, run->ms->acc_type, run->ms->init_name)) {
        acc = make_instance(run, run->ms->acc_type, &run->ms->acc_maker, ACC_KINDS,
                            run->ms->acc_offsets, A_COUNT, NULL);
    } else if (settle(run) < 0) {
        return NULL; /* the class's __init__ is Python code */
    } else {
        acc = PyObject_CallNoArgs(run->ms->acc_type);
    }
    if (acc == NULL) {
        return NULL;
    }
    if (PyDict_SetItem(refs, ref, acc) < 0) {
        Py_DECREF(acc);
        return NULL;
    }
    return acc;
}

/* One item into one ref accumulator (and the state's churn sum and terms). */
static int
feed(run_t *run, PyObject *state, PyObject *acc, const item_t *item, int retain)
{
    module_state *ms = run->ms;
    const Py_ssize_t *off = ms->acc_offsets;
    PyObject *const *names = ms->acc_names;
    int exact = Py_IS_TYPE(acc, (PyTypeObject *)ms->acc_type);
    PyObject *map;
    int result;
    if (field_add(run, acc, exact, off[A_CALLS], names[A_CALLS], 1) < 0) {
        return -1;
    }
    if (item->outcome == OUT_SUCCEEDED) {
        if (field_add(run, acc, exact, off[A_SUCCEEDED], names[A_SUCCEEDED], 1) < 0) {
            return -1;
        }
    } else if (item->outcome == OUT_FAILED) {
        if (field_add(run, acc, exact, off[A_FAILED], names[A_FAILED], 1) < 0) {
            return -1;
        }
        map = field_get(run, acc, exact, off[A_STAGES], names[A_STAGES]);
        if (map == NULL) {
            return -1;
        }
        result = count_key(run, map, item->stage);
        Py_DECREF(map);
        if (result < 0) {
            return -1;
        }
    }
    map = field_get(run, acc, exact, off[A_SIGNATURES], names[A_SIGNATURES]);
    if (map == NULL) {
        return -1;
    }
    result = count_key(run, map, item->signature);
    Py_DECREF(map);
    if (result < 0) {
        return -1;
    }
    if (item->distance != NULL) {
        const Py_ssize_t *soff = ms->state_offsets;
        PyObject *const *snames = ms->state_names;
        if (field_add(run, acc, exact, off[A_CHURN_PAIRS], names[A_CHURN_PAIRS], 1) < 0
            || field_add_term(run, acc, exact, off[A_CHURN_SUM], names[A_CHURN_SUM], item->distance) < 0
            || field_add_term(run, state, 1, soff[S_CHURN_SUM], snames[S_CHURN_SUM], item->distance) < 0) {
            return -1;
        }
        if (retain
            && (field_append(run, acc, exact, off[A_CHURN_TERMS], names[A_CHURN_TERMS], item->distance) < 0
                || field_append(run, state, 1, soff[S_CHURN_TERMS], snames[S_CHURN_TERMS], item->distance) < 0)) {
            return -1;
        }
    }
    return 0;
}

typedef struct {
    long succeeded, failed, aborted, timed_out, rejections, churn_pairs;
} tally_t;

/* Add up what a batch owes: the pending totals go to their states' slots (exact ints
   while they wait, so nothing here runs Python code) and the pending list empties. */
static int
settle(run_t *run)
{
    int count = run->count, i, k, status = 0;
    module_state *ms = run->ms;
    run_t direct;
    run->epoch++; /* Python code may run next: what was looked up may change */
    release_gc(run);
    if (count == 0) {
        return 0;
    }
    run_start(&direct, ms, 0);
    run->count = 0;
    for (i = 0; i < count; i++) {
        pending_t *pending = &run->pending[i];
        for (k = 0; k < T_COUNT && status == 0; k++) {
            int field = TOTAL_SLOTS[k];
            if (pending->totals[k] != 0) {
                status = field_add(&direct, pending->state, 1, ms->state_offsets[field],
                                   ms->state_names[field], pending->totals[k]);
            }
        }
        Py_DECREF(pending->state);
    }
    return status;
}

/* settle() on the way out of a call; a pending error stays the one raised. */
static int
settle_after(run_t *run, int failed)
{
    PyObject *type, *value, *traceback;
    if (!failed) {
        return settle(run);
    }
    PyErr_Fetch(&type, &value, &traceback);
    if (settle(run) < 0) {
        PyErr_Clear();
    }
    PyErr_Restore(type, value, traceback);
    return -1;
}

/* Where a batch keeps the totals it owes ``state`` (*pending: NULL when a slot they go to
   holds anything but an exact int: those are added trace by trace, as Python adds them).
   ``amounts`` is about to be added: a total that would pass LONG_MAX is settled first. */
static int
pending_for(run_t *run, PyObject *state, const long *amounts, pending_t **pending)
{
    const Py_ssize_t *off = run->ms->state_offsets;
    pending_t *found = NULL;
    int i, k;
    for (i = 0; i < run->count; i++) {
        if (run->pending[i].state == state) {
            found = &run->pending[i];
            break;
        }
    }
    /* Every other total and amount is at most the operations' (a trace's actions, outcomes
       and churn pairs are among its operations); the traces grow by one. */
    if (found != NULL && found->totals[T_TRACES] < LONG_MAX
        && found->totals[T_OPERATIONS] <= LONG_MAX - amounts[T_OPERATIONS]) {
        *pending = found;
        return 0;
    }
    if (found != NULL || run->count == PENDING_STATES) {
        if (settle(run) < 0) {
            return -1;
        }
    }
    *pending = NULL;
    for (k = 0; k < T_COUNT; k++) {
        PyObject *value = SLOT(state, off[TOTAL_SLOTS[k]]);
        if (value == NULL || !PyLong_CheckExact(value)) {
            return settle(run); /* trace by trace, and what waits goes first */
        }
    }
    found = &run->pending[run->count++];
    Py_INCREF(state);
    found->state = state;
    memset(found->totals, 0, sizeof(found->totals));
    *pending = found;
    return 0;
}

/* state.task_sequences.get(task), a new {} stored under task when there is none (a new
   reference); the last one found for the state is reused while the epoch lasts. */
static PyObject *
task_counts(run_t *run, PyObject *state, PyObject *sequences, PyObject *task)
{
    sequence_cache_t *entry = NULL;
    PyObject *counts;
    int i;
    for (i = 0; i < run->cached; i++) {
        if (run->sequences[i].state == state) {
            entry = &run->sequences[i];
            if (entry->epoch == run->epoch && str_equal(entry->task, task)) {
                Py_INCREF(entry->counts);
                return entry->counts;
            }
            break;
        }
    }
    counts = PyDict_GetItemWithError(sequences, task);
    if (counts == NULL || counts == Py_None) {
        if (counts == NULL && PyErr_Occurred()) {
            return NULL;
        }
        hold_gc(run);
        counts = PyDict_New();
        if (counts == NULL) {
            return NULL;
        }
        if (PyDict_SetItem(sequences, task, counts) < 0) {
            Py_DECREF(counts);
            return NULL;
        }
    } else {
        Py_INCREF(counts);
    }
    if (entry == NULL && run->cached < SEQUENCE_CACHE) {
        entry = &run->sequences[run->cached++];
        entry->state = NULL;
        entry->task = NULL;
        entry->counts = NULL;
    }
    if (entry != NULL) {
        /* (the old references go last: nothing reads the entry while they are released) */
        PyObject *old_state = entry->state, *old_task = entry->task, *old_counts = entry->counts;
        Py_INCREF(state);
        Py_INCREF(task);
        Py_INCREF(counts);
        entry->state = state;
        entry->task = task;
        entry->counts = counts;
        entry->epoch = run->epoch;
        Py_XDECREF(old_state);
        Py_XDECREF(old_task);
        Py_XDECREF(old_counts);
    }
    return counts;
}

/* The trace's totals into one state (what follows the item walk of _apply/apply_twice). */
static int
close_state(run_t *run, PyObject *state, PyObject *sequences, Py_ssize_t actions,
            long discovery, long workflow, const tally_t *tally, PyObject *key, PyObject *task)
{
    const Py_ssize_t *off = run->ms->state_offsets;
    PyObject *const *names = run->ms->state_names;
    long amounts[T_COUNT];
    pending_t *pending = NULL;
    int k;
    amounts[T_TRACES] = 1;
    amounts[T_OPERATIONS] = (long)actions + discovery + workflow;
    amounts[T_ACTION_OPERATIONS] = (long)actions;
    amounts[T_DISCOVERY_OPERATIONS] = discovery;
    amounts[T_WORKFLOW_OPERATIONS] = workflow;
    amounts[T_CHURN_PAIRS] = tally->churn_pairs;
    amounts[T_SUCCEEDED] = tally->succeeded;
    amounts[T_FAILED] = tally->failed;
    amounts[T_ABORTED] = tally->aborted;
    amounts[T_TIMED_OUT] = tally->timed_out;
    amounts[T_INVOCATION_REJECTIONS] = tally->rejections;
    if (run->batching && pending_for(run, state, amounts, &pending) < 0) {
        return -1;
    }
    if (pending != NULL) {
        for (k = 0; k < T_COUNT; k++) {
            pending->totals[k] += amounts[k];
        }
    } else {
        /* Python skips the outcome totals of a trace without actions (an odd value's
           += 0 may change it: -0.0 + 0 is 0.0). */
        int last = actions ? T_COUNT : T_CHURN_PAIRS;
        for (k = 0; k < last; k++) {
            int field = TOTAL_SLOTS[k];
            if (field_add(run, state, 1, off[field], names[field], amounts[k]) < 0) {
                return -1;
            }
        }
    }
    if (key != NULL) {
        PyObject *counts = task_counts(run, state, sequences, task);
        int result;
        if (counts == NULL) {
            return -1;
        }
        result = count_key(run, counts, key);
        Py_DECREF(counts);
        return result;
    }
    return 0;
}

/* The maps of an exact MeterState this kernel may fill (borrowed), or 0 when it is not one. */
static inline int
usable_state(module_state *ms, PyObject *state, PyObject **refs, PyObject **sequences,
             int *retain)
{
    const Py_ssize_t *off = ms->state_offsets;
    PyObject *value;
    if (!Py_IS_TYPE(state, (PyTypeObject *)ms->meter_type)) {
        return 0;
    }
    *refs = SLOT(state, off[S_REFS]);
    *sequences = SLOT(state, off[S_TASK_SEQUENCES]);
    value = SLOT(state, off[S_RETAIN_TERMS]);
    if (*refs == NULL || !PyDict_CheckExact(*refs) || *sequences == NULL
        || !PyDict_CheckExact(*sequences) || value == NULL || !PyBool_Check(value)) {
        return 0;
    }
    *retain = value == Py_True;
    return 1;
}

static void
release_items(item_t *items, Py_ssize_t count)
{
    Py_ssize_t i;
    for (i = 0; i < count; i++) {
        Py_DECREF(items[i].ref);
        Py_DECREF(items[i].signature);
        Py_XDECREF(items[i].stage);
        Py_XDECREF(items[i].distance);
    }
}

#define STACK_ITEMS 32

typedef struct {
    item_t *items;
    Py_ssize_t count;
    Py_ssize_t capacity;
    item_t stack[STACK_ITEMS];
    long discovery;
    long workflow;
} derived_t;

static int
grow(derived_t *derived)
{
    Py_ssize_t capacity = derived->capacity * 2;
    item_t *items;
    if (derived->items == derived->stack) {
        items = PyMem_New(item_t, capacity);
        if (items != NULL) {
            memcpy(items, derived->stack, sizeof(item_t) * (size_t)derived->count);
        }
    } else {
        items = derived->items;
        PyMem_Resize(items, item_t, capacity);
    }
    if (items == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    derived->items = items;
    derived->capacity = capacity;
    return 0;
}

/* The derivation of add_signed: 1 done, 0 outside the domain, -1 an error. */
static int
derive(run_t *run, PyObject *operations, derived_t *derived)
{
    module_state *ms = run->ms;
    PyObject *pending = NULL;
    int is_list = PyList_CheckExact(operations);
    Py_ssize_t index;
    int status = 1;
    for (index = 0;; index++) {
        PyObject *op, *fields[5], *ref, *outcome, *stage, *signature, *distance = NULL;
        int code;
        item_t *item;
        if (is_list) {
            if (index >= PyList_GET_SIZE(operations)) {
                break;
            }
            op = PyList_GET_ITEM(operations, index);
        } else {
            if (index >= PyTuple_GET_SIZE(operations)) {
                break;
            }
            op = PyTuple_GET_ITEM(operations, index);
        }
        if (PyTuple_CheckExact(op) && PyTuple_GET_SIZE(op) == 5) {
            for (code = 0; code < 5; code++) {
                fields[code] = PyTuple_GET_ITEM(op, code);
            }
        } else if (PyList_CheckExact(op) && PyList_GET_SIZE(op) == 5) {
            for (code = 0; code < 5; code++) {
                fields[code] = PyList_GET_ITEM(op, code);
            }
        } else {
            status = 0;
            break;
        }
        ref = fields[0];
        outcome = fields[2];
        stage = fields[3];
        signature = fields[4];
        if (!exact_str(ref)) {
            status = 0;
            break;
        }
        if (starts_with(ref, ms->fabric)) {
            if (starts_with(ref, ms->discovery)) {
                derived->discovery++;
                continue;
            }
            if (starts_with(ref, ms->workflow)) {
                derived->workflow++;
                continue;
            }
        }
        if (!exact_str(outcome) || !exact_str(signature)) {
            status = 0;
            break;
        }
        if (str_equal(outcome, ms->succeeded)) {
            code = OUT_SUCCEEDED;
        } else if (str_equal(outcome, ms->failed)) {
            code = OUT_FAILED;
            if (stage == Py_None) {
                stage = ms->unknown;
            } else if (!exact_str(stage)) {
                status = 0;
                break;
            }
        } else if (str_equal(outcome, ms->aborted)) {
            code = OUT_ABORTED;
        } else {
            code = OUT_OTHER;
        }
        /* Hold the three strings before any call back into Python. */
        Py_INCREF(ref);
        Py_INCREF(signature);
        if (code == OUT_FAILED) {
            Py_INCREF(stage);
        } else {
            stage = NULL;
        }
        if (pending != NULL && PyDict_GET_SIZE(pending) > 0) {
            PyObject *previous = PyDict_GetItemWithError(pending, ref);
            if (previous == NULL && PyErr_Occurred()) {
                status = -1;
            } else if (previous != NULL) {
                Py_INCREF(previous);
                if (PyDict_DelItem(pending, ref) < 0) {
                    status = -1;
                } else if (previous != Py_None) {
                    PyObject *function = PyDict_GetItemWithError(ms->meter_globals, ms->distance_name);
                    if (function == NULL) {
                        if (!PyErr_Occurred()) {
                            PyErr_SetString(PyExc_NameError, "name 'signature_distance' is not defined");
                        }
                        status = -1;
                    } else if (settle(run) < 0) {
                        status = -1;
                    } else {
                        PyObject *args[2] = {previous, signature};
                        Py_INCREF(function);
                        distance = PyObject_Vectorcall(function, args, 2, NULL);
                        Py_DECREF(function);
                        if (distance == NULL) {
                            status = -1;
                        } else if (distance == Py_None) {
                            Py_DECREF(distance);
                            distance = NULL;
                        }
                    }
                }
                Py_DECREF(previous);
            }
        }
        if (status == 1 && code == OUT_FAILED) {
            if (pending == NULL) {
                hold_gc(run);
                pending = PyDict_New();
            }
            if (pending == NULL || PyDict_SetItem(pending, ref, signature) < 0) {
                status = -1;
            }
        }
        if (status == 1 && derived->count == derived->capacity && grow(derived) < 0) {
            status = -1;
        }
        if (status != 1) {
            Py_DECREF(ref);
            Py_DECREF(signature);
            Py_XDECREF(stage);
            Py_XDECREF(distance);
            break;
        }
        item = &derived->items[derived->count++];
        item->ref = ref;
        item->signature = signature;
        item->stage = stage;
        item->distance = distance;
        item->outcome = code;
    }
    Py_XDECREF(pending);
    return status;
}

/* Characters [0, length) of a ready str into out (of kind out_kind) from index at. */
static void
copy_into(void *out, int out_kind, Py_ssize_t at, PyObject *text, Py_ssize_t length)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t i;
    if (kind == out_kind) {
        memcpy((char *)out + at * kind, data, (size_t)(length * kind));
    } else if (kind == PyUnicode_1BYTE_KIND && out_kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS1 *from = (const Py_UCS1 *)data;
        Py_UCS2 *to = (Py_UCS2 *)out + at;
        for (i = 0; i + 4 <= length; i += 4) { /* (the refs joined by an arrow: widened) */
            to[i] = from[i];
            to[i + 1] = from[i + 1];
            to[i + 2] = from[i + 2];
            to[i + 3] = from[i + 3];
        }
        for (; i < length; i++) {
            to[i] = from[i];
        }
    } else {
        for (i = 0; i < length; i++) {
            PyUnicode_WRITE(out_kind, out, at + i, PyUnicode_READ(kind, data, i));
        }
    }
}

/* separator.join(item.ref for item in items) for ready exact strs (two or more): the
   str PyUnicode_Join makes (the narrowest kind that holds every part). */
static PyObject *
join_refs(PyObject *separator, const item_t *items, Py_ssize_t count)
{
    Py_ssize_t separator_length = PyUnicode_GET_LENGTH(separator), length = 0, at = 0, j;
    Py_UCS4 widest = PyUnicode_MAX_CHAR_VALUE(separator);
    PyObject *joined;
    void *data;
    int kind;
    for (j = 0; j < count; j++) {
        PyObject *ref = items[j].ref;
        Py_ssize_t part = PyUnicode_GET_LENGTH(ref) + (j ? separator_length : 0);
        if (length > PY_SSIZE_T_MAX - part) {
            PyErr_SetString(PyExc_OverflowError, "join() result is too long for a Python string");
            return NULL;
        }
        length += part;
        if (PyUnicode_MAX_CHAR_VALUE(ref) > widest) {
            widest = PyUnicode_MAX_CHAR_VALUE(ref);
        }
    }
    joined = PyUnicode_New(length, widest);
    if (joined == NULL) {
        return NULL;
    }
    kind = PyUnicode_KIND(joined);
    data = PyUnicode_DATA(joined);
    for (j = 0; j < count; j++) {
        PyObject *ref = items[j].ref;
        if (j) {
            copy_into(data, kind, at, separator, separator_length);
            at += separator_length;
        }
        copy_into(data, kind, at, ref, PyUnicode_GET_LENGTH(ref));
        at += PyUnicode_GET_LENGTH(ref);
    }
    return joined;
}

/* add_signed for one trace: Py_None (done), Py_NotImplemented (nothing changed: the
   Python twin must do it) or NULL (an error); borrowed results. */
static PyObject *
add_one(run_t *run, PyObject *state, PyObject *operations, PyObject *task_key,
        PyObject *model)
{
    module_state *ms = run->ms;
    PyObject *task;
    PyObject *refs[2], *sequences[2], *states[2];
    PyObject *key = NULL, *result = NULL;
    PyObject *accs[2], *last_accs[2] = {NULL, NULL}, *last_ref = NULL;
    int retain[2], count = 1, stamped, status, i;
    unsigned long start, last_epoch = 0;
    Py_ssize_t j;
    derived_t derived;
    tally_t tally = {0, 0, 0, 0, 0, 0};

    if (!(PyList_CheckExact(operations) || PyTuple_CheckExact(operations))) {
        return Py_NotImplemented;
    }
    if (task_key == Py_None) {
        task = ms->no_task;
    } else if (exact_str(task_key)) {
        task = task_key;
    } else {
        return Py_NotImplemented;
    }
    if (model == Py_None) {
        stamped = 0;
    } else if (exact_str(model)) {
        stamped = PyUnicode_GET_LENGTH(model) > 0;
    } else {
        return Py_NotImplemented;
    }
    if (!usable_state(ms, state, &refs[0], &sequences[0], &retain[0])) {
        return Py_NotImplemented;
    }
    states[0] = state;
    if (stamped) {
        PyObject *models = SLOT(state, ms->state_offsets[S_MODELS]);
        if (models == NULL || !PyDict_CheckExact(models)) {
            return Py_NotImplemented;
        }
    }

    derived.items = derived.stack;
    derived.count = 0;
    derived.capacity = STACK_ITEMS;
    derived.discovery = 0;
    derived.workflow = 0;
    status = derive(run, operations, &derived);
    if (status <= 0) {
        release_items(derived.items, derived.count);
        if (derived.items != derived.stack) {
            PyMem_Free(derived.items);
        }
        if (status < 0) {
            return NULL;
        }
        return Py_NotImplemented;
    }

    /* A callback (signature_distance) may have changed the state: look again (always:
       the maps are borrowed, and the garbage collector too may have run Python code). */
    if (!usable_state(ms, state, &refs[0], &sequences[0], &retain[0])) {
        result = Py_NotImplemented;
        goto done;
    }
    if (derived.count == 1) {
        /* str.join of one str is that str */
        key = derived.items[0].ref;
        Py_INCREF(key);
    } else if (derived.count) {
        key = join_refs(ms->join, derived.items, derived.count);
        if (key == NULL) {
            goto done;
        }
    }
    if (stamped) {
        PyObject *models = SLOT(state, ms->state_offsets[S_MODELS]);
        PyObject *model_state;
        if (models == NULL || !PyDict_CheckExact(models)) {
            result = Py_NotImplemented;
            goto done;
        }
        Py_INCREF(models);
        if (run->model_of == state && run->model_epoch == run->epoch
            && str_equal(run->model, model)) {
            model_state = run->model_state;
        } else {
            model_state = PyDict_GetItemWithError(models, model);
        }
        if (model_state == NULL || model_state == Py_None) {
            PyObject *flag = SLOT(state, ms->state_offsets[S_RETAIN_TERMS]);
            if (model_state == NULL && PyErr_Occurred()) {
                Py_DECREF(models);
                goto done;
            }
            if (maker_usable(&ms->meter_maker, ms->meter_type, ms->init_name)) {
                model_state = make_instance(run, ms->meter_type, &ms->meter_maker, STATE_KINDS,
                                            ms->state_offsets, S_COUNT, flag);
            } else if (settle(run) < 0) {
                Py_DECREF(models);
                goto done;
            } else {
                model_state = PyObject_Vectorcall(ms->meter_type, &flag, 0, ms->retain_kwnames);
            }
            if (model_state == NULL || PyDict_SetItem(models, model, model_state) < 0) {
                Py_XDECREF(model_state);
                Py_DECREF(models);
                goto done;
            }
        } else {
            Py_INCREF(model_state);
        }
        Py_DECREF(models);
        states[1] = model_state; /* owned from here */
        count = 2;
        if (run->model_state != model_state || run->model_of != state
            || run->model_epoch != run->epoch) {
            PyObject *old_model = run->model, *old_of = run->model_of;
            PyObject *old_state = run->model_state;
            Py_INCREF(model);
            Py_INCREF(state);
            Py_INCREF(model_state);
            run->model = model;
            run->model_of = state;
            run->model_state = model_state;
            run->model_epoch = run->epoch;
            Py_XDECREF(old_model);
            Py_XDECREF(old_of);
            Py_XDECREF(old_state);
        }
        if (model_state == state
            || !usable_state(ms, model_state, &refs[1], &sequences[1], &retain[1])
            || !usable_state(ms, state, &refs[0], &sequences[0], &retain[0])) {
            result = Py_NotImplemented;
            goto done;
        }
    }
    for (i = 0; i < count; i++) {
        Py_INCREF(refs[i]);
        Py_INCREF(sequences[i]);
    }
    status = 0;
    for (j = 0; j < derived.count && status == 0; j++) {
        const item_t *item = &derived.items[j];
        switch (item->outcome) {
        case OUT_SUCCEEDED:
            tally.succeeded++;
            break;
        case OUT_FAILED:
            tally.failed++;
            status = PySet_Contains(ms->rejections, item->stage);
            if (status > 0) {
                tally.rejections++;
                status = 0;
            }
            break;
        case OUT_ABORTED:
            tally.aborted++;
            break;
        default:
            tally.timed_out++;
        }
        if (item->distance != NULL) {
            tally.churn_pairs++;
        }
        if (status != 0) {
            break;
        }
        /* The same ref as the item before, nothing run in between: the same accumulators. */
        if (last_ref != NULL && last_epoch == run->epoch && str_equal(last_ref, item->ref)) {
            for (i = 0; i < count; i++) {
                accs[i] = last_accs[i];
                last_accs[i] = NULL;
            }
        } else {
            for (i = 0; i < count; i++) {
                Py_CLEAR(last_accs[i]);
                accs[i] = NULL;
            }
        }
        last_ref = NULL;
        start = run->epoch;
        for (i = 0; i < count && status == 0; i++) {
            if (accs[i] == NULL) {
                accs[i] = ref_accumulator(run, refs[i], item->ref);
                if (accs[i] == NULL) {
                    status = -1;
                    break;
                }
            }
            status = feed(run, states[i], accs[i], item, retain[i]);
        }
        for (i = 0; i < count; i++) {
            last_accs[i] = accs[i]; /* (NULL past an error) */
        }
        if (status == 0 && run->epoch == start) {
            last_ref = item->ref;
            last_epoch = start;
        }
    }
    for (i = 0; i < count; i++) {
        Py_XDECREF(last_accs[i]);
    }
    for (i = 0; i < count && status == 0; i++) {
        status = close_state(run, states[i], sequences[i], derived.count, derived.discovery,
                             derived.workflow, &tally, key, task);
    }
    for (i = 0; i < count; i++) {
        Py_DECREF(refs[i]);
        Py_DECREF(sequences[i]);
    }
    if (status == 0) {
        result = Py_None;
    }
done:
    for (j = 0; j < derived.count; j++) {
        PyObject *distance = derived.items[j].distance;
        if (distance != NULL && !PyFloat_CheckExact(distance)) {
            /* releasing a distance of another type may run its Python code */
            if (settle_after(run, result == NULL) < 0) {
                result = NULL;
            }
            break;
        }
    }
    if (count == 2) {
        Py_DECREF(states[1]);
    }
    Py_XDECREF(key);
    release_items(derived.items, derived.count);
    if (derived.items != derived.stack) {
        PyMem_Free(derived.items);
    }
    return result;
}

static PyObject *
meter_add_signed(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    run_t run;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "add_signed() takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    run_start(&run, (module_state *)PyModule_GetState(module), 0);
    result = add_one(&run, args[0], args[1], args[2], args[3]);
    Py_XINCREF(result);
    run_end(&run);
    return result;
}

static PyObject *
meter_add_signed_many(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *state, *entries, *result = NULL;
    Py_ssize_t index;
    run_t run;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "add_signed_many() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    state = args[0];
    entries = args[1];
    if (!PyList_CheckExact(entries)) {
        PyErr_SetString(PyExc_TypeError, "add_signed_many() takes a list of entries");
        return NULL;
    }
    index = PyNumber_AsSsize_t(args[2], PyExc_OverflowError);
    if (index == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (index < 0) {
        index = 0;
    }
    run_start(&run, (module_state *)PyModule_GetState(module), 1);
    /* The list is read live (as a for loop reads it): a callback may change it. */
    for (; index < PyList_GET_SIZE(entries); index++) {
        PyObject *entry = PyList_GET_ITEM(entries, index);
        PyObject *done;
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3) {
            result = Py_NotImplemented;
            break;
        }
        Py_INCREF(entry);
        done = add_one(&run, state, PyTuple_GET_ITEM(entry, 0), PyTuple_GET_ITEM(entry, 1),
                       PyTuple_GET_ITEM(entry, 2));
        Py_DECREF(entry);
        if (done == NULL) {
            settle_after(&run, 1);
            run_end(&run);
            return NULL;
        }
        if (done == Py_NotImplemented) {
            result = Py_NotImplemented;
            break;
        }
    }
    /* The states are whole again before the caller (or the Python twin) sees them. */
    if (settle_after(&run, 0) < 0) {
        run_end(&run);
        return NULL;
    }
    run_end(&run);
    if (result == Py_NotImplemented) {
        return PyLong_FromSsize_t(index);
    }
    Py_RETURN_NONE;
}

/* ----------------------------------------------------------------------------- module */

static PyMethodDef meter_methods[] = {
    {"add_signed", (PyCFunction)(void (*)(void))meter_add_signed, METH_FASTCALL,
     "add_signed(state, operations, task_key, model): MeterState.add_signed for one trace;\n"
     "None when done, NotImplemented (nothing changed) for an input outside the kernel's domain."},
    {"add_signed_many", (PyCFunction)(void (*)(void))meter_add_signed_many, METH_FASTCALL,
     "add_signed_many(state, entries, start): add_signed(state, *entry) for each (operations,\n"
     "task_key, model) tuple of the list from index start on; None when all are done, else the\n"
     "index of the first entry it did not do (nothing of it changed: the caller does it)."},
    {NULL, NULL, 0, NULL},
};

static int
meter_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *ms = (module_state *)PyModule_GetState(module);
    if (ms == NULL) {
        return 0;
    }
    Py_VISIT(ms->meter_type);
    Py_VISIT(ms->acc_type);
    Py_VISIT(ms->meter_globals);
    Py_VISIT(ms->rejections);
    Py_VISIT(ms->acc_maker.init);
    Py_VISIT(ms->acc_maker.code);
    Py_VISIT(ms->meter_maker.init);
    Py_VISIT(ms->meter_maker.code);
    return 0;
}

static int
meter_clear(PyObject *module)
{
    module_state *ms = (module_state *)PyModule_GetState(module);
    int i;
    if (ms == NULL) {
        return 0;
    }
    Py_CLEAR(ms->meter_type);
    Py_CLEAR(ms->acc_type);
    Py_CLEAR(ms->meter_globals);
    Py_CLEAR(ms->rejections);
    Py_CLEAR(ms->fabric);
    Py_CLEAR(ms->discovery);
    Py_CLEAR(ms->workflow);
    Py_CLEAR(ms->succeeded);
    Py_CLEAR(ms->failed);
    Py_CLEAR(ms->aborted);
    Py_CLEAR(ms->unknown);
    Py_CLEAR(ms->no_task);
    Py_CLEAR(ms->join);
    Py_CLEAR(ms->distance_name);
    Py_CLEAR(ms->get_name);
    Py_CLEAR(ms->append_name);
    Py_CLEAR(ms->retain_kwnames);
    Py_CLEAR(ms->init_name);
    Py_CLEAR(ms->acc_maker.init);
    Py_CLEAR(ms->acc_maker.code);
    Py_CLEAR(ms->acc_maker.zero);
    Py_CLEAR(ms->meter_maker.init);
    Py_CLEAR(ms->meter_maker.code);
    Py_CLEAR(ms->meter_maker.zero);
    for (i = 0; i < S_COUNT; i++) {
        Py_CLEAR(ms->state_names[i]);
    }
    for (i = 0; i < A_COUNT; i++) {
        Py_CLEAR(ms->acc_names[i]);
    }
    return 0;
}

static void
meter_free(void *module)
{
    meter_clear((PyObject *)module);
}

static struct PyModuleDef meter_module = {
    PyModuleDef_HEAD_INIT,
    "pytest_entropy.core._meter_native",
    "The native kernel of MeterState.add_signed (pytest_entropy/core/_meter_native.c).",
    sizeof(module_state),
    meter_methods,
    NULL,
    meter_traverse,
    meter_clear,
    meter_free,
};

/* The offset of each named __slots__ member of ``type`` (exactly that type's own). */
static int
slot_offsets(PyObject *type, const char *const *fields, int count, PyObject **names,
             Py_ssize_t *offsets)
{
    int i;
    for (i = 0; i < count; i++) {
        PyObject *descriptor;
        PyMemberDef *member;
        names[i] = PyUnicode_InternFromString(fields[i]);
        if (names[i] == NULL) {
            return -1;
        }
        descriptor = PyObject_GetAttr(type, names[i]);
        if (descriptor == NULL) {
            return -1;
        }
        if (!Py_IS_TYPE(descriptor, &PyMemberDescr_Type)
            || ((PyDescrObject *)descriptor)->d_type != (PyTypeObject *)type) {
            Py_DECREF(descriptor);
            PyErr_Format(PyExc_ImportError, "%R.%s is not a slot of that class", type, fields[i]);
            return -1;
        }
        member = ((PyMemberDescrObject *)descriptor)->d_member;
        if (member->type != T_OBJECT_EX || (member->flags & READONLY)) {
            Py_DECREF(descriptor);
            PyErr_Format(PyExc_ImportError, "%R.%s is not a writable object slot", type, fields[i]);
            return -1;
        }
        offsets[i] = member->offset;
        Py_DECREF(descriptor);
    }
    return 0;
}

static PyObject *
attribute_of(const char *module_name, const char *name)
{
    PyObject *module = PyImport_ImportModule(module_name);
    PyObject *value;
    if (module == NULL) {
        return NULL;
    }
    value = PyObject_GetAttrString(module, name);
    Py_DECREF(module);
    return value;
}

static int
exact_str_constant(PyObject *value, const char *name)
{
    if (value == NULL) {
        return -1;
    }
    if (!exact_str(value)) {
        PyErr_Format(PyExc_ImportError, "the meter's %s is not a str", name);
        return -1;
    }
    return 0;
}

/* 1 when ``value`` is what a slot of that kind holds in a new instance (``flag``: the
   retain_terms it was made with), 0 otherwise. */
static int
initial_value(PyObject *value, int kind, PyObject *flag)
{
    if (value == NULL) {
        return 0;
    }
    switch (kind) {
    case K_ZERO:
        return PyLong_CheckExact(value) && Py_SIZE(value) == 0;
    case K_FLOAT_ZERO:
        return PyFloat_CheckExact(value) && PyFloat_AS_DOUBLE(value) == 0.0
               && !signbit(PyFloat_AS_DOUBLE(value));
    case K_DICT:
        return PyDict_CheckExact(value) && PyDict_GET_SIZE(value) == 0;
    case K_LIST:
        return PyList_CheckExact(value) && PyList_GET_SIZE(value) == 0;
    default:
        return value == flag;
    }
}

/* 1 when the code of an __init__ reads nothing but its arguments and constants (None,
   0 and 0.0) and names nothing but the class's slots: what it sets is then the same on
   every call. */
static int
plain_init_code(PyObject *code, PyObject *const *names, int count)
{
    PyCodeObject *co = (PyCodeObject *)code;
    Py_ssize_t i, size;
    int k, found;
    if (!PyCode_Check(code) || co->co_nfreevars != 0 || co->co_ncellvars != 0) {
        return 0;
    }
    size = PyTuple_GET_SIZE(co->co_names);
    for (i = 0; i < size; i++) {
        PyObject *name = PyTuple_GET_ITEM(co->co_names, i);
        found = 0;
        for (k = 0; k < count && !found; k++) {
            found = PyUnicode_CheckExact(name) && PyUnicode_Compare(name, names[k]) == 0;
        }
        if (!found) {
            return 0;
        }
    }
    size = PyTuple_GET_SIZE(co->co_consts);
    for (i = 0; i < size; i++) {
        PyObject *constant = PyTuple_GET_ITEM(co->co_consts, i);
        if (!(constant == Py_None || initial_value(constant, K_ZERO, NULL)
              || initial_value(constant, K_FLOAT_ZERO, NULL))) {
            return 0;
        }
    }
    return 1;
}

/* Fills ``maker`` when ``template`` (an instance the class made, a new reference, NULL on
   an error) shows that the kernel may build the class's instances itself (see maker_t);
   leaves it empty otherwise. -1 on an error. */
static int
maker_setup(maker_t *maker, PyObject *type, PyObject *template, const int *kinds,
            const Py_ssize_t *offsets, PyObject *const *names, int count, PyObject *flag,
            PyObject *init_name)
{
    PyTypeObject *tp = (PyTypeObject *)type;
    PyObject *init;
    int i, zero = -1;
    if (template == NULL) {
        return -1;
    }
    init = PyDict_GetItemWithError(tp->tp_dict, init_name);
    if (init == NULL && PyErr_Occurred()) {
        Py_DECREF(template);
        return -1;
    }
    if (init == NULL || !PyFunction_Check(init) || !Py_IS_TYPE(template, tp)
        || !Py_IS_TYPE(type, &PyType_Type) || tp->tp_new != PyBaseObject_Type.tp_new
        || tp->tp_alloc != PyType_GenericAlloc || tp->tp_setattro != PyObject_GenericSetAttr
        || tp->tp_dictoffset != 0 || tp->tp_weaklistoffset != 0
        || tp->tp_basicsize != PyBaseObject_Type.tp_basicsize + count * (Py_ssize_t)sizeof(PyObject *)
        || !plain_init_code(PyFunction_GET_CODE(init), names, count)) {
        Py_DECREF(template);
        return 0;
    }
    for (i = 0; i < count; i++) {
        PyObject *value = SLOT(template, offsets[i]);
        if (!initial_value(value, kinds[i], flag)) {
            Py_DECREF(template);
            return 0;
        }
        if (kinds[i] == K_FLOAT_ZERO) {
            zero = i;
        }
    }
    if (zero < 0) {
        Py_DECREF(template);
        return 0;
    }
    maker->zero = SLOT(template, offsets[zero]);
    Py_INCREF(maker->zero);
    Py_DECREF(template);
    maker->init = init;
    Py_INCREF(init);
    maker->code = PyFunction_GET_CODE(init);
    Py_INCREF(maker->code);
    maker->tp_new = tp->tp_new;
    maker->tp_init = tp->tp_init;
    maker->tp_alloc = tp->tp_alloc;
    maker->tp_setattro = tp->tp_setattro;
    return 0;
}

static int
setup(module_state *ms)
{
    PyObject *meter = PyImport_ImportModule("pytest_entropy.core.meter");
    if (meter == NULL) {
        return -1;
    }
    ms->meter_globals = PyModule_GetDict(meter); /* borrowed from the module */
    Py_XINCREF(ms->meter_globals);
    ms->meter_type = PyObject_GetAttrString(meter, "MeterState");
    ms->discovery = PyObject_GetAttrString(meter, "DISCOVERY_PREFIX");
    ms->workflow = PyObject_GetAttrString(meter, "WORKFLOW_PREFIX");
    ms->no_task = PyObject_GetAttrString(meter, "_NO_TASK");
    ms->join = PyObject_GetAttrString(meter, "_SEQUENCE_JOIN");
    Py_DECREF(meter);
    if (ms->meter_globals == NULL || ms->meter_type == NULL
        || exact_str_constant(ms->discovery, "DISCOVERY_PREFIX") < 0
        || exact_str_constant(ms->workflow, "WORKFLOW_PREFIX") < 0
        || exact_str_constant(ms->no_task, "_NO_TASK") < 0
        || exact_str_constant(ms->join, "_SEQUENCE_JOIN") < 0) {
        return -1;
    }
    ms->acc_type = attribute_of("pytest_entropy.core.meter_apply", "_RefAccumulator");
    ms->rejections = attribute_of("pytest_entropy.core.meter_apply", "INVOCATION_REJECTION_STAGES");
    if (ms->acc_type == NULL || ms->rejections == NULL) {
        return -1;
    }
    if (!PyType_Check(ms->meter_type) || !PyType_Check(ms->acc_type)
        || !PyFrozenSet_CheckExact(ms->rejections)) {
        PyErr_SetString(PyExc_ImportError, "the meter's classes are not what the kernel expects");
        return -1;
    }
    if (slot_offsets(ms->meter_type, STATE_FIELDS, S_COUNT, ms->state_names, ms->state_offsets) < 0
        || slot_offsets(ms->acc_type, ACC_FIELDS, A_COUNT, ms->acc_names, ms->acc_offsets) < 0) {
        return -1;
    }
    ms->fabric = PyUnicode_InternFromString("fabric.");
    ms->succeeded = PyUnicode_InternFromString("succeeded");
    ms->failed = PyUnicode_InternFromString("failed");
    ms->aborted = PyUnicode_InternFromString("aborted");
    ms->unknown = PyUnicode_InternFromString("unknown");
    ms->distance_name = PyUnicode_InternFromString("signature_distance");
    ms->get_name = PyUnicode_InternFromString("get");
    ms->append_name = PyUnicode_InternFromString("append");
    if (ms->fabric == NULL || ms->succeeded == NULL || ms->failed == NULL || ms->aborted == NULL
        || ms->unknown == NULL || ms->distance_name == NULL || ms->get_name == NULL
        || ms->append_name == NULL) {
        return -1;
    }
    ms->retain_kwnames = Py_BuildValue("(O)", ms->state_names[S_RETAIN_TERMS]);
    ms->init_name = PyUnicode_InternFromString("__init__");
    if (ms->retain_kwnames == NULL || ms->init_name == NULL) {
        return -1;
    }
    {
        PyObject *flag = Py_True;
        if (maker_setup(&ms->acc_maker, ms->acc_type, PyObject_CallNoArgs(ms->acc_type),
                        ACC_KINDS, ms->acc_offsets, ms->acc_names, A_COUNT, NULL, ms->init_name)
                < 0
            || maker_setup(&ms->meter_maker, ms->meter_type,
                           PyObject_Vectorcall(ms->meter_type, &flag, 0, ms->retain_kwnames),
                           STATE_KINDS, ms->state_offsets, ms->state_names, S_COUNT, flag,
                           ms->init_name)
                   < 0) {
            return -1;
        }
    }
    return 0;
}

PyMODINIT_FUNC
PyInit__meter_native(void)
{
    PyObject *module = PyModule_Create(&meter_module);
    if (module == NULL) {
        return NULL;
    }
    if (setup((module_state *)PyModule_GetState(module)) < 0
        || PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
