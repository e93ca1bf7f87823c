/* Which trace lines the compile's replay must decode, in C (twin of ingest/mentions.py).
 *
 * select(batch, mentions) answers, for a list of lines, the plain rule of
 * ingest/native.py's _may_mention: {i for i, raw in enumerate(batch) if b"\\" in raw or
 * any(m in raw for m in mentions)}, as a set of ints.
 *
 * A line with a backslash is found with memchr. The needles are then searched all at once
 * with the Wu-Manber scheme: a window of W bytes (W the shortest needle's length, at most
 * 255) slides along the line; the two bytes that end it index a table of how far the window
 * may move without passing an occurrence of any needle's first W bytes (W - 1 for a pair
 * that is in none of them); where that is 0, every needle is compared in full at the
 * window's start. JSON text seldom holds the pairs of a few refs, so the window mostly
 * moves W - 1 bytes at a time, and the answer is exactly that of one substring search per
 * needle.
 *
 * The kernel's exact domain: batch an exact list of exact bytes, mentions an exact tuple of
 * exact bytes, each at least two bytes long. Anything else returns NotImplemented (the
 * Python path answers).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

#define MAX_WINDOW 255
#define PAIRS 65536

typedef struct {
    const char **data;
    Py_ssize_t *size;
    Py_ssize_t count;
    Py_ssize_t window;
    unsigned char *shift; /* PAIRS entries, indexed by (byte << 8) | next byte */
} Needles;

static void
needles_free(Needles *table)
{
    PyMem_Free(table->data);
    PyMem_Free(table->size);
    PyMem_Free(table->shift);
    table->data = NULL;
    table->size = NULL;
    table->shift = NULL;
}

static unsigned int
pair_at(const unsigned char *at)
{
    return ((unsigned int)at[0] << 8) | (unsigned int)at[1];
}

/* 1: built; 0: outside the domain (nothing allocated); -1: an exception is set. */
static int
needles_build(PyObject *mentions, Needles *table)
{
    table->data = NULL;
    table->size = NULL;
    table->shift = NULL;
    table->count = PyTuple_GET_SIZE(mentions);
    table->window = MAX_WINDOW;
    for (Py_ssize_t i = 0; i < table->count; i++) {
        PyObject *mention = PyTuple_GET_ITEM(mentions, i);
        if (!PyBytes_CheckExact(mention) || PyBytes_GET_SIZE(mention) < 2) {
            return 0;
        }
        if (PyBytes_GET_SIZE(mention) < table->window) {
            table->window = PyBytes_GET_SIZE(mention);
        }
    }
    if (table->count == 0) {
        return 1;
    }
    table->data = PyMem_New(const char *, (size_t)table->count);
    table->size = PyMem_New(Py_ssize_t, (size_t)table->count);
    table->shift = PyMem_Malloc(PAIRS);
    if (table->data == NULL || table->size == NULL || table->shift == NULL) {
        needles_free(table);
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t window = table->window;
    memset(table->shift, (int)(window - 1), PAIRS);
    for (Py_ssize_t i = 0; i < table->count; i++) {
        PyObject *mention = PyTuple_GET_ITEM(mentions, i);
        const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(mention);
        table->data[i] = (const char *)data;
        table->size[i] = PyBytes_GET_SIZE(mention);
        /* The pair ending at j (of the needle's first W bytes) is W - 1 - j from the end. */
        for (Py_ssize_t j = 1; j < window; j++) {
            unsigned int pair = pair_at(data + j - 1);
            unsigned char distance = (unsigned char)(window - 1 - j);
            if (distance < table->shift[pair]) {
                table->shift[pair] = distance;
            }
        }
    }
    return 1;
}

/* Whether one of the needles occurs in data[0:size]. */
static int
needles_occur(const Needles *table, const char *data, Py_ssize_t size)
{
    Py_ssize_t window = table->window;
    const unsigned char *text = (const unsigned char *)data;
    const unsigned char *shift = table->shift;
    Py_ssize_t end = window - 1; /* the index of the window's last byte */
    while (end < size) {
        unsigned char distance = shift[pair_at(text + end - 1)];
        if (distance != 0) {
            end += distance;
            continue;
        }
        Py_ssize_t start = end - window + 1;
        for (Py_ssize_t i = 0; i < table->count; i++) {
            Py_ssize_t needle = table->size[i];
            if (needle <= size - start
                && memcmp(data + start, table->data[i], (size_t)needle) == 0) {
                return 1;
            }
        }
        end++;
    }
    return 0;
}

static int
line_may_mention(const Needles *table, const char *data, Py_ssize_t size)
{
    if (size == 0) {
        return 0;
    }
    if (memchr(data, '\\', (size_t)size) != NULL) {
        return 1; /* an escape may spell any string: the line is always read */
    }
    return table->count != 0 && needles_occur(table, data, size);
}

static PyObject *
select_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "select(batch, mentions) takes two arguments");
        return NULL;
    }
    PyObject *batch = args[0], *mentions = args[1];
    if (!PyList_CheckExact(batch) || !PyTuple_CheckExact(mentions)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    Py_ssize_t lines = PyList_GET_SIZE(batch);
    for (Py_ssize_t i = 0; i < lines; i++) {
        if (!PyBytes_CheckExact(PyList_GET_ITEM(batch, i))) {
            Py_RETURN_NOTIMPLEMENTED;
        }
    }
    Needles table;
    int built = needles_build(mentions, &table);
    if (built < 0) {
        return NULL;
    }
    if (built == 0) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *found = PySet_New(NULL);
    if (found == NULL) {
        needles_free(&table);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(batch); i++) {
        PyObject *raw = PyList_GET_ITEM(batch, i);
        if (!line_may_mention(&table, PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw))) {
            continue;
        }
        PyObject *index = PyLong_FromSsize_t(i);
        if (index == NULL || PySet_Add(found, index) < 0) {
            Py_XDECREF(index);
            Py_DECREF(found);
            needles_free(&table);
            return NULL;
        }
        Py_DECREF(index);
    }
    needles_free(&table);
    return found;
}

static PyMethodDef module_methods[] = {
    {"select", (PyCFunction)(void (*)(void))select_lines, METH_FASTCALL,
     "select(batch, mentions) -> the indices of the lines that may mention one of the quoted"
     " strings (or NotImplemented outside the kernel's domain)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef mentions_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pytest_entropy.ingest._mentions_native",
    .m_doc = "The replay's line selection in C (see pytest_entropy/ingest/mentions.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__mentions_native(void)
{
    PyObject *module = PyModule_Create(&mentions_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
