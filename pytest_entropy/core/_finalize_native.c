/*
 * The meter's finalisation arithmetic, native: the per-ref loop of MeterState._finalize
 * (pytest_entropy/core/meter.py) and its flow-entropy loop, in C.
 *
 * ref_scores(order, refs, lexicon, freedoms, weights, row_types) walks the refs of ``order``
 * (the state's refs in code-unit order) and computes, exactly as the Python does, each ref's
 * shape and failure-stage entropy (fingerprint.shannon_entropy_bits of its signature and
 * stage counts, summed in first-seen order), its churn rate, lexicon rows, static freedom
 * (read from ``freedoms``) and score, and the five running sums in the same order of float
 * operations: (static_total, static_weighted, shape_weighted, stage_weighted, score_sum,
 * rows). With ``row_types`` = (RefRow, ShapeCount, shapes_of, shown), ``rows`` is the list
 * of the refs' RefRow in ``order``, each listing its ``shown`` most frequent signatures
 * (shapes_of(signatures), the Python twin, orders a dict the kernel does not); with None,
 * ``rows`` is None.
 *
 * flow_terms(task_sequences) is the flow loop: (flow_weighted, flow_occurrences).
 *
 * Both return NotImplemented, having changed nothing, for anything outside the kernel's
 * exact domain: containers that are not exact dicts/lists, counts that are not exact ints
 * within +-2**53 (whose sums stay there), a churn sum that is not an exact float, a freedom
 * that is not an exact float, weights that are neither exact ints within 2**53 nor exact
 * floats. The caller then runs the Python twin. Every float operation is the Python's: int
 * operands convert exactly (they are within 2**53), divisions and products are single IEEE
 * operations, log2 is the C library's (which math.log2 calls), and nothing is contracted.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

/* The build's -std=c99 keeps GCC from contracting a * b + c into one rounding (ISO modes
 * default to -ffp-contract=off); each product is stored in its own variable before the sum
 * all the same. */

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

#define TWO_53 9007199254740992LL

#define DONE 0
#define ERROR (-1)
#define FOREIGN 1

/* jscompat.round_metric: Math.round(x * 1e6) / 1e6, ties toward +infinity, -0 -> 0. */
static double
round_metric(double x)
{
    double y = x * 1e6;
    double f;
    double r;
    if (!isfinite(y)) {
        return y;
    }
    f = floor(y);
    /* y - f is exact; f + 1 is exact whenever y is not already integral (|y| < 2**52) */
    r = ((y - f) >= 0.5 ? f + 1.0 : f) / 1e6;
    return r == 0.0 ? 0.0 : r;
}

/* An exact int within +-2**53 into *out; FOREIGN otherwise. */
static int
small_int(PyObject *value, long long *out)
{
    int overflow = 0;
    long long v;
    if (!PyLong_CheckExact(value)) {
        return FOREIGN;
    }
    v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return ERROR;
    }
    if (overflow || v > TWO_53 || v < -TWO_53) {
        return FOREIGN;
    }
    *out = v;
    return DONE;
}

/* fingerprint.shannon_entropy_bits of a dict's values (counts). */
static int
entropy_bits(PyObject *counts, double *out)
{
    Py_ssize_t pos = 0;
    PyObject *key;
    PyObject *value;
    long long total = 0;
    double bits = 0.0;
    int done;
    if (!PyDict_CheckExact(counts)) {
        return FOREIGN;
    }
    while (PyDict_Next(counts, &pos, &key, &value)) {
        long long count;
        done = small_int(value, &count);
        if (done != DONE) {
            return done;
        }
        total += count;
        if (total > TWO_53 || total < -TWO_53) {
            return FOREIGN;
        }
    }
    if (total <= 0) {
        *out = 0.0;
        return DONE;
    }
    pos = 0;
    while (PyDict_Next(counts, &pos, &key, &value)) {
        long long count = PyLong_AsLongLong(value); /* checked above */
        if (count > 0) {
            double p = (double)count / (double)total;
            double term = p * log2(p);
            bits += term;
        }
    }
    *out = round_metric(-bits);
    return DONE;
}

/* A weight: an exact float, or an exact int within 2**53 (converted as Python converts). */
static int
weight_of(PyObject *weight, double *out, int *is_int, long long *int_value)
{
    if (PyFloat_CheckExact(weight)) {
        *out = PyFloat_AS_DOUBLE(weight);
        *is_int = 0;
        return DONE;
    }
    if (small_int(weight, int_value) == DONE) {
        *out = (double)*int_value;
        *is_int = 1;
        return DONE;
    }
    if (PyErr_Occurred()) {
        return ERROR;
    }
    return FOREIGN;
}

typedef struct {
    PyObject *acc_type; /* meter_apply._RefAccumulator */
    PyObject *succeeded;
    PyObject *calls;
    PyObject *failed;
    PyObject *signatures;
    PyObject *stages;
    PyObject *churn_pairs;
    PyObject *churn_sum;
} Names;

static Names names;

#define ACC_FIELDS 7

/* The fields of an accumulator (new references); ERROR with an exception set. */
static int
read_acc(PyObject *acc, Names *n, PyObject **fields)
{
    PyObject *const keys[ACC_FIELDS] = {n->calls,  n->failed,      n->signatures, n->stages,
                                        n->churn_pairs, n->churn_sum, n->succeeded};
    int i;
    for (i = 0; i < ACC_FIELDS; i++) {
        fields[i] = PyObject_GetAttr(acc, keys[i]);
        if (fields[i] == NULL) {
            while (--i >= 0) {
                Py_CLEAR(fields[i]);
            }
            return ERROR;
        }
    }
    return DONE;
}

/* The ref row's shape signatures: the most frequent first, ties in code-unit order, at most
 * ``shown`` of them, as a tuple of shape_type(signature, count). A signature with an astral
 * character (whose code-unit order is not its code-point order) or a count outside the
 * kernel's domain sends the whole dict to shapes_of, the Python twin. */
static PyObject *
top_shapes(PyObject *signatures, Py_ssize_t shown, PyObject *shape_type, PyObject *shapes_of)
{
    Py_ssize_t m = PyDict_GET_SIZE(signatures);
    Py_ssize_t k = m < shown ? m : shown;
    Py_ssize_t pos = 0;
    Py_ssize_t i = 0;
    Py_ssize_t j;
    PyObject *key;
    PyObject *value;
    PyObject **keys;
    PyObject **values;
    long long *counts;
    PyObject *result = NULL;
    keys = PyMem_New(PyObject *, m ? m : 1);
    values = PyMem_New(PyObject *, m ? m : 1);
    counts = PyMem_New(long long, m ? m : 1);
    if (keys == NULL || values == NULL || counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    while (PyDict_Next(signatures, &pos, &key, &value)) {
        int ok;
        if (i >= m || !PyUnicode_CheckExact(key) || PyUnicode_MAX_CHAR_VALUE(key) > 0xFFFF) {
            goto python;
        }
        ok = small_int(value, &counts[i]);
        if (ok == ERROR) {
            goto done;
        }
        if (ok == FOREIGN) {
            goto python;
        }
        keys[i] = key;
        values[i] = value;
        i++;
    }
    if (i != m) {
        goto python;
    }
    /* selection of the k first: count descending, then the signature ascending (distinct
     * BMP strings: code-point order is code-unit order and never ties) */
    for (j = 0; j < k; j++) {
        Py_ssize_t best = j;
        Py_ssize_t t;
        for (t = j + 1; t < m; t++) {
            if (counts[t] > counts[best]
                || (counts[t] == counts[best] && PyUnicode_Compare(keys[t], keys[best]) < 0)) {
                best = t;
            }
        }
        if (best != j) {
            PyObject *swap_key = keys[j];
            PyObject *swap_value = values[j];
            long long swap_count = counts[j];
            keys[j] = keys[best];
            values[j] = values[best];
            counts[j] = counts[best];
            keys[best] = swap_key;
            values[best] = swap_value;
            counts[best] = swap_count;
        }
    }
    result = PyTuple_New(k);
    if (result == NULL) {
        goto done;
    }
    for (j = 0; j < k; j++) {
        PyObject *pair[2] = {keys[j], values[j]};
        PyObject *shape = PyObject_Vectorcall(shape_type, pair, 2, NULL);
        if (shape == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, j, shape);
    }
    goto done;
python:
    result = PyObject_CallOneArg(shapes_of, signatures);
done:
    PyMem_Free(keys);
    PyMem_Free(values);
    PyMem_Free(counts);
    return result;
}

static PyObject *
finalize_ref_scores(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *order, *refs, *lexicon, *freedoms, *weights;
    PyObject *row_type = NULL, *shape_type = NULL, *shapes_of = NULL;
    Py_ssize_t shown = 0;
    int with_rows;
    double w_shape, w_stage, w_churn, w_lexicon, w_freedom;
    long long w_lexicon_int = 0, ignored = 0;
    int lexicon_is_int = 0, int_flag = 0;
    double static_total = 0.0, static_weighted = 0.0, shape_weighted = 0.0;
    double stage_weighted = 0.0, score_sum = 0.0;
    PyObject *rows = NULL;
    PyObject *zero = NULL;
    Py_ssize_t i, n;
    int done = DONE;

    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "ref_scores(order, refs, lexicon, freedoms, weights, row_types)");
        return NULL;
    }
    order = args[0];
    refs = args[1];
    lexicon = args[2];
    freedoms = args[3];
    weights = args[4];
    with_rows = args[5] != Py_None;
    if (with_rows) {
        if (!PyTuple_CheckExact(args[5]) || PyTuple_GET_SIZE(args[5]) != 4) {
            PyErr_SetString(PyExc_TypeError,
                            "row_types is None or (row_type, shape_type, shapes_of, shown)");
            return NULL;
        }
        row_type = PyTuple_GET_ITEM(args[5], 0);
        shape_type = PyTuple_GET_ITEM(args[5], 1);
        shapes_of = PyTuple_GET_ITEM(args[5], 2);
        shown = PyLong_AsSsize_t(PyTuple_GET_ITEM(args[5], 3));
        if (shown == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (shown < 0) {
            PyErr_SetString(PyExc_ValueError, "shown must not be negative");
            return NULL;
        }
    }
    if (!PyList_CheckExact(order) || !PyDict_CheckExact(refs) || !PyDict_CheckExact(lexicon)
        || !PyDict_CheckExact(freedoms) || !PyTuple_CheckExact(weights)
        || PyTuple_GET_SIZE(weights) != 5) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if ((done = weight_of(PyTuple_GET_ITEM(weights, 0), &w_shape, &int_flag, &ignored)) != DONE
        || (done = weight_of(PyTuple_GET_ITEM(weights, 1), &w_stage, &int_flag, &ignored)) != DONE
        || (done = weight_of(PyTuple_GET_ITEM(weights, 2), &w_churn, &int_flag, &ignored)) != DONE
        || (done = weight_of(PyTuple_GET_ITEM(weights, 3), &w_lexicon, &lexicon_is_int,
                             &w_lexicon_int)) != DONE
        || (done = weight_of(PyTuple_GET_ITEM(weights, 4), &w_freedom, &int_flag, &ignored))
               != DONE) {
        if (done == ERROR) {
            return NULL;
        }
        Py_RETURN_NOTIMPLEMENTED;
    }
    n = PyList_GET_SIZE(order);
    if (with_rows) {
        rows = PyList_New(n);
        if (rows == NULL) {
            return NULL;
        }
    }
    zero = PyLong_FromLong(0);
    if (zero == NULL) {
        Py_XDECREF(rows);
        return NULL;
    }
    for (i = 0; i < n && done == DONE; i++) {
        PyObject *ref = PyList_GET_ITEM(order, i);
        PyObject *acc;
        PyObject *fields[ACC_FIELDS];
        PyObject *row_count;
        PyObject *freedom_value;
        long long calls, failed, churn_pairs, lexicon_rows;
        double shape_bits, stage_bits, churn = 0.0, freedom, lexicon_term, score;

        if (!PyUnicode_CheckExact(ref)) {
            done = FOREIGN;
            break;
        }
        acc = PyDict_GetItemWithError(refs, ref);
        if (acc == NULL) {
            done = PyErr_Occurred() ? ERROR : FOREIGN;
            break;
        }
        if (!Py_IS_TYPE(acc, (PyTypeObject *)names.acc_type)) {
            done = FOREIGN;
            break;
        }
        Py_INCREF(acc);
        done = read_acc(acc, &names, fields);
        Py_DECREF(acc);
        if (done != DONE) {
            break;
        }
        if ((done = small_int(fields[0], &calls)) != DONE
            || (done = small_int(fields[1], &failed)) != DONE
            || (done = entropy_bits(fields[2], &shape_bits)) != DONE
            || (done = entropy_bits(fields[3], &stage_bits)) != DONE
            || (done = small_int(fields[4], &churn_pairs)) != DONE) {
            goto next;
        }
        if (churn_pairs) {
            if (!PyFloat_CheckExact(fields[5])) {
                done = FOREIGN;
                goto next;
            }
            churn = round_metric(PyFloat_AS_DOUBLE(fields[5]) / (double)churn_pairs);
        }
        row_count = PyDict_GetItemWithError(lexicon, ref);
        if (row_count == NULL) {
            if (PyErr_Occurred()) {
                done = ERROR;
                goto next;
            }
            row_count = zero;
        }
        if ((done = small_int(row_count, &lexicon_rows)) != DONE) {
            goto next;
        }
        if (lexicon_is_int) {
            /* int * int stays an int in the Python; it meets the float sum as a float */
            long long magnitude = w_lexicon_int < 0 ? -w_lexicon_int : w_lexicon_int;
            long long rows_magnitude = lexicon_rows < 0 ? -lexicon_rows : lexicon_rows;
            if (magnitude && rows_magnitude > TWO_53 / magnitude) {
                done = FOREIGN;
                goto next;
            }
            lexicon_term = (double)(w_lexicon_int * lexicon_rows);
        }
        else {
            lexicon_term = w_lexicon * (double)lexicon_rows;
        }
        freedom_value = PyDict_GetItemWithError(freedoms, ref);
        if (freedom_value == NULL || !PyFloat_CheckExact(freedom_value)) {
            done = PyErr_Occurred() ? ERROR : FOREIGN;
            goto next;
        }
        freedom = PyFloat_AS_DOUBLE(freedom_value);
        {
            /* the Python's left-to-right sum of the five weighted components */
            double sum = w_shape * shape_bits;
            double term = w_stage * stage_bits;
            sum = sum + term;
            term = w_churn * churn;
            sum = sum + term;
            sum = sum + lexicon_term;
            term = w_freedom * freedom;
            sum = sum + term;
            score = round_metric(sum);
        }
        static_total += freedom;
        {
            double weighted = w_freedom * freedom;
            static_weighted += weighted;
            weighted = shape_bits * (double)calls;
            shape_weighted += weighted;
            weighted = stage_bits * (double)failed;
            stage_weighted += weighted;
        }
        score_sum += score;
        if (with_rows) {
            /* row_type(ref, calls, succeeded, failed, shapes, shape_bits, stage_bits, churn,
             * lexicon_rows, freedom, score): RefRow's fields in order */
            PyObject *row_args[11];
            PyObject *row = NULL;
            int a;
            row_args[0] = ref;
            row_args[1] = fields[0];
            row_args[2] = fields[6];
            row_args[3] = fields[1];
            row_args[4] = top_shapes(fields[2], shown, shape_type, shapes_of);
            row_args[5] = PyFloat_FromDouble(shape_bits);
            row_args[6] = PyFloat_FromDouble(stage_bits);
            row_args[7] = PyFloat_FromDouble(churn);
            row_args[8] = row_count;
            row_args[9] = PyFloat_FromDouble(freedom);
            row_args[10] = PyFloat_FromDouble(score);
            if (row_args[4] && row_args[5] && row_args[6] && row_args[7] && row_args[9]
                && row_args[10]) {
                row = PyObject_Vectorcall(row_type, row_args, 11, NULL);
            }
            for (a = 4; a <= 10; a++) {
                if (a != 8) {
                    Py_XDECREF(row_args[a]);
                }
            }
            if (row == NULL) {
                done = ERROR;
                goto next;
            }
            PyList_SET_ITEM(rows, i, row);
        }
    next:
        {
            int f;
            for (f = 0; f < ACC_FIELDS; f++) {
                Py_DECREF(fields[f]);
            }
        }
    }
    Py_DECREF(zero);
    if (done != DONE) {
        Py_XDECREF(rows);
        if (done == ERROR) {
            return NULL;
        }
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (rows == NULL) {
        rows = Py_NewRef(Py_None);
    }
    return Py_BuildValue("(dddddN)", static_total, static_weighted, shape_weighted,
                         stage_weighted, score_sum, rows);
}

/* --------------------------------------------------------------------- static freedom */

typedef struct {
    PyObject *any_of, *one_of, *enum_, *const_, *type, *boolean, *number, *integer, *string,
        *array, *object, *items, *properties, *required, *additional;
} SchemaNames;

static SchemaNames schema_names;

/* fingerprint._sorted_keys of a dict of exact str keys: code-point order, which is the
 * code-unit order unless a key holds an astral character (then FOREIGN). */
static int
sorted_keys(PyObject *dict, PyObject **out)
{
    Py_ssize_t i;
    PyObject *key;
    PyObject *keys = PyDict_Keys(dict);
    if (keys == NULL) {
        return ERROR;
    }
    for (i = 0; i < PyList_GET_SIZE(keys); i++) {
        key = PyList_GET_ITEM(keys, i);
        if (!PyUnicode_CheckExact(key) || PyUnicode_MAX_CHAR_VALUE(key) > 0xFFFF) {
            Py_DECREF(keys);
            return FOREIGN;
        }
    }
    if (PyList_Sort(keys) < 0) {
        Py_DECREF(keys);
        return ERROR;
    }
    *out = keys;
    return DONE;
}

/* fingerprint.static_freedom(schema, depth), every rule in the Python's order. */
static int
static_freedom(PyObject *schema, int depth, double *out)
{
    SchemaNames *n = &schema_names;
    PyObject *branches;
    PyObject *item;
    PyObject *kind;
    int done;
    int has;
    if (depth > 3 || !PyDict_CheckExact(schema)) {
        *out = 0.5;
        return DONE;
    }
    branches = PyDict_GetItemWithError(schema, n->any_of);
    if (branches == NULL && PyErr_Occurred()) {
        return ERROR;
    }
    if (branches == NULL || !PyList_CheckExact(branches)) {
        branches = PyDict_GetItemWithError(schema, n->one_of);
        if (branches == NULL && PyErr_Occurred()) {
            return ERROR;
        }
    }
    if (branches != NULL && PyList_CheckExact(branches)) {
        double best = 0.0;
        double extra;
        Py_ssize_t i;
        Py_ssize_t count;
        Py_INCREF(branches);
        for (i = 0; i < PyList_GET_SIZE(branches); i++) {
            double score;
            item = PyList_GET_ITEM(branches, i);
            Py_INCREF(item);
            done = static_freedom(item, depth + 1, &score);
            Py_DECREF(item);
            if (done != DONE) {
                Py_DECREF(branches);
                return done;
            }
            if (score > best) {
                best = score;
            }
        }
        count = PyList_GET_SIZE(branches);
        Py_DECREF(branches);
        extra = 0.1 * (double)(count > 1 ? count - 1 : 0);
        *out = round_metric(best + extra);
        return DONE;
    }
    item = PyDict_GetItemWithError(schema, n->enum_);
    if (item == NULL && PyErr_Occurred()) {
        return ERROR;
    }
    if (item != NULL && PyList_CheckExact(item)) {
        Py_ssize_t count = PyList_GET_SIZE(item);
        double bits = log2((double)(count > 1 ? count : 1)) / 6.0;
        *out = round_metric(bits < 1.0 ? bits : 1.0);
        return DONE;
    }
    has = PyDict_Contains(schema, n->const_);
    if (has < 0) {
        return ERROR;
    }
    if (has) {
        *out = 0.0;
        return DONE;
    }
    kind = PyDict_GetItemWithError(schema, n->type);
    if (kind == NULL && PyErr_Occurred()) {
        return ERROR;
    }
    if (kind == NULL || !PyUnicode_CheckExact(kind)) {
        *out = 0.75;
        return DONE;
    }
    if (PyUnicode_Compare(kind, n->boolean) == 0) {
        *out = 0.1;
    }
    else if (PyUnicode_Compare(kind, n->number) == 0 || PyUnicode_Compare(kind, n->integer) == 0) {
        *out = 0.5;
    }
    else if (PyUnicode_Compare(kind, n->string) == 0) {
        *out = 1.0;
    }
    else if (PyUnicode_Compare(kind, n->array) == 0) {
        double inner;
        item = PyDict_GetItemWithError(schema, n->items);
        if (item == NULL && PyErr_Occurred()) {
            return ERROR;
        }
        if (item == NULL) {
            item = Py_None;
        }
        Py_INCREF(item);
        done = static_freedom(item, depth + 1, &inner);
        Py_DECREF(item);
        if (done != DONE) {
            return done;
        }
        inner = 0.5 * inner;
        *out = round_metric(0.5 + inner);
    }
    else if (PyUnicode_Compare(kind, n->object) == 0) {
        PyObject *properties = PyDict_GetItemWithError(schema, n->properties);
        PyObject *required;
        PyObject *names_set;
        PyObject *keys;
        PyObject *additional;
        double score = 0.0;
        Py_ssize_t i;
        if (properties == NULL && PyErr_Occurred()) {
            return ERROR;
        }
        if (properties == NULL || !PyDict_CheckExact(properties)
            || PyDict_GET_SIZE(properties) == 0) {
            *out = 1.0;
            return DONE;
        }
        Py_INCREF(properties);
        required = PyDict_GetItemWithError(schema, n->required);
        if (required == NULL && PyErr_Occurred()) {
            Py_DECREF(properties);
            return ERROR;
        }
        names_set = PySet_New(NULL);
        if (names_set == NULL) {
            Py_DECREF(properties);
            return ERROR;
        }
        if (required != NULL && PyList_CheckExact(required)) {
            for (i = 0; i < PyList_GET_SIZE(required); i++) {
                item = PyList_GET_ITEM(required, i);
                if (PyUnicode_CheckExact(item) && PySet_Add(names_set, item) < 0) {
                    Py_DECREF(names_set);
                    Py_DECREF(properties);
                    return ERROR;
                }
            }
        }
        done = sorted_keys(properties, &keys);
        if (done != DONE) {
            Py_DECREF(names_set);
            Py_DECREF(properties);
            return done;
        }
        for (i = 0; i < PyList_GET_SIZE(keys); i++) {
            PyObject *key = PyList_GET_ITEM(keys, i);
            PyObject *child = PyDict_GetItemWithError(properties, key);
            double inner;
            int present;
            if (child == NULL) {
                done = PyErr_Occurred() ? ERROR : FOREIGN;
                break;
            }
            Py_INCREF(child);
            done = static_freedom(child, depth + 1, &inner);
            Py_DECREF(child);
            if (done != DONE) {
                break;
            }
            score += inner;
            present = PySet_Contains(names_set, key);
            if (present < 0) {
                done = ERROR;
                break;
            }
            if (!present) {
                score += 0.25;
            }
        }
        Py_DECREF(keys);
        Py_DECREF(names_set);
        Py_DECREF(properties);
        if (done != DONE) {
            return done;
        }
        additional = PyDict_GetItemWithError(schema, n->additional);
        if (additional == NULL && PyErr_Occurred()) {
            return ERROR;
        }
        if (additional != Py_False) {
            score += 0.5;
        }
        *out = round_metric(score);
    }
    else {
        *out = 0.75;
    }
    return DONE;
}

static PyObject *
finalize_static_freedom(PyObject *module, PyObject *schema)
{
    double value;
    int done = static_freedom(schema, 0, &value);
    if (done == ERROR) {
        return NULL;
    }
    if (done == FOREIGN) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return PyFloat_FromDouble(value);
}

static PyObject *
finalize_flow_terms(PyObject *module, PyObject *task_sequences)
{
    Py_ssize_t pos = 0;
    PyObject *task;
    PyObject *sequences;
    double flow_weighted = 0.0;
    long long flow_occurrences = 0;
    if (!PyDict_CheckExact(task_sequences)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    while (PyDict_Next(task_sequences, &pos, &task, &sequences)) {
        Py_ssize_t inner = 0;
        PyObject *key;
        PyObject *count;
        long long occurrences = 0;
        double bits;
        double term;
        int done;
        if (!PyDict_CheckExact(sequences)) {
            Py_RETURN_NOTIMPLEMENTED;
        }
        while (PyDict_Next(sequences, &inner, &key, &count)) {
            long long value;
            done = small_int(count, &value);
            if (done == ERROR) {
                return NULL;
            }
            if (done == FOREIGN) {
                Py_RETURN_NOTIMPLEMENTED;
            }
            occurrences += value;
            if (occurrences > TWO_53 || occurrences < -TWO_53) {
                Py_RETURN_NOTIMPLEMENTED;
            }
        }
        done = entropy_bits(sequences, &bits);
        if (done == ERROR) {
            return NULL;
        }
        if (done == FOREIGN) {
            Py_RETURN_NOTIMPLEMENTED;
        }
        term = bits * (double)occurrences;
        flow_weighted += term;
        flow_occurrences += occurrences;
        if (flow_occurrences > TWO_53 || flow_occurrences < -TWO_53) {
            Py_RETURN_NOTIMPLEMENTED;
        }
    }
    return Py_BuildValue("(dL)", flow_weighted, flow_occurrences);
}

static PyObject *
finalize_entropy_bits(PyObject *module, PyObject *counts)
{
    double bits;
    int done = entropy_bits(counts, &bits);
    if (done == ERROR) {
        return NULL;
    }
    if (done == FOREIGN) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return PyFloat_FromDouble(bits);
}

static PyObject *
finalize_round_metric(PyObject *module, PyObject *x)
{
    if (!PyFloat_CheckExact(x)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return PyFloat_FromDouble(round_metric(PyFloat_AS_DOUBLE(x)));
}

static PyMethodDef finalize_methods[] = {
    {"ref_scores", (PyCFunction)(void (*)(void))finalize_ref_scores, METH_FASTCALL,
     "ref_scores(order, refs, lexicon, freedoms, weights, row_types): the per-ref loop of\n"
     "MeterState._finalize; NotImplemented for an input outside the kernel's domain."},
    {"flow_terms", (PyCFunction)finalize_flow_terms, METH_O,
     "flow_terms(task_sequences): (flow_weighted, flow_occurrences); NotImplemented outside\n"
     "the kernel's domain."},
    {"entropy_bits", (PyCFunction)finalize_entropy_bits, METH_O,
     "entropy_bits(counts): shannon_entropy_bits(counts.values()) of an exact dict of ints."},
    {"static_freedom", (PyCFunction)finalize_static_freedom, METH_O,
     "static_freedom(schema): fingerprint.static_freedom(schema); NotImplemented for a schema\n"
     "outside the kernel's domain (a property key that is not a str, or holds an astral\n"
     "character)."},
    {"round_metric", (PyCFunction)finalize_round_metric, METH_O,
     "round_metric(x): jscompat.round_metric of an exact float."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef finalize_module = {
    PyModuleDef_HEAD_INIT,
    "pytest_entropy.core._finalize_native",
    "The native kernel of MeterState._finalize's loops (pytest_entropy/core/_finalize_native.c).",
    -1,
    finalize_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

static int
intern_names(void)
{
    PyObject *meter_apply = PyImport_ImportModule("pytest_entropy.core.meter_apply");
    if (meter_apply == NULL) {
        return -1;
    }
    names.acc_type = PyObject_GetAttrString(meter_apply, "_RefAccumulator");
    Py_DECREF(meter_apply);
    if (names.acc_type == NULL) {
        return -1;
    }
    if (!PyType_Check(names.acc_type)) {
        PyErr_SetString(PyExc_ImportError, "meter_apply._RefAccumulator is not a class");
        Py_CLEAR(names.acc_type);
        return -1;
    }
    names.succeeded = PyUnicode_InternFromString("succeeded");
    names.calls = PyUnicode_InternFromString("calls");
    names.failed = PyUnicode_InternFromString("failed");
    names.signatures = PyUnicode_InternFromString("signatures");
    names.stages = PyUnicode_InternFromString("stages");
    names.churn_pairs = PyUnicode_InternFromString("churn_pairs");
    names.churn_sum = PyUnicode_InternFromString("churn_sum");
    schema_names.any_of = PyUnicode_InternFromString("anyOf");
    schema_names.one_of = PyUnicode_InternFromString("oneOf");
    schema_names.enum_ = PyUnicode_InternFromString("enum");
    schema_names.const_ = PyUnicode_InternFromString("const");
    schema_names.type = PyUnicode_InternFromString("type");
    schema_names.boolean = PyUnicode_InternFromString("boolean");
    schema_names.number = PyUnicode_InternFromString("number");
    schema_names.integer = PyUnicode_InternFromString("integer");
    schema_names.string = PyUnicode_InternFromString("string");
    schema_names.array = PyUnicode_InternFromString("array");
    schema_names.object = PyUnicode_InternFromString("object");
    schema_names.items = PyUnicode_InternFromString("items");
    schema_names.properties = PyUnicode_InternFromString("properties");
    schema_names.required = PyUnicode_InternFromString("required");
    schema_names.additional = PyUnicode_InternFromString("additionalProperties");
    if (!(schema_names.any_of && schema_names.one_of && schema_names.enum_
          && schema_names.const_ && schema_names.type && schema_names.boolean
          && schema_names.number && schema_names.integer && schema_names.string
          && schema_names.array && schema_names.object && schema_names.items
          && schema_names.properties && schema_names.required && schema_names.additional)) {
        return -1;
    }
    return (names.succeeded && names.calls && names.failed && names.signatures && names.stages && names.churn_pairs
            && names.churn_sum)
               ? 0
               : -1;
}

PyMODINIT_FUNC
PyInit__finalize_native(void)
{
    PyObject *module;
    if (names.calls == NULL && intern_names() < 0) {
        return NULL;
    }
    module = PyModule_Create(&finalize_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
