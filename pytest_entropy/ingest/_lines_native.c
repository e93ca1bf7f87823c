/* The line reader's chunk split (native twin of the `chunk[start:].split(b"\n")` of
 * ingest/lines.py iter_line_batches).
 *
 * split_lines(chunk, start) returns exactly what `chunk[start:].split(b"\n")` returns for an
 * exact bytes chunk and an exact int 0 <= start <= len(chunk): a list of new bytes objects,
 * one per "\n"-terminated piece, the last one the tail after the last "\n" (empty when the
 * chunk ends with one). CPython's single-byte split compares byte by byte; this one finds
 * each newline with memchr. Anything else (a bytearray or memoryview a stream returned, a
 * subclass, an int subclass, a start outside the chunk) is handed back: NotImplemented, and
 * the caller splits in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

static PyObject *split_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *chunk, *list, *piece;
    const char *text, *at, *end, *cut;
    Py_ssize_t size, start, count = 0, i = 0;
    int overflow = 0;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "split_lines takes 2 arguments");
        return NULL;
    }
    chunk = args[0];
    if (!PyBytes_CheckExact(chunk) || !PyLong_CheckExact(args[1])) Py_RETURN_NOTIMPLEMENTED;
    size = PyBytes_GET_SIZE(chunk);
    start = (Py_ssize_t)PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (start == -1 && PyErr_Occurred()) return NULL;
    if (overflow || start < 0 || start > size) Py_RETURN_NOTIMPLEMENTED;
    text = PyBytes_AS_STRING(chunk);
    end = text + size;
    for (at = text + start; at < end && (cut = memchr(at, '\n', (size_t)(end - at))) != NULL;
         at = cut + 1) {
        count++;
    }
    if ((list = PyList_New(count + 1)) == NULL) return NULL;
    if (count == 0 && start == 0) {
        /* no separator: bytes.split hands back the chunk itself */
        Py_INCREF(chunk);
        PyList_SET_ITEM(list, 0, chunk);
        return list;
    }
    at = text + start;
    for (i = 0; i < count; i++) {
        cut = memchr(at, '\n', (size_t)(end - at));
        if ((piece = PyBytes_FromStringAndSize(at, cut - at)) == NULL) goto fail;
        PyList_SET_ITEM(list, i, piece);
        at = cut + 1;
    }
    if ((piece = PyBytes_FromStringAndSize(at, end - at)) == NULL) goto fail;
    PyList_SET_ITEM(list, count, piece);
    return list;
fail:
    /* the items not yet set are NULL, which list deallocation skips */
    Py_DECREF(list);
    return NULL;
}

static PyMethodDef methods[] = {
    {"split_lines", (PyCFunction)(void (*)(void))split_lines, METH_FASTCALL,
     "split_lines(chunk, start): chunk[start:].split(b\"\\n\"), or NotImplemented."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pytest_entropy.ingest._lines_native",
    "The line reader's chunk split (native twin of iter_line_batches' bytes.split).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__lines_native(void) {
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
