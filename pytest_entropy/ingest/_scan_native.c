/* The session scanner's line loop (native twin of the inner loop of
 * ingest/native.py SessionScanner.scan_stream and of SessionScanner._trace_line_fast and
 * _emit).
 *
 * scan_batch(scanner, batch, wanted, tallies, ctx) runs one batch of iter_line_batches:
 * the mark checks, the line numbering, the counters, the compile replay's `wanted`
 * selection, and for each trace line the accelerated path (decode with scanner._decoder,
 * navigation, scanner._guard with the struct_guard fallback, the size bound, the reject
 * note, the emit to scanner.meter / on_signed / on_trace). Everything it does not take over
 * it calls, in the Python's order: scanner._model_line(raw, None), scanner._trace_line(raw,
 * None) (the generic path), scanner._harvest(audits). Attributes are read when the Python
 * reads them, so callbacks see the same line_number.
 *
 * tallies is the list [number, empty, ignored, model_lines, trace_lines]: read on entry,
 * written back on every exit (also when an exception propagates), so the Python's finally
 * block sees what its own locals would hold.
 *
 * ctx is the tuple (diagnostics, OVERSIZED, trace_mark, change_mark, assistant_mark,
 * accelerate, struct_guard, FAST_ERRORS, UNSET, MAX_FLOAT_GROWTH, TRACE_SIZE_BOUND,
 * make_trace, AuditCall, js_own_keys, ValueObservation, sinks, AuditRefs) built once per
 * scan_stream.
 *
 * scanner._harvest is taken over too while the audit kernel is there (scanner._native): its
 * harvest_values / audit_records are called from here with the arguments _harvest passes.
 * sinks (native_sinks.py kernel_sinks) names the deferring listeners of run/deferred.py the
 * scanner's meter, on_signed and on_values are: while such a listener's `pending` is a
 * list, the entry its method would append is appended here, and its settle() called past
 * the limit, as the method does; otherwise the method itself is called. An on_audit that is
 * exactly an AuditRefs is not called: its set goes to the audit kernel (its refs argument),
 * which adds each kept call's ref as the listener would.
 *
 * Attribute reads and writes: an attribute that the object's type resolves, through the
 * generic getattr, to a plain object slot (a __slots__ member of the scanner, of its
 * ScanDiagnostics, of the deferring listeners; a field of the decoder's msgspec Structs) is
 * read or written in the slot itself, which is what the generic getattr / setattr does
 * there; anything else (another getattr, a property, an empty slot, a type modified since)
 * goes through PyObject_GetAttr / PyObject_SetAttr. Where each attribute lives is found once
 * per batch and per type (Slot), and checked against the type's version tag at every use, so
 * a class changed by a callback is seen at its next read. Nothing is hoisted: every read
 * happens where the Python reads it, only cheaper. The kernels' functions and the listeners
 * are called with vectorcall.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

#ifndef PE_SOURCE_SHA256
#define PE_SOURCE_SHA256 "unknown"
#endif

static PyObject *S_line_number, *S_name, *S_note, *S_oversized_lines, *S_model_line;
static PyObject *S_trace_line, *S_decoder, *S_decode, *S_details, *S_message, *S_trace;
static PyObject *S_diagnostics, *S_lines_without_details, *S_lines_without_trace;
static PyObject *S_guard, *S_reject, *S_phases, *S_want_audits, *S_harvest, *S_audits;
static PyObject *S_traces, *S_meter, *S_add_signed, *S_on_signed, *S_on_trace;
static PyObject *S_current_model, *S_colon, *S_empty, *S_none_task, *S_cap_note;
static PyObject *S_native, *S_on_values, *S_on_audit, *S_on_value, *S_on_value_fields;
static PyObject *S_harvest_values, *S_audit_records, *S_audit_calls, *S_skipped_audits;
static PyObject *S_pending, *S_settle, *S_refs;
static PyObject *ONE;

/* The attributes read or written through a Slot (scan_batch's Scan.slots), by site: one per
 * (attribute, kind of owner), so that a slot's type rarely changes within a batch. */
enum {
    A_DECODER, A_GUARD, A_WANT_AUDITS, A_DIAGNOSTICS, A_NAME, A_LINE_NUMBER, A_METER,
    A_CURRENT_MODEL, A_ON_SIGNED, A_ON_TRACE, A_NATIVE, A_ON_VALUES, A_ON_AUDIT, A_ON_VALUE,
    A_ON_VALUE_FIELDS, D_TRACES, D_LINES_WITHOUT_DETAILS, D_LINES_WITHOUT_TRACE,
    D_AUDIT_CALLS, D_SKIPPED_AUDITS, D_OVERSIZED_LINES, R_DETAILS, R_MESSAGE, M_DETAILS,
    T_TRACE, T_AUDITS, T_PHASES, P_METER_PENDING, P_SIGNED_PENDING, P_VALUES_PENDING,
    F_REFS, SLOT_COUNT
};

static PyObject **const SLOT_NAMES[SLOT_COUNT] = {
    &S_decoder, &S_guard, &S_want_audits, &S_diagnostics, &S_name, &S_line_number, &S_meter,
    &S_current_model, &S_on_signed, &S_on_trace, &S_native, &S_on_values, &S_on_audit,
    &S_on_value, &S_on_value_fields, &S_traces, &S_lines_without_details,
    &S_lines_without_trace, &S_audit_calls, &S_skipped_audits, &S_oversized_lines,
    &S_details, &S_message, &S_details, &S_trace, &S_audits, &S_phases, &S_pending,
    &S_pending, &S_pending, &S_refs,
};

/* Where one attribute lives in instances of `type`: the offset of its object slot, or -1
 * (getattr). Valid while `type` keeps the version tag `tag` (a modified type gets a new
 * one; tags are never reused). `type` is only compared, never dereferenced. */
typedef struct {
    PyTypeObject *type;
    unsigned int tag;
    Py_ssize_t offset;
} Slot;

/* One scan_batch call: its ctx and its slots (on its stack: no state outlives the call). */
typedef struct {
    PyObject *ctx;
    Slot slots[SLOT_COUNT];
} Scan;

static void resolve(Slot *slot, PyTypeObject *type, PyObject *name) {
    PyObject *descr;
    slot->type = type;
    slot->tag = 0;
    slot->offset = -1;
    if (type->tp_getattro != PyObject_GenericGetAttr) return;
    /* what the generic getattr finds on the type (a borrowed reference, no exception);
     * the lookup gives the type a version tag when it has none */
    descr = _PyType_Lookup(type, name);
    if (!(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)) return;
    slot->tag = type->tp_version_tag;
    if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        /* a member descriptor is a data descriptor: no instance dict can shadow it, and its
         * type is in `type`'s MRO, so every instance passes its type check */
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && member->flags == 0) slot->offset = member->offset;
    }
}

static inline Slot *slot_for(Scan *scan, PyObject *owner, int site) {
    Slot *slot = &scan->slots[site];
    PyTypeObject *type = Py_TYPE(owner);
    if (type != slot->type || type->tp_version_tag != slot->tag ||
        !(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)) {
        resolve(slot, type, *SLOT_NAMES[site]);
    }
    return slot;
}

/* `owner.<name of site>` (a new reference, NULL with an exception) */
static inline PyObject *get(Scan *scan, PyObject *owner, int site) {
    Slot *slot = slot_for(scan, owner, site);
    if (slot->offset >= 0) {
        PyObject *value = *(PyObject **)((char *)owner + slot->offset);
        if (value != NULL) return Py_NewRef(value);
    }
    return PyObject_GetAttr(owner, *SLOT_NAMES[site]);
}

/* `owner.<name of site> = value` (value borrowed) */
static int set(Scan *scan, PyObject *owner, int site, PyObject *value) {
    Slot *slot = slot_for(scan, owner, site);
    if (slot->offset >= 0 && Py_TYPE(owner)->tp_setattro == PyObject_GenericSetAttr) {
        PyObject **place = (PyObject **)((char *)owner + slot->offset), *old = *place;
        *place = Py_NewRef(value);
        Py_XDECREF(old);
        return 0;
    }
    return PyObject_SetAttr(owner, *SLOT_NAMES[site], value);
}

/* `module.name` for an exact module: its dict's entry when ModuleType has no such
 * attribute (what the module's getattr finds first), else getattr. */
static PyObject *module_function(PyObject *module, PyObject *name) {
    if (PyModule_CheckExact(module) && _PyType_Lookup(&PyModule_Type, name) == NULL) {
        PyObject *dict = PyModule_GetDict(module), *value;
        if (dict != NULL && PyDict_CheckExact(dict)) {
            value = PyDict_GetItemWithError(dict, name);
            if (value != NULL) return Py_NewRef(value);
            if (PyErr_Occurred()) return NULL;
        }
    }
    return PyObject_GetAttr(module, name);
}

enum {
    C_DIAGNOSTICS, C_OVERSIZED, C_TRACE_MARK, C_CHANGE_MARK, C_ASSISTANT_MARK, C_ACCELERATE,
    C_STRUCT_GUARD, C_FAST_ERRORS, C_UNSET, C_GROWTH, C_BOUND, C_MAKE_TRACE, C_AUDIT_CALL,
    C_OWN_KEYS, C_OBSERVATION, C_SINKS, C_AUDIT_REFS, C_SIZE
};

/* ctx[C_SINKS]: None, or the tuple native_sinks.kernel_sinks builds once per scan. */
enum {
    K_METER, K_METER_LIMIT, K_SIGNED, K_SIGNED_OWNER, K_VALUES, K_VALUES_OWNER,
    K_EVIDENCE_LIMIT, K_OPERATIONS_TAG, K_VALUES_TAG, K_SIZE
};

typedef struct {
    const unsigned char *text;
    Py_ssize_t length;
    Py_ssize_t skip[256];
} Needle;

static void needle_init(Needle *n, PyObject *bytes) {
    Py_ssize_t i;
    n->text = (const unsigned char *)PyBytes_AS_STRING(bytes);
    n->length = PyBytes_GET_SIZE(bytes);
    for (i = 0; i < 256; i++) n->skip[i] = n->length;
    for (i = 0; i + 1 < n->length; i++) n->skip[n->text[i]] = n->length - 1 - i;
}

/* Whether needle occurs in hay (Horspool): bytes.__contains__ for exact bytes. */
static int needle_in(const Needle *n, const unsigned char *hay, Py_ssize_t size) {
    Py_ssize_t m = n->length, at = 0;
    unsigned char last;
    if (m == 0) return 1;
    last = n->text[m - 1];
    while (at + m <= size) {
        unsigned char c = hay[at + m - 1];
        if (c == last && memcmp(hay + at, n->text, (size_t)(m - 1)) == 0) return 1;
        at += n->skip[c];
    }
    return 0;
}

/* `obj.<name of site> += amount` */
static int increment_by(Scan *scan, PyObject *obj, int site, PyObject *amount) {
    PyObject *value = get(scan, obj, site), *sum;
    int status;
    if (value == NULL) return -1;
    sum = NULL;
    if (PyLong_CheckExact(value) && PyLong_CheckExact(amount)) {
        /* int += int is int.__add__: a new int of the sum (counters stay far below 2**62) */
        int overflow_a = 0, overflow_b = 0;
        long long a = PyLong_AsLongLongAndOverflow(value, &overflow_a);
        long long b = PyLong_AsLongLongAndOverflow(amount, &overflow_b);
        if (!overflow_a && !overflow_b && a > -(1LL << 62) && a < (1LL << 62) &&
            b > -(1LL << 62) && b < (1LL << 62)) {
            sum = PyLong_FromLongLong(a + b);
            if (sum == NULL) {
                Py_DECREF(value);
                return -1;
            }
        }
    }
    if (sum == NULL) sum = PyNumber_InPlaceAdd(value, amount);
    Py_DECREF(value);
    if (sum == NULL) return -1;
    status = set(scan, obj, site, sum);
    Py_DECREF(sum);
    return status;
}

/* `obj.<name of site> += 1` */
static int increment(Scan *scan, PyObject *obj, int site) {
    return increment_by(scan, obj, site, ONE);
}

/* What a deferring listener (run/deferred.py, see native_sinks.kernel_sinks) does with an
 * entry while its `pending` is a list: append it, and settle past `limit` entries.
 * 1 done, 0 pending is not a list (call the listener itself), -1 error. The entry is
 * stolen. */
static int defer(Scan *scan, PyObject *owner, int site, PyObject *entry, PyObject *limit) {
    PyObject *pending, *result;
    Py_ssize_t size, bound;
    if (entry == NULL) return -1;
    if ((pending = get(scan, owner, site)) == NULL) {
        Py_DECREF(entry);
        return -1;
    }
    if (!PyList_CheckExact(pending)) {
        Py_DECREF(pending);
        Py_DECREF(entry);
        return 0;
    }
    if (PyList_Append(pending, entry) < 0) {
        Py_DECREF(pending);
        Py_DECREF(entry);
        return -1;
    }
    Py_DECREF(entry);
    size = PyList_GET_SIZE(pending);
    Py_DECREF(pending);
    bound = PyLong_AsSsize_t(limit); /* checked an exact, small int by scan_batch */
    if (size <= bound) return 1;
    if ((result = PyObject_CallMethodNoArgs(owner, S_settle)) == NULL) return -1;
    Py_DECREF(result);
    return 1;
}

/* f"{name}:{line}" */
static PyObject *where(PyObject *name, PyObject *line) {
    PyObject *left = PyObject_Format(name, S_empty), *right, *text;
    if (left == NULL) return NULL;
    right = PyObject_Format(line, S_empty);
    if (right == NULL) {
        Py_DECREF(left);
        return NULL;
    }
    text = PyUnicode_FromFormat("%U:%U", left, right);
    Py_DECREF(left);
    Py_DECREF(right);
    return text;
}

static int bump_diagnostics(Scan *scan, PyObject *scanner, int counter) {
    PyObject *diagnostics = get(scan, scanner, A_DIAGNOSTICS);
    int status;
    if (diagnostics == NULL) return -1;
    status = increment(scan, diagnostics, counter);
    Py_DECREF(diagnostics);
    return status;
}

/* self.diagnostics.reject(reason, f"{self.name}:{self.line_number}") */
static int reject(Scan *scan, PyObject *scanner, PyObject *reason) {
    PyObject *diagnostics, *name, *line, *at, *result;
    if ((diagnostics = get(scan, scanner, A_DIAGNOSTICS)) == NULL) return -1;
    if ((name = get(scan, scanner, A_NAME)) == NULL) goto fail_d;
    if ((line = get(scan, scanner, A_LINE_NUMBER)) == NULL) goto fail_n;
    at = where(name, line);
    Py_DECREF(line);
    Py_DECREF(name);
    if (at == NULL) goto fail_d;
    {
        PyObject *argv[3] = {diagnostics, reason, at};
        result = PyObject_VectorcallMethod(S_reject, argv, 3, NULL);
    }
    Py_DECREF(at);
    Py_DECREF(diagnostics);
    if (result == NULL) return -1;
    Py_DECREF(result);
    return 0;
fail_n:
    Py_DECREF(name);
fail_d:
    Py_DECREF(diagnostics);
    return -1;
}

/* SessionScanner._emit(signed, task_key) */
static int emit(Scan *scan, PyObject *scanner, PyObject *signed_ops, PyObject *task) {
    PyObject *ctx = scan->ctx, *meter, *listener, *model, *result;
    if (bump_diagnostics(scan, scanner, D_TRACES) < 0) return -1;
    if ((meter = get(scan, scanner, A_METER)) == NULL) return -1;
    if (meter != Py_None) {
        if ((model = get(scan, scanner, A_CURRENT_MODEL)) == NULL) {
            Py_DECREF(meter);
            return -1;
        }
        PyObject *sinks = PyTuple_GET_ITEM(ctx, C_SINKS);
        int done = 0;
        if (sinks != Py_None && meter == PyTuple_GET_ITEM(sinks, K_METER)) {
            /* DeferredMeter.add_signed: pending.append((signed, task_key, model)) */
            done = defer(scan, meter, P_METER_PENDING, PyTuple_Pack(3, signed_ops, task, model),
                         PyTuple_GET_ITEM(sinks, K_METER_LIMIT));
        }
        if (done == 0) {
            PyObject *argv[4] = {meter, signed_ops, task, model};
            result = PyObject_VectorcallMethod(S_add_signed, argv, 4, NULL);
            done = result == NULL ? -1 : 1;
            Py_XDECREF(result);
        }
        Py_DECREF(model);
        if (done < 0) {
            Py_DECREF(meter);
            return -1;
        }
    }
    Py_DECREF(meter);
    if ((listener = get(scan, scanner, A_ON_SIGNED)) == NULL) return -1;
    if (listener != Py_None) {
        PyObject *sinks = PyTuple_GET_ITEM(ctx, C_SINKS);
        if ((model = get(scan, scanner, A_CURRENT_MODEL)) == NULL) goto fail;
        if (sinks != Py_None && listener == PyTuple_GET_ITEM(sinks, K_SIGNED)) {
            /* DeferredEvidence.add_signed: pending.append((_OPERATIONS, signed)) */
            int done = defer(scan, PyTuple_GET_ITEM(sinks, K_SIGNED_OWNER), P_SIGNED_PENDING,
                             PyTuple_Pack(2, PyTuple_GET_ITEM(sinks, K_OPERATIONS_TAG), signed_ops),
                             PyTuple_GET_ITEM(sinks, K_EVIDENCE_LIMIT));
            if (done != 0) {
                Py_DECREF(model);
                Py_DECREF(listener);
                return done < 0 ? -1 : 0;
            }
        }
        {
            PyObject *argv[4] = {NULL, signed_ops, task, model};
            result = PyObject_Vectorcall(listener, argv + 1, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                         NULL);
        }
        Py_DECREF(model);
    } else {
        Py_DECREF(listener);
        if ((listener = get(scan, scanner, A_ON_TRACE)) == NULL) return -1;
        if (listener == Py_None) {
            Py_DECREF(listener);
            return 0;
        }
        /* make_trace(signed, task_key, scanner) builds the Trace as _emit does */
        {
            PyObject *argv[4] = {NULL, signed_ops, task, scanner}, *trace;
            trace = PyObject_Vectorcall(PyTuple_GET_ITEM(ctx, C_MAKE_TRACE), argv + 1,
                                        3 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
            if (trace == NULL) goto fail;
            result = PyObject_CallOneArg(listener, trace);
            Py_DECREF(trace);
        }
    }
    Py_DECREF(listener);
    if (result == NULL) return -1;
    Py_DECREF(result);
    return 0;
fail:
    Py_DECREF(listener);
    return -1;
}

/* `len(raw) + MAX_FLOAT_GROWTH * floats > TRACE_SIZE_BOUND` */
static int near_bound(Py_ssize_t size, PyObject *floats, PyObject *ctx) {
    PyObject *growth = PyTuple_GET_ITEM(ctx, C_GROWTH), *bound = PyTuple_GET_ITEM(ctx, C_BOUND);
    PyObject *length, *product, *sum;
    int verdict;
    if (PyLong_CheckExact(floats) && PyLong_CheckExact(growth) && PyLong_CheckExact(bound)) {
        int overflow = 0;
        long long f = PyLong_AsLongLongAndOverflow(floats, &overflow);
        long long g = PyLong_AsLongLong(growth), b = PyLong_AsLongLong(bound);
        if (!overflow && f >= 0 && f < (1LL << 40) && g >= 0 && g < (1LL << 20) &&
            !PyErr_Occurred()) {
            return (long long)size + g * f > b;
        }
        if (PyErr_Occurred()) PyErr_Clear();
    }
    if ((length = PyLong_FromSsize_t(size)) == NULL) return -1;
    product = PyNumber_Multiply(growth, floats);
    if (product == NULL) {
        Py_DECREF(length);
        return -1;
    }
    sum = PyNumber_Add(length, product);
    Py_DECREF(length);
    Py_DECREF(product);
    if (sum == NULL) return -1;
    verdict = PyObject_RichCompareBool(sum, bound, Py_GT);
    Py_DECREF(sum);
    return verdict;
}

/* SessionScanner._harvest(audits) with the audit kernel (scanner._native): its
 * harvest_values or audit_records called here, the line's values handed to on_values (or
 * appended to a deferring listener's pending list), the diagnostics counted. Without the
 * kernel, the Python _harvest. 0 done, -1 error. */
static int harvest(Scan *scan, PyObject *scanner, PyObject *audits) {
    PyObject *ctx = scan->ctx;
    PyObject *native, *on_values, *on_audit, *function, *result, *items, *diagnostics;
    PyObject *refs = Py_None;
    int status = -1;
    if ((native = get(scan, scanner, A_NATIVE)) == NULL) return -1;
    if (native == Py_None) {
        PyObject *argv[2] = {scanner, audits};
        Py_DECREF(native);
        result = PyObject_VectorcallMethod(S_harvest, argv, 2, NULL);
        if (result == NULL) return -1;
        Py_DECREF(result);
        return 0;
    }
    if ((on_values = get(scan, scanner, A_ON_VALUES)) == NULL) goto done_native;
    if ((on_audit = get(scan, scanner, A_ON_AUDIT)) == NULL) goto done_values;
    if ((PyObject *)Py_TYPE(on_audit) == PyTuple_GET_ITEM(ctx, C_AUDIT_REFS)) {
        /* AuditRefs.__call__: self.refs.add(call.ref), done by the audit kernel */
        PyObject *held = get(scan, on_audit, F_REFS);
        if (held == NULL) goto done_audit;
        if (PySet_CheckExact(held)) {
            refs = held;
            Py_DECREF(on_audit);
            on_audit = Py_None;
            Py_INCREF(on_audit);
        } else {
            Py_DECREF(held);
        }
    }
    if (on_values != Py_None) {
        /* kept, skipped, values = native.harvest_values(audits, self.on_audit, AuditCall,
         * js_own_keys) */
        PyObject *argv[6] = {NULL, audits, on_audit, PyTuple_GET_ITEM(ctx, C_AUDIT_CALL),
                             PyTuple_GET_ITEM(ctx, C_OWN_KEYS), refs};
        if ((function = module_function(native, S_harvest_values)) == NULL) goto done_audit;
        result = PyObject_Vectorcall(function, argv + 1, 5 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                     NULL);
    } else {
        PyObject *on_value, *on_fields;
        if ((function = module_function(native, S_audit_records)) == NULL) goto done_audit;
        if ((on_value = get(scan, scanner, A_ON_VALUE)) == NULL) {
            Py_DECREF(function);
            goto done_audit;
        }
        if ((on_fields = get(scan, scanner, A_ON_VALUE_FIELDS)) == NULL) {
            Py_DECREF(on_value);
            Py_DECREF(function);
            goto done_audit;
        }
        {
            PyObject *argv[9] = {NULL,      audits, on_audit, PyTuple_GET_ITEM(ctx, C_AUDIT_CALL),
                                 on_value,  PyTuple_GET_ITEM(ctx, C_OBSERVATION),
                                 on_fields, PyTuple_GET_ITEM(ctx, C_OWN_KEYS), refs};
            result = PyObject_Vectorcall(function, argv + 1,
                                         8 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        }
        Py_DECREF(on_value);
        Py_DECREF(on_fields);
    }
    Py_DECREF(function);
    if (result == NULL) goto done_audit;
    items = PySequence_Tuple(result);
    Py_DECREF(result);
    if (items == NULL) goto done_audit;
    {
        Py_ssize_t want = on_values != Py_None ? 3 : 2, got = PyTuple_GET_SIZE(items);
        if (got != want) {
            PyErr_Format(PyExc_ValueError, "%s values to unpack (expected %zd, got %zd)",
                         got < want ? "not enough" : "too many", want, got);
            goto done_items;
        }
    }
    if (on_values != Py_None) {
        PyObject *values = PyTuple_GET_ITEM(items, 2);
        if (values != Py_None) {
            PyObject *sinks = PyTuple_GET_ITEM(ctx, C_SINKS);
            int done = 0;
            if (sinks != Py_None && on_values == PyTuple_GET_ITEM(sinks, K_VALUES)) {
                /* DeferredEvidence.add_values: pending.append((_VALUES, values)) */
                done = defer(scan, PyTuple_GET_ITEM(sinks, K_VALUES_OWNER), P_VALUES_PENDING,
                             PyTuple_Pack(2, PyTuple_GET_ITEM(sinks, K_VALUES_TAG), values),
                             PyTuple_GET_ITEM(sinks, K_EVIDENCE_LIMIT));
            }
            if (done == 0) {
                result = PyObject_CallOneArg(on_values, values);
                done = result == NULL ? -1 : 1;
                Py_XDECREF(result);
            }
            if (done < 0) goto done_items;
        }
    }
    /* self.diagnostics.audit_calls += kept; self.diagnostics.skipped_audits += skipped */
    if ((diagnostics = get(scan, scanner, A_DIAGNOSTICS)) == NULL) goto done_items;
    if (increment_by(scan, diagnostics, D_AUDIT_CALLS, PyTuple_GET_ITEM(items, 0)) < 0) {
        Py_DECREF(diagnostics);
        goto done_items;
    }
    Py_DECREF(diagnostics);
    if ((diagnostics = get(scan, scanner, A_DIAGNOSTICS)) == NULL) goto done_items;
    status = increment_by(scan, diagnostics, D_SKIPPED_AUDITS, PyTuple_GET_ITEM(items, 1));
    Py_DECREF(diagnostics);
done_items:
    Py_DECREF(items);
done_audit:
    Py_DECREF(on_audit);
    if (refs != Py_None) Py_DECREF(refs);
done_values:
    Py_DECREF(on_values);
done_native:
    Py_DECREF(native);
    return status;
}

/* jsonparse.may_hold_negative_zero for a line's bytes: "-0" followed by no digit, '.', 'e'
 * or 'E' (the number literal -0, which the msgspec decoder reads as the integer 0; also such
 * bytes inside a string, which only sends the line to the generic path). */
static int may_hold_negative_zero(const char *text, Py_ssize_t size) {
    const char *at = text, *end = text + size;
    while (at < end && (at = memchr(at, '-', (size_t)(end - at))) != NULL) {
        if (end - at >= 2 && at[1] == '0') {
            char next = end - at > 2 ? at[2] : '\0';
            if (!(next >= '0' && next <= '9') && next != '.' && next != 'e' && next != 'E') {
                return 1;
            }
        }
        at++;
    }
    return 0;
}

/* SessionScanner._trace_line_fast(raw): 1 handled, 0 hand to the generic path, -1 error. */
static int trace_line_fast(Scan *scan, PyObject *scanner, PyObject *raw) {
    PyObject *ctx = scan->ctx, *unset = PyTuple_GET_ITEM(ctx, C_UNSET);
    PyObject *decoder, *record, *details, *trace, *guard, *guarded, *items;
    int status = -1, flag;
    /* a line that may hold -0 goes to the generic path, whose parse keeps it -0.0 (as the
     * Python's may_hold_negative_zero test does; a line that is not bytes goes there too) */
    if (!PyBytes_Check(raw) ||
        may_hold_negative_zero(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw))) {
        return 0;
    }
    if ((decoder = get(scan, scanner, A_DECODER)) == NULL) return -1;
    {
        PyObject *argv[2] = {decoder, raw};
        record = PyObject_VectorcallMethod(S_decode, argv, 2, NULL);
    }
    Py_DECREF(decoder);
    if (record == NULL) {
        if (PyErr_ExceptionMatches(PyTuple_GET_ITEM(ctx, C_FAST_ERRORS))) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    details = get(scan, record, R_DETAILS);
    if (details == NULL) goto done_record;
    if (details == unset) {
        PyObject *message = get(scan, record, R_MESSAGE);
        Py_DECREF(details);
        if (message == NULL) goto done_record;
        if (message == unset) {
            details = message;
        } else {
            details = get(scan, message, M_DETAILS);
            Py_DECREF(message);
            if (details == NULL) goto done_record;
        }
        if (details == unset) {
            Py_DECREF(details);
            status = bump_diagnostics(scan, scanner, D_LINES_WITHOUT_DETAILS) < 0 ? -1 : 1;
            goto done_record;
        }
    }
    if ((trace = get(scan, details, T_TRACE)) == NULL) goto done_details;
    if (trace == unset) {
        if (bump_diagnostics(scan, scanner, D_LINES_WITHOUT_TRACE) < 0) goto done_trace;
    } else {
        PyObject *signed_ops, *floats, *reason;
        if ((guard = get(scan, scanner, A_GUARD)) == NULL) goto done_trace;
        guarded = PyObject_CallOneArg(guard, trace);
        Py_DECREF(guard);
        if (guarded == NULL) goto done_trace;
        if (guarded == Py_NotImplemented) {
            Py_DECREF(guarded);
            guarded = PyObject_CallOneArg(PyTuple_GET_ITEM(ctx, C_STRUCT_GUARD), trace);
            if (guarded == NULL) goto done_trace;
        }
        /* signed, floats, reason = guarded */
        items = PySequence_Tuple(guarded);
        Py_DECREF(guarded);
        if (items == NULL) goto done_trace;
        if (PyTuple_GET_SIZE(items) != 3) {
            PyErr_Format(PyExc_ValueError, "%s values to unpack (expected 3, got %zd)",
                         PyTuple_GET_SIZE(items) < 3 ? "not enough" : "too many",
                         PyTuple_GET_SIZE(items));
            goto done_items;
        }
        signed_ops = PyTuple_GET_ITEM(items, 0);
        floats = PyTuple_GET_ITEM(items, 1);
        reason = PyTuple_GET_ITEM(items, 2);
        if ((flag = PyObject_IsTrue(reason)) < 0) goto done_items;
        if (!flag) {
            Py_ssize_t size = PyBytes_CheckExact(raw) ? PyBytes_GET_SIZE(raw) : PyObject_Size(raw);
            int near = size < 0 ? -1 : near_bound(size, floats, ctx);
            if (near < 0) goto done_items;
            if (near) {
                status = 0; /* near the size bound: the generic path measures it exactly */
                goto done_items;
            }
        }
        if ((flag = PyObject_IsTrue(reason)) < 0) goto done_items;
        if (flag) {
            if (reject(scan, scanner, reason) < 0) goto done_items;
        } else {
            PyObject *phases = get(scan, trace, T_PHASES), *task;
            if (phases == NULL) goto done_items;
            if ((flag = PyObject_IsTrue(phases)) < 0) {
                Py_DECREF(phases);
                goto done_items;
            }
            if (flag) {
                task = PySequence_GetItem(phases, 0);
            } else {
                task = S_none_task;
                Py_INCREF(task);
            }
            Py_DECREF(phases);
            if (task == NULL) goto done_items;
            flag = emit(scan, scanner, signed_ops, task);
            Py_DECREF(task);
            if (flag < 0) goto done_items;
        }
        Py_DECREF(items);
    }
    {
        PyObject *want = get(scan, scanner, A_WANT_AUDITS), *audits;
        if (want == NULL) goto done_trace;
        flag = PyObject_IsTrue(want);
        Py_DECREF(want);
        if (flag < 0) goto done_trace;
        if (flag) {
            if ((audits = get(scan, details, T_AUDITS)) == NULL) goto done_trace;
            flag = harvest(scan, scanner, audits);
            Py_DECREF(audits);
            if (flag < 0) goto done_trace;
        }
    }
    status = 1;
    goto done_trace;
done_items:
    Py_DECREF(items);
done_trace:
    Py_DECREF(trace);
done_details:
    Py_DECREF(details);
done_record:
    Py_DECREF(record);
    return status;
}

static int set_line_number(Scan *scan, PyObject *scanner, long long number) {
    PyObject *value = PyLong_FromLongLong(number);
    int status;
    if (value == NULL) return -1;
    status = set(scan, scanner, A_LINE_NUMBER, value);
    Py_DECREF(value);
    return status;
}

/* `mark in raw` for any line object (exact bytes take the C search). */
static int has_mark(PyObject *raw, const Needle *needle, PyObject *mark) {
    if (PyBytes_CheckExact(raw)) {
        return needle_in(needle, (const unsigned char *)PyBytes_AS_STRING(raw),
                         PyBytes_GET_SIZE(raw));
    }
    return PySequence_Contains(raw, mark);
}

static int call_line(PyObject *scanner, PyObject *method, PyObject *raw) {
    PyObject *argv[3] = {scanner, raw, Py_None};
    PyObject *result = PyObject_VectorcallMethod(method, argv, 3, NULL);
    if (result == NULL) return -1;
    Py_DECREF(result);
    return 0;
}

static PyObject *scan_batch(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *scanner, *batch, *wanted, *tallies, *ctx, *diagnostics, *oversized;
    PyObject *trace_mark, *change_mark, *assistant_mark;
    Needle *needles;
    Scan *scan;
    long long number, first = 0, counts[4] = {0, 0, 0, 0}; /* empty ignored model trace */
    int accelerate, failed = 0, i;
    Py_ssize_t at;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "scan_batch takes 5 arguments");
        return NULL;
    }
    scanner = args[0];
    batch = args[1];
    wanted = args[2];
    tallies = args[3];
    ctx = args[4];
    if (!PyList_CheckExact(batch) || !PyList_CheckExact(tallies) ||
        PyList_GET_SIZE(tallies) != 5 || !PyTuple_CheckExact(ctx) ||
        PyTuple_GET_SIZE(ctx) != C_SIZE || !PyBytes_CheckExact(PyTuple_GET_ITEM(ctx, C_TRACE_MARK)) ||
        !PyBytes_CheckExact(PyTuple_GET_ITEM(ctx, C_CHANGE_MARK)) ||
        !PyBytes_CheckExact(PyTuple_GET_ITEM(ctx, C_ASSISTANT_MARK))) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    {
        PyObject *sinks = PyTuple_GET_ITEM(ctx, C_SINKS);
        if (sinks != Py_None) {
            static const int limits[] = {K_METER_LIMIT, K_EVIDENCE_LIMIT};
            if (!PyTuple_CheckExact(sinks) || PyTuple_GET_SIZE(sinks) != K_SIZE) {
                Py_RETURN_NOTIMPLEMENTED;
            }
            for (i = 0; i < 2; i++) {
                int overflow = 0;
                PyObject *limit = PyTuple_GET_ITEM(sinks, limits[i]);
                long long value;
                if (!PyLong_CheckExact(limit)) Py_RETURN_NOTIMPLEMENTED;
                value = PyLong_AsLongLongAndOverflow(limit, &overflow);
                if (overflow || value < 0 || value > (1LL << 40)) Py_RETURN_NOTIMPLEMENTED;
            }
        }
    }
    for (i = 0; i < 5; i++) {
        int overflow = 0;
        PyObject *item = PyList_GET_ITEM(tallies, i);
        long long value;
        if (!PyLong_CheckExact(item)) Py_RETURN_NOTIMPLEMENTED;
        value = PyLong_AsLongLongAndOverflow(item, &overflow);
        if (overflow || value < 0 || value > (1LL << 60)) Py_RETURN_NOTIMPLEMENTED;
        if (i == 0) first = value;
    }
    if ((accelerate = PyObject_IsTrue(PyTuple_GET_ITEM(ctx, C_ACCELERATE))) < 0) return NULL;
    diagnostics = PyTuple_GET_ITEM(ctx, C_DIAGNOSTICS);
    oversized = PyTuple_GET_ITEM(ctx, C_OVERSIZED);
    trace_mark = PyTuple_GET_ITEM(ctx, C_TRACE_MARK);
    change_mark = PyTuple_GET_ITEM(ctx, C_CHANGE_MARK);
    assistant_mark = PyTuple_GET_ITEM(ctx, C_ASSISTANT_MARK);
    if ((needles = PyMem_Malloc(3 * sizeof(Needle))) == NULL) return PyErr_NoMemory();
    if ((scan = PyMem_Malloc(sizeof(Scan))) == NULL) {
        PyMem_Free(needles);
        return PyErr_NoMemory();
    }
    scan->ctx = ctx;
    for (i = 0; i < SLOT_COUNT; i++) {
        scan->slots[i].type = NULL;
        scan->slots[i].tag = 0;
        scan->slots[i].offset = -1;
    }
    needle_init(&needles[0], trace_mark);
    needle_init(&needles[1], change_mark);
    needle_init(&needles[2], assistant_mark);
    number = first;
    /* the batch is walked by index, as `for raw in batch` walks a list */
    for (at = 0; at < PyList_GET_SIZE(batch); at++) {
        PyObject *raw = PyList_GET_ITEM(batch, at);
        int found;
        Py_INCREF(raw);
        number++;
        found = has_mark(raw, &needles[0], trace_mark);
        if (found < 0) goto fail_raw;
        if (found) {
            counts[3]++;
            if (set_line_number(scan, scanner, number) < 0) goto fail_raw;
            if (wanted != Py_None) {
                PyObject *index = PyLong_FromLongLong(number - first - 1);
                if (index == NULL) goto fail_raw;
                found = PySequence_Contains(wanted, index);
                Py_DECREF(index);
                if (found < 0) goto fail_raw;
                if (!found) {
                    Py_DECREF(raw);
                    continue;
                }
            }
            found = accelerate ? trace_line_fast(scan, scanner, raw) : 0;
            if (found < 0) goto fail_raw;
            if (!found && call_line(scanner, S_trace_line, raw) < 0) goto fail_raw;
            Py_DECREF(raw);
            continue;
        }
        if (PyBytes_CheckExact(raw)) {
            found = PyBytes_GET_SIZE(raw) == 0;
        } else if ((found = PyObject_Not(raw)) < 0) {
            goto fail_raw;
        }
        if (found) {
            if (raw == oversized) {
                PyObject *name, *line, *text, *result;
                if (increment(scan, diagnostics, D_OVERSIZED_LINES) < 0) goto fail_raw;
                if ((name = get(scan, scanner, A_NAME)) == NULL) goto fail_raw;
                if ((line = PyLong_FromLongLong(number)) == NULL) {
                    Py_DECREF(name);
                    goto fail_raw;
                }
                text = where(name, line);
                Py_DECREF(name);
                Py_DECREF(line);
                if (text == NULL) goto fail_raw;
                {
                    PyObject *argv[3] = {diagnostics, text, S_cap_note};
                    result = PyObject_VectorcallMethod(S_note, argv, 3, NULL);
                }
                Py_DECREF(text);
                if (result == NULL) goto fail_raw;
                Py_DECREF(result);
            } else {
                counts[0]++;
            }
            Py_DECREF(raw);
            continue;
        }
        found = has_mark(raw, &needles[1], change_mark);
        if (found == 0) found = has_mark(raw, &needles[2], assistant_mark);
        if (found < 0) goto fail_raw;
        if (found) {
            counts[2]++;
            if (set_line_number(scan, scanner, number) < 0) goto fail_raw;
            if (call_line(scanner, S_model_line, raw) < 0) goto fail_raw;
        } else {
            counts[1]++;
        }
        Py_DECREF(raw);
        continue;
    fail_raw:
        Py_DECREF(raw);
        failed = 1;
        break;
    }
    PyMem_Free(needles);
    PyMem_Free(scan);
    {
        /* write the tallies back (also on an error, which stays set) */
        PyObject *type, *value, *traceback;
        long long values[5];
        PyErr_Fetch(&type, &value, &traceback);
        values[0] = number;
        for (i = 1; i < 5; i++) {
            PyObject *item = PyList_GET_ITEM(tallies, i);
            values[i] = PyLong_AsLongLong(item) + counts[i - 1];
        }
        for (i = 0; i < 5; i++) {
            PyObject *item = PyLong_FromLongLong(values[i]);
            if (item == NULL || PyList_SetItem(tallies, i, item) < 0) {
                Py_XDECREF(type);
                Py_XDECREF(value);
                Py_XDECREF(traceback);
                return NULL;
            }
        }
        PyErr_Restore(type, value, traceback);
    }
    if (failed) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"scan_batch", (PyCFunction)(void (*)(void))scan_batch, METH_FASTCALL,
     "scan_batch(scanner, batch, wanted, tallies, ctx): one batch of scan_stream, or "
     "NotImplemented."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pytest_entropy.ingest._scan_native",
    "The session scanner's line loop (native twin of SessionScanner.scan_stream's batch\n"
    "loop, _trace_line_fast and _emit).",
    -1, methods,
};

static int init_constants(void) {
    static const struct {
        PyObject **slot;
        const char *text;
    } table[] = {
        {&S_line_number, "line_number"}, {&S_name, "name"}, {&S_note, "note"},
        {&S_oversized_lines, "oversized_lines"}, {&S_model_line, "_model_line"},
        {&S_trace_line, "_trace_line"}, {&S_decoder, "_decoder"}, {&S_decode, "decode"},
        {&S_details, "details"}, {&S_message, "message"}, {&S_trace, "trace"},
        {&S_diagnostics, "diagnostics"}, {&S_lines_without_details, "lines_without_details"},
        {&S_lines_without_trace, "lines_without_trace"}, {&S_guard, "_guard"},
        {&S_reject, "reject"}, {&S_phases, "phases"}, {&S_want_audits, "_want_audits"},
        {&S_harvest, "_harvest"}, {&S_audits, "audits"}, {&S_traces, "traces"},
        {&S_meter, "meter"}, {&S_add_signed, "add_signed"}, {&S_on_signed, "on_signed"},
        {&S_on_trace, "on_trace"}, {&S_current_model, "current_model"}, {&S_colon, ":"},
        {&S_empty, ""}, {&S_none_task, "(none)"}, {&S_cap_note, "line longer than the cap"},
        {&S_native, "_native"}, {&S_on_values, "on_values"}, {&S_on_audit, "on_audit"},
        {&S_on_value, "on_value"}, {&S_on_value_fields, "on_value_fields"},
        {&S_harvest_values, "harvest_values"}, {&S_audit_records, "audit_records"},
        {&S_audit_calls, "audit_calls"}, {&S_skipped_audits, "skipped_audits"},
        {&S_pending, "pending"}, {&S_settle, "settle"}, {&S_refs, "refs"},
    };
    size_t i;
    if (ONE != NULL) return 0; /* initialised by an earlier import */
    for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if ((*table[i].slot = PyUnicode_InternFromString(table[i].text)) == NULL) return -1;
    }
    ONE = PyLong_FromLong(1);
    return ONE == NULL ? -1 : 0;
}

PyMODINIT_FUNC PyInit__scan_native(void) {
    PyObject *module;
    if (init_constants() < 0) return NULL;
    if ((module = PyModule_Create(&module_def)) == NULL) return NULL;
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", PE_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
