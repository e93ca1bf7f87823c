/*
 * The trace guard's value checks and the shape signature, in C.
 *
 * The native twin of three Python functions, with exactly their results:
 *
 *   struct_guard(trace)   pytest_entropy.ingest.native_decode.struct_guard
 *   signed_args(args)     pytest_entropy.ingest.argtree.signed_args
 *   value_floats(value)   pytest_entropy.ingest.argtree.value_floats
 *   shape_signature(args) pytest_entropy.core.fingerprint.shape_signature
 *
 * The Python code stays the specification and the fallback. Whatever lies outside the
 * exact domain handled here (a foreign or subclassed type where the Python would look at
 * behaviour, a non-finite count the Python would raise on, a dictionary key that is not an
 * exact str) makes a function return NotImplemented: the caller then runs the Python twin
 * on the same input. The kernel never approximates.
 *
 * Shape signature (spec 2.3): the first 32 keys in UTF-16 code-unit order (the Python sorts
 * by code point, then stably by code_unit_key: code-unit order with code-point order
 * between keys of equal code units), "key:tag" joined by ",", "\u2026+N" for the keys left
 * out, dictionaries expanded down to depth 3 and "obj" below.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define MAX_ARGS_DEPTH 14
#define SIGNATURE_MAX_KEYS 32
#define SIGNATURE_MAX_DEPTH 3
#define MAX_SAFE_INTEGER 9007199254740991LL

/* Created once by module init, never changed afterwards. */
static PyObject *UNSET;
static PyObject *S_version, *S_counts, *S_droppedValues, *S_truncatedValues;
static PyObject *S_redactedValues, *S_droppedOperations, *S_operations, *S_sequence;
static PyObject *S_result, *S_args, *S_failureStage, *S_ref, *S_outcome;
static PyObject *T_str, *T_num, *T_bool, *T_null, *T_arr, *T_obj;
static PyObject *P_open, *P_close, *P_brace_open, *P_brace_close, *P_colon, *P_comma;
static PyObject *P_empty_args, *P_empty, *ZERO;
static PyObject *R_version, *R_counts, *R_sequence, *R_result, *R_args;

/* ---------------------------------------------------------------- argument trees */

static Py_ssize_t tree_floats(PyObject *container, int depth);

/* One value inside a tree at ``depth``: its floats, or -1 when it is not a JSON value. */
static Py_ssize_t
value_step(PyObject *value, int depth)
{
    PyTypeObject *t = Py_TYPE(value);
    if (t == &PyUnicode_Type || t == &PyLong_Type || t == &PyBool_Type || value == Py_None) {
        return 0;
    }
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(value);
        return (d - d != 0.0) ? -1 : 1; /* NaN or an infinity */
    }
    if (t == &PyDict_Type || t == &PyList_Type) {
        Py_ssize_t size = t == &PyDict_Type ? PyDict_GET_SIZE(value) : PyList_GET_SIZE(value);
        if (size) {
            return tree_floats(value, depth + 1);
        }
        return depth + 1 > MAX_ARGS_DEPTH ? -1 : 0;
    }
    return -1;
}

/* argtree._tree_floats: ``container`` is an exact dict or list. No Python code runs while
 * it walks (exact types only), so the containers cannot change under it. */
static Py_ssize_t
tree_floats(PyObject *container, int depth)
{
    Py_ssize_t floats = 0, inner;
    if (depth > MAX_ARGS_DEPTH) {
        return -1;
    }
    if (PyDict_CheckExact(container)) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(container, &pos, &key, &value)) {
            inner = value_step(value, depth);
            if (inner < 0) {
                return -1;
            }
            floats += inner;
        }
    }
    else {
        Py_ssize_t i, n = PyList_GET_SIZE(container);
        for (i = 0; i < n; i++) {
            inner = value_step(PyList_GET_ITEM(container, i), depth);
            if (inner < 0) {
                return -1;
            }
            floats += inner;
        }
    }
    return floats;
}

/* argtree.value_floats */
static Py_ssize_t
value_floats_of(PyObject *value)
{
    PyTypeObject *t = Py_TYPE(value);
    if (t == &PyDict_Type || t == &PyList_Type) {
        return tree_floats(value, 0);
    }
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(value);
        return (d - d == 0.0) ? 1 : -1;
    }
    if (t == &PyUnicode_Type || t == &PyLong_Type || t == &PyBool_Type || value == Py_None) {
        return 0;
    }
    return -1;
}

/* ------------------------------------------------------------------ key order */

static int
compare_code_points(PyObject *a, PyObject *b)
{
    Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
    Py_ssize_t n = la < lb ? la : lb, i;
    int ka = PyUnicode_KIND(a), kb = PyUnicode_KIND(b);
    const void *da = PyUnicode_DATA(a), *db = PyUnicode_DATA(b);
    if (ka == PyUnicode_1BYTE_KIND && kb == PyUnicode_1BYTE_KIND) {
        int r = n ? memcmp(da, db, (size_t)n) : 0;
        if (r) {
            return r < 0 ? -1 : 1;
        }
    }
    else {
        for (i = 0; i < n; i++) {
            Py_UCS4 ca = PyUnicode_READ(ka, da, i), cb = PyUnicode_READ(kb, db, i);
            if (ca != cb) {
                return ca < cb ? -1 : 1;
            }
        }
    }
    return la < lb ? -1 : (la > lb ? 1 : 0);
}

/* The UTF-16 code units of a string from code point ``index`` on, one at a time. */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t index, length;
    Py_UCS4 pending; /* a low surrogate still to come, or 0 */
} Units;

static int
next_unit(Units *u, Py_UCS4 *unit)
{
    Py_UCS4 cp;
    if (u->pending) {
        *unit = u->pending;
        u->pending = 0;
        return 1;
    }
    if (u->index >= u->length) {
        return 0;
    }
    cp = PyUnicode_READ(u->kind, u->data, u->index);
    u->index++;
    if (cp > 0xFFFF) {
        cp -= 0x10000;
        *unit = 0xD800 + (cp >> 10);
        u->pending = 0xDC00 + (cp & 0x3FF);
    }
    else {
        *unit = cp;
    }
    return 1;
}

/* JavaScript's code-unit order (jscompat.code_unit_key); 0 for equal code units. */
static int
compare_code_units(PyObject *a, PyObject *b)
{
    int ka = PyUnicode_KIND(a), kb = PyUnicode_KIND(b);
    Py_ssize_t la, lb, n, i;
    const void *da, *db;
    Py_UCS4 ca = 0, cb = 0;
    Units ua, ub;
    if (ka != PyUnicode_4BYTE_KIND && kb != PyUnicode_4BYTE_KIND) {
        return compare_code_points(a, b); /* no astral character: the same order */
    }
    la = PyUnicode_GET_LENGTH(a);
    lb = PyUnicode_GET_LENGTH(b);
    n = la < lb ? la : lb;
    da = PyUnicode_DATA(a);
    db = PyUnicode_DATA(b);
    for (i = 0; i < n; i++) {
        ca = PyUnicode_READ(ka, da, i);
        cb = PyUnicode_READ(kb, db, i);
        if (ca != cb) {
            break;
        }
    }
    if (i == n) {
        return la < lb ? -1 : (la > lb ? 1 : 0);
    }
    if ((ca > 0xFFFF) == (cb > 0xFFFF)) {
        return ca < cb ? -1 : 1; /* both in the BMP or both astral: the same order */
    }
    ua.kind = ka;
    ua.data = da;
    ua.index = i;
    ua.length = la;
    ua.pending = 0;
    ub.kind = kb;
    ub.data = db;
    ub.index = i;
    ub.length = lb;
    ub.pending = 0;
    for (;;) {
        Py_UCS4 xa = 0, xb = 0;
        int more_a = next_unit(&ua, &xa), more_b = next_unit(&ub, &xb);
        if (!more_a || !more_b) {
            return more_a == more_b ? 0 : (more_a ? 1 : -1);
        }
        if (xa != xb) {
            return xa < xb ? -1 : 1;
        }
    }
}

static int
compare_keys(PyObject *a, PyObject *b)
{
    int r = compare_code_units(a, b);
    return r ? r : compare_code_points(a, b);
}

typedef struct {
    PyObject *key, *value;
} Item;

static int
compare_items(const void *x, const void *y)
{
    return compare_keys(((const Item *)x)->key, ((const Item *)y)->key);
}

static void
sort_items(Item *items, Py_ssize_t n)
{
    Py_ssize_t i, j;
    if (n > 16) {
        qsort(items, (size_t)n, sizeof(Item), compare_items);
        return;
    }
    for (i = 1; i < n; i++) {
        Item moving = items[i];
        for (j = i; j > 0 && compare_keys(items[j - 1].key, moving.key) > 0; j--) {
            items[j] = items[j - 1];
        }
        items[j] = moving;
    }
}

/* -------------------------------------------------------------- the signature */

/* The signature's pieces, borrowed (interned constants and dictionary keys, which live as
 * long as the call) except those in ``owned``, joined once at the end. */
typedef struct {
    PyObject **items;
    Py_ssize_t length, capacity;
    PyObject *owned; /* a list, or NULL */
    PyObject *inline_items[128];
} Pieces;

static void
pieces_init(Pieces *p)
{
    p->items = p->inline_items;
    p->length = 0;
    p->capacity = 128;
    p->owned = NULL;
}

static void
pieces_clear(Pieces *p)
{
    if (p->items != p->inline_items) {
        PyMem_Free(p->items);
    }
    Py_CLEAR(p->owned);
}

static int
push(Pieces *p, PyObject *piece)
{
    if (p->length == p->capacity) {
        Py_ssize_t capacity = p->capacity * 2;
        PyObject **items = PyMem_Malloc((size_t)capacity * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(items, p->items, (size_t)p->length * sizeof(PyObject *));
        if (p->items != p->inline_items) {
            PyMem_Free(p->items);
        }
        p->items = items;
        p->capacity = capacity;
    }
    p->items[p->length++] = piece;
    return 0;
}

/* Takes the reference to ``piece``. */
static int
push_owned(Pieces *p, PyObject *piece)
{
    int r;
    if (piece == NULL) {
        return -1;
    }
    if (p->owned == NULL && (p->owned = PyList_New(0)) == NULL) {
        Py_DECREF(piece);
        return -1;
    }
    r = PyList_Append(p->owned, piece);
    Py_DECREF(piece);
    return r < 0 ? -1 : push(p, piece);
}

static PyObject *
pieces_join(Pieces *p)
{
    Py_ssize_t total = 0, i, at = 0;
    Py_UCS4 maxchar = 127;
    PyObject *out;
    int kind;
    char *data;
    for (i = 0; i < p->length; i++) {
        Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(p->items[i]);
        total += PyUnicode_GET_LENGTH(p->items[i]);
        if (m > maxchar) {
            maxchar = m;
        }
    }
    out = PyUnicode_New(total, maxchar);
    if (out == NULL) {
        return NULL;
    }
    kind = PyUnicode_KIND(out);
    data = PyUnicode_DATA(out);
    for (i = 0; i < p->length; i++) {
        PyObject *piece = p->items[i];
        Py_ssize_t n = PyUnicode_GET_LENGTH(piece);
        if (PyUnicode_KIND(piece) == kind) {
            memcpy(data + at * kind, PyUnicode_DATA(piece), (size_t)(n * kind));
        }
        else if (PyUnicode_CopyCharacters(out, at, piece, 0, n) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        at += n;
    }
    return out;
}

#define FIELDS_OK 0
#define FIELDS_ERROR (-1)
#define FIELDS_FOREIGN 1 /* outside the exact domain: NotImplemented */

static int fields(Pieces *p, PyObject *obj, int child);

/* fingerprint._tag for exact JSON types; FIELDS_FOREIGN for anything else. */
static int
tag(Pieces *p, PyObject *value, int depth)
{
    PyTypeObject *t = Py_TYPE(value);
    int r;
    if (value == Py_None) {
        return push(p, T_null);
    }
    if (t == &PyUnicode_Type) {
        return push(p, T_str);
    }
    if (t == &PyBool_Type) {
        return push(p, T_bool);
    }
    if (t == &PyLong_Type || t == &PyFloat_Type) {
        return push(p, T_num);
    }
    if (t == &PyList_Type) {
        return push(p, T_arr);
    }
    if (t == &PyDict_Type) {
        if (depth >= SIGNATURE_MAX_DEPTH) {
            return push(p, T_obj);
        }
        if (push(p, P_brace_open) < 0) {
            return FIELDS_ERROR;
        }
        r = fields(p, value, depth + 1);
        if (r != FIELDS_OK) {
            return r;
        }
        return push(p, P_brace_close);
    }
    return FIELDS_FOREIGN;
}

/* fingerprint._fields: the first 32 keys in code-unit order, children tagged at ``child``. */
static int
fields(Pieces *p, PyObject *obj, int child)
{
    Item inline_items[32];
    Item *items = inline_items;
    Py_ssize_t n = PyDict_GET_SIZE(obj), i = 0, pos = 0, shown;
    PyObject *key, *value;
    int r = FIELDS_OK;
    if (n > 32) {
        items = PyMem_Malloc((size_t)n * sizeof(Item));
        if (items == NULL) {
            PyErr_NoMemory();
            return FIELDS_ERROR;
        }
    }
    while (PyDict_Next(obj, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            r = FIELDS_FOREIGN;
            goto done;
        }
        items[i].key = key;
        items[i].value = value;
        i++;
    }
    sort_items(items, n);
    shown = n < SIGNATURE_MAX_KEYS ? n : SIGNATURE_MAX_KEYS;
    for (i = 0; i < shown; i++) {
        if ((i && push(p, P_comma) < 0) || push(p, items[i].key) < 0 || push(p, P_colon) < 0) {
            r = FIELDS_ERROR;
            goto done;
        }
        r = tag(p, items[i].value, child);
        if (r != FIELDS_OK) {
            goto done;
        }
    }
    if (n > SIGNATURE_MAX_KEYS) {
        if (push(p, P_comma) < 0 ||
            push_owned(p, PyUnicode_FromFormat("%c+%zd", 0x2026, n - SIGNATURE_MAX_KEYS)) < 0) {
            r = FIELDS_ERROR;
        }
    }
done:
    if (items != inline_items) {
        PyMem_Free(items);
    }
    return r;
}

/* shape_signature of an exact, non-empty dict: a new str, Py_NotImplemented (a new
 * reference) outside the exact domain, NULL with an exception. */
static PyObject *
signature_of(PyObject *args)
{
    Pieces p;
    PyObject *out = NULL;
    int r;
    pieces_init(&p);
    if (push(&p, P_open) < 0) {
        goto done;
    }
    r = fields(&p, args, 1);
    if (r == FIELDS_FOREIGN) {
        out = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    if (r != FIELDS_OK || push(&p, P_close) < 0) {
        goto done;
    }
    out = pieces_join(&p);
done:
    pieces_clear(&p);
    return out;
}

/* signed_args: 1 with *signature (new) and *floats, 0 when the tree is invalid, 2 outside
 * the exact domain, -1 with an exception. */
static int
sign(PyObject *args, PyObject **signature, Py_ssize_t *floats)
{
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int flat = 1;
    *floats = 0;
    if (PyDict_GET_SIZE(args) == 0) {
        *signature = Py_NewRef(P_empty_args);
        return 1;
    }
    while (PyDict_Next(args, &pos, &key, &value)) {
        PyTypeObject *t = Py_TYPE(value);
        if (!(t == &PyUnicode_Type || t == &PyLong_Type || t == &PyBool_Type || value == Py_None)) {
            flat = 0;
            break;
        }
    }
    if (!flat) {
        *floats = tree_floats(args, 0);
        if (*floats < 0) {
            return 0;
        }
    }
    *signature = signature_of(args);
    if (*signature == NULL) {
        return -1;
    }
    if (*signature == Py_NotImplemented) {
        Py_DECREF(*signature);
        return 2;
    }
    return 1;
}

/* ---------------------------------------------------------------- the numbers */

#define NUMBER_INVALID 0
#define NUMBER_VALID 1
#define NUMBER_FOREIGN 2 /* the Python decides (it may raise) */

/* native_decode._safe_count for exact int and finite float; *value gets the number. */
static int
safe_count(PyObject *number, long long *value, int *is_float)
{
    PyTypeObject *t = Py_TYPE(number);
    if (t == &PyLong_Type) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(number, &overflow);
        if (v == -1 && !overflow && PyErr_Occurred()) {
            PyErr_Clear(); /* cannot happen for an exact int; let the Python decide */
            return NUMBER_FOREIGN;
        }
        *is_float = 0;
        if (overflow || v < 0 || v > MAX_SAFE_INTEGER) {
            return NUMBER_INVALID;
        }
        *value = v;
        return NUMBER_VALID;
    }
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(number);
        if (d - d != 0.0) {
            return NUMBER_FOREIGN; /* int() of NaN or an infinity raises in the Python */
        }
        *is_float = 1;
        if (d != floor(d) || !(d >= 0.0) || d > (double)MAX_SAFE_INTEGER) {
            return NUMBER_INVALID;
        }
        *value = (long long)d;
        return NUMBER_VALID;
    }
    return NUMBER_FOREIGN;
}

static PyObject *
rejected(PyObject *reason)
{
    PyObject *empty = PyList_New(0);
    PyObject *out;
    if (empty == NULL) {
        return NULL;
    }
    out = PyTuple_Pack(3, empty, ZERO, reason);
    Py_DECREF(empty);
    return out;
}

/* ------------------------------------------------------------------ the guard */

static PyObject *
guard(PyObject *trace)
{
    PyObject *version = NULL, *counts = NULL, *operations = NULL;
    PyObject *op = NULL, *sequence = NULL, *result = NULL, *args = NULL, *stage = NULL;
    PyObject *ref = NULL, *outcome = NULL, *signature = NULL, *signed_ops = NULL;
    PyObject *out = NULL, *entry;
    PyObject *count_names[4];
    Py_ssize_t floats = 0, i, inner;
    long long previous = -1, value = 0;
    int is_float = 0, state, k;

    version = PyObject_GetAttr(trace, S_version);
    if (version == NULL) {
        return NULL;
    }
    if (PyLong_CheckExact(version)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(version, &overflow);
        if (v == -1 && !overflow && PyErr_Occurred()) {
            goto error;
        }
        if (overflow || v != 1) {
            out = rejected(R_version);
            goto finish;
        }
    }
    else if (PyFloat_CheckExact(version)) {
        if (PyFloat_AS_DOUBLE(version) != 1.0) {
            out = rejected(R_version);
            goto finish;
        }
        floats = 1;
    }
    else {
        goto foreign;
    }

    counts = PyObject_GetAttr(trace, S_counts);
    if (counts == NULL) {
        goto error;
    }
    count_names[0] = S_droppedValues;
    count_names[1] = S_truncatedValues;
    count_names[2] = S_redactedValues;
    count_names[3] = S_droppedOperations;
    {
        /* The Python reads all four before checking any. */
        PyObject *values[4] = {NULL, NULL, NULL, NULL};
        int failed = 0, verdict = 0; /* 0 valid, 1 invalid, 2 foreign */
        for (k = 0; k < 4; k++) {
            values[k] = PyObject_GetAttr(counts, count_names[k]);
            if (values[k] == NULL) {
                failed = 1;
                break;
            }
        }
        if (!failed) {
            for (k = 0; k < 4; k++) {
                state = safe_count(values[k], &value, &is_float);
                if (state == NUMBER_FOREIGN) {
                    verdict = 2;
                    break;
                }
                if (state == NUMBER_INVALID) {
                    verdict = 1;
                    break;
                }
                floats += is_float;
            }
        }
        for (k = 0; k < 4; k++) {
            Py_XDECREF(values[k]);
        }
        if (failed) {
            goto error;
        }
        if (verdict == 2) {
            goto foreign;
        }
        if (verdict == 1) {
            out = rejected(R_counts);
            goto finish;
        }
    }

    operations = PyObject_GetAttr(trace, S_operations);
    if (operations == NULL) {
        goto error;
    }
    if (!PyList_CheckExact(operations)) {
        goto foreign;
    }
    signed_ops = PyList_New(0);
    if (signed_ops == NULL) {
        goto error;
    }
    for (i = 0; i < PyList_GET_SIZE(operations); i++) {
        op = Py_NewRef(PyList_GET_ITEM(operations, i));
        sequence = PyObject_GetAttr(op, S_sequence);
        if (sequence == NULL) {
            goto error;
        }
        state = safe_count(sequence, &value, &is_float);
        if (state == NUMBER_FOREIGN) {
            goto foreign;
        }
        if (state == NUMBER_INVALID || value <= previous) {
            out = rejected(R_sequence);
            goto finish;
        }
        floats += is_float;
        previous = value;
        Py_CLEAR(sequence);

        result = PyObject_GetAttr(op, S_result);
        if (result == NULL) {
            goto error;
        }
        if (result != UNSET) {
            inner = value_floats_of(result);
            if (inner < 0) {
                out = rejected(R_result);
                goto finish;
            }
            floats += inner;
        }
        Py_CLEAR(result);

        args = PyObject_GetAttr(op, S_args);
        if (args == NULL) {
            goto error;
        }
        if (!PyDict_CheckExact(args)) {
            goto foreign;
        }
        state = sign(args, &signature, &inner);
        if (state < 0) {
            goto error;
        }
        if (state == 2) {
            goto foreign;
        }
        if (state == 0) {
            out = rejected(R_args);
            goto finish;
        }
        floats += inner;

        stage = PyObject_GetAttr(op, S_failureStage);
        if (stage == NULL) {
            goto error;
        }
        if (stage == UNSET) {
            Py_SETREF(stage, Py_NewRef(Py_None));
        }
        ref = PyObject_GetAttr(op, S_ref);
        if (ref == NULL) {
            goto error;
        }
        outcome = PyObject_GetAttr(op, S_outcome);
        if (outcome == NULL) {
            goto error;
        }
        entry = PyTuple_New(5);
        if (entry == NULL) {
            goto error;
        }
        PyTuple_SET_ITEM(entry, 0, ref);
        PyTuple_SET_ITEM(entry, 1, args);
        PyTuple_SET_ITEM(entry, 2, outcome);
        PyTuple_SET_ITEM(entry, 3, stage);
        PyTuple_SET_ITEM(entry, 4, signature);
        ref = args = outcome = stage = signature = NULL;
        if (PyList_Append(signed_ops, entry) < 0) {
            Py_DECREF(entry);
            goto error;
        }
        Py_DECREF(entry);
        Py_CLEAR(op);
    }
    {
        PyObject *count_object = PyLong_FromSsize_t(floats);
        if (count_object == NULL) {
            goto error;
        }
        out = PyTuple_Pack(3, signed_ops, count_object, P_empty);
        Py_DECREF(count_object);
    }
    goto finish;

foreign:
    out = Py_NewRef(Py_NotImplemented);
    goto finish;
error:
    out = NULL;
finish:
    Py_XDECREF(version);
    Py_XDECREF(counts);
    Py_XDECREF(operations);
    Py_XDECREF(op);
    Py_XDECREF(sequence);
    Py_XDECREF(result);
    Py_XDECREF(args);
    Py_XDECREF(stage);
    Py_XDECREF(ref);
    Py_XDECREF(outcome);
    Py_XDECREF(signature);
    Py_XDECREF(signed_ops);
    return out;
}

/* ------------------------------------------------------------------- the module */

static PyObject *
struct_guard(PyObject *module, PyObject *trace)
{
    return guard(trace);
}

static PyObject *
signed_args(PyObject *module, PyObject *args)
{
    PyObject *signature = NULL, *floats_object, *out;
    Py_ssize_t floats = 0;
    int state;
    if (!PyDict_CheckExact(args)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    state = sign(args, &signature, &floats);
    if (state < 0) {
        return NULL;
    }
    if (state == 0) {
        Py_RETURN_NONE;
    }
    if (state == 2) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    floats_object = PyLong_FromSsize_t(floats);
    if (floats_object == NULL) {
        Py_DECREF(signature);
        return NULL;
    }
    out = PyTuple_Pack(2, signature, floats_object);
    Py_DECREF(signature);
    Py_DECREF(floats_object);
    return out;
}

static PyObject *
shape_signature(PyObject *module, PyObject *args)
{
    if (!PyDict_CheckExact(args)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (PyDict_GET_SIZE(args) == 0) {
        return Py_NewRef(P_empty_args);
    }
    return signature_of(args);
}

static PyObject *
value_floats(PyObject *module, PyObject *value)
{
    return PyLong_FromSsize_t(value_floats_of(value));
}

static PyMethodDef methods[] = {
    {"struct_guard", struct_guard, METH_O,
     "struct_guard(trace): native_decode.struct_guard's result, or NotImplemented when the\n"
     "trace holds something only the Python decides."},
    {"signed_args", signed_args, METH_O,
     "signed_args(args): argtree.signed_args's result, or NotImplemented outside exact\n"
     "JSON types."},
    {"shape_signature", shape_signature, METH_O,
     "shape_signature(args): fingerprint.shape_signature of an exact dict of exact JSON\n"
     "values, or NotImplemented."},
    {"value_floats", value_floats, METH_O, "value_floats(value): argtree.value_floats."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "pytest_entropy.ingest._guard_native",
    "The trace guard's value checks and the shape signature (native twin of\n"
    "native_decode.struct_guard, argtree.signed_args and fingerprint.shape_signature).",
    -1,
    methods,
};

static int
intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot == NULL ? -1 : 0;
}

PyMODINIT_FUNC
PyInit__guard_native(void)
{
    PyObject *module, *msgspec;
    if (UNSET == NULL) {
        msgspec = PyImport_ImportModule("msgspec");
        if (msgspec == NULL) {
            return NULL;
        }
        UNSET = PyObject_GetAttrString(msgspec, "UNSET");
        Py_DECREF(msgspec);
        if (UNSET == NULL) {
            return NULL;
        }
        ZERO = PyLong_FromLong(0);
        if (ZERO == NULL || intern(&S_version, "version") || intern(&S_counts, "counts") ||
            intern(&S_droppedValues, "droppedValues") ||
            intern(&S_truncatedValues, "truncatedValues") ||
            intern(&S_redactedValues, "redactedValues") ||
            intern(&S_droppedOperations, "droppedOperations") ||
            intern(&S_operations, "operations") || intern(&S_sequence, "sequence") ||
            intern(&S_result, "result") || intern(&S_args, "args") ||
            intern(&S_failureStage, "failureStage") || intern(&S_ref, "ref") ||
            intern(&S_outcome, "outcome") || intern(&T_str, "str") || intern(&T_num, "num") ||
            intern(&T_bool, "bool") || intern(&T_null, "null") || intern(&T_arr, "arr") ||
            intern(&T_obj, "obj") || intern(&P_open, "(") || intern(&P_close, ")") ||
            intern(&P_brace_open, "{") || intern(&P_brace_close, "}") ||
            intern(&P_colon, ":") || intern(&P_comma, ",") || intern(&P_empty_args, "()") ||
            intern(&P_empty, "") || intern(&R_version, "version is not 1") ||
            intern(&R_counts, "invalid counts") ||
            intern(&R_sequence, "invalid or non-increasing sequence") ||
            intern(&R_result, "result is not a bounded JSON value") ||
            intern(&R_args, "args is not a bounded JSON value")) {
            return NULL;
        }
    }
    module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
