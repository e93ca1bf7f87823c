/*
 * The trace guard's value checks and the shape signature in C, with exactly the results of
 * their Python twins: struct_guard (ingest/native_decode.py), signed_args and value_floats
 * (ingest/argtree.py), shape_signature (core/fingerprint.py). The Python stays the
 * specification and the fallback: whatever lies outside the exact domain handled here (a
 * foreign or subclassed type where the Python looks at behaviour, a non-finite count the
 * Python raises on, a dictionary key that is not an exact str) makes a function return
 * NotImplemented, and the caller runs the Python twin on the same input.
 *
 * Shape signature (spec 2.3): the first 32 keys in UTF-16 code-unit order (the Python sorts
 * by code point, then stably by code_unit_key: code-unit order, code-point order between
 * keys of equal code units), "key:tag" joined by ",", "\u2026+N" for the keys left out,
 * dictionaries expanded down to depth 3 and "obj" below. No Python code runs while a tree
 * is walked (exact types only), so its containers cannot change and items can be borrowed.
 *
 * Two shortcuts keep the per-operation cost low: the fields of the decoder's exact Structs
 * are read from their slots (getattr for anything else), and a signature whose keys are
 * all one-byte strings, at most 32 per dictionary, is written into one buffer in a single
 * pass that also tells whether the tree is flat (the general writer below decides every
 * other tree from scratch). tests/property/test_guard_native_fast.py covers both.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
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
static PyObject *P_empty_args, *P_empty;
static PyObject *R_version, *R_counts, *R_sequence, *R_result, *R_args;

/* The decoder's Struct types (native_decode) and where their fields live in an instance
 * (-1: read through getattr), imported by module init. A field of an exact instance is
 * read from its slot; anything else (a subclass, a foreign object, a deleted field) goes
 * through getattr as the Python's attribute read does. */
static PyTypeObject *TRACE_TYPE, *OPERATION_TYPE, *COUNTS_TYPE;
static Py_ssize_t O_version, O_counts, O_operations, O_sequence, O_result, O_args;
static Py_ssize_t O_failureStage, O_ref, O_outcome, O_count_fields[4];

/* An exact int JavaScript reads as a finite double: within the double range (PyLong_AsDouble
 * raises OverflowError exactly where float() does, at 2**1024 - 2**970 and beyond, the
 * integers JavaScript reads as Infinity). argtree.INT_OVERFLOW in the Python. */
static inline int long_is_finite(PyObject *value) {
    int overflow = 0;
    double d;
    (void)PyLong_AsLongLongAndOverflow(value, &overflow);
    if (!overflow) return 1;
    d = PyLong_AsDouble(value);
    if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear(); /* only OverflowError can come from an exact int */
        return 0;
    }
    return 1;
}

/* A scalar of a JSON value tree: a string, a boolean, null or a finite int. */
#define IS_SCALAR(t, v)                                                              \
    ((t) == &PyUnicode_Type || (t) == &PyBool_Type || (v) == Py_None ||              \
     ((t) == &PyLong_Type && long_is_finite(v)))

/* ---------------------------------------------------------------- argument trees */

static Py_ssize_t tree_floats(PyObject *container, int depth);

/* One value inside a tree at ``depth``: its floats, or -1 when it is not a JSON value. */
static Py_ssize_t value_step(PyObject *value, int depth) {
    PyTypeObject *t = Py_TYPE(value);
    if (IS_SCALAR(t, value)) return 0;
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(value);
        return (d - d != 0.0) ? -1 : 1; /* NaN or an infinity */
    }
    if (t == &PyDict_Type || t == &PyList_Type) {
        Py_ssize_t size = t == &PyDict_Type ? PyDict_GET_SIZE(value) : PyList_GET_SIZE(value);
        if (size) return tree_floats(value, depth + 1);
        return depth + 1 > MAX_ARGS_DEPTH ? -1 : 0;
    }
    return -1;
}

/* argtree._tree_floats of an exact dict or list. */
static Py_ssize_t tree_floats(PyObject *container, int depth) {
    Py_ssize_t floats = 0, inner, i, n;
    if (depth > MAX_ARGS_DEPTH) return -1;
    if (PyDict_CheckExact(container)) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(container, &pos, &key, &value)) {
            if ((inner = value_step(value, depth)) < 0) return -1;
            floats += inner;
        }
        return floats;
    }
    n = PyList_GET_SIZE(container);
    for (i = 0; i < n; i++) {
        if ((inner = value_step(PyList_GET_ITEM(container, i), depth)) < 0) return -1;
        floats += inner;
    }
    return floats;
}

/* argtree.value_floats */
static Py_ssize_t value_floats_of(PyObject *value) {
    PyTypeObject *t = Py_TYPE(value);
    if (t == &PyDict_Type || t == &PyList_Type) return tree_floats(value, 0);
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(value);
        return (d - d == 0.0) ? 1 : -1;
    }
    return IS_SCALAR(t, value) ? 0 : -1;
}

/* ------------------------------------------------------------------ key order */

static int compare_code_points(PyObject *a, PyObject *b) {
    Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
    Py_ssize_t n = la < lb ? la : lb, i;
    int ka = PyUnicode_KIND(a), kb = PyUnicode_KIND(b);
    const void *da = PyUnicode_DATA(a), *db = PyUnicode_DATA(b);
    if (ka == PyUnicode_1BYTE_KIND && kb == PyUnicode_1BYTE_KIND) {
        int r = n ? memcmp(da, db, (size_t)n) : 0;
        if (r) return r < 0 ? -1 : 1;
    } else {
        for (i = 0; i < n; i++) {
            Py_UCS4 ca = PyUnicode_READ(ka, da, i), cb = PyUnicode_READ(kb, db, i);
            if (ca != cb) return ca < cb ? -1 : 1;
        }
    }
    return la < lb ? -1 : (la > lb ? 1 : 0);
}

/* A string's UTF-16 code units from code point ``index`` on, one at a time. */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t index, length;
    Py_UCS4 pending; /* a low surrogate still to come, or 0 */
} Units;

static int next_unit(Units *u, Py_UCS4 *unit) {
    Py_UCS4 cp;
    if (u->pending) {
        *unit = u->pending;
        u->pending = 0;
    } else if (u->index >= u->length) {
        return 0;
    } else if ((cp = PyUnicode_READ(u->kind, u->data, u->index++)) > 0xFFFF) {
        *unit = 0xD800 + ((cp - 0x10000) >> 10);
        u->pending = 0xDC00 + ((cp - 0x10000) & 0x3FF);
    } else {
        *unit = cp;
    }
    return 1;
}

/* JavaScript's code-unit order (jscompat.code_unit_key); 0 for equal code units. */
static int compare_code_units(PyObject *a, PyObject *b) {
    int ka = PyUnicode_KIND(a), kb = PyUnicode_KIND(b);
    Py_ssize_t la, lb, n, i;
    const void *da, *db;
    Py_UCS4 ca = 0, cb = 0;
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
        if (ca != cb) break;
    }
    if (i == n) return la < lb ? -1 : (la > lb ? 1 : 0);
    if ((ca > 0xFFFF) == (cb > 0xFFFF)) {
        return ca < cb ? -1 : 1; /* both in the BMP or both astral: the same order */
    }
    {
        /* An astral character against a BMP one: compare the code units from here on. */
        Units ua = {ka, da, i, la, 0}, ub = {kb, db, i, lb, 0};
        for (;;) {
            Py_UCS4 xa = 0, xb = 0;
            int more_a = next_unit(&ua, &xa), more_b = next_unit(&ub, &xb);
            if (!more_a || !more_b) return more_a == more_b ? 0 : (more_a ? 1 : -1);
            if (xa != xb) return xa < xb ? -1 : 1;
        }
    }
}

static int compare_keys(PyObject *a, PyObject *b) {
    int r = compare_code_units(a, b);
    return r ? r : compare_code_points(a, b);
}

typedef struct {
    PyObject *key, *value;
} Item;

static int compare_items(const void *x, const void *y) {
    return compare_keys(((const Item *)x)->key, ((const Item *)y)->key);
}

/* Distinct keys are never equal under compare_keys, so any sort gives the Python's order. */
static void sort_items(Item *items, Py_ssize_t n) {
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

/* The signature's pieces, borrowed (interned constants and dictionary keys, which outlive
 * the call) except those also held by ``owned``, joined once at the end. */
typedef struct {
    PyObject **items;
    Py_ssize_t length, capacity;
    PyObject *owned; /* a list, or NULL */
    PyObject *inline_items[128];
} Pieces;

static int push(Pieces *p, PyObject *piece) {
    if (p->length == p->capacity) {
        Py_ssize_t capacity = p->capacity * 2;
        PyObject **items = PyMem_Malloc((size_t)capacity * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(items, p->items, (size_t)p->length * sizeof(PyObject *));
        if (p->items != p->inline_items) PyMem_Free(p->items);
        p->items = items;
        p->capacity = capacity;
    }
    p->items[p->length++] = piece;
    return 0;
}

/* Steals the reference to ``piece`` (which may be NULL: an error already set). */
static int push_owned(Pieces *p, PyObject *piece) {
    int r;
    if (piece == NULL) return -1;
    if (p->owned == NULL && (p->owned = PyList_New(0)) == NULL) {
        Py_DECREF(piece);
        return -1;
    }
    r = PyList_Append(p->owned, piece);
    Py_DECREF(piece);
    return r < 0 ? -1 : push(p, piece);
}

static PyObject *pieces_join(Pieces *p) {
    Py_ssize_t total = 0, i, at = 0;
    Py_UCS4 maxchar = 127;
    PyObject *out;
    int kind;
    char *data;
    for (i = 0; i < p->length; i++) {
        Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(p->items[i]);
        total += PyUnicode_GET_LENGTH(p->items[i]);
        if (m > maxchar) maxchar = m;
    }
    if ((out = PyUnicode_New(total, maxchar)) == NULL) return NULL;
    kind = PyUnicode_KIND(out);
    data = PyUnicode_DATA(out);
    for (i = 0; i < p->length; i++) {
        PyObject *piece = p->items[i];
        Py_ssize_t n = PyUnicode_GET_LENGTH(piece);
        if (PyUnicode_KIND(piece) == kind) {
            memcpy(data + at * kind, PyUnicode_DATA(piece), (size_t)(n * kind));
        } else if (PyUnicode_CopyCharacters(out, at, piece, 0, n) < 0) {
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
static int tag(Pieces *p, PyObject *value, int depth) {
    PyTypeObject *t = Py_TYPE(value);
    int r;
    if (value == Py_None) return push(p, T_null);
    if (t == &PyUnicode_Type) return push(p, T_str);
    if (t == &PyBool_Type) return push(p, T_bool);
    if (t == &PyLong_Type || t == &PyFloat_Type) return push(p, T_num);
    if (t == &PyList_Type) return push(p, T_arr);
    if (t != &PyDict_Type) return FIELDS_FOREIGN;
    if (depth >= SIGNATURE_MAX_DEPTH) return push(p, T_obj);
    if (push(p, P_brace_open) < 0) return FIELDS_ERROR;
    if ((r = fields(p, value, depth + 1)) != FIELDS_OK) return r;
    return push(p, P_brace_close);
}

/* fingerprint._fields: the first 32 keys in code-unit order, children tagged at ``child``. */
static int fields(Pieces *p, PyObject *obj, int child) {
    Item inline_items[SIGNATURE_MAX_KEYS];
    Item *items = inline_items;
    Py_ssize_t n = PyDict_GET_SIZE(obj), i = 0, pos = 0, shown;
    PyObject *key, *value;
    int r = FIELDS_OK;
    if (n > SIGNATURE_MAX_KEYS && (items = PyMem_Malloc((size_t)n * sizeof(Item))) == NULL) {
        PyErr_NoMemory();
        return FIELDS_ERROR;
    }
    while (PyDict_Next(obj, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            r = FIELDS_FOREIGN;
            goto done;
        }
        items[i].key = key;
        items[i++].value = value;
    }
    sort_items(items, n);
    shown = n < SIGNATURE_MAX_KEYS ? n : SIGNATURE_MAX_KEYS;
    for (i = 0; i < shown; i++) {
        if ((i && push(p, P_comma) < 0) || push(p, items[i].key) < 0 || push(p, P_colon) < 0) {
            r = FIELDS_ERROR;
            goto done;
        }
        if ((r = tag(p, items[i].value, child)) != FIELDS_OK) goto done;
    }
    if (n > SIGNATURE_MAX_KEYS &&
        (push(p, P_comma) < 0 ||
         push_owned(p, PyUnicode_FromFormat("%c+%zd", 0x2026, n - SIGNATURE_MAX_KEYS)) < 0)) {
        r = FIELDS_ERROR;
    }
done:
    if (items != inline_items) PyMem_Free(items);
    return r;
}

/* shape_signature of an exact, non-empty dict: a new str, a new reference to
 * Py_NotImplemented outside the exact domain, NULL with an exception. */
static PyObject *signature_of(PyObject *args) {
    Pieces p;
    PyObject *out = NULL;
    int r;
    p.items = p.inline_items;
    p.length = 0;
    p.capacity = 128;
    p.owned = NULL;
    if (push(&p, P_open) < 0) goto done;
    r = fields(&p, args, 1);
    if (r == FIELDS_FOREIGN) {
        out = Py_NewRef(Py_NotImplemented);
    } else if (r == FIELDS_OK && push(&p, P_close) == 0) {
        out = pieces_join(&p);
    }
done:
    if (p.items != p.inline_items) PyMem_Free(p.items);
    Py_XDECREF(p.owned);
    return out;
}

/* ------------------------------------------------- the one-byte signature writer */

/* The common case written straight into one buffer: every dictionary on the way has at
 * most 32 keys (no "\u2026+N" piece) and every key is an exact str of one-byte kind (the
 * signature is then ASCII or Latin-1, and code-unit order is byte order). Anything else
 * answers FAST_OTHER and signature_of, the general writer, decides from scratch. */

#define FAST_OK 0
#define FAST_ERROR (-1)
#define FAST_OTHER 1

typedef struct {
    char *data;
    Py_ssize_t length, capacity;
    int latin1; /* a key holds a character beyond ASCII */
    char inline_data[256];
} Text;

static int text_grow(Text *t, Py_ssize_t more) {
    Py_ssize_t capacity = t->capacity;
    char *data;
    while (capacity - t->length < more) capacity *= 2;
    if ((data = PyMem_Malloc((size_t)capacity)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(data, t->data, (size_t)t->length);
    if (t->data != t->inline_data) PyMem_Free(t->data);
    t->data = data;
    t->capacity = capacity;
    return 0;
}

static inline int text_put(Text *t, const char *bytes, Py_ssize_t n) {
    if (t->capacity - t->length < n && text_grow(t, n) < 0) return -1;
    memcpy(t->data + t->length, bytes, (size_t)n);
    t->length += n;
    return 0;
}

static inline int text_char(Text *t, char c) {
    if (t->capacity == t->length && text_grow(t, 1) < 0) return -1;
    t->data[t->length++] = c;
    return 0;
}

/* Byte order of two one-byte keys (code-point and code-unit order alike). */
static inline int compare_bytes(PyObject *a, PyObject *b) {
    Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
    int r = memcmp(PyUnicode_1BYTE_DATA(a), PyUnicode_1BYTE_DATA(b), (size_t)(la < lb ? la : lb));
    return r ? r : (la < lb ? -1 : (la > lb ? 1 : 0));
}

static int fast_fields(Text *t, PyObject *obj, int child, int *flat);

/* tag() into the buffer; ``flat`` is cleared for a value that is not a flat scalar. */
static int fast_tag(Text *t, PyObject *value, int depth, int *flat) {
    PyTypeObject *type = Py_TYPE(value);
    int r;
    if (value == Py_None) return text_put(t, "null", 4);
    if (type == &PyUnicode_Type) return text_put(t, "str", 3);
    if (type == &PyBool_Type) return text_put(t, "bool", 4);
    if (type == &PyLong_Type) {
        /* An int beyond the double range is not flat: the tree check refuses it. */
        if (!long_is_finite(value)) *flat = 0;
        return text_put(t, "num", 3);
    }
    *flat = 0;
    if (type == &PyFloat_Type) return text_put(t, "num", 3);
    if (type == &PyList_Type) return text_put(t, "arr", 3);
    if (type != &PyDict_Type) return FAST_OTHER;
    if (depth >= SIGNATURE_MAX_DEPTH) return text_put(t, "obj", 3);
    if (text_char(t, '{') < 0) return FAST_ERROR;
    if ((r = fast_fields(t, value, depth + 1, NULL)) != FAST_OK) return r;
    return text_char(t, '}');
}

/* fields() into the buffer; ``flat`` (top level only, else NULL) as for fast_tag. */
static int fast_fields(Text *t, PyObject *obj, int child, int *flat) {
    Item items[SIGNATURE_MAX_KEYS];
    Py_ssize_t n = PyDict_GET_SIZE(obj), i = 0, j, pos = 0;
    PyObject *key, *value;
    int r, ignored = 1;
    if (n > SIGNATURE_MAX_KEYS) return FAST_OTHER;
    while (PyDict_Next(obj, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || PyUnicode_KIND(key) != PyUnicode_1BYTE_KIND) {
            return FAST_OTHER;
        }
        if (!PyUnicode_IS_ASCII(key)) t->latin1 = 1;
        /* insertion sort as the items come */
        for (j = i; j > 0 && compare_bytes(items[j - 1].key, key) > 0; j--) items[j] = items[j - 1];
        items[j].key = key;
        items[j].value = value;
        i++;
    }
    for (i = 0; i < n; i++) {
        key = items[i].key;
        if ((i && text_char(t, ',') < 0) ||
            text_put(t, (const char *)PyUnicode_1BYTE_DATA(key), PyUnicode_GET_LENGTH(key)) < 0 ||
            text_char(t, ':') < 0) {
            return FAST_ERROR;
        }
        r = fast_tag(t, items[i].value, child, flat == NULL ? &ignored : flat);
        if (r != FAST_OK) return r;
    }
    return FAST_OK;
}

/* The signature of a non-empty exact dict in *signature (new) and whether all its values
 * are flat scalars in *flat: FAST_OK, FAST_OTHER (nothing set) or FAST_ERROR. */
static int fast_signature(PyObject *args, PyObject **signature, int *flat) {
    Text t;
    int r;
    t.data = t.inline_data;
    t.length = 0;
    t.capacity = (Py_ssize_t)sizeof(t.inline_data);
    t.latin1 = 0;
    *flat = 1;
    r = text_char(&t, '(');
    if (r == FAST_OK) r = fast_fields(&t, args, 1, flat);
    if (r == FAST_OK) r = text_char(&t, ')');
    if (r == FAST_OK) {
        *signature = PyUnicode_New(t.length, t.latin1 ? 255 : 127);
        if (*signature == NULL) {
            r = FAST_ERROR;
        } else {
            memcpy(PyUnicode_1BYTE_DATA(*signature), t.data, (size_t)t.length);
        }
    }
    if (t.data != t.inline_data) PyMem_Free(t.data);
    return r;
}

#define SIGN_INVALID 0
#define SIGN_OK 1
#define SIGN_FOREIGN 2

/* argtree.signed_args of an exact dict: SIGN_OK with *signature (new) and *floats,
 * SIGN_INVALID, SIGN_FOREIGN, or -1 with an exception. */
static int sign(PyObject *args, PyObject **signature, Py_ssize_t *floats) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int flat = 1, fast;
    *floats = 0;
    if (PyDict_GET_SIZE(args) == 0) {
        *signature = Py_NewRef(P_empty_args);
        return SIGN_OK;
    }
    if ((fast = fast_signature(args, signature, &flat)) == FAST_ERROR) return -1;
    if (fast == FAST_OK) {
        /* Not flat: the Python checks the whole tree (and refuses it) before signing. */
        if (!flat && (*floats = tree_floats(args, 0)) < 0) {
            Py_CLEAR(*signature);
            return SIGN_INVALID;
        }
        return SIGN_OK;
    }
    while (PyDict_Next(args, &pos, &key, &value)) {
        if (!IS_SCALAR(Py_TYPE(value), value)) {
            /* Not flat: the Python checks the whole tree first. */
            if ((*floats = tree_floats(args, 0)) < 0) return SIGN_INVALID;
            break;
        }
    }
    if ((*signature = signature_of(args)) == NULL) return -1;
    if (*signature == Py_NotImplemented) {
        Py_CLEAR(*signature);
        return SIGN_FOREIGN;
    }
    return SIGN_OK;
}

/* ---------------------------------------------------------------- the numbers */

#define NUMBER_INVALID 0
#define NUMBER_VALID 1
#define NUMBER_FOREIGN 2 /* the Python decides (it may raise) */

/* native_decode._safe_count for an exact int or a finite float, the number in *value. */
static inline int safe_count(PyObject *number, long long *value, int *is_float) {
    PyTypeObject *t = Py_TYPE(number);
    if (t == &PyLong_Type) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(number, &overflow);
        if (v == -1 && !overflow && PyErr_Occurred()) {
            PyErr_Clear(); /* not for an exact int; let the Python decide */
            return NUMBER_FOREIGN;
        }
        *is_float = 0;
        if (overflow || v < 0 || v > MAX_SAFE_INTEGER) return NUMBER_INVALID;
        *value = v;
        return NUMBER_VALID;
    }
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(number);
        if (d - d != 0.0) return NUMBER_FOREIGN; /* the Python's int() raises on it */
        *is_float = 1;
        if (d != floor(d) || d < 0.0 || d > (double)MAX_SAFE_INTEGER) return NUMBER_INVALID;
        *value = (long long)d; /* exact: an integral double within 2**53 */
        return NUMBER_VALID;
    }
    return NUMBER_FOREIGN;
}

static PyObject *rejected(PyObject *reason) {
    return Py_BuildValue("([]iO)", 0, reason);
}

/* ------------------------------------------------------------------ the guard */

/* ``owner.<name>`` (a new reference, NULL with an exception). */
static PyObject *field(PyObject *owner, PyTypeObject *type, Py_ssize_t offset, PyObject *name) {
    if (Py_TYPE(owner) == type && offset >= 0) {
        PyObject *value = *(PyObject **)((char *)owner + offset);
        if (value != NULL) return Py_NewRef(value);
    }
    return PyObject_GetAttr(owner, name);
}

#define GET(target, owner, type, offset, name) \
    if ((target = field(owner, type, offset, name)) == NULL) goto error
#define REJECT(reason) \
    do { \
        out = rejected(reason); \
        goto finish; \
    } while (0)

/* native_decode.struct_guard, attribute reads in the Python's order. */
static PyObject *struct_guard(PyObject *module, PyObject *trace) {
    PyObject *version = NULL, *counts = NULL, *values[4] = {NULL, NULL, NULL, NULL};
    PyObject *operations = NULL, *op = NULL, *sequence = NULL, *result = NULL, *args = NULL;
    PyObject *stage = NULL, *ref = NULL, *outcome = NULL, *signature = NULL;
    PyObject *signed_ops = NULL, *out = NULL, *entry;
    PyObject *const count_names[4] = {
        S_droppedValues, S_truncatedValues, S_redactedValues, S_droppedOperations};
    Py_ssize_t floats = 0, i, inner, allocated;
    long long previous = -1, value = 0;
    int is_float = 0, state, k;

    GET(version, trace, TRACE_TYPE, O_version, S_version);
    if (PyLong_CheckExact(version)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(version, &overflow);
        if (v == -1 && !overflow && PyErr_Occurred()) goto error;
        if (overflow || v != 1) REJECT(R_version);
    } else if (PyFloat_CheckExact(version)) {
        if (PyFloat_AS_DOUBLE(version) != 1.0) REJECT(R_version);
        floats = 1;
    } else {
        goto foreign;
    }

    GET(counts, trace, TRACE_TYPE, O_counts, S_counts);
    for (k = 0; k < 4; k++) { /* all, then check */
        GET(values[k], counts, COUNTS_TYPE, O_count_fields[k], count_names[k]);
    }
    for (k = 0; k < 4; k++) {
        state = safe_count(values[k], &value, &is_float);
        if (state == NUMBER_FOREIGN) goto foreign;
        if (state == NUMBER_INVALID) REJECT(R_counts);
        floats += is_float;
    }

    GET(operations, trace, TRACE_TYPE, O_operations, S_operations);
    if (!PyList_CheckExact(operations)) goto foreign;
    /* One slot per operation; the list is only seen once it is full (a getattr of a
     * subclass may run Python code that resizes ``operations``: past the slots it grows by
     * appending, and slots left over are cut off at the end). */
    allocated = PyList_GET_SIZE(operations);
    if ((signed_ops = PyList_New(allocated)) == NULL) goto error;
    for (i = 0; i < PyList_GET_SIZE(operations); i++) {
        op = Py_NewRef(PyList_GET_ITEM(operations, i));
        GET(sequence, op, OPERATION_TYPE, O_sequence, S_sequence);
        state = safe_count(sequence, &value, &is_float);
        if (state == NUMBER_FOREIGN) goto foreign;
        /* An int below 0 is never above ``previous`` (at least -1): the same verdict. */
        if (state == NUMBER_INVALID || value <= previous) REJECT(R_sequence);
        floats += is_float;
        previous = value;
        Py_CLEAR(sequence);
        GET(result, op, OPERATION_TYPE, O_result, S_result);
        if (result != UNSET) {
            if ((inner = value_floats_of(result)) < 0) REJECT(R_result);
            floats += inner;
        }
        Py_CLEAR(result);
        GET(args, op, OPERATION_TYPE, O_args, S_args);
        if (!PyDict_CheckExact(args)) goto foreign;
        state = sign(args, &signature, &inner);
        if (state < 0) goto error;
        if (state == SIGN_FOREIGN) goto foreign;
        if (state == SIGN_INVALID) REJECT(R_args);
        floats += inner;
        GET(stage, op, OPERATION_TYPE, O_failureStage, S_failureStage);
        if (stage == UNSET) { Py_DECREF(stage); stage = Py_NewRef(Py_None); }
        GET(ref, op, OPERATION_TYPE, O_ref, S_ref);
        GET(outcome, op, OPERATION_TYPE, O_outcome, S_outcome);
        if ((entry = PyTuple_New(5)) == NULL) goto error;
        PyTuple_SET_ITEM(entry, 0, ref);
        PyTuple_SET_ITEM(entry, 1, args);
        PyTuple_SET_ITEM(entry, 2, outcome);
        PyTuple_SET_ITEM(entry, 3, stage);
        PyTuple_SET_ITEM(entry, 4, signature);
        ref = args = outcome = stage = signature = NULL;
        if (i < allocated) {
            PyList_SET_ITEM(signed_ops, i, entry);
        } else {
            k = PyList_Append(signed_ops, entry);
            Py_DECREF(entry);
            if (k < 0) goto error;
        }
        Py_CLEAR(op);
    }
    if (i < allocated) Py_SET_SIZE(signed_ops, i); /* the slots past it are still NULL */
    if ((entry = PyLong_FromSsize_t(floats)) == NULL) goto error;
    out = PyTuple_Pack(3, signed_ops, entry, P_empty);
    Py_DECREF(entry);
    goto finish;

foreign:
    out = Py_NewRef(Py_NotImplemented);
    goto finish;
error:
    out = NULL;
finish:
    {
        PyObject *held[] = {values[0], values[1], values[2], values[3], version, counts,
                            operations, op, sequence, result, args, stage, ref, outcome,
                            signature, signed_ops};
        for (k = 0; k < (int)(sizeof(held) / sizeof(held[0])); k++) Py_XDECREF(held[k]);
    }
    return out;
}

/* ------------------------------------------------------------------- the module */

static PyObject *signed_args(PyObject *module, PyObject *args) {
    PyObject *signature = NULL;
    Py_ssize_t floats = 0;
    int state;
    if (!PyDict_CheckExact(args)) Py_RETURN_NOTIMPLEMENTED;
    state = sign(args, &signature, &floats);
    if (state < 0) return NULL;
    if (state == SIGN_INVALID) Py_RETURN_NONE;
    if (state == SIGN_FOREIGN) Py_RETURN_NOTIMPLEMENTED;
    return Py_BuildValue("(Nn)", signature, floats); /* N: the reference is handed over */
}

static PyObject *shape_signature(PyObject *module, PyObject *args) {
    if (!PyDict_CheckExact(args)) Py_RETURN_NOTIMPLEMENTED;
    if (PyDict_GET_SIZE(args) == 0) return Py_NewRef(P_empty_args);
    return signature_of(args);
}

static PyObject *value_floats(PyObject *module, PyObject *value) {
    return PyLong_FromSsize_t(value_floats_of(value));
}

static PyMethodDef methods[] = {
    {"struct_guard", struct_guard, METH_O, "native_decode.struct_guard, or NotImplemented."},
    {"signed_args", signed_args, METH_O, "argtree.signed_args, or NotImplemented."},
    {"shape_signature", shape_signature, METH_O, "shape_signature, or NotImplemented."},
    {"value_floats", value_floats, METH_O, "value_floats(value): argtree.value_floats."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pytest_entropy.ingest._guard_native",
    "The trace guard's value checks and the shape signature (native twin of\n"
    "native_decode.struct_guard, argtree.signed_args and fingerprint.shape_signature).",
    -1, methods,
};

/* The slot of ``type``'s field ``name`` (-1 when it is not a plain object slot), or -2 with
 * an exception. */
static Py_ssize_t slot_of(PyTypeObject *type, PyObject *name) {
    PyObject *descr = PyObject_GetAttr((PyObject *)type, name);
    Py_ssize_t offset = -1;
    if (descr == NULL) return -2;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY)) offset = member->offset;
    }
    Py_DECREF(descr);
    return offset;
}

static PyTypeObject *struct_type(PyObject *module, const char *name) {
    PyObject *type = PyObject_GetAttrString(module, name);
    if (type != NULL && !PyType_Check(type)) {
        PyErr_Format(PyExc_TypeError, "native_decode.%s is not a type", name);
        Py_CLEAR(type);
    }
    return (PyTypeObject *)type;
}

static int init_slots(void) {
    PyObject *decode = PyImport_ImportModule("pytest_entropy.ingest.native_decode");
    PyObject *const count_names[4] = {
        S_droppedValues, S_truncatedValues, S_redactedValues, S_droppedOperations};
    int k;
    if (decode == NULL) return -1;
    TRACE_TYPE = struct_type(decode, "TraceV1");
    OPERATION_TYPE = struct_type(decode, "OperationV1");
    COUNTS_TYPE = struct_type(decode, "CountsV1");
    Py_DECREF(decode);
    if (TRACE_TYPE == NULL || OPERATION_TYPE == NULL || COUNTS_TYPE == NULL) return -1;
    if ((O_version = slot_of(TRACE_TYPE, S_version)) < -1 ||
        (O_counts = slot_of(TRACE_TYPE, S_counts)) < -1 ||
        (O_operations = slot_of(TRACE_TYPE, S_operations)) < -1 ||
        (O_sequence = slot_of(OPERATION_TYPE, S_sequence)) < -1 ||
        (O_result = slot_of(OPERATION_TYPE, S_result)) < -1 ||
        (O_args = slot_of(OPERATION_TYPE, S_args)) < -1 ||
        (O_failureStage = slot_of(OPERATION_TYPE, S_failureStage)) < -1 ||
        (O_ref = slot_of(OPERATION_TYPE, S_ref)) < -1 ||
        (O_outcome = slot_of(OPERATION_TYPE, S_outcome)) < -1) {
        return -1;
    }
    for (k = 0; k < 4; k++) {
        if ((O_count_fields[k] = slot_of(COUNTS_TYPE, count_names[k])) < -1) return -1;
    }
    return 0;
}

static int init_constants(void) {
    static const struct {
        PyObject **slot;
        const char *text;
    } table[] = {
        {&S_version, "version"}, {&S_counts, "counts"},
        {&S_droppedValues, "droppedValues"}, {&S_truncatedValues, "truncatedValues"},
        {&S_redactedValues, "redactedValues"}, {&S_droppedOperations, "droppedOperations"},
        {&S_operations, "operations"}, {&S_sequence, "sequence"}, {&S_result, "result"},
        {&S_args, "args"}, {&S_failureStage, "failureStage"}, {&S_ref, "ref"},
        {&S_outcome, "outcome"}, {&T_str, "str"}, {&T_num, "num"}, {&T_bool, "bool"},
        {&T_null, "null"}, {&T_arr, "arr"}, {&T_obj, "obj"}, {&P_open, "("},
        {&P_close, ")"}, {&P_brace_open, "{"}, {&P_brace_close, "}"}, {&P_colon, ":"},
        {&P_comma, ","}, {&P_empty_args, "()"}, {&P_empty, ""},
        {&R_version, "version is not 1"}, {&R_counts, "invalid counts"},
        {&R_sequence, "invalid or non-increasing sequence"},
        {&R_result, "result is not a bounded JSON value"},
        {&R_args, "args is not a bounded JSON value"},
    };
    size_t i;
    PyObject *msgspec;
    if (UNSET != NULL) return 0; /* initialised by an earlier import */
    for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if ((*table[i].slot = PyUnicode_InternFromString(table[i].text)) == NULL) return -1;
    }
    if ((msgspec = PyImport_ImportModule("msgspec")) == NULL) return -1;
    UNSET = PyObject_GetAttrString(msgspec, "UNSET");
    Py_DECREF(msgspec);
    return UNSET == NULL ? -1 : init_slots();
}

PyMODINIT_FUNC PyInit__guard_native(void) {
    PyObject *module;
    if (init_constants() < 0) return NULL;
    if ((module = PyModule_Create(&module_def)) == NULL) return NULL;
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
