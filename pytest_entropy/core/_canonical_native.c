/*
 * The compact JSON writers of pytest_entropy/core/canonical.py, native.
 *
 * write(value, canonical, order_keys, orders) returns the UTF-8 bytes of
 * canonical.canonical_json(value) (canonical true) or canonical.js_stringify(value)
 * (canonical false), or NotImplemented for anything outside the kernel's exact domain,
 * after which the caller runs the Python writers (which raise what they raise).
 *
 * The domain: exact dicts with exact str keys, exact lists and tuples, exact strs, None,
 * True, False, exact ints and exact floats, nested at most MAX_DEPTH containers deep (so a
 * cycle, which the Python writers report, comes back as NotImplemented too). An int beyond
 * +-2**53 is written as its float (JavaScript has only doubles); one too large for a float
 * is handed back. Non-finite floats are "null", -0.0 is "0".
 *
 * Key order is the Python's: order_keys(keys) is called with the tuple of a dict's keys
 * (insertion order) whenever the order may differ from insertion order (canonical: any dict
 * of two keys or more, ICU collation with array-index keys first; own order: a key that
 * begins with an ASCII digit, i.e. may be an array index) and returns the keys in writing
 * order; ``orders`` (an exact dict, or None) holds orders already known, keys tuple ->
 * ordered keys, looked up first (the Python fills it, order_keys being a pure function). Strings are escaped as JSON.stringify does: the quote, the backslash, \b \f \n \r
 * \t, other controls as lowercase \u00xx, a lone surrogate as lowercase \udxxx, and a
 * high+low surrogate pair written as the one astral character it encodes (the Python's
 * _escape_surrogates). Numbers are JavaScript's Number::toString of the shortest
 * round-trip digits (Python's repr digits), as jscompat._float_text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

/* Containers nested deeper than this go back to the Python writers. */
#define MAX_DEPTH 400
#define TWO_53 9007199254740992LL

/* Return codes of the writers: done, a Python exception is set, outside the domain. */
#define WRITE_DONE 0
#define WRITE_ERROR (-1)
#define WRITE_FOREIGN 1

typedef struct {
    char *data;
    Py_ssize_t size;
    Py_ssize_t capacity;
} Buffer;

static int
buffer_reserve(Buffer *b, Py_ssize_t extra)
{
    Py_ssize_t need = b->size + extra;
    Py_ssize_t capacity;
    char *grown;
    if (need <= b->capacity) {
        return 0;
    }
    capacity = b->capacity ? b->capacity : 256;
    while (capacity < need) {
        if (capacity > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        capacity *= 2;
    }
    grown = (char *)PyMem_Realloc(b->data, (size_t)capacity);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = grown;
    b->capacity = capacity;
    return 0;
}

static inline int
buffer_put(Buffer *b, const char *text, Py_ssize_t n)
{
    if (b->size + n > b->capacity && buffer_reserve(b, n) < 0) {
        return -1;
    }
    memcpy(b->data + b->size, text, (size_t)n);
    b->size += n;
    return 0;
}

static inline int
buffer_char(Buffer *b, char c)
{
    if (b->size + 1 > b->capacity && buffer_reserve(b, 1) < 0) {
        return -1;
    }
    b->data[b->size++] = c;
    return 0;
}

/* ------------------------------------------------------------------------------ strings */

static const char HEX[] = "0123456789abcdef";

/* 1 when the ASCII byte must be escaped in a JSON string. */
static inline int
ascii_needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

static inline char *
put_escape(char *out, Py_UCS4 c)
{
    *out++ = '\\';
    switch (c) {
    case '"':
        *out++ = '"';
        break;
    case '\\':
        *out++ = '\\';
        break;
    case '\b':
        *out++ = 'b';
        break;
    case '\f':
        *out++ = 'f';
        break;
    case '\n':
        *out++ = 'n';
        break;
    case '\r':
        *out++ = 'r';
        break;
    case '\t':
        *out++ = 't';
        break;
    default:
        /* other controls and lone surrogates: lowercase \uxxxx */
        *out++ = 'u';
        *out++ = HEX[(c >> 12) & 0xF];
        *out++ = HEX[(c >> 8) & 0xF];
        *out++ = HEX[(c >> 4) & 0xF];
        *out++ = HEX[c & 0xF];
        break;
    }
    return out;
}

static inline char *
put_utf8(char *out, Py_UCS4 c)
{
    if (c < 0x80) {
        *out++ = (char)c;
    }
    else if (c < 0x800) {
        *out++ = (char)(0xC0 | (c >> 6));
        *out++ = (char)(0x80 | (c & 0x3F));
    }
    else if (c < 0x10000) {
        *out++ = (char)(0xE0 | (c >> 12));
        *out++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *out++ = (char)(0x80 | (c & 0x3F));
    }
    else {
        *out++ = (char)(0xF0 | (c >> 18));
        *out++ = (char)(0x80 | ((c >> 12) & 0x3F));
        *out++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *out++ = (char)(0x80 | (c & 0x3F));
    }
    return out;
}

/* The JSON string literal of an exact str, as canonical.json_string writes it. */
static int
write_string(Buffer *b, PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    Py_ssize_t i;
    char *out;
    if (PyUnicode_IS_ASCII(s)) {
        const unsigned char *data = (const unsigned char *)PyUnicode_DATA(s);
        Py_ssize_t start = 0;
        /* at most 6 bytes per character (\u00xx) and the quotes */
        if (buffer_reserve(b, 2) < 0) {
            return -1;
        }
        b->data[b->size++] = '"';
        for (i = 0; i < n; i++) {
            if (ascii_needs_escape(data[i])) {
                if (buffer_put(b, (const char *)data + start, i - start) < 0
                    || buffer_reserve(b, 6) < 0) {
                    return -1;
                }
                out = put_escape(b->data + b->size, data[i]);
                b->size = out - b->data;
                start = i + 1;
            }
        }
        if (buffer_put(b, (const char *)data + start, n - start) < 0) {
            return -1;
        }
        return buffer_char(b, '"');
    }
    else {
        int kind = PyUnicode_KIND(s);
        const void *data = PyUnicode_DATA(s);
        if (n > (PY_SSIZE_T_MAX - 2) / 6 || buffer_reserve(b, n * 6 + 2) < 0) {
            if (!PyErr_Occurred()) {
                PyErr_NoMemory();
            }
            return -1;
        }
        out = b->data + b->size;
        *out++ = '"';
        for (i = 0; i < n; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c < 0x80) {
                if (ascii_needs_escape((unsigned char)c)) {
                    out = put_escape(out, c);
                }
                else {
                    *out++ = (char)c;
                }
            }
            else if (c >= 0xD800 && c <= 0xDFFF) {
                if (c <= 0xDBFF && i + 1 < n) {
                    Py_UCS4 low = PyUnicode_READ(kind, data, i + 1);
                    if (low >= 0xDC00 && low <= 0xDFFF) {
                        out = put_utf8(out, 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00));
                        i++;
                        continue;
                    }
                }
                out = put_escape(out, c);
            }
            else {
                out = put_utf8(out, c);
            }
        }
        *out++ = '"';
        b->size = out - b->data;
        return 0;
    }
}

/* ------------------------------------------------------------------------------ numbers */

/* JavaScript's Number::toString of a finite double (jscompat._float_text). */
static int
write_double(Buffer *b, double x)
{
    char digits[32];
    char text[64];
    char *repr;
    const char *p;
    Py_ssize_t k = 0;
    long exponent = 0;
    long int_length = 0;
    long leading = 0;
    int seen_nonzero = 0;
    int in_fraction = 0;
    long n;
    char *out = text;
    long i;

    if (x == 0.0) {
        return buffer_char(b, '0');
    }
    if (x < 0) {
        *out++ = '-';
        x = -x;
    }
    repr = PyOS_double_to_string(x, 'r', 0, 0, NULL);
    if (repr == NULL) {
        return -1;
    }
    /* repr: digits, an optional '.', digits, an optional 'e' and a signed exponent */
    for (p = repr; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.') {
            in_fraction = 1;
            continue;
        }
        if (*p < '0' || *p > '9') {
            PyMem_Free(repr);
            PyErr_SetString(PyExc_SystemError, "unexpected float repr");
            return -1;
        }
        if (!in_fraction) {
            int_length++;
        }
        if (!seen_nonzero && *p == '0') {
            leading++;
            continue;
        }
        seen_nonzero = 1;
        if (k >= (Py_ssize_t)sizeof(digits)) {
            PyMem_Free(repr);
            PyErr_SetString(PyExc_SystemError, "unexpected float repr");
            return -1;
        }
        digits[k++] = *p;
    }
    if (*p == 'e' || *p == 'E') {
        exponent = strtol(p + 1, NULL, 10);
    }
    PyMem_Free(repr);
    while (k > 1 && digits[k - 1] == '0') {
        k--;
    }
    if (k == 0) { /* not reached: x != 0 */
        digits[k++] = '0';
    }
    n = int_length + exponent - leading;
    if (k <= n && n <= 21) {
        memcpy(out, digits, (size_t)k);
        out += k;
        for (i = k; i < n; i++) {
            *out++ = '0';
        }
    }
    else if (0 < n && n <= 21) {
        memcpy(out, digits, (size_t)n);
        out += n;
        *out++ = '.';
        memcpy(out, digits + n, (size_t)(k - n));
        out += k - n;
    }
    else if (-6 < n && n <= 0) {
        *out++ = '0';
        *out++ = '.';
        for (i = 0; i < -n; i++) {
            *out++ = '0';
        }
        memcpy(out, digits, (size_t)k);
        out += k;
    }
    else {
        long e = n - 1;
        *out++ = digits[0];
        if (k > 1) {
            *out++ = '.';
            memcpy(out, digits + 1, (size_t)(k - 1));
            out += k - 1;
        }
        out += sprintf(out, "e%c%ld", e >= 0 ? '+' : '-', e >= 0 ? e : -e);
    }
    return buffer_put(b, text, out - text);
}

/* An exact int: its decimal digits within +-2**53, else its float's text (null beyond the
 * double range). */
static int
write_int(Buffer *b, PyObject *value)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    double d;
    if (v == -1 && PyErr_Occurred()) {
        return WRITE_ERROR;
    }
    if (!overflow && v >= -TWO_53 && v <= TWO_53) {
        char text[32];
        int written = snprintf(text, sizeof(text), "%lld", v);
        return buffer_put(b, text, written) < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    d = PyLong_AsDouble(value);
    if (d == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            /* Beyond the double range: JavaScript reads it as +-Infinity, which JSON writes
             * as null (canonical._number_text). */
            PyErr_Clear();
            return buffer_put(b, "null", 4) < 0 ? WRITE_ERROR : WRITE_DONE;
        }
        return WRITE_ERROR;
    }
    return write_double(b, d) < 0 ? WRITE_ERROR : WRITE_DONE;
}

/* ---------------------------------------------------------------------------- containers */

typedef struct {
    Buffer out;
    int canonical;
    PyObject *order_keys;
    PyObject *orders; /* an exact dict or NULL */
} Writer;

static int write_value(Writer *w, PyObject *value, int depth);

static int
write_member(Writer *w, PyObject *key, PyObject *value, int first, int depth)
{
    int done;
    if (buffer_char(&w->out, first ? '{' : ',') < 0 || write_string(&w->out, key) < 0
        || buffer_char(&w->out, ':') < 0) {
        return WRITE_ERROR;
    }
    Py_INCREF(value);
    done = write_value(w, value, depth + 1);
    Py_DECREF(value);
    return done;
}

static int
write_dict(Writer *w, PyObject *dict, int depth)
{
    Py_ssize_t size = PyDict_GET_SIZE(dict);
    Py_ssize_t pos = 0;
    Py_ssize_t i;
    PyObject *key;
    PyObject *value;
    PyObject *keys;
    PyObject *ordered;
    PyObject *fast;
    int reorder = 0;
    int done = WRITE_DONE;

    if (size == 0) {
        return buffer_put(&w->out, "{}", 2) < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            return WRITE_FOREIGN;
        }
        if (!w->canonical && PyUnicode_GET_LENGTH(key) > 0) {
            Py_UCS4 first = PyUnicode_READ_CHAR(key, 0);
            if (first >= '0' && first <= '9') {
                reorder = 1;
            }
        }
    }
    if (w->canonical && size > 1) {
        reorder = 1;
    }
    if (!reorder) {
        int first = 1;
        pos = 0;
        while (PyDict_Next(dict, &pos, &key, &value)) {
            done = write_member(w, key, value, first, depth);
            if (done != WRITE_DONE) {
                return done;
            }
            first = 0;
        }
        return buffer_char(&w->out, '}') < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    keys = PyTuple_New(size);
    if (keys == NULL) {
        return WRITE_ERROR;
    }
    pos = 0;
    i = 0;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (i >= size) {
            Py_DECREF(keys);
            return WRITE_FOREIGN;
        }
        Py_INCREF(key);
        PyTuple_SET_ITEM(keys, i, key);
        i++;
    }
    if (i != size) {
        Py_DECREF(keys);
        return WRITE_FOREIGN;
    }
    ordered = NULL;
    if (w->orders != NULL) {
        ordered = PyDict_GetItemWithError(w->orders, keys);
        if (ordered == NULL && PyErr_Occurred()) {
            Py_DECREF(keys);
            return WRITE_ERROR;
        }
        Py_XINCREF(ordered);
    }
    if (ordered == NULL) {
        ordered = PyObject_CallOneArg(w->order_keys, keys);
    }
    Py_DECREF(keys);
    if (ordered == NULL) {
        return WRITE_ERROR;
    }
    if (!PyList_CheckExact(ordered) && !PyTuple_CheckExact(ordered)) {
        Py_DECREF(ordered);
        return WRITE_FOREIGN;
    }
    fast = ordered; /* an exact list or tuple: PySequence_Fast_* reads either */
    if (PySequence_Fast_GET_SIZE(fast) != size) {
        Py_DECREF(ordered);
        return WRITE_FOREIGN;
    }
    for (i = 0; i < size; i++) {
        key = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyUnicode_CheckExact(key)) {
            done = WRITE_FOREIGN;
            break;
        }
        value = PyDict_GetItemWithError(dict, key);
        if (value == NULL) {
            done = PyErr_Occurred() ? WRITE_ERROR : WRITE_FOREIGN;
            break;
        }
        done = write_member(w, key, value, i == 0, depth);
        if (done != WRITE_DONE) {
            break;
        }
    }
    Py_DECREF(ordered);
    if (done != WRITE_DONE) {
        return done;
    }
    return buffer_char(&w->out, '}') < 0 ? WRITE_ERROR : WRITE_DONE;
}

static int
write_array(Writer *w, PyObject *items, int depth)
{
    Py_ssize_t i;
    if (PySequence_Fast_GET_SIZE(items) == 0) {
        return buffer_put(&w->out, "[]", 2) < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    /* a list may change size while a callback runs: read its size each time */
    for (i = 0; i < PySequence_Fast_GET_SIZE(items); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);
        int done;
        if (buffer_char(&w->out, i ? ',' : '[') < 0) {
            return WRITE_ERROR;
        }
        Py_INCREF(item);
        done = write_value(w, item, depth + 1);
        Py_DECREF(item);
        if (done != WRITE_DONE) {
            return done;
        }
    }
    return buffer_char(&w->out, ']') < 0 ? WRITE_ERROR : WRITE_DONE;
}

static int
write_value(Writer *w, PyObject *value, int depth)
{
    if (PyUnicode_CheckExact(value)) {
        return write_string(&w->out, value) < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    if (PyDict_CheckExact(value)) {
        if (depth >= MAX_DEPTH) {
            return WRITE_FOREIGN;
        }
        return write_dict(w, value, depth);
    }
    if (PyList_CheckExact(value) || PyTuple_CheckExact(value)) {
        if (depth >= MAX_DEPTH) {
            return WRITE_FOREIGN;
        }
        return write_array(w, value, depth);
    }
    if (value == Py_None) {
        return buffer_put(&w->out, "null", 4) < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    if (value == Py_True) {
        return buffer_put(&w->out, "true", 4) < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    if (value == Py_False) {
        return buffer_put(&w->out, "false", 5) < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    if (PyLong_CheckExact(value)) {
        return write_int(&w->out, value);
    }
    if (PyFloat_CheckExact(value)) {
        double x = PyFloat_AS_DOUBLE(value);
        if (!isfinite(x)) {
            return buffer_put(&w->out, "null", 4) < 0 ? WRITE_ERROR : WRITE_DONE;
        }
        return write_double(&w->out, x) < 0 ? WRITE_ERROR : WRITE_DONE;
    }
    return WRITE_FOREIGN;
}

static PyObject *
canonical_write(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Writer w;
    int done;
    PyObject *result;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "write(value, canonical, order_keys, orders) takes 4 arguments");
        return NULL;
    }
    if (args[3] != Py_None && !PyDict_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "orders must be a dict or None");
        return NULL;
    }
    w.orders = args[3] == Py_None ? NULL : args[3];
    w.canonical = PyObject_IsTrue(args[1]);
    if (w.canonical < 0) {
        return NULL;
    }
    if (!PyCallable_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "order_keys must be callable");
        return NULL;
    }
    w.order_keys = args[2];
    w.out.data = NULL;
    w.out.size = 0;
    w.out.capacity = 0;
    done = write_value(&w, args[0], 0);
    if (done == WRITE_DONE) {
        result = PyBytes_FromStringAndSize(w.out.data ? w.out.data : "", w.out.size);
    }
    else if (done == WRITE_FOREIGN) {
        result = Py_NewRef(Py_NotImplemented);
    }
    else {
        result = NULL;
    }
    PyMem_Free(w.out.data);
    return result;
}

/* json_copy: exact dicts and lists copied, anything else shared, as the Python does. */
static PyObject *
copy_value(PyObject *value, int depth, int *foreign)
{
    PyObject *copy;
    if (!PyDict_CheckExact(value) && !PyList_CheckExact(value)) {
        return Py_NewRef(value);
    }
    if (depth >= MAX_DEPTH) {
        *foreign = 1;
        return NULL;
    }
    if (PyDict_CheckExact(value)) {
        Py_ssize_t pos = 0;
        PyObject *key;
        PyObject *item;
        copy = PyDict_New();
        if (copy == NULL) {
            return NULL;
        }
        while (PyDict_Next(value, &pos, &key, &item)) {
            PyObject *child;
            int failed;
            Py_INCREF(key);
            Py_INCREF(item);
            child = copy_value(item, depth + 1, foreign);
            Py_DECREF(item);
            failed = child == NULL || PyDict_SetItem(copy, key, child) < 0;
            Py_DECREF(key);
            Py_XDECREF(child);
            if (failed) {
                Py_DECREF(copy);
                return NULL;
            }
        }
        return copy;
    }
    copy = PyList_New(0);
    if (copy == NULL) {
        return NULL;
    }
    {
        Py_ssize_t i;
        for (i = 0; i < PyList_GET_SIZE(value); i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            PyObject *child;
            int failed;
            Py_INCREF(item);
            child = copy_value(item, depth + 1, foreign);
            Py_DECREF(item);
            failed = child == NULL || PyList_Append(copy, child) < 0;
            Py_XDECREF(child);
            if (failed) {
                Py_DECREF(copy);
                return NULL;
            }
        }
    }
    return copy;
}

static PyObject *
canonical_copy(PyObject *module, PyObject *value)
{
    int foreign = 0;
    PyObject *copy = copy_value(value, 0, &foreign);
    if (copy == NULL && foreign && !PyErr_Occurred()) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return copy;
}

/* float_text(x): jscompat._float_text of a finite float (tests compare the two). */
static PyObject *
canonical_float_text(PyObject *module, PyObject *arg)
{
    Buffer b = {NULL, 0, 0};
    PyObject *result;
    double x;
    if (!PyFloat_CheckExact(arg)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    x = PyFloat_AS_DOUBLE(arg);
    if (!isfinite(x)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (write_double(&b, x) < 0) {
        PyMem_Free(b.data);
        return NULL;
    }
    result = PyUnicode_DecodeASCII(b.data, b.size, NULL);
    PyMem_Free(b.data);
    return result;
}

static PyMethodDef canonical_methods[] = {
    {"write", (PyCFunction)(void (*)(void))canonical_write, METH_FASTCALL,
     "write(value, canonical, order_keys, orders): the UTF-8 bytes of canonical_json(value)\n"
     "(canonical "
     "true) or js_stringify(value); NotImplemented for a value outside the kernel's domain."},
    {"copy", (PyCFunction)canonical_copy, METH_O,
     "copy(value): canonical.json_copy(value); NotImplemented past the kernel's depth bound."},
    {"float_text", (PyCFunction)canonical_float_text, METH_O,
     "float_text(x): JavaScript's String(x) of a finite float; NotImplemented otherwise."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef canonical_module = {
    PyModuleDef_HEAD_INIT,
    "pytest_entropy.core._canonical_native",
    "The native kernel of canonical.py's compact writers (pytest_entropy/core/_canonical_native.c).",
    0,
    canonical_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__canonical_native(void)
{
    PyObject *module = PyModule_Create(&canonical_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
