/* Native kernel for the audit harvest (spec §1.4) and the proposals' value tallies (§5.2).
 *
 * The Python twins, which stay the specification of what this computes:
 *   own_keys(obj, fallback)          core.jscompat.js_own_keys
 *   audit_records(audits, on_call, call_type, on_value, observation_type,
 *                 on_value_fields, fallback[, refs])
 *                                    ingest.native.audit_records
 *   harvest_values(audits, on_call, call_type, fallback[, refs])
 *                                    ingest.native.harvest_values: audit_records with
 *                                    the values gathered into one flat tuple
 *                                    (ref, key, value, ref, key, value, ...) or None
 *   tally_values(tallies, tally_type, value_key, max_distinct, values)
 *                                    ingest.native.tally_values: core.proposals
 *                                    ProposalEvidence.add_value for every triple
 *
 * ``refs``, a set or None, gets the ref of every kept record added, right before on_call
 * would hear it (the ``refs`` argument of the Python twins: what ingest.native.AuditRefs, a
 * listener, does per call, so the scan kernel need not build the call for it).
 *
 * ``fallback`` is the Python js_own_keys: an argument object with a key that is not an
 * exact str is ordered by it (so it raises, or orders, exactly as the Python does). The
 * tallies are the evidence's own dict of _Tally objects, which this updates in place; a
 * value that is not an exact str, bool, float or safe exact int gets its identity from the
 * Python value_key (an exact float's is spelled here as value_key spells it), and the
 * rare tally overflow calls the tally's own overflow().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

#define ARRAY_INDEX_MAX 4294967294ULL /* 2**32 - 2 */
#define TWO_53 9007199254740992LL

/* Created once by module init, never changed afterwards. */
static PyObject *s_ref, *s_args, *s_total, *s_overflowed, *s_counts, *s_overflow;
static PyObject *s_string_prefix, *s_true_key, *s_false_key, *s_one;

/* ------------------------------------------------------------------ own-key order */

typedef struct {
    unsigned long long index;
    PyObject *key; /* borrowed from the key list */
} IndexKey;

static int
compare_index(const void *a, const void *b)
{
    unsigned long long x = ((const IndexKey *)a)->index, y = ((const IndexKey *)b)->index;
    return (x > y) - (x < y);
}

/* A canonical array index ("0", "7", "10", ... up to 2**32-2): 1 and *index, or 0;
 * -1 with an exception set. */
static int
array_index(PyObject *key, unsigned long long *index)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(key) < 0) {
        return -1;
    }
#endif
    Py_ssize_t length = PyUnicode_GET_LENGTH(key);
    if (length < 1 || length > 10) {
        return 0;
    }
    int kind = PyUnicode_KIND(key);
    const void *data = PyUnicode_DATA(key);
    Py_UCS4 first = PyUnicode_READ(kind, data, 0);
    if (first < '0' || first > '9' || (first == '0' && length > 1)) {
        return 0;
    }
    unsigned long long value = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch < '0' || ch > '9') {
            return 0;
        }
        value = value * 10 + (ch - '0');
    }
    if (value > ARRAY_INDEX_MAX) {
        return 0;
    }
    *index = value;
    return 1;
}

/* js_own_keys(obj) for an exact dict: a new list, or NULL with an exception set. */
static PyObject *
own_keys_of(PyObject *obj, PyObject *fallback)
{
    PyObject *keys = PyDict_Keys(obj);
    if (keys == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(keys);
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        unsigned long long index;
        if (!PyUnicode_CheckExact(key)) {
            Py_DECREF(keys);
            return PyObject_CallOneArg(fallback, obj);
        }
        int verdict = array_index(key, &index);
        if (verdict < 0) {
            Py_DECREF(keys);
            return NULL;
        }
        found += verdict;
    }
    if (found == 0) {
        return keys;
    }
    IndexKey *indexed = PyMem_Malloc(sizeof(IndexKey) * (size_t)found);
    if (indexed == NULL) {
        Py_DECREF(keys);
        return PyErr_NoMemory();
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        PyMem_Free(indexed);
        Py_DECREF(keys);
        return NULL;
    }
    Py_ssize_t at = 0, rest = found;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        unsigned long long index;
        if (array_index(key, &index) > 0) { /* the first pass readied every key */
            indexed[at].index = index;
            indexed[at].key = key;
            at++;
        }
        else {
            Py_INCREF(key);
            PyList_SET_ITEM(out, rest++, key);
        }
    }
    /* Canonical index keys are distinct numbers, so the sort needs no stability. */
    qsort(indexed, (size_t)found, sizeof(IndexKey), compare_index);
    for (Py_ssize_t i = 0; i < found; i++) {
        Py_INCREF(indexed[i].key);
        PyList_SET_ITEM(out, i, indexed[i].key);
    }
    PyMem_Free(indexed);
    Py_DECREF(keys);
    return out;
}

static PyObject *
own_keys(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "own_keys(obj, fallback) takes 2 arguments");
        return NULL;
    }
    if (!PyDict_CheckExact(args[0])) {
        return PyObject_CallOneArg(args[1], args[0]);
    }
    return own_keys_of(args[0], args[1]);
}

/* ----------------------------------------------------------------- record filter */

/* The (ref, args) of a kept audit record as borrowed references: 1 when kept, 0 when
 * skipped, -1 with an exception set. */
static int
kept_record(PyObject *record, PyObject **ref, PyObject **args)
{
    if (!PyDict_CheckExact(record)) {
        return 0;
    }
    *ref = PyDict_GetItemWithError(record, s_ref);
    if (*ref == NULL && PyErr_Occurred()) {
        return -1;
    }
    *args = PyDict_GetItemWithError(record, s_args);
    if (*args == NULL && PyErr_Occurred()) {
        return -1;
    }
    if (*ref == NULL || !PyUnicode_CheckExact(*ref) || PyUnicode_GetLength(*ref) == 0) {
        return 0;
    }
    if (*args == NULL || !PyDict_CheckExact(*args)) {
        return 0;
    }
    return 1;
}

static int
is_primitive(PyObject *value)
{
    return PyUnicode_CheckExact(value) || PyLong_CheckExact(value) ||
           PyFloat_CheckExact(value) || PyBool_Check(value);
}

/* args[key] as the Python subscript does it: a new reference, or NULL (KeyError). */
static PyObject *
item_of(PyObject *args, PyObject *key)
{
    PyObject *value = PyDict_GetItemWithError(args, key);
    if (value == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetObject(PyExc_KeyError, key);
        }
        return NULL;
    }
    Py_INCREF(value);
    return value;
}

/* ----------------------------------------------------------------- audit_records */

static PyObject *
new_audit_call(PyObject *call_type, PyObject *ref, PyObject *args)
{
    /* tuple.__new__(call_type, (ref, args)) */
    PyObject *pair = PyTuple_Pack(2, ref, args);
    if (pair == NULL) {
        return NULL;
    }
    PyObject *packed = PyTuple_Pack(1, pair);
    Py_DECREF(pair);
    if (packed == NULL) {
        return NULL;
    }
    PyObject *call = PyTuple_Type.tp_new((PyTypeObject *)call_type, packed, NULL);
    Py_DECREF(packed);
    return call;
}

/* Hands every primitive value of one kept record to on_value_fields or on_value. */
static int
emit_values(PyObject *ref, PyObject *args, PyObject *on_value, PyObject *observation_type,
            PyObject *on_value_fields, PyObject *fallback)
{
    PyObject *keys = own_keys_of(args, fallback);
    if (keys == NULL) {
        return -1;
    }
    PyObject *iterator = PyObject_GetIter(keys);
    Py_DECREF(keys);
    if (iterator == NULL) {
        return -1;
    }
    PyObject *key;
    while ((key = PyIter_Next(iterator)) != NULL) {
        PyObject *value = PyObject_GetItem(args, key);
        if (value == NULL) {
            Py_DECREF(key);
            Py_DECREF(iterator);
            return -1;
        }
        PyObject *result = Py_None;
        Py_INCREF(result);
        if (is_primitive(value)) {
            Py_DECREF(result);
            PyObject *fields[3] = {ref, key, value};
            if (on_value_fields != Py_None) {
                result = PyObject_Vectorcall(on_value_fields, fields, 3, NULL);
            }
            else {
                PyObject *observation = PyObject_Vectorcall(observation_type, fields, 3, NULL);
                result = observation == NULL ? NULL : PyObject_CallOneArg(on_value, observation);
                Py_XDECREF(observation);
            }
        }
        Py_DECREF(value);
        Py_DECREF(key);
        if (result == NULL) {
            Py_DECREF(iterator);
            return -1;
        }
        Py_DECREF(result);
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *
audit_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 && nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "audit_records(audits, on_call, call_type, on_value, observation_type, "
                        "on_value_fields, fallback[, refs]) takes 7 or 8 arguments");
        return NULL;
    }
    PyObject *audits = args[0], *on_call = args[1], *call_type = args[2];
    PyObject *on_value = args[3], *observation_type = args[4], *on_value_fields = args[5];
    PyObject *fallback = args[6], *refs = nargs == 8 ? args[7] : Py_None;
    if (refs != Py_None && !PySet_CheckExact(refs)) {
        PyErr_SetString(PyExc_TypeError, "refs must be a set or None");
        return NULL;
    }
    if (!PyList_CheckExact(audits)) {
        return Py_BuildValue("(ii)", 0, 0);
    }
    if (on_call != Py_None &&
        !(PyType_Check(call_type) &&
          PyType_IsSubtype((PyTypeObject *)call_type, &PyTuple_Type))) {
        PyErr_SetString(PyExc_TypeError, "call_type must be a tuple subclass");
        return NULL;
    }
    int values = on_value_fields != Py_None || on_value != Py_None;
    Py_ssize_t kept = 0, skipped = 0;
    /* The list is read by index with its current length, as a Python for loop does. */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(audits); i++) {
        PyObject *record = PyList_GET_ITEM(audits, i);
        PyObject *ref, *record_args;
        Py_INCREF(record);
        int verdict = kept_record(record, &ref, &record_args);
        if (verdict <= 0) {
            Py_DECREF(record);
            if (verdict < 0) {
                return NULL;
            }
            skipped++;
            continue;
        }
        kept++;
        Py_INCREF(ref);
        Py_INCREF(record_args);
        Py_DECREF(record);
        int failed = refs != Py_None && PySet_Add(refs, ref) < 0;
        if (!failed && on_call != Py_None) {
            PyObject *call = new_audit_call(call_type, ref, record_args);
            PyObject *result = call == NULL ? NULL : PyObject_CallOneArg(on_call, call);
            Py_XDECREF(call);
            failed = result == NULL;
            Py_XDECREF(result);
        }
        if (!failed && values) {
            failed = emit_values(ref, record_args, on_value, observation_type,
                                 on_value_fields, fallback) < 0;
        }
        Py_DECREF(ref);
        Py_DECREF(record_args);
        if (failed) {
            return NULL;
        }
    }
    return Py_BuildValue("(nn)", kept, skipped);
}

/* ------------------------------------------------------------------- tally_values */

typedef struct {
    PyObject *tallies;    /* exact dict: (ref, key) -> tally */
    PyObject *tally_type; /* called as tally_type(ref, key) */
    PyObject *value_key;  /* identity of a value outside the simple exact types */
    Py_ssize_t max_distinct;
} Tallies;

/* value_key(x) for an exact float: "number:" + core.jscompat.js_string(x), JavaScript's
 * Number::toString, from the shortest round-trip digits repr() gives (_shortest_digits and
 * _float_text there are the twins, step by step). A new reference or NULL. */
static PyObject *
float_identity(double x)
{
    char out[128];
    int pos = 0;
    memcpy(out, "number:", 7);
    pos = 7;
    if (x != x) {
        return PyUnicode_FromString("number:NaN");
    }
    if (x == HUGE_VAL || x == -HUGE_VAL) {
        return PyUnicode_FromString(x > 0 ? "number:Infinity" : "number:-Infinity");
    }
    if (x == 0) {
        return PyUnicode_FromString("number:0");
    }
    if (x < 0) {
        out[pos++] = '-';
        x = -x;
    }
    char *text = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) {
        return NULL;
    }
    /* mantissa, exponent = repr(x).split("e"); int_part, frac_part = mantissa.split(".") */
    char *e = strchr(text, 'e');
    long exponent = e == NULL ? 0 : strtol(e + 1, NULL, 10);
    size_t mantissa = e == NULL ? strlen(text) : (size_t)(e - text);
    char raw[64];
    size_t length = 0, int_length = 0;
    int seen_dot = 0;
    for (size_t i = 0; i < mantissa; i++) {
        char c = text[i];
        if (c == '.') {
            seen_dot = 1;
            continue;
        }
        if (c < '0' || c > '9' || length + 1 >= sizeof(raw)) {
            PyMem_Free(text);
            PyErr_SetString(PyExc_ValueError, "unexpected float repr");
            return NULL;
        }
        raw[length++] = c;
        if (!seen_dot) {
            int_length++;
        }
    }
    PyMem_Free(text);
    /* digits = raw.lstrip("0").rstrip("0") or "0"; n = len(int_part) + exponent - leading */
    size_t leading = 0;
    while (leading < length && raw[leading] == '0') {
        leading++;
    }
    size_t end = length;
    while (end > leading && raw[end - 1] == '0') {
        end--;
    }
    const char *digits = raw + leading;
    long k = (long)(end - leading);
    if (k == 0) {
        digits = "0";
        k = 1;
    }
    long n = (long)int_length + exponent - (long)leading;
    if (k <= n && n <= 21) {
        memcpy(out + pos, digits, (size_t)k);
        pos += (int)k;
        for (long i = 0; i < n - k; i++) {
            out[pos++] = '0';
        }
    }
    else if (0 < n && n <= 21) {
        memcpy(out + pos, digits, (size_t)n);
        pos += (int)n;
        out[pos++] = '.';
        memcpy(out + pos, digits + n, (size_t)(k - n));
        pos += (int)(k - n);
    }
    else if (-6 < n && n <= 0) {
        out[pos++] = '0';
        out[pos++] = '.';
        for (long i = 0; i < -n; i++) {
            out[pos++] = '0';
        }
        memcpy(out + pos, digits, (size_t)k);
        pos += (int)k;
    }
    else {
        long exp = n - 1;
        out[pos++] = digits[0];
        if (k > 1) {
            out[pos++] = '.';
            memcpy(out + pos, digits + 1, (size_t)(k - 1));
            pos += (int)(k - 1);
        }
        pos += PyOS_snprintf(out + pos, sizeof(out) - (size_t)pos, "e%c%ld",
                             exp >= 0 ? '+' : '-', exp >= 0 ? exp : -exp);
    }
    return PyUnicode_FromStringAndSize(out, pos);
}

/* The identity ProposalEvidence.add_value gives a value: a new reference or NULL. */
static PyObject *
identity_of(Tallies *t, PyObject *value)
{
    if (PyUnicode_CheckExact(value)) {
        return PyUnicode_Concat(s_string_prefix, value);
    }
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (number == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (!overflow && number >= -TWO_53 && number <= TWO_53) {
            char text[32];
            int length = PyOS_snprintf(text, sizeof(text), "number:%lld", number);
            return PyUnicode_FromStringAndSize(text, length);
        }
    }
    else if (value == Py_True || value == Py_False) {
        /* value_key(True) is "boolean:true", value_key(False) "boolean:false" */
        PyObject *known = value == Py_True ? s_true_key : s_false_key;
        Py_INCREF(known);
        return known;
    }
    else if (PyFloat_CheckExact(value)) {
        return float_identity(PyFloat_AS_DOUBLE(value));
    }
    return PyObject_CallOneArg(t->value_key, value);
}

/* slot[0] = value; slot[1] += 1 (in that order, as the Python statements run) */
static int
bump_slot(PyObject *slot, PyObject *value)
{
    if (PyList_CheckExact(slot) && PyList_GET_SIZE(slot) >= 2) {
        PyObject *old = PyList_GET_ITEM(slot, 0);
        Py_INCREF(value);
        PyList_SET_ITEM(slot, 0, value);
        Py_DECREF(old);
    }
    else if (PySequence_SetItem(slot, 0, value) < 0) {
        return -1;
    }
    PyObject *count = PySequence_GetItem(slot, 1);
    if (count == NULL) {
        return -1;
    }
    PyObject *bigger = PyNumber_InPlaceAdd(count, s_one);
    Py_DECREF(count);
    if (bigger == NULL) {
        return -1;
    }
    if (PyList_CheckExact(slot) && PyList_GET_SIZE(slot) >= 2) {
        PyObject *old = PyList_GET_ITEM(slot, 1);
        PyList_SET_ITEM(slot, 1, bigger);
        Py_DECREF(old);
        return 0;
    }
    int done = PySequence_SetItem(slot, 1, bigger);
    Py_DECREF(bigger);
    return done;
}

/* ProposalEvidence.add_value(ref, key, value) on the tallies. */
static int
add_value(Tallies *t, PyObject *ref, PyObject *key, PyObject *value)
{
    PyObject *pair = PyTuple_Pack(2, ref, key);
    if (pair == NULL) {
        return -1;
    }
    PyObject *tally = PyDict_GetItemWithError(t->tallies, pair);
    if (tally != NULL) {
        Py_INCREF(tally);
    }
    else {
        if (PyErr_Occurred()) {
            Py_DECREF(pair);
            return -1;
        }
        PyObject *fields[2] = {ref, key};
        tally = PyObject_Vectorcall(t->tally_type, fields, 2, NULL);
        if (tally == NULL || PyDict_SetItem(t->tallies, pair, tally) < 0) {
            Py_XDECREF(tally);
            Py_DECREF(pair);
            return -1;
        }
    }
    Py_DECREF(pair);
    int status = -1;
    PyObject *identity = NULL, *counts = NULL;
    /* tally.total += 1 */
    PyObject *total = PyObject_GetAttr(tally, s_total);
    if (total == NULL) {
        goto done;
    }
    PyObject *more = PyNumber_InPlaceAdd(total, s_one);
    Py_DECREF(total);
    if (more == NULL) {
        goto done;
    }
    int set = PyObject_SetAttr(tally, s_total, more);
    Py_DECREF(more);
    if (set < 0) {
        goto done;
    }
    /* if tally.overflowed: return */
    PyObject *overflowed = PyObject_GetAttr(tally, s_overflowed);
    if (overflowed == NULL) {
        goto done;
    }
    int truth = PyObject_IsTrue(overflowed);
    Py_DECREF(overflowed);
    if (truth != 0) {
        status = truth < 0 ? -1 : 0;
        goto done;
    }
    identity = identity_of(t, value);
    if (identity == NULL) {
        goto done;
    }
    counts = PyObject_GetAttr(tally, s_counts);
    if (counts == NULL) {
        goto done;
    }
    if (!PyDict_CheckExact(counts)) {
        PyErr_SetString(PyExc_TypeError, "a tally's counts must be a dict");
        goto done;
    }
    PyObject *slot = PyDict_GetItemWithError(counts, identity);
    if (slot != NULL) {
        Py_INCREF(slot);
        status = bump_slot(slot, value);
        Py_DECREF(slot);
        goto done;
    }
    if (PyErr_Occurred()) {
        goto done;
    }
    PyObject *fresh = PyList_New(2);
    if (fresh == NULL) {
        goto done;
    }
    Py_INCREF(value);
    PyList_SET_ITEM(fresh, 0, value);
    Py_INCREF(s_one);
    PyList_SET_ITEM(fresh, 1, s_one);
    set = PyDict_SetItem(counts, identity, fresh);
    Py_DECREF(fresh);
    if (set < 0) {
        goto done;
    }
    if (PyDict_GET_SIZE(counts) > t->max_distinct) {
        PyObject *result = PyObject_CallMethodNoArgs(tally, s_overflow);
        if (result == NULL) {
            goto done;
        }
        Py_DECREF(result);
    }
    status = 0;
done:
    Py_XDECREF(identity);
    Py_XDECREF(counts);
    Py_DECREF(tally);
    return status;
}

static PyObject *
tally_values(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "tally_values(tallies, tally_type, value_key, max_distinct, values) "
                        "takes 5 arguments");
        return NULL;
    }
    Tallies t;
    t.tallies = args[0];
    t.tally_type = args[1];
    t.value_key = args[2];
    PyObject *values = args[4];
    if (!PyDict_CheckExact(t.tallies)) {
        PyErr_SetString(PyExc_TypeError, "tallies must be a dict");
        return NULL;
    }
    if (!PyTuple_CheckExact(values) || PyTuple_GET_SIZE(values) % 3 != 0) {
        PyErr_SetString(PyExc_TypeError, "values must be a tuple of (ref, key, value) triples");
        return NULL;
    }
    t.max_distinct = PyLong_AsSsize_t(args[3]);
    if (t.max_distinct == -1 && PyErr_Occurred()) {
        return NULL;
    }
    /* Both stay referenced by the caller; hold them across the callbacks anyway. */
    Py_INCREF(t.tallies);
    Py_INCREF(values);
    int failed = 0;
    Py_ssize_t n = PyTuple_GET_SIZE(values);
    for (Py_ssize_t i = 0; i < n && !failed; i += 3) {
        failed = add_value(&t, PyTuple_GET_ITEM(values, i), PyTuple_GET_ITEM(values, i + 1),
                           PyTuple_GET_ITEM(values, i + 2)) < 0;
    }
    Py_DECREF(values);
    Py_DECREF(t.tallies);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ harvest_values */

/* Appends (ref, key, value) for every primitive value of one kept record to found. */
static int
gather_values(PyObject *ref, PyObject *args, PyObject *fallback, PyObject *found)
{
    PyObject *keys = own_keys_of(args, fallback);
    if (keys == NULL) {
        return -1;
    }
    PyObject *iterator = PyObject_GetIter(keys);
    Py_DECREF(keys);
    if (iterator == NULL) {
        return -1;
    }
    PyObject *key;
    while ((key = PyIter_Next(iterator)) != NULL) {
        PyObject *value = PyObject_GetItem(args, key);
        int failed = value == NULL;
        if (!failed && is_primitive(value)) {
            failed = PyList_Append(found, ref) < 0 || PyList_Append(found, key) < 0 ||
                     PyList_Append(found, value) < 0;
        }
        Py_XDECREF(value);
        Py_DECREF(key);
        if (failed) {
            Py_DECREF(iterator);
            return -1;
        }
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *
harvest_values(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "harvest_values(audits, on_call, call_type, fallback[, refs]) takes 4 "
                        "or 5 arguments");
        return NULL;
    }
    PyObject *audits = args[0], *on_call = args[1], *call_type = args[2];
    PyObject *fallback = args[3], *refs = nargs == 5 ? args[4] : Py_None;
    if (refs != Py_None && !PySet_CheckExact(refs)) {
        PyErr_SetString(PyExc_TypeError, "refs must be a set or None");
        return NULL;
    }
    if (!PyList_CheckExact(audits)) {
        return Py_BuildValue("(iiO)", 0, 0, Py_None);
    }
    if (on_call != Py_None &&
        !(PyType_Check(call_type) &&
          PyType_IsSubtype((PyTypeObject *)call_type, &PyTuple_Type))) {
        PyErr_SetString(PyExc_TypeError, "call_type must be a tuple subclass");
        return NULL;
    }
    PyObject *found = PyList_New(0);
    if (found == NULL) {
        return NULL;
    }
    Py_ssize_t kept = 0, skipped = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(audits); i++) {
        PyObject *record = PyList_GET_ITEM(audits, i);
        PyObject *ref, *record_args;
        Py_INCREF(record);
        int verdict = kept_record(record, &ref, &record_args);
        if (verdict <= 0) {
            Py_DECREF(record);
            if (verdict < 0) {
                Py_DECREF(found);
                return NULL;
            }
            skipped++;
            continue;
        }
        kept++;
        Py_INCREF(ref);
        Py_INCREF(record_args);
        Py_DECREF(record);
        int failed = refs != Py_None && PySet_Add(refs, ref) < 0;
        if (!failed && on_call != Py_None) {
            PyObject *call = new_audit_call(call_type, ref, record_args);
            PyObject *result = call == NULL ? NULL : PyObject_CallOneArg(on_call, call);
            Py_XDECREF(call);
            failed = result == NULL;
            Py_XDECREF(result);
        }
        if (!failed) {
            failed = gather_values(ref, record_args, fallback, found) < 0;
        }
        Py_DECREF(ref);
        Py_DECREF(record_args);
        if (failed) {
            Py_DECREF(found);
            return NULL;
        }
    }
    PyObject *values = Py_None;
    Py_INCREF(values);
    if (PyList_GET_SIZE(found) > 0) {
        Py_DECREF(values);
        values = PyList_AsTuple(found);
        if (values == NULL) {
            Py_DECREF(found);
            return NULL;
        }
    }
    Py_DECREF(found);
    PyObject *out = Py_BuildValue("(nnN)", kept, skipped, values);
    return out;
}

/* ------------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"own_keys", (PyCFunction)(void (*)(void))own_keys, METH_FASTCALL,
     "own_keys(obj, fallback): js_own_keys(obj) (fallback orders keys that are not str)."},
    {"audit_records", (PyCFunction)(void (*)(void))audit_records, METH_FASTCALL,
     "audit_records(audits, on_call, call_type, on_value, observation_type, on_value_fields, "
     "fallback[, refs]) -> (kept, skipped): ingest.native.audit_records."},
    {"harvest_values", (PyCFunction)(void (*)(void))harvest_values, METH_FASTCALL,
     "harvest_values(audits, on_call, call_type, fallback[, refs]) -> (kept, skipped, values): "
     "audit_records with the values as one flat (ref, key, value, ...) tuple, or None."},
    {"tally_values", (PyCFunction)(void (*)(void))tally_values, METH_FASTCALL,
     "tally_values(tallies, tally_type, value_key, max_distinct, values): "
     "ProposalEvidence.add_value for every (ref, key, value) triple of values."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_audit_native",
    "Native kernel: the audit harvest and the proposals' value tallies.", -1, methods,
};

PyMODINIT_FUNC
PyInit__audit_native(void)
{
    if (s_ref == NULL) {
        s_ref = PyUnicode_InternFromString("ref");
        s_args = PyUnicode_InternFromString("args");
        s_total = PyUnicode_InternFromString("total");
        s_overflowed = PyUnicode_InternFromString("overflowed");
        s_counts = PyUnicode_InternFromString("counts");
        s_overflow = PyUnicode_InternFromString("overflow");
        s_string_prefix = PyUnicode_InternFromString("string:");
        s_true_key = PyUnicode_InternFromString("boolean:true");
        s_false_key = PyUnicode_InternFromString("boolean:false");
        s_one = PyLong_FromLong(1);
        if (s_ref == NULL || s_args == NULL || s_total == NULL || s_overflowed == NULL ||
            s_counts == NULL || s_overflow == NULL || s_string_prefix == NULL ||
            s_true_key == NULL || s_false_key == NULL || s_one == NULL) {
            return NULL;
        }
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
