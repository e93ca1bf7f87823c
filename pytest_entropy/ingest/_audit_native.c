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
 *
 * What tally_values does per value without the Python object protocol, each step the same
 * as the Python's (core.proposals ProposalEvidence.add_value):
 *   * a tally of exactly core.proposals._Tally, while that class is unchanged, has its
 *     total, overflowed and counts slots read and written in place (as its member
 *     descriptors do), and an exact int or float total or count gets + 1 directly;
 *   * the tally of a (ref, key) pair met earlier in the same call, with no Python code run
 *     since, is the one the tallies' lookup found then (equal str, same entry);
 *   * a str, int, bool or float value's identity ("string:" + text, "number:" + digits) is
 *     compared with the keys of a small counts dict of exact str keys as str.__eq__ does
 *     (length, storage kind, code units) and is built only when it is new.
 * Anything else (another tally type, a changed class, a foreign total, count or slot, a
 * counts dict with other keys) takes the generic path of getattr, setattr and dict lookup.
 *
 * harvest_values walks an argument dict as it stands when its keys are exact str and none
 * is a canonical array index (js_own_keys's order is then the dict's own), and gathers the
 * values into a C array that becomes the tuple.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
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

/* core.proposals._Tally and the offsets of its total, overflowed and counts slots, read
 * once by module init (init_tally_class). A tally of exactly that class, while the class is
 * unchanged (its type version tag is still the one read then: any assignment to the class
 * or a base resets it), has those fields read and written in place, as its member
 * descriptors would do it; any other tally goes through getattr and setattr. */
static PyTypeObject *tally_class;
static Py_ssize_t o_total = -1, o_overflowed = -1, o_counts = -1;
static unsigned int tally_tag;

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))
#define RECENT 8     /* (ref, key) pairs a call remembers the tally of */
#define SCAN_LIMIT 16 /* counts this size or smaller are searched without a key object */

typedef struct {
    PyObject *ref, *key; /* exact str, borrowed from the values tuple */
    PyObject *tally;     /* a strong reference */
} Recent;

typedef struct {
    PyObject *tallies;    /* exact dict: (ref, key) -> tally */
    PyObject *tally_type; /* called as tally_type(ref, key) */
    PyObject *value_key;  /* identity of a value outside the simple exact types */
    Py_ssize_t max_distinct;
    /* The tallies found for the last (ref, key) pairs: what tallies[(ref, key)] gives for an
     * equal pair as long as no Python code ran since (forget() runs after any that may). */
    Recent recent[RECENT];
    int recent_count, recent_next;
} Tallies;

static int
fast_tally(PyObject *tally)
{
    return tally_class != NULL && Py_TYPE(tally) == tally_class &&
           tally_class->tp_version_tag == tally_tag;
}

static void
forget(Tallies *t)
{
    for (int i = 0; i < t->recent_count; i++) {
        Py_DECREF(t->recent[i].tally);
    }
    t->recent_count = 0;
    t->recent_next = 0;
}

static void
remember(Tallies *t, PyObject *ref, PyObject *key, PyObject *tally)
{
    Recent *slot = &t->recent[t->recent_next];
    if (t->recent_count < RECENT) {
        t->recent_count++;
    }
    else {
        Py_DECREF(slot->tally);
    }
    slot->ref = ref;
    slot->key = key;
    Py_INCREF(tally);
    slot->tally = tally;
    t->recent_next = (t->recent_next + 1) % RECENT;
}

/* a == b for two exact str, as str.__eq__ (and a dict's key match) decides it. */
static int
same_text(PyObject *a, PyObject *b)
{
    if (a == b) {
        return 1;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(a);
    if (length != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b)) {
        return 0;
    }
    return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)length * PyUnicode_KIND(a)) == 0;
}

/* The remembered tally of (ref, key) (borrowed), or NULL. */
static PyObject *
recalled(Tallies *t, PyObject *ref, PyObject *key)
{
    for (int i = 0; i < t->recent_count; i++) {
        Recent *slot = &t->recent[i];
        if (same_text(slot->ref, ref) && same_text(slot->key, key)) {
            return slot->tally;
        }
    }
    return NULL;
}

/* number + 1 for an exact int or float (no Python code runs): a new reference or NULL. */
static PyObject *
plus_one(PyObject *number)
{
    if (PyLong_CheckExact(number)) {
        int overflow = 0;
        long small = PyLong_AsLongAndOverflow(number, &overflow); /* never fails on an int */
        if (!overflow && small < LONG_MAX) {
            return PyLong_FromLong(small + 1);
        }
    }
    return PyNumber_Add(number, s_one);
}

static int
exact_number(PyObject *number)
{
    return PyLong_CheckExact(number) || PyFloat_CheckExact(number);
}

/* A value's identity (ProposalEvidence.add_value's value_key) without building it when it
 * is one of the simple exact types: "string:" + text, ASCII text in a buffer, or an object. */
enum { IDENTITY_STRING, IDENTITY_ASCII, IDENTITY_OBJECT };

typedef struct {
    int form;
    PyObject *object; /* IDENTITY_STRING: the value (borrowed); IDENTITY_OBJECT: a new ref */
    Py_ssize_t length;
    char text[128]; /* IDENTITY_ASCII */
} Identity;

/* Writes the decimal digits of value (|value| <= 2**53) at out: their count. */
static Py_ssize_t
write_integer(char *out, long long value)
{
    char digits[24];
    Py_ssize_t count = 0, pos = 0;
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value
                                             : (unsigned long long)value;
    do {
        digits[count++] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (value < 0) {
        out[pos++] = '-';
    }
    while (count) {
        out[pos++] = digits[--count];
    }
    return pos;
}

/* value_key(x) for an exact float: "number:" + core.jscompat.js_string(x), JavaScript's
 * Number::toString, from the shortest round-trip digits repr() gives (_shortest_digits and
 * _float_text there are the twins, step by step), written at out (128 bytes): its length,
 * or -1 with an exception set. */
static Py_ssize_t
float_text(double x, char *out)
{
    static const char *const special[] = {"number:NaN", "number:Infinity", "number:-Infinity",
                                          "number:0"};
    const char *fixed = NULL;
    if (x != x) {
        fixed = special[0];
    }
    else if (x == HUGE_VAL || x == -HUGE_VAL) {
        fixed = x > 0 ? special[1] : special[2];
    }
    else if (x == 0) {
        fixed = special[3];
    }
    if (fixed != NULL) {
        size_t length = strlen(fixed);
        memcpy(out, fixed, length);
        return (Py_ssize_t)length;
    }
    Py_ssize_t pos = 7;
    memcpy(out, "number:", 7);
    if (x < 0) {
        out[pos++] = '-';
        x = -x;
    }
    char *text = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) {
        return -1;
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
            return -1;
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
        pos += k;
        for (long i = 0; i < n - k; i++) {
            out[pos++] = '0';
        }
    }
    else if (0 < n && n <= 21) {
        memcpy(out + pos, digits, (size_t)n);
        pos += n;
        out[pos++] = '.';
        memcpy(out + pos, digits + n, (size_t)(k - n));
        pos += k - n;
    }
    else if (-6 < n && n <= 0) {
        out[pos++] = '0';
        out[pos++] = '.';
        for (long i = 0; i < -n; i++) {
            out[pos++] = '0';
        }
        memcpy(out + pos, digits, (size_t)k);
        pos += k;
    }
    else {
        long exp = n - 1;
        out[pos++] = digits[0];
        if (k > 1) {
            out[pos++] = '.';
            memcpy(out + pos, digits + 1, (size_t)(k - 1));
            pos += k - 1;
        }
        out[pos++] = 'e';
        out[pos++] = exp >= 0 ? '+' : '-';
        pos += write_integer(out + pos, exp >= 0 ? exp : -exp);
    }
    return pos;
}

/* The identity ProposalEvidence.add_value gives a value: 0, or -1 with an exception set.
 * Only the value_key call runs Python code (*ran is set then). */
static int
identity_of(Tallies *t, PyObject *value, Identity *id, int *ran)
{
    id->object = NULL;
    if (PyUnicode_CheckExact(value)) {
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(value) < 0) {
            return -1;
        }
#endif
        id->form = IDENTITY_STRING;
        id->object = value;
        return 0;
    }
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (number == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (!overflow && number >= -TWO_53 && number <= TWO_53) {
            id->form = IDENTITY_ASCII;
            memcpy(id->text, "number:", 7);
            id->length = 7 + write_integer(id->text + 7, number);
            return 0;
        }
    }
    else if (value == Py_True || value == Py_False) {
        /* value_key(True) is "boolean:true", value_key(False) "boolean:false" */
        id->form = IDENTITY_OBJECT;
        id->object = value == Py_True ? s_true_key : s_false_key;
        Py_INCREF(id->object);
        return 0;
    }
    else if (PyFloat_CheckExact(value)) {
        id->form = IDENTITY_ASCII;
        id->length = float_text(PyFloat_AS_DOUBLE(value), id->text);
        return id->length < 0 ? -1 : 0;
    }
    *ran = 1;
    id->form = IDENTITY_OBJECT;
    id->object = PyObject_CallOneArg(t->value_key, value);
    return id->object == NULL ? -1 : 0;
}

/* The identity as a str: a new reference or NULL. */
static PyObject *
identity_object(Identity *id)
{
    if (id->form == IDENTITY_STRING) {
        return PyUnicode_Concat(s_string_prefix, id->object);
    }
    if (id->form == IDENTITY_ASCII) {
        return PyUnicode_FromStringAndSize(id->text, id->length);
    }
    Py_INCREF(id->object);
    return id->object;
}

/* Whether the exact str key equals the identity (as str.__eq__ decides: same length, same
 * storage kind, same code units; the identity built would have the value's kind, or the
 * one-byte kind of ASCII text). */
static int
identity_is(PyObject *key, Identity *id)
{
    if (id->form == IDENTITY_ASCII) {
        return PyUnicode_GET_LENGTH(key) == id->length &&
               PyUnicode_KIND(key) == PyUnicode_1BYTE_KIND &&
               memcmp(PyUnicode_DATA(key), id->text, (size_t)id->length) == 0;
    }
    PyObject *value = id->object;
    Py_ssize_t length = PyUnicode_GET_LENGTH(value);
    int kind = PyUnicode_KIND(value);
    if (PyUnicode_GET_LENGTH(key) != length + 7 || PyUnicode_KIND(key) != kind) {
        return 0;
    }
    const void *data = PyUnicode_DATA(key);
    if (kind == PyUnicode_1BYTE_KIND) {
        if (memcmp(data, "string:", 7) != 0) {
            return 0;
        }
    }
    else {
        for (Py_ssize_t i = 0; i < 7; i++) {
            if (PyUnicode_READ(kind, data, i) != (Py_UCS4)(unsigned char)"string:"[i]) {
                return 0;
            }
        }
    }
    return memcmp((const char *)data + 7 * kind, PyUnicode_DATA(value), (size_t)length * kind) ==
           0;
}

/* counts.get(identity) as a borrowed reference: NULL without an exception when absent.
 * A small counts dict of exact str keys is searched key by key (what the dict's own lookup
 * finds: the key equal to the identity), so the identity need not be built. */
static PyObject *
slot_of_identity(PyObject *counts, Identity *id)
{
    if (id->form != IDENTITY_OBJECT && PyDict_GET_SIZE(counts) <= SCAN_LIMIT) {
        Py_ssize_t position = 0;
        PyObject *key, *slot;
        int exact = 1;
        while (PyDict_Next(counts, &position, &key, &slot)) {
            if (!PyUnicode_CheckExact(key)) {
                exact = 0;
                break;
            }
            if (identity_is(key, id)) {
                return slot;
            }
        }
        if (exact) {
            return NULL;
        }
    }
    PyObject *identity = identity_object(id);
    if (identity == NULL) {
        return NULL;
    }
    PyObject *slot = PyDict_GetItemWithError(counts, identity);
    Py_DECREF(identity);
    return slot;
}

/* slot[0] = value; slot[1] += 1 (in that order, as the Python statements run). */
static int
bump_slot(PyObject *slot, PyObject *value, int *ran)
{
    if (PyList_CheckExact(slot) && PyList_GET_SIZE(slot) >= 2) {
        PyObject *old = PyList_GET_ITEM(slot, 0);
        if (!is_primitive(old)) {
            *ran = 1; /* its last reference may run a finalizer */
        }
        Py_INCREF(value);
        PyList_SET_ITEM(slot, 0, value);
        Py_DECREF(old);
        PyObject *count = PyList_GET_ITEM(slot, 1);
        if (exact_number(count)) {
            PyObject *bigger = plus_one(count);
            if (bigger == NULL) {
                return -1;
            }
            PyList_SET_ITEM(slot, 1, bigger);
            Py_DECREF(count);
            return 0;
        }
    }
    else {
        *ran = 1;
        if (PySequence_SetItem(slot, 0, value) < 0) {
            return -1;
        }
    }
    *ran = 1;
    PyObject *count = PySequence_GetItem(slot, 1);
    if (count == NULL) {
        return -1;
    }
    PyObject *bigger = PyNumber_InPlaceAdd(count, s_one);
    Py_DECREF(count);
    if (bigger == NULL) {
        return -1;
    }
    int done = PySequence_SetItem(slot, 1, bigger);
    Py_DECREF(bigger);
    return done;
}

/* tallies.get((ref, key)), or tallies[(ref, key)] = tally_type(ref, key): a new reference
 * or NULL. */
static PyObject *
tally_for(Tallies *t, PyObject *ref, PyObject *key)
{
    int plain = PyUnicode_CheckExact(ref) && PyUnicode_CheckExact(key);
#if PY_VERSION_HEX < 0x030C0000
    if (plain && (PyUnicode_READY(ref) < 0 || PyUnicode_READY(key) < 0)) {
        return NULL;
    }
#endif
    PyObject *tally = plain ? recalled(t, ref, key) : NULL;
    if (tally != NULL) {
        Py_INCREF(tally);
        return tally;
    }
    PyObject *pair = PyTuple_Pack(2, ref, key);
    if (pair == NULL) {
        return NULL;
    }
    tally = PyDict_GetItemWithError(t->tallies, pair);
    if (tally != NULL && tally != Py_None) {
        Py_INCREF(tally);
    }
    else {
        if (PyErr_Occurred()) {
            Py_DECREF(pair);
            return NULL;
        }
        PyObject *fields[2] = {ref, key};
        tally = PyObject_Vectorcall(t->tally_type, fields, 2, NULL);
        if (tally == NULL || PyDict_SetItem(t->tallies, pair, tally) < 0) {
            Py_XDECREF(tally);
            Py_DECREF(pair);
            return NULL;
        }
        forget(t); /* tally_type ran Python code */
    }
    Py_DECREF(pair);
    if (plain) {
        remember(t, ref, key, tally);
    }
    return tally;
}

/* tally.total += 1; then 1 when tally.overflowed, else 0; -1 with an exception set. */
static int
count_and_check(PyObject *tally, int *ran)
{
    if (fast_tally(tally)) {
        PyObject *total = SLOT(tally, o_total);
        if (total != NULL && exact_number(total)) {
            PyObject *more = plus_one(total);
            if (more == NULL) {
                return -1;
            }
            SLOT(tally, o_total) = more;
            Py_DECREF(total);
            PyObject *overflowed = SLOT(tally, o_overflowed);
            if (overflowed == Py_False) {
                return 0;
            }
            if (overflowed == Py_True) {
                return 1;
            }
        }
        else {
            goto generic_total;
        }
        goto generic_overflowed;
    }
generic_total:
    *ran = 1;
    {
        PyObject *total = PyObject_GetAttr(tally, s_total);
        if (total == NULL) {
            return -1;
        }
        PyObject *more = PyNumber_InPlaceAdd(total, s_one);
        Py_DECREF(total);
        if (more == NULL) {
            return -1;
        }
        int set = PyObject_SetAttr(tally, s_total, more);
        Py_DECREF(more);
        if (set < 0) {
            return -1;
        }
    }
generic_overflowed:
    *ran = 1;
    {
        PyObject *overflowed = PyObject_GetAttr(tally, s_overflowed);
        if (overflowed == NULL) {
            return -1;
        }
        int truth = PyObject_IsTrue(overflowed);
        Py_DECREF(overflowed);
        return truth;
    }
}

/* ProposalEvidence.add_value(ref, key, value) on the tallies. */
static int
add_value(Tallies *t, PyObject *ref, PyObject *key, PyObject *value)
{
    int ran = 0;
    PyObject *tally = tally_for(t, ref, key);
    if (tally == NULL) {
        return -1;
    }
    int status = -1;
    PyObject *counts = NULL;
    Identity id;
    id.form = IDENTITY_STRING;
    id.object = NULL;
    int overflowed = count_and_check(tally, &ran);
    if (overflowed != 0) {
        status = overflowed < 0 ? -1 : 0;
        goto done;
    }
    if (identity_of(t, value, &id, &ran) < 0) {
        goto done;
    }
    if (fast_tally(tally) && SLOT(tally, o_counts) != NULL) {
        counts = SLOT(tally, o_counts);
        Py_INCREF(counts);
    }
    else {
        ran = 1;
        counts = PyObject_GetAttr(tally, s_counts);
        if (counts == NULL) {
            goto done;
        }
    }
    if (!PyDict_CheckExact(counts)) {
        PyErr_SetString(PyExc_TypeError, "a tally's counts must be a dict");
        goto done;
    }
    PyObject *slot = slot_of_identity(counts, &id);
    if (slot != NULL && slot != Py_None) {
        Py_INCREF(slot);
        status = bump_slot(slot, value, &ran);
        Py_DECREF(slot);
        goto done;
    }
    if (PyErr_Occurred()) {
        goto done;
    }
    PyObject *identity = identity_object(&id);
    if (identity == NULL) {
        goto done;
    }
    PyObject *fresh = PyList_New(2);
    if (fresh == NULL) {
        Py_DECREF(identity);
        goto done;
    }
    Py_INCREF(value);
    PyList_SET_ITEM(fresh, 0, value);
    Py_INCREF(s_one);
    PyList_SET_ITEM(fresh, 1, s_one);
    int set = PyDict_SetItem(counts, identity, fresh);
    Py_DECREF(fresh);
    Py_DECREF(identity);
    if (set < 0) {
        goto done;
    }
    if (PyDict_GET_SIZE(counts) > t->max_distinct) {
        ran = 1;
        PyObject *result = PyObject_CallMethodNoArgs(tally, s_overflow);
        if (result == NULL) {
            goto done;
        }
        Py_DECREF(result);
    }
    status = 0;
done:
    if (id.form == IDENTITY_OBJECT) {
        Py_XDECREF(id.object);
    }
    Py_XDECREF(counts);
    Py_DECREF(tally);
    if (ran) {
        forget(t); /* Python code ran: what the tallies hold is read afresh */
    }
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
    t.recent_count = 0;
    t.recent_next = 0;
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
    forget(&t);
    Py_DECREF(values);
    Py_DECREF(t.tallies);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ harvest_values */

/* The values gathered so far, (ref, key, value, ...) as strong references: on the stack
 * for the usual line, in a growing heap array past that. */
#define GATHERED_ON_STACK 48
typedef struct {
    PyObject **items;
    Py_ssize_t size, room;
    PyObject *stack[GATHERED_ON_STACK];
} Gathered;

static void
gathered_init(Gathered *g)
{
    g->items = g->stack;
    g->size = 0;
    g->room = GATHERED_ON_STACK;
}

static void
gathered_clear(Gathered *g)
{
    for (Py_ssize_t i = 0; i < g->size; i++) {
        Py_DECREF(g->items[i]);
    }
    if (g->items != g->stack) {
        PyMem_Free(g->items);
    }
    gathered_init(g);
}

static int
gathered_add(Gathered *g, PyObject *ref, PyObject *key, PyObject *value)
{
    if (g->size + 3 > g->room) {
        Py_ssize_t room = 2 * g->room;
        PyObject **more = PyMem_Malloc((size_t)room * sizeof(PyObject *));
        if (more == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(more, g->items, (size_t)g->size * sizeof(PyObject *));
        if (g->items != g->stack) {
            PyMem_Free(g->items);
        }
        g->items = more;
        g->room = room;
    }
    Py_INCREF(ref);
    Py_INCREF(key);
    Py_INCREF(value);
    g->items[g->size++] = ref;
    g->items[g->size++] = key;
    g->items[g->size++] = value;
    return 0;
}

/* The gathered values as one tuple (the tuple takes the references), or None when there
 * are none: a new reference or NULL. */
static PyObject *
gathered_tuple(Gathered *g)
{
    if (g->size == 0) {
        Py_RETURN_NONE;
    }
    PyObject *values = PyTuple_New(g->size);
    if (values == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < g->size; i++) {
        PyTuple_SET_ITEM(values, i, g->items[i]);
    }
    g->size = 0;
    return values;
}

/* Adds (ref, key, value) for every primitive value of one kept record, in js_own_keys
 * order. Arguments whose keys are all exact str and none a canonical array index keep
 * their own order: then the dict is walked as it stands (no Python code runs on the way,
 * so each value is what args[key] would give). */
static int
gather_values(PyObject *ref, PyObject *args, PyObject *fallback, Gathered *found)
{
    Py_ssize_t position = 0;
    PyObject *key, *value;
    int ordered = 1;
    while (PyDict_Next(args, &position, &key, &value)) {
        unsigned long long index;
        int verdict = PyUnicode_CheckExact(key) ? array_index(key, &index) : 1;
        if (verdict < 0) {
            return -1;
        }
        if (verdict > 0) {
            ordered = 0;
            break;
        }
    }
    if (ordered) {
        position = 0;
        while (PyDict_Next(args, &position, &key, &value)) {
            if (is_primitive(value) && gathered_add(found, ref, key, value) < 0) {
                return -1;
            }
        }
        return 0;
    }
    PyObject *keys = own_keys_of(args, fallback);
    if (keys == NULL) {
        return -1;
    }
    PyObject *iterator = PyObject_GetIter(keys);
    Py_DECREF(keys);
    if (iterator == NULL) {
        return -1;
    }
    while ((key = PyIter_Next(iterator)) != NULL) {
        value = PyObject_GetItem(args, key);
        int failed = value == NULL;
        if (!failed && is_primitive(value)) {
            failed = gathered_add(found, ref, key, value) < 0;
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

/* (kept, skipped, values): a new reference (it takes values) or NULL. */
static PyObject *
harvest_result(Py_ssize_t kept, Py_ssize_t skipped, PyObject *values)
{
    PyObject *out = PyTuple_New(3);
    PyObject *k = PyLong_FromSsize_t(kept), *s = PyLong_FromSsize_t(skipped);
    if (out == NULL || k == NULL || s == NULL) {
        Py_XDECREF(out);
        Py_XDECREF(k);
        Py_XDECREF(s);
        Py_DECREF(values);
        return NULL;
    }
    PyTuple_SET_ITEM(out, 0, k);
    PyTuple_SET_ITEM(out, 1, s);
    PyTuple_SET_ITEM(out, 2, values);
    return out;
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
    Gathered found;
    gathered_init(&found);
    Py_ssize_t kept = 0, skipped = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(audits); i++) {
        PyObject *record = PyList_GET_ITEM(audits, i);
        PyObject *ref, *record_args;
        Py_INCREF(record);
        int verdict = kept_record(record, &ref, &record_args);
        if (verdict <= 0) {
            Py_DECREF(record);
            if (verdict < 0) {
                gathered_clear(&found);
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
            failed = gather_values(ref, record_args, fallback, &found) < 0;
        }
        Py_DECREF(ref);
        Py_DECREF(record_args);
        if (failed) {
            gathered_clear(&found);
            return NULL;
        }
    }
    PyObject *values = gathered_tuple(&found);
    gathered_clear(&found);
    if (values == NULL) {
        return NULL;
    }
    return harvest_result(kept, skipped, values);
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

/* The member slot of type's field name: its offset, -1 when it is not a plain writable
 * object slot, -2 with an exception set. */
static Py_ssize_t
member_offset(PyTypeObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL) {
        return -2;
    }
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY)) {
            offset = member->offset;
        }
    }
    Py_DECREF(descr);
    return offset;
}

/* core.proposals._Tally's slots (tally_class above): 0, or -1 with an exception set. A
 * class that reads or writes its attributes its own way keeps the generic path. */
static int
init_tally_class(void)
{
    PyObject *proposals = PyImport_ImportModule("pytest_entropy.core.proposals");
    if (proposals == NULL) {
        return -1;
    }
    PyObject *found = PyObject_GetAttrString(proposals, "_Tally");
    Py_DECREF(proposals);
    if (found == NULL) {
        return -1;
    }
    if (!PyType_Check(found)) {
        Py_DECREF(found);
        return 0;
    }
    PyTypeObject *type = (PyTypeObject *)found;
    Py_ssize_t total = member_offset(type, "total");
    Py_ssize_t overflowed = total < -1 ? -2 : member_offset(type, "overflowed");
    Py_ssize_t counts = overflowed < -1 ? -2 : member_offset(type, "counts");
    if (counts < -1) {
        Py_DECREF(found);
        return -1;
    }
    /* the lookups above gave the class a version tag, unless it cannot have one */
    if (total < 0 || overflowed < 0 || counts < 0 || type->tp_version_tag == 0 ||
        type->tp_getattro != PyObject_GenericGetAttr ||
        type->tp_setattro != PyObject_GenericSetAttr) {
        Py_DECREF(found);
        return 0;
    }
    o_total = total;
    o_overflowed = overflowed;
    o_counts = counts;
    tally_tag = type->tp_version_tag;
    tally_class = type; /* keeps the reference */
    return 0;
}

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
        if (init_tally_class() < 0) {
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
