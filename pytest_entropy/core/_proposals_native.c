/* The proposals' trace evidence in C: ProposalEvidence.add_operations's clusters and
 * sequence windows (pytest_entropy/core/proposals.py is the Python twin and the
 * specification).
 *
 * add_operations(clusters, sequences, operations, origin, number) accumulates one execution
 * into the evidence's two dicts exactly as the Python loop does:
 *
 *   * clusters[ref][tuple(args)] += 1 for every operation, in order;
 *   * the runs of successful calls outside fabric./pi. (segments), and in each segment
 *     every window of FUSE_MIN..FUSE_MAX distinct refs, width by width and start by start:
 *     sequences["→".join(window)] = [window, 1, {execution}] the first time, else its
 *     occurrences + 1 and the execution added while the set holds fewer than
 *     FUSE_MIN_EXECUTIONS; execution is the tuple (origin, number).
 *
 * It returns True when done, or NotImplemented without touching anything when the input is
 * outside its exact domain (the operations not an exact list or tuple, an operation not an
 * exact tuple or Operation with at least three items, a ref or outcome not an exact str,
 * args not an exact dict with exact str keys, a per-ref entry not an exact dict): the
 * caller then runs the Python loop. Entries of ``sequences`` are read and updated through
 * the abstract object protocol (item access, in-place add, len, .add), as Python does.
 *
 * The clusters' count, per_ref[tuple(args)] = per_ref.get(tuple(args), 0) + 1, is found
 * without building the key tuple when per_ref is small and holds only exact tuples of exact
 * str: its key tuple whose items equal the argument keys in order is the entry the dict's
 * lookup would find (equal str have equal hashes), and writing through that key object
 * changes the same entry. clusters[ref] is read once per operation (in the domain check)
 * and the argument keys once, both trusted until a count that is not an exact int runs
 * Python code in its + (from then on everything is read again, as the Python loop reads it).
 *
 * replay_evidence(evidence, entries, tallier, replay_one) is run.deferred's replay loop;
 * an evidence of exactly ProposalEvidence (its class unchanged since this module was
 * imported) has its _executions slot read and written in place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define FUSE_MIN 3
#define FUSE_MAX 6
#define FUSE_MIN_EXECUTIONS 3
#define SEQUENCE_JOIN "\xe2\x86\x92" /* U+2192 RIGHTWARDS ARROW */
#define SMALL 32 /* operations a trace may have with its scratch on the stack */
#define SMALL_KEYS 128 /* argument keys (all operations) a trace may have on the stack */

static PyObject *operation_type; /* pytest_entropy.core.records.Operation */
static PyObject *str_fabric;
static PyObject *str_pi;
static PyObject *str_join;
static PyObject *str_add;
static PyObject *int_one;
static PyObject *int_two;
static PyObject *str_clusters, *str_sequences, *str_origin, *str_native, *str_trace_values;
static PyObject *str_executions, *str_add_operations, *str_add_trace_values;

/* The kinds of run/deferred.py's entries this replays itself (the others go to replay_one). */
#define REPLAY_VALUES 3
#define REPLAY_OPERATIONS 4

static inline int
same_str(PyObject *a, PyObject *b)
{
    /* Exact str equality (code points), as str.__eq__ and a set's membership compare: the
     * same length, storage kind and code units (a str is stored in its narrowest kind). */
    if (a == b) {
        return 1;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(a);
    if (length != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b)) {
        return 0;
    }
    return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)length * PyUnicode_KIND(a)) == 0;
}

/* text.startswith(prefix) for an exact str text and an ASCII prefix of n characters. */
static inline int
starts_with(PyObject *text, const char *prefix, Py_ssize_t n)
{
    if (PyUnicode_GET_LENGTH(text) < n) {
        return 0;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND) {
        return memcmp(data, prefix, (size_t)n) == 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyUnicode_READ(kind, data, i) != (Py_UCS4)(unsigned char)prefix[i]) {
            return 0;
        }
    }
    return 1;
}

/* The entry of per_ref whose key is tuple(args), given as its size exact str argument keys
 * in order, found as the dict's lookup finds it: a key tuple of the same length whose items
 * equal them. 1 with *stored and *calls borrowed from per_ref, 0 when there is none, -1
 * (nothing set) when per_ref holds a key that is not an exact tuple of exact str (the
 * caller then asks the dict itself, as the Python does). */
#define KEY_SETS_SCANNED 8
static int
find_key_set(PyObject *per_ref, PyObject *const *arg_keys, Py_ssize_t size, PyObject **stored,
             PyObject **calls)
{
    if (PyDict_GET_SIZE(per_ref) > KEY_SETS_SCANNED) {
        return -1;
    }
    Py_ssize_t position = 0;
    PyObject *keys, *count;
    int found = 0;
    while (PyDict_Next(per_ref, &position, &keys, &count)) {
        if (!PyTuple_CheckExact(keys)) {
            return -1;
        }
        Py_ssize_t n = PyTuple_GET_SIZE(keys);
        for (Py_ssize_t j = 0; j < n; j++) {
            if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(keys, j))) {
                return -1;
            }
        }
        if (found || n != size) {
            continue;
        }
        int same = 1;
        for (Py_ssize_t j = 0; j < n && same; j++) {
            same = same_str(PyTuple_GET_ITEM(keys, j), arg_keys[j]);
        }
        if (same) {
            *stored = keys;
            *calls = count;
            found = 1;
        }
    }
    return found;
}

/* calls + 1 (no Python code runs for an exact int; *ran is set otherwise). */
static PyObject *
plus_one(PyObject *calls, int *ran)
{
    if (PyLong_CheckExact(calls)) {
        int overflow = 0;
        long small = PyLong_AsLongAndOverflow(calls, &overflow); /* never fails on an int */
        if (!overflow && small < LONG_MAX) {
            return PyLong_FromLong(small + 1);
        }
    }
    else {
        *ran = 1;
    }
    return PyNumber_Add(calls, int_one);
}

/* ``entry[1] += 1``, then ``if len(entry[2]) < FUSE_MIN_EXECUTIONS: entry[2].add(execution)``. */
static int
bump_entry(PyObject *entry, PyObject *execution)
{
    PyObject *count = PyObject_GetItem(entry, int_one);
    if (count == NULL) {
        return -1;
    }
    PyObject *bumped = PyNumber_InPlaceAdd(count, int_one);
    Py_DECREF(count);
    if (bumped == NULL) {
        return -1;
    }
    int failed = PyObject_SetItem(entry, int_one, bumped);
    Py_DECREF(bumped);
    if (failed) {
        return -1;
    }
    PyObject *executions = PyObject_GetItem(entry, int_two);
    if (executions == NULL) {
        return -1;
    }
    Py_ssize_t held = PyObject_Size(executions);
    if (held < 0) {
        Py_DECREF(executions);
        return -1;
    }
    if (held < FUSE_MIN_EXECUTIONS) {
        if (PySet_CheckExact(executions)) {
            failed = PySet_Add(executions, execution);
        }
        else {
            PyObject *done = PyObject_CallMethodOneArg(executions, str_add, execution);
            failed = done == NULL ? -1 : 0;
            Py_XDECREF(done);
        }
    }
    Py_DECREF(executions);
    return failed;
}

/* Every window of one segment (``refs[0:length]``, borrowed from the operations). */
static int
add_windows(PyObject *sequences, PyObject **refs, Py_ssize_t length, Py_ssize_t *near,
            PyObject **execution, PyObject *origin, PyObject *number)
{
    if (length < FUSE_MIN) {
        return 0;
    }
    /* near[k]: the closest j in [k - (FUSE_MAX - 1), k) with refs[j] == refs[k], or -1. A
     * window [s, s + w) holds w distinct refs iff near[k] < s for every k in it. */
    for (Py_ssize_t k = 0; k < length; k++) {
        near[k] = -1;
        Py_ssize_t low = k - (FUSE_MAX - 1);
        if (low < 0) {
            low = 0;
        }
        for (Py_ssize_t j = k - 1; j >= low; j--) {
            if (same_str(refs[j], refs[k])) {
                near[k] = j;
                break;
            }
        }
    }
    Py_ssize_t widest = length < FUSE_MAX ? length : FUSE_MAX;
    for (Py_ssize_t width = FUSE_MIN; width <= widest; width++) {
        for (Py_ssize_t start = 0; start + width <= length; start++) {
            int distinct = 1;
            for (Py_ssize_t k = start + 1; k < start + width; k++) {
                if (near[k] >= start) {
                    distinct = 0;
                    break;
                }
            }
            if (!distinct) {
                continue;
            }
            PyObject *window = PyList_New(width);
            if (window == NULL) {
                return -1;
            }
            for (Py_ssize_t k = 0; k < width; k++) {
                Py_INCREF(refs[start + k]);
                PyList_SET_ITEM(window, k, refs[start + k]);
            }
            PyObject *identity = PyUnicode_Join(str_join, window);
            if (identity == NULL) {
                Py_DECREF(window);
                return -1;
            }
            if (*execution == NULL) {
                *execution = PyTuple_Pack(2, origin, number);
                if (*execution == NULL) {
                    Py_DECREF(identity);
                    Py_DECREF(window);
                    return -1;
                }
            }
            PyObject *entry = PyDict_GetItemWithError(sequences, identity);
            int failed;
            if (entry == NULL) {
                if (PyErr_Occurred()) {
                    Py_DECREF(identity);
                    Py_DECREF(window);
                    return -1;
                }
                PyObject *executions = PySet_New(NULL);
                if (executions == NULL || PySet_Add(executions, *execution) < 0) {
                    Py_XDECREF(executions);
                    Py_DECREF(identity);
                    Py_DECREF(window);
                    return -1;
                }
                PyObject *fresh = PyList_New(3);
                if (fresh == NULL) {
                    Py_DECREF(executions);
                    Py_DECREF(identity);
                    Py_DECREF(window);
                    return -1;
                }
                Py_INCREF(int_one);
                PyList_SET_ITEM(fresh, 0, window); /* the list takes the window */
                PyList_SET_ITEM(fresh, 1, int_one);
                PyList_SET_ITEM(fresh, 2, executions);
                failed = PyDict_SetItem(sequences, identity, fresh);
                Py_DECREF(fresh);
            }
            else {
                Py_DECREF(window);
                Py_INCREF(entry);
                failed = bump_entry(entry, *execution);
                Py_DECREF(entry);
            }
            Py_DECREF(identity);
            if (failed) {
                return -1;
            }
        }
    }
    return 0;
}

static PyObject *
add_operations(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "add_operations(clusters, sequences, operations, origin, number)");
        return NULL;
    }
    PyObject *clusters = args[0], *sequences = args[1], *operations = args[2];
    PyObject *origin = args[3], *number = args[4];
    if (!PyDict_CheckExact(clusters) || !PyDict_CheckExact(sequences)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *ops;
    if (PyTuple_CheckExact(operations)) {
        Py_INCREF(operations);
        ops = operations;
    }
    else if (PyList_CheckExact(operations)) {
        ops = PyList_AsTuple(operations); /* a snapshot: nothing below can resize it */
        if (ops == NULL) {
            return NULL;
        }
    }
    else {
        Py_RETURN_NOTIMPLEMENTED;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(ops);
    PyObject *result = NULL;
    PyObject *execution = NULL;
    int ran = 0; /* whether Python code ran in pass 2 */
    /* Per operation: whether it extends a segment; clusters[ref] as pass 1 found it; the
     * segment refs; the windows' scratch (on the stack for the usual short trace). */
    char small_successful[SMALL];
    PyObject *small_per_ref[SMALL];
    PyObject *small_segment[SMALL];
    Py_ssize_t small_near[SMALL];
    PyObject *small_keys[SMALL_KEYS];
    char *successful = small_successful;
    PyObject **found_per_ref = small_per_ref;
    /* every operation's argument keys in order (borrowed from its args), from key_start[i] */
    PyObject **arg_keys = small_keys;
    Py_ssize_t keys_held = 0, keys_room = SMALL_KEYS;
    Py_ssize_t small_key_start[SMALL];
    Py_ssize_t *key_start = small_key_start;
    PyObject **segment = small_segment;
    Py_ssize_t *near = small_near;
    if (n > SMALL) {
        successful = PyMem_Malloc(n);
        found_per_ref = PyMem_Malloc(n * sizeof(PyObject *));
        key_start = PyMem_Malloc(n * sizeof(Py_ssize_t));
        segment = PyMem_Malloc(n * sizeof(PyObject *));
        near = PyMem_Malloc(n * sizeof(Py_ssize_t));
        if (successful == NULL || found_per_ref == NULL || key_start == NULL ||
            segment == NULL || near == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    memset(successful, 0, n ? n : 1);
    /* Pass 1: the exact domain, checked before anything changes. */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyTuple_GET_ITEM(ops, i);
        if (!(PyTuple_CheckExact(op) || (PyObject *)Py_TYPE(op) == operation_type) ||
            PyTuple_GET_SIZE(op) < 3) {
            goto hand_back;
        }
        PyObject *ref = PyTuple_GET_ITEM(op, 0);
        PyObject *op_args = PyTuple_GET_ITEM(op, 1);
        PyObject *outcome = PyTuple_GET_ITEM(op, 2);
        if (!PyUnicode_CheckExact(ref) || !PyDict_CheckExact(op_args) ||
            !PyUnicode_CheckExact(outcome)) {
            goto hand_back;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(ref) < 0 || PyUnicode_READY(outcome) < 0) {
            goto done;
        }
#endif
        Py_ssize_t size = PyDict_GET_SIZE(op_args);
        if (keys_held + size > keys_room) {
            Py_ssize_t room = 2 * (keys_held + size);
            PyObject **more = PyMem_Malloc(room * sizeof(PyObject *));
            if (more == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            memcpy(more, arg_keys, keys_held * sizeof(PyObject *));
            if (arg_keys != small_keys) {
                PyMem_Free(arg_keys);
            }
            arg_keys = more;
            keys_room = room;
        }
        key_start[i] = keys_held;
        Py_ssize_t position = 0;
        PyObject *key, *value;
        while (PyDict_Next(op_args, &position, &key, &value)) {
            if (!PyUnicode_CheckExact(key)) {
                goto hand_back;
            }
#if PY_VERSION_HEX < 0x030C0000
            if (PyUnicode_READY(key) < 0) {
                goto done;
            }
#endif
            arg_keys[keys_held++] = key;
        }
        PyObject *per_ref = PyDict_GetItemWithError(clusters, ref);
        if (per_ref == NULL && PyErr_Occurred()) {
            goto done;
        }
        if (per_ref != NULL && !PyDict_CheckExact(per_ref)) {
            goto hand_back;
        }
        found_per_ref[i] = per_ref;
        if (PyUnicode_GET_LENGTH(outcome) == 9 && starts_with(outcome, "succeeded", 9)) {
            successful[i] = !starts_with(ref, "fabric.", 7) && !starts_with(ref, "pi.", 3);
        }
    }
    /* Pass 2: the argument-key clusters, operation by operation. Until Python code runs (a
     * count that is not an exact int), clusters[ref] is what pass 1 found (nothing but this
     * pass changes the dicts, and it only adds refs) and per_ref's entries are exact. */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyTuple_GET_ITEM(ops, i);
        PyObject *ref = PyTuple_GET_ITEM(op, 0);
        PyObject *op_args = PyTuple_GET_ITEM(op, 1);
        /* clusters.get(ref), or a new dict: checked exact in pass 1 or made here. */
        PyObject *per_ref = ran ? NULL : found_per_ref[i];
        if (per_ref == NULL) {
            per_ref = PyDict_GetItemWithError(clusters, ref);
        }
        if (per_ref != NULL) {
            if (!PyDict_CheckExact(per_ref)) {
                PyErr_SetString(PyExc_RuntimeError, "the evidence changed while it was read");
                goto done;
            }
            Py_INCREF(per_ref);
        }
        else {
            if (PyErr_Occurred()) {
                goto done;
            }
            per_ref = PyDict_New();
            if (per_ref == NULL || PyDict_SetItem(clusters, ref, per_ref) < 0) {
                Py_XDECREF(per_ref);
                goto done;
            }
        }
        /* per_ref[keys] = per_ref.get(keys, 0) + 1 with keys = tuple(args): the entry's own
         * key tuple when there is one (found without building keys), else a new tuple. */
        PyObject *keys = NULL, *calls = NULL;
        Py_ssize_t size = PyDict_GET_SIZE(op_args);
        PyObject *const *own_keys = arg_keys + key_start[i];
        int known = ran ? -1 : find_key_set(per_ref, own_keys, size, &keys, &calls);
        if (known > 0) {
            Py_INCREF(keys);
            Py_INCREF(calls);
        }
        else {
            keys = PyTuple_New(size);
            if (keys == NULL) {
                Py_DECREF(per_ref);
                goto done;
            }
            Py_ssize_t position = 0, k = 0;
            PyObject *key, *value;
            if (!ran) { /* the keys pass 1 read, unchanged since */
                for (; k < size; k++) {
                    Py_INCREF(own_keys[k]);
                    PyTuple_SET_ITEM(keys, k, own_keys[k]);
                }
            }
            while (k < size && PyDict_Next(op_args, &position, &key, &value)) {
                Py_INCREF(key);
                PyTuple_SET_ITEM(keys, k, key);
                k++;
            }
            if (k != size) {
                Py_DECREF(keys);
                Py_DECREF(per_ref);
                PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
                goto done;
            }
            if (known < 0) {
                calls = PyDict_GetItemWithError(per_ref, keys);
                if (calls == NULL && PyErr_Occurred()) {
                    Py_DECREF(keys);
                    Py_DECREF(per_ref);
                    goto done;
                }
                Py_XINCREF(calls);
            }
        }
        PyObject *bumped;
        if (calls == NULL) {
            Py_INCREF(int_one); /* per_ref.get(keys, 0) + 1 */
            bumped = int_one;
        }
        else {
            bumped = plus_one(calls, &ran);
            Py_DECREF(calls);
            if (bumped == NULL) {
                Py_DECREF(keys);
                Py_DECREF(per_ref);
                goto done;
            }
        }
        int failed = PyDict_SetItem(per_ref, keys, bumped);
        Py_DECREF(bumped);
        Py_DECREF(keys);
        Py_DECREF(per_ref);
        if (failed) {
            goto done;
        }
    }
    /* Pass 3: the segments' windows, segment by segment. */
    Py_ssize_t length = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        if (i < n && successful[i]) {
            segment[length++] = PyTuple_GET_ITEM(PyTuple_GET_ITEM(ops, i), 0);
            continue;
        }
        if (length) {
            if (add_windows(sequences, segment, length, near, &execution, origin, number) < 0) {
                goto done;
            }
            length = 0;
        }
    }
    result = Py_True;
    Py_INCREF(result);
    goto done;
hand_back:
    result = Py_NotImplemented;
    Py_INCREF(result);
done:
    if (arg_keys != small_keys) {
        PyMem_Free(arg_keys);
    }
    if (successful != small_successful) {
        PyMem_Free(successful);
        PyMem_Free(found_per_ref);
        PyMem_Free(key_start);
        PyMem_Free(segment);
        PyMem_Free(near);
    }
    Py_XDECREF(execution);
    Py_DECREF(ops);
    return result;
}


/* ------------------------------------------------------------------ the deferred replay */

/* What replay_evidence reads from the evidence, as its Python twin reads it per call. */
typedef struct {
    PyObject *clusters, *sequences, *origin, *native;
    int trace_values;
} Fields;

static void
fields_clear(Fields *f)
{
    Py_CLEAR(f->clusters);
    Py_CLEAR(f->sequences);
    Py_CLEAR(f->origin);
    Py_CLEAR(f->native);
}

static int
fields_read(Fields *f, PyObject *evidence)
{
    fields_clear(f);
    if ((f->clusters = PyObject_GetAttr(evidence, str_clusters)) == NULL ||
        (f->sequences = PyObject_GetAttr(evidence, str_sequences)) == NULL ||
        (f->origin = PyObject_GetAttr(evidence, str_origin)) == NULL ||
        (f->native = PyObject_GetAttr(evidence, str_native)) == NULL) {
        return -1;
    }
    PyObject *flag = PyObject_GetAttr(evidence, str_trace_values);
    if (flag == NULL) {
        return -1;
    }
    f->trace_values = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    return f->trace_values < 0 ? -1 : 0;
}

/* `evidence.<name>(argument)`, the result dropped. */
static int
call_method(PyObject *evidence, PyObject *name, PyObject *argument)
{
    PyObject *result = PyObject_CallMethodOneArg(evidence, name, argument);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* core.proposals.ProposalEvidence and the offset of its _executions slot, read once by
 * module init: an evidence of exactly that class, while the class is unchanged (its type
 * version tag is still the one read then), has its execution number read and written in
 * place, as the member descriptor would do it. */
static PyTypeObject *evidence_class;
static Py_ssize_t o_executions = -1;
static unsigned int evidence_tag;

#define EXECUTIONS(evidence) (*(PyObject **)((char *)(evidence) + o_executions))

/* evidence._executions as a new reference when it is an exact int in an exact evidence's
 * slot (its fast path), else NULL (no exception: the caller asks getattr). */
static PyObject *
executions_of(PyObject *evidence)
{
    if (evidence_class == NULL || Py_TYPE(evidence) != evidence_class ||
        evidence_class->tp_version_tag != evidence_tag) {
        return NULL;
    }
    PyObject *number = EXECUTIONS(evidence);
    if (number == NULL || !PyLong_CheckExact(number)) {
        return NULL;
    }
    Py_INCREF(number);
    return number;
}

/* One (_OPERATIONS, operations) entry: ProposalEvidence.add_operations(operations) with the
 * evidence's kernel, which is this module's add_operations. 0 done, -1 error. */
static int
replay_operations(PyObject *module, PyObject *evidence, Fields *f, PyObject *operations,
                  int *stale)
{
    /* number = self._executions; self._executions = number + 1 */
    PyObject *number = executions_of(evidence);
    if (number != NULL) {
        PyObject *next = plus_one(number, stale);
        if (next == NULL) {
            Py_DECREF(number);
            return -1;
        }
        PyObject *old = EXECUTIONS(evidence);
        EXECUTIONS(evidence) = next;
        Py_DECREF(old);
    }
    else {
        number = PyObject_GetAttr(evidence, str_executions);
        if (number == NULL) {
            return -1;
        }
        PyObject *next = PyNumber_Add(number, int_one);
        if (next == NULL || PyObject_SetAttr(evidence, str_executions, next) < 0) {
            Py_XDECREF(next);
            Py_DECREF(number);
            return -1;
        }
        Py_DECREF(next);
        *stale = 1; /* Python code may have run */
    }
    PyObject *args[5] = {f->clusters, f->sequences, operations, f->origin, number};
    PyObject *done = add_operations(module, args, 5);
    if (done == NULL) {
        Py_DECREF(number);
        return -1;
    }
    int status = 0;
    if (done == Py_True) {
        if (f->trace_values) {
            status = call_method(evidence, str_add_trace_values, operations);
            *stale = 1;
        }
    }
    else {
        /* Handed back untouched: self._executions = number, then the Python loop (the
         * evidence's add_operations asks the kernel again, which hands it back again). */
        PyObject *held = executions_of(evidence);
        if (held != NULL) {
            Py_INCREF(number);
            EXECUTIONS(evidence) = number;
            Py_DECREF(held); /* the slot's reference */
            Py_DECREF(held); /* executions_of's */
        }
        else {
            status = PyObject_SetAttr(evidence, str_executions, number);
        }
        if (status == 0) {
            status = call_method(evidence, str_add_operations, operations);
        }
        *stale = 1;
    }
    Py_DECREF(done);
    Py_DECREF(number);
    return status;
}

/* replay_evidence(evidence, entries, tallier, replay_one): run.deferred._replay_evidence. */
static PyObject *
replay_evidence(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "replay_evidence(evidence, entries, tallier, replay_one)");
        return NULL;
    }
    PyObject *evidence = args[0], *entries = args[1], *tallier = args[2];
    PyObject *replay_one = args[3];
    if (!PyList_CheckExact(entries)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    Fields f = {NULL, NULL, NULL, NULL, 0};
    int stale = 1, failed = 0;
    Py_INCREF(entries);
    /* `for entry in entries`: by index, as a list iterator walks it */
    for (Py_ssize_t at = 0; at < PyList_GET_SIZE(entries) && !failed; at++) {
        PyObject *entry = PyList_GET_ITEM(entries, at);
        Py_INCREF(entry);
        long kind = -1;
        if (PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 2 &&
            PyLong_CheckExact(PyTuple_GET_ITEM(entry, 0))) {
            kind = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
            if (kind == -1 && PyErr_Occurred()) {
                PyErr_Clear(); /* beyond a C long: the Python dispatch decides */
                kind = -2;
            }
        }
        if (kind == REPLAY_OPERATIONS && stale) {
            failed = fields_read(&f, evidence) < 0;
            stale = 0;
        }
        if (failed) {
            /* nothing */
        }
        else if (kind == REPLAY_OPERATIONS && PyCFunction_Check(f.native) &&
                 PyCFunction_GET_FUNCTION(f.native) == (PyCFunction)(void (*)(void))add_operations) {
            failed = replay_operations(module, evidence, &f, PyTuple_GET_ITEM(entry, 1),
                                       &stale) < 0;
        }
        else if (kind == REPLAY_VALUES && tallier != Py_None) {
            /* the tallier updates evidence.tallies alone */
            PyObject *result = PyObject_CallOneArg(tallier, PyTuple_GET_ITEM(entry, 1));
            failed = result == NULL;
            Py_XDECREF(result);
        }
        else {
            PyObject *result = PyObject_CallFunctionObjArgs(replay_one, evidence, entry, NULL);
            failed = result == NULL;
            Py_XDECREF(result);
            stale = 1;
        }
        Py_DECREF(entry);
    }
    fields_clear(&f);
    Py_DECREF(entries);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"add_operations", (PyCFunction)(void (*)(void))add_operations, METH_FASTCALL,
     "add_operations(clusters, sequences, operations, origin, number) -> True, or "
     "NotImplemented (nothing changed) outside the exact domain"},
    {"replay_evidence", (PyCFunction)(void (*)(void))replay_evidence, METH_FASTCALL,
     "replay_evidence(evidence, entries, tallier, replay_one): run.deferred's replay of a "
     "file's deferred entries into evidence, or NotImplemented (entries not a list)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pytest_entropy.core._proposals_native",
    "The proposals' trace evidence (clusters and sequence windows) in C.", -1, methods,
};

/* ProposalEvidence's _executions slot (evidence_class above): 0, or -1 with an exception
 * set. A class that reads or writes its attributes its own way keeps the generic path. */
static int
init_evidence_class(void)
{
    PyObject *proposals = PyImport_ImportModule("pytest_entropy.core.proposals");
    if (proposals == NULL) {
        return -1;
    }
    PyObject *found = PyObject_GetAttrString(proposals, "ProposalEvidence");
    Py_DECREF(proposals);
    if (found == NULL) {
        return -1;
    }
    if (!PyType_Check(found)) {
        Py_DECREF(found);
        return 0;
    }
    PyTypeObject *type = (PyTypeObject *)found;
    PyObject *descr = PyObject_GetAttr(found, str_executions);
    if (descr == NULL) {
        Py_DECREF(found);
        return -1;
    }
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY)) {
            offset = member->offset;
        }
    }
    Py_DECREF(descr);
    /* the lookup above gave the class a version tag, unless it cannot have one */
    if (offset < 0 || type->tp_version_tag == 0 ||
        type->tp_getattro != PyObject_GenericGetAttr ||
        type->tp_setattro != PyObject_GenericSetAttr) {
        Py_DECREF(found);
        return 0;
    }
    o_executions = offset;
    evidence_tag = type->tp_version_tag;
    evidence_class = type; /* keeps the reference */
    return 0;
}

PyMODINIT_FUNC
PyInit__proposals_native(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    PyObject *records = PyImport_ImportModule("pytest_entropy.core.records");
    if (records == NULL) {
        goto fail;
    }
    operation_type = PyObject_GetAttrString(records, "Operation");
    Py_DECREF(records);
    if (operation_type == NULL) {
        goto fail;
    }
    if (!PyType_Check(operation_type)) {
        PyErr_SetString(PyExc_TypeError, "records.Operation is not a type");
        goto fail;
    }
    str_fabric = PyUnicode_InternFromString("fabric.");
    str_pi = PyUnicode_InternFromString("pi.");
    str_join = PyUnicode_FromString(SEQUENCE_JOIN);
    str_add = PyUnicode_InternFromString("add");
    int_one = PyLong_FromLong(1);
    int_two = PyLong_FromLong(2);
    str_clusters = PyUnicode_InternFromString("clusters");
    str_sequences = PyUnicode_InternFromString("sequences");
    str_origin = PyUnicode_InternFromString("origin");
    str_native = PyUnicode_InternFromString("_native");
    str_trace_values = PyUnicode_InternFromString("trace_values");
    str_executions = PyUnicode_InternFromString("_executions");
    str_add_operations = PyUnicode_InternFromString("add_operations");
    str_add_trace_values = PyUnicode_InternFromString("_add_trace_values");
    if (str_clusters == NULL || str_sequences == NULL || str_origin == NULL ||
        str_native == NULL || str_trace_values == NULL || str_executions == NULL ||
        str_add_operations == NULL || str_add_trace_values == NULL) {
        goto fail;
    }
    if (str_fabric == NULL || str_pi == NULL || str_join == NULL || str_add == NULL ||
        int_one == NULL || int_two == NULL) {
        goto fail;
    }
    if (evidence_class == NULL && init_evidence_class() < 0) {
        goto fail;
    }
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0 ||
        PyModule_AddIntConstant(module, "FUSE_MIN_SEQUENCE_LENGTH", FUSE_MIN) < 0 ||
        PyModule_AddIntConstant(module, "FUSE_MAX_SEQUENCE_LENGTH", FUSE_MAX) < 0 ||
        PyModule_AddIntConstant(module, "FUSE_MIN_EXECUTIONS", FUSE_MIN_EXECUTIONS) < 0 ||
        PyModule_AddIntConstant(module, "REPLAY_VALUES", REPLAY_VALUES) < 0 ||
        PyModule_AddIntConstant(module, "REPLAY_OPERATIONS", REPLAY_OPERATIONS) < 0) {
        goto fail;
    }
    Py_INCREF(str_join);
    if (PyModule_AddObject(module, "SEQUENCE_JOIN", str_join) < 0) {
        Py_DECREF(str_join);
        goto fail;
    }
    return module;
fail:
    Py_DECREF(module);
    return NULL;
}
