/* The observation pool's native kernel: one session window summarised in C.
 *
 * Window(drop_unloadable, max_value_bytes, fallback) is the twin of
 * pytest_entropy.core.pool_window.WindowTally: add(ref, key, value) hears one observation
 * (weight 1), add_records(list) a list of ValueObservation records, and summary() returns
 * (counts, identities sorted in UTF-16 code-unit order, dropped, oversized). Each observation
 * becomes its identity "ref NUL key NUL typeof:String(value)" (spec 2.7.4) with the
 * reference's JavaScript number text; counts keep first-seen order.
 *
 * The kernel's exact domain: ref and key exact str, value exact str, bool, float or an int
 * within +-2**53. Anything else goes whole to `fallback(ref, key, value)`, the Python
 * code's own answer (identity or None when dropped, oversized flag), so nothing is
 * approximated. sorted_code_units(list of exact str) is the stable code-unit sort alone
 * (NotImplemented for anything else).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

static PyObject *str_ref, *str_key, *str_value, *str_count;

/* ------------------------------------------------------------------ UTF-16 order */

/* JavaScript's < on the strings: code-unit order, an astral character counting as its
 * surrogate pair. Code-point order equals it unless a string holds an astral character. */
static int
compare_units(PyObject *a, PyObject *b)
{
    if (a == b) {
        return 0;
    }
    int ka = PyUnicode_KIND(a), kb = PyUnicode_KIND(b);
    const void *da = PyUnicode_DATA(a), *db = PyUnicode_DATA(b);
    Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
    if (ka == PyUnicode_1BYTE_KIND && kb == PyUnicode_1BYTE_KIND) {
        Py_ssize_t n = la < lb ? la : lb;
        int c = memcmp(da, db, (size_t)n);
        if (c) {
            return c < 0 ? -1 : 1;
        }
        return la < lb ? -1 : (la > lb ? 1 : 0);
    }
    if (ka != PyUnicode_4BYTE_KIND && kb != PyUnicode_4BYTE_KIND) {
        Py_ssize_t n = la < lb ? la : lb;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 ca = PyUnicode_READ(ka, da, i), cb = PyUnicode_READ(kb, db, i);
            if (ca != cb) {
                return ca < cb ? -1 : 1;
            }
        }
        return la < lb ? -1 : (la > lb ? 1 : 0);
    }
    Py_ssize_t i = 0, j = 0;
    Py_UCS4 pending_a = 0, pending_b = 0; /* a low surrogate still to come (never 0) */
    for (;;) {
        Py_UCS4 ua = 0, ub = 0;
        int end_a = 0, end_b = 0;
        if (pending_a) {
            ua = pending_a;
            pending_a = 0;
        }
        else if (i < la) {
            Py_UCS4 cp = PyUnicode_READ(ka, da, i++);
            if (cp > 0xFFFF) {
                cp -= 0x10000;
                ua = 0xD800 + (cp >> 10);
                pending_a = 0xDC00 + (cp & 0x3FF);
            }
            else {
                ua = cp;
            }
        }
        else {
            end_a = 1;
        }
        if (pending_b) {
            ub = pending_b;
            pending_b = 0;
        }
        else if (j < lb) {
            Py_UCS4 cp = PyUnicode_READ(kb, db, j++);
            if (cp > 0xFFFF) {
                cp -= 0x10000;
                ub = 0xD800 + (cp >> 10);
                pending_b = 0xDC00 + (cp & 0x3FF);
            }
            else {
                ub = cp;
            }
        }
        else {
            end_b = 1;
        }
        if (end_a || end_b) {
            return end_a && end_b ? 0 : (end_a ? -1 : 1);
        }
        if (ua != ub) {
            return ua < ub ? -1 : 1;
        }
    }
}

/* A stable merge sort (Python's sort is stable: strings with one code-unit spelling, such
 * as an astral character and its lone surrogates, keep their order). */
static void
merge_sort(PyObject **items, PyObject **scratch, Py_ssize_t n)
{
    if (n < 2) {
        return;
    }
    if (n <= 12) {
        for (Py_ssize_t i = 1; i < n; i++) {
            PyObject *item = items[i];
            Py_ssize_t j = i;
            while (j > 0 && compare_units(items[j - 1], item) > 0) {
                items[j] = items[j - 1];
                j--;
            }
            items[j] = item;
        }
        return;
    }
    Py_ssize_t half = n / 2;
    merge_sort(items, scratch, half);
    merge_sort(items + half, scratch, n - half);
    if (compare_units(items[half - 1], items[half]) <= 0) {
        return;
    }
    memcpy(scratch, items, (size_t)half * sizeof(PyObject *));
    Py_ssize_t i = 0, j = half, k = 0;
    while (i < half && j < n) {
        if (compare_units(items[j], scratch[i]) < 0) {
            items[k++] = items[j++];
        }
        else {
            items[k++] = scratch[i++];
        }
    }
    while (i < half) {
        items[k++] = scratch[i++];
    }
}

/* A new list: `items` (exact str only, checked by the caller) in code-unit order. */
static PyObject *
sorted_list(PyObject *items)
{
    PyObject *out = PyList_GetSlice(items, 0, PyList_GET_SIZE(items));
    if (out == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(out);
    if (n < 2) {
        return out;
    }
    PyObject **scratch = PyMem_Malloc((size_t)(n / 2 + 1) * sizeof(PyObject *));
    if (scratch == NULL) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    merge_sort(((PyListObject *)out)->ob_item, scratch, n);
    PyMem_Free(scratch);
    return out;
}

static PyObject *
sorted_code_units(PyObject *module, PyObject *items)
{
    if (!PyList_CheckExact(items)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(items, i))) {
            Py_RETURN_NOTIMPLEMENTED;
        }
    }
    return sorted_list(items);
}

/* ------------------------------------------------------------------ number text */

/* JavaScript String(x) of a finite, non-zero, positive double (jscompat._float_text),
 * from the shortest round-trip digits Python's repr finds. Returns the length, -1 on error. */
static int
positive_float_text(double x, char *out, size_t cap)
{
    char *text = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) {
        return -1;
    }
    char mantissa[64];
    long exponent = 0;
    char *e = strchr(text, 'e');
    size_t mantissa_len = e ? (size_t)(e - text) : strlen(text);
    if (e) {
        exponent = strtol(e + 1, NULL, 10);
    }
    if (mantissa_len >= sizeof(mantissa)) {
        PyMem_Free(text);
        PyErr_SetString(PyExc_ValueError, "unexpected float repr");
        return -1;
    }
    memcpy(mantissa, text, mantissa_len);
    mantissa[mantissa_len] = '\0';
    PyMem_Free(text);
    char raw[64];
    size_t raw_len = 0, int_len = 0;
    char *dot = strchr(mantissa, '.');
    int_len = dot ? (size_t)(dot - mantissa) : mantissa_len;
    for (size_t i = 0; i < mantissa_len; i++) {
        if (mantissa[i] != '.') {
            raw[raw_len++] = mantissa[i];
        }
    }
    size_t leading = 0;
    while (leading < raw_len && raw[leading] == '0') {
        leading++;
    }
    size_t end = raw_len;
    while (end > leading && raw[end - 1] == '0') {
        end--;
    }
    char digits[64];
    size_t k = end - leading;
    if (k == 0) {
        digits[0] = '0';
        k = 1;
    }
    else {
        memcpy(digits, raw + leading, k);
    }
    long n = (long)int_len + exponent - (long)leading;
    size_t w = 0;
#define PUT(c)                                                                   \
    do {                                                                         \
        if (w + 1 >= cap) {                                                      \
            PyErr_SetString(PyExc_ValueError, "float text too long");            \
            return -1;                                                           \
        }                                                                        \
        out[w++] = (c);                                                          \
    } while (0)
    if ((long)k <= n && n <= 21) {
        for (size_t i = 0; i < k; i++) {
            PUT(digits[i]);
        }
        for (long i = 0; i < n - (long)k; i++) {
            PUT('0');
        }
    }
    else if (0 < n && n <= 21) {
        for (long i = 0; i < (long)k; i++) {
            if (i == n) {
                PUT('.');
            }
            PUT(digits[i]);
        }
    }
    else if (-6 < n && n <= 0) {
        PUT('0');
        PUT('.');
        for (long i = 0; i < -n; i++) {
            PUT('0');
        }
        for (size_t i = 0; i < k; i++) {
            PUT(digits[i]);
        }
    }
    else {
        long exp = n - 1;
        PUT(digits[0]);
        if (k > 1) {
            PUT('.');
            for (size_t i = 1; i < k; i++) {
                PUT(digits[i]);
            }
        }
        PUT('e');
        PUT(exp >= 0 ? '+' : '-');
        char number[24];
        int m = snprintf(number, sizeof(number), "%ld", exp >= 0 ? exp : -exp);
        for (int i = 0; i < m; i++) {
            PUT(number[i]);
        }
    }
#undef PUT
    out[w] = '\0';
    return (int)w;
}

/* "number:" + String(x) for a float; returns the length, -1 on error. */
static int
float_identity(double x, char *out, size_t cap)
{
    int head = snprintf(out, cap, "number:");
    const char *fixed = NULL;
    if (isnan(x)) {
        fixed = "NaN";
    }
    else if (isinf(x)) {
        fixed = x > 0 ? "Infinity" : "-Infinity";
    }
    else if (x == 0) {
        fixed = "0";
    }
    if (fixed != NULL) {
        return head + snprintf(out + head, cap - (size_t)head, "%s", fixed);
    }
    if (x < 0) {
        out[head++] = '-';
        x = -x;
    }
    int body = positive_float_text(x, out + head, cap - (size_t)head);
    return body < 0 ? -1 : head + body;
}

/* "number:" + the decimal digits of `integer` (|integer| <= 2**53); returns the length. */
static int
integer_identity(long long integer, char *out)
{
    memcpy(out, "number:", 7);
    int w = 7;
    unsigned long long magnitude =
        integer < 0 ? (unsigned long long)(-(integer + 1)) + 1 : (unsigned long long)integer;
    if (integer < 0) {
        out[w++] = '-';
    }
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(magnitude % 10));
        magnitude /= 10;
    } while (magnitude);
    while (n) {
        out[w++] = digits[--n];
    }
    out[w] = '\0';
    return w;
}

/* ------------------------------------------------------------------ identities */

static int
js_whitespace(Py_UCS4 c)
{
    switch (c) {
        case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0:
        case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
        case 0xFEFF:
            return 1;
        default:
            return c >= 0x2000 && c <= 0x200A;
    }
}

/* A ref or key a loaded pool keeps: not blank, no U+0000, nothing js_trim removes. */
static int
loadable_text(PyObject *text)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n == 0) {
        return 0;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (js_whitespace(PyUnicode_READ(kind, data, 0))
        || js_whitespace(PyUnicode_READ(kind, data, n - 1))) {
        return 0;
    }
    if (kind == PyUnicode_1BYTE_KIND) {
        return memchr(data, 0, (size_t)n) == NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyUnicode_READ(kind, data, i) == 0) {
            return 0;
        }
    }
    return 1;
}

/* ref + NUL + key + NUL + ascii_head + tail (tail: a str or NULL). */
static PyObject *
build_identity(PyObject *ref, PyObject *key, const char *head, Py_ssize_t head_len,
               PyObject *tail)
{
    Py_ssize_t lr = PyUnicode_GET_LENGTH(ref), lk = PyUnicode_GET_LENGTH(key);
    Py_ssize_t lt = tail ? PyUnicode_GET_LENGTH(tail) : 0;
    Py_UCS4 maxchar = 0x7F;
    Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(ref);
    maxchar = m > maxchar ? m : maxchar;
    m = PyUnicode_MAX_CHAR_VALUE(key);
    maxchar = m > maxchar ? m : maxchar;
    if (tail) {
        m = PyUnicode_MAX_CHAR_VALUE(tail);
        maxchar = m > maxchar ? m : maxchar;
    }
    if (lr > PY_SSIZE_T_MAX - lk - lt - head_len - 2) {
        return PyErr_NoMemory();
    }
    PyObject *out = PyUnicode_New(lr + lk + lt + head_len + 2, maxchar);
    if (out == NULL) {
        return NULL;
    }
    int kind = PyUnicode_KIND(out);
    void *data = PyUnicode_DATA(out);
    Py_ssize_t at = 0;
    if (PyUnicode_CopyCharacters(out, at, ref, 0, lr) < 0) {
        goto error;
    }
    at += lr;
    PyUnicode_WRITE(kind, data, at, 0);
    at++;
    if (PyUnicode_CopyCharacters(out, at, key, 0, lk) < 0) {
        goto error;
    }
    at += lk;
    PyUnicode_WRITE(kind, data, at, 0);
    at++;
    for (Py_ssize_t i = 0; i < head_len; i++) {
        PyUnicode_WRITE(kind, data, at + i, (Py_UCS4)(unsigned char)head[i]);
    }
    at += head_len;
    if (tail && PyUnicode_CopyCharacters(out, at, tail, 0, lt) < 0) {
        goto error;
    }
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

/* Whether a string value is longer than `limit` UTF-8 bytes (surrogates count 3). */
static int
over_limit(PyObject *value, long long limit)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(value);
    if ((long long)n * 4 <= limit) {
        return 0;
    }
    if ((long long)n > limit) {
        return 1;
    }
    int kind = PyUnicode_KIND(value);
    const void *data = PyUnicode_DATA(value);
    long long bytes = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        bytes += c < 0x80 ? 1 : (c < 0x800 ? 2 : (c < 0x10000 ? 3 : 4));
    }
    return bytes > limit;
}

/* ------------------------------------------------------------------ Window */

typedef struct {
    PyObject_HEAD
    int drop;
    int bounded;
    long long limit;
    Py_ssize_t dropped;
    PyObject *fallback;
    PyObject *counts;
    PyObject *identities;
    PyObject *oversized;
} Window;

static int
window_traverse(Window *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    Py_VISIT(self->counts);
    Py_VISIT(self->identities);
    Py_VISIT(self->oversized);
    return 0;
}

static int
window_clear(Window *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->counts);
    Py_CLEAR(self->identities);
    Py_CLEAR(self->oversized);
    return 0;
}

static void
window_dealloc(Window *self)
{
    PyObject_GC_UnTrack(self);
    window_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
window_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"drop_unloadable", "max_value_bytes", "fallback", NULL};
    int drop;
    PyObject *limit, *fallback;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "pOO", names, &drop, &limit, &fallback)) {
        return NULL;
    }
    long long bound = 0;
    int bounded = limit != Py_None;
    if (bounded) {
        if (!PyLong_CheckExact(limit)) {
            PyErr_SetString(PyExc_TypeError, "max_value_bytes must be an int or None");
            return NULL;
        }
        int overflow = 0;
        bound = PyLong_AsLongLongAndOverflow(limit, &overflow);
        if (bound == -1 && PyErr_Occurred()) {
            return NULL;
        }
        /* Beyond this the length arithmetic could overflow: the Python twin handles it. */
        if (overflow || bound > ((long long)1 << 60) || bound < -((long long)1 << 60)) {
            PyErr_SetString(PyExc_OverflowError, "max_value_bytes out of the kernel's range");
            return NULL;
        }
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    Window *self = (Window *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->drop = drop;
    self->bounded = bounded;
    self->limit = bound;
    self->dropped = 0;
    Py_INCREF(fallback);
    self->fallback = fallback;
    self->counts = PyDict_New();
    self->identities = PyList_New(0);
    self->oversized = PyList_New(0);
    if (self->counts == NULL || self->identities == NULL || self->oversized == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* Count `identity` (a new reference, stolen) with weight `count` (NULL: 1). */
static int
window_count(Window *self, PyObject *identity, PyObject *count, int oversized)
{
    int status = -1;
    PyObject *total = NULL;
    if (PyList_Append(self->identities, identity) < 0) {
        goto done;
    }
    PyObject *old = NULL; /* borrowed */
    if (count == NULL) {
        /* One lookup for a first-seen identity: insert 1 (the dict grows by one). */
        Py_ssize_t before = PyDict_GET_SIZE(self->counts);
        PyObject *one = PyLong_FromLong(1);
        if (one == NULL) {
            goto done;
        }
        old = PyDict_SetDefault(self->counts, identity, one);
        Py_DECREF(one);
        if (old == NULL) {
            goto done;
        }
        if (PyDict_GET_SIZE(self->counts) != before) {
            goto counted;
        }
        int overflow = 0;
        long long value = 0;
        if (PyLong_CheckExact(old)) {
            value = PyLong_AsLongLongAndOverflow(old, &overflow);
            if (value == -1 && PyErr_Occurred()) {
                goto done;
            }
        }
        if (PyLong_CheckExact(old) && !overflow && value < ((long long)1 << 62)) {
            total = PyLong_FromLongLong(value + 1);
        }
        else {
            PyObject *increment = PyLong_FromLong(1);
            if (increment == NULL) {
                goto done;
            }
            total = PyNumber_Add(old, increment);
            Py_DECREF(increment);
        }
    }
    else {
        old = PyDict_GetItemWithError(self->counts, identity);
        if (old == NULL && PyErr_Occurred()) {
            goto done;
        }
        PyObject *zero = NULL;
        if (old == NULL) {
            zero = PyLong_FromLong(0);
            if (zero == NULL) {
                goto done;
            }
        }
        total = PyNumber_Add(old != NULL ? old : zero, count);
        Py_XDECREF(zero);
    }
    if (total == NULL || PyDict_SetItem(self->counts, identity, total) < 0) {
        goto done;
    }
counted:
    if (oversized && PyList_Append(self->oversized, identity) < 0) {
        goto done;
    }
    status = 0;
done:
    Py_XDECREF(total);
    Py_DECREF(identity);
    return status;
}


static int
window_take(Window *self, PyObject *ref, PyObject *key, PyObject *value, PyObject *count)
{
    char buffer[96];
    PyObject *identity = NULL;
    int oversized = 0;
    int in_domain = PyUnicode_CheckExact(ref) && PyUnicode_CheckExact(key);
    int is_str = PyUnicode_CheckExact(value);
    long long integer = 0;
    if (in_domain && !is_str && !PyBool_Check(value) && !PyFloat_CheckExact(value)) {
        if (PyLong_CheckExact(value)) {
            int overflow = 0;
            integer = PyLong_AsLongLongAndOverflow(value, &overflow);
            if (integer == -1 && PyErr_Occurred()) {
                return -1;
            }
            long long two53 = (long long)1 << 53;
            in_domain = !overflow && integer >= -two53 && integer <= two53;
        }
        else {
            in_domain = 0;
        }
    }
    if (!in_domain) {
        PyObject *answer = PyObject_CallFunctionObjArgs(self->fallback, ref, key, value, NULL);
        if (answer == NULL) {
            return -1;
        }
        if (!PyTuple_Check(answer) || PyTuple_GET_SIZE(answer) != 2) {
            Py_DECREF(answer);
            PyErr_SetString(PyExc_TypeError, "the fallback must return (identity, oversized)");
            return -1;
        }
        identity = PyTuple_GET_ITEM(answer, 0);
        if (identity == Py_None) {
            Py_DECREF(answer);
            self->dropped++;
            return 0;
        }
        oversized = PyObject_IsTrue(PyTuple_GET_ITEM(answer, 1));
        if (oversized < 0) {
            Py_DECREF(answer);
            return -1;
        }
        Py_INCREF(identity);
        Py_DECREF(answer);
        return window_count(self, identity, count, oversized);
    }
    if (self->drop) {
        if (!loadable_text(ref) || !loadable_text(key)
            || (PyFloat_CheckExact(value) && !isfinite(PyFloat_AS_DOUBLE(value)))) {
            self->dropped++;
            return 0;
        }
    }
    if (is_str) {
        identity = build_identity(ref, key, "string:", 7, value);
        oversized = self->bounded && over_limit(value, self->limit);
    }
    else if (value == Py_True) {
        identity = build_identity(ref, key, "boolean:true", 12, NULL);
    }
    else if (value == Py_False) {
        identity = build_identity(ref, key, "boolean:false", 13, NULL);
    }
    else if (PyFloat_CheckExact(value)) {
        int n = float_identity(PyFloat_AS_DOUBLE(value), buffer, sizeof(buffer));
        if (n < 0) {
            return -1;
        }
        identity = build_identity(ref, key, buffer, n, NULL);
    }
    else {
        identity = build_identity(ref, key, buffer, integer_identity(integer, buffer), NULL);
    }
    if (identity == NULL) {
        return -1;
    }
    return window_count(self, identity, count, oversized);
}

static PyObject *
window_add(Window *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "add(ref, key, value) takes three arguments");
        return NULL;
    }
    if (window_take(self, args[0], args[1], args[2], NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
window_add_records(Window *self, PyObject *items)
{
    if (!PyList_CheckExact(items)) {
        PyErr_SetString(PyExc_TypeError, "add_records takes a list");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        Py_INCREF(item);
        PyObject *ref = PyObject_GetAttr(item, str_ref);
        PyObject *key = ref ? PyObject_GetAttr(item, str_key) : NULL;
        PyObject *value = key ? PyObject_GetAttr(item, str_value) : NULL;
        PyObject *count = value ? PyObject_GetAttr(item, str_count) : NULL;
        int status = -1;
        if (count != NULL) {
            status = window_take(self, ref, key, value, count == Py_None ? NULL : count);
        }
        Py_XDECREF(ref);
        Py_XDECREF(key);
        Py_XDECREF(value);
        Py_XDECREF(count);
        Py_DECREF(item);
        if (status < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
window_summary(Window *self, PyObject *unused)
{
    Py_ssize_t n = PyList_GET_SIZE(self->oversized);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *identity = PyList_GET_ITEM(self->oversized, i);
        int present = PyDict_Contains(self->counts, identity);
        if (present < 0 || (present && PyDict_DelItem(self->counts, identity) < 0)) {
            return NULL;
        }
    }
    PyObject *ordered = sorted_list(self->identities);
    if (ordered == NULL) {
        return NULL;
    }
    return Py_BuildValue("(ONnn)", self->counts, ordered, self->dropped, n);
}

static PyMethodDef window_methods[] = {
    {"add", (PyCFunction)(void (*)(void))window_add, METH_FASTCALL,
     "add(ref, key, value): hear one observation of weight 1."},
    {"add_records", (PyCFunction)window_add_records, METH_O,
     "add_records(list): hear a list of ValueObservation records."},
    {"summary", (PyCFunction)window_summary, METH_NOARGS,
     "summary() -> (counts, sorted identities, dropped, oversized); call it once, last."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WindowType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pytest_entropy.core._pool_native.Window",
    .tp_basicsize = sizeof(Window),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One session window's observation tally (the twin of pool_window.WindowTally).",
    .tp_new = window_new,
    .tp_dealloc = (destructor)window_dealloc,
    .tp_traverse = (traverseproc)window_traverse,
    .tp_clear = (inquiry)window_clear,
    .tp_methods = window_methods,
};

/* ------------------------------------------------------------------ module */

static PyMethodDef module_methods[] = {
    {"sorted_code_units", (PyCFunction)sorted_code_units, METH_O,
     "A new list of the strings in UTF-16 code-unit order (stable); NotImplemented for "
     "anything but a list of exact str."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef pool_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pytest_entropy.core._pool_native",
    .m_doc = "The observation pool's native kernel (see pytest_entropy/core/pool_window.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__pool_native(void)
{
    if (str_ref == NULL) {
        str_ref = PyUnicode_InternFromString("ref");
        str_key = PyUnicode_InternFromString("key");
        str_value = PyUnicode_InternFromString("value");
        str_count = PyUnicode_InternFromString("count");
        if (str_ref == NULL || str_key == NULL || str_value == NULL || str_count == NULL) {
            return NULL;
        }
    }
    if (PyType_Ready(&WindowType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&pool_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&WindowType);
    if (PyModule_AddObject(module, "Window", (PyObject *)&WindowType) < 0) {
        Py_DECREF(&WindowType);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
