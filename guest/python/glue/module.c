/*
 * module.c: the built-in module _ptcx, through which the runtime
 * (runtime.py) reaches the host's imports, and the Handle type.
 *
 * What it checks itself, so that no Python code (the runtime's, or a
 * program's that imports _ptcx) can make the host trap: a call's name is one
 * the config bound (bind), its arguments plain JSON (encode.c); the result
 * and the error are given at most once, the result as plain JSON; a log's
 * level is 0 to 4. A Handle's ref is kept in C: no Python code can read it;
 * only the encoder writes it, as the marker of a handle in a call's
 * arguments or in the result (docs/abi.md, "Handles").
 */
#include <string.h>

#include "ptcx.h"

int32_t ptcx_final = -1;

static PyObject *bound;  /* frozenset of the bound tool names */
static PyObject *reader; /* runtime's read(handle, as) -> awaitable */
static ptcx_buf args_buf, result_buf;

int32_t ptcx_report_static(const char *json)
{
    if (ptcx_final < 0) {
        ptcx_host_error(json, strlen(json));
        ptcx_final = PTCX_ERROR;
    }
    return ptcx_final;
}

/* ---- Handle ---- */

typedef struct {
    PyObject_HEAD
    char ref[33];
    PyObject *size, *labels, *tool;
} handle_object;

static PyTypeObject handle_type;

const char *ptcx_handle_ref(PyObject *v)
{
    return Py_IS_TYPE(v, &handle_type) ? ((handle_object *)v)->ref : NULL;
}

static void handle_dealloc(PyObject *self)
{
    handle_object *h = (handle_object *)self;
    Py_XDECREF(h->size);
    Py_XDECREF(h->labels);
    Py_XDECREF(h->tool);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *handle_read(PyObject *self, const char *as)
{
    if (!reader)
        return PyErr_Format(PyExc_RuntimeError, "handles cannot be read here");
    PyObject *a = PyUnicode_FromString(as);
    if (!a)
        return NULL;
    PyObject *r = PyObject_CallFunctionObjArgs(reader, self, a, NULL);
    Py_DECREF(a);
    return r;
}

static PyObject *handle_text(PyObject *self, PyObject *unused) { return handle_read(self, "text"); }
static PyObject *handle_json(PyObject *self, PyObject *unused) { return handle_read(self, "json"); }

static PyObject *handle_str(PyObject *self)
{
    PyErr_SetString(PyExc_TypeError,
                    "a Handle is not text: read it with await handle.text(), or pass the handle itself to a tool");
    return NULL;
}

static PyObject *handle_repr(PyObject *self)
{
    handle_object *h = (handle_object *)self;
    return PyUnicode_FromFormat("<Handle of %S bytes from tool %R>", h->size, h->tool);
}

static PyObject *handle_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
    PyErr_SetString(PyExc_TypeError, "handles are made by the host: a tool declared to return handles gives them");
    return NULL;
}

static PyMethodDef handle_methods[] = {
    {"text", handle_text, METH_NOARGS, "await h.text(): the value as text (a nested call)"},
    {"json", handle_json, METH_NOARGS, "await h.json(): the value as a Python value (a nested call)"},
    {NULL},
};

static PyMemberDef handle_members[] = {
    {"size", Py_T_OBJECT_EX, offsetof(handle_object, size), Py_READONLY, "the value's size in bytes"},
    {"labels", Py_T_OBJECT_EX, offsetof(handle_object, labels), Py_READONLY,
     "the value's labels: integrity and confidentiality (read-only)"},
    {"tool", Py_T_OBJECT_EX, offsetof(handle_object, tool), Py_READONLY, "the tool that gave it"},
    {NULL},
};

static PyTypeObject handle_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptcx.Handle",
    .tp_basicsize = sizeof(handle_object),
    .tp_dealloc = handle_dealloc,
    .tp_repr = handle_repr,
    .tp_str = handle_str,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tool's result kept by the host: read it with await h.text() or await h.json(), "
              "or pass it to another tool as it is.",
    .tp_methods = handle_methods,
    .tp_members = handle_members,
    .tp_new = handle_new,
};

/* make_handle(ref, size, integrity, confidentiality, tool) */
static PyObject *make_handle(PyObject *m, PyObject *args)
{
    const char *ref;
    Py_ssize_t ref_len;
    PyObject *size, *integrity, *confidentiality, *tool;
    if (!PyArg_ParseTuple(args, "s#OUUU", &ref, &ref_len, &size, &integrity, &confidentiality, &tool))
        return NULL;
    /* The host's refs are hex digits; anything else could not be written
     * into JSON as it is, so it is refused. */
    bool hex = ref_len <= 32;
    for (Py_ssize_t i = 0; hex && i < ref_len; i++)
        hex = (ref[i] >= '0' && ref[i] <= '9') || (ref[i] >= 'a' && ref[i] <= 'f') || (ref[i] >= 'A' && ref[i] <= 'F');
    if (!hex)
        return PyErr_Format(PyExc_ValueError, "a handle's ref is at most 32 hex digits");
    handle_object *h = PyObject_New(handle_object, &handle_type);
    if (!h)
        return NULL;
    memcpy(h->ref, ref, (size_t)ref_len);
    h->ref[ref_len] = 0;
    h->size = h->labels = h->tool = NULL;
    PyObject *d = Py_BuildValue("{sOsO}", "integrity", integrity, "confidentiality", confidentiality);
    if (d) {
        h->labels = PyDictProxy_New(d);
        Py_DECREF(d);
    }
    h->size = Py_NewRef(size);
    h->tool = Py_NewRef(tool);
    if (!h->labels) {
        Py_DECREF(h);
        return NULL;
    }
    return (PyObject *)h;
}

/* ---- calls, logs, timers, the outcome ---- */

static PyObject *bind(PyObject *m, PyObject *names)
{
    PyObject *s = PyFrozenSet_New(names);
    if (!s)
        return NULL;
    Py_XSETREF(bound, s);
    Py_RETURN_NONE;
}

static PyObject *set_reader(PyObject *m, PyObject *fn)
{
    Py_XSETREF(reader, Py_NewRef(fn));
    Py_RETURN_NONE;
}

static PyObject *host_call(const char *name, size_t name_len, ptcx_buf *args)
{
    int32_t id = ptcx_host_call(name, name_len, args->buf, args->len);
    ptcx_buf_reset(args);
    return PyLong_FromLong(id);
}

PyObject *ptcx_call_tool(PyObject *tool, PyObject *args)
{
    int in = bound ? PySet_Contains(bound, tool) : 0;
    if (in < 0)
        return NULL;
    if (!in)
        return PyErr_Format(PyExc_AttributeError, "%R is not a bound tool", tool);
    Py_ssize_t n;
    const char *name = PyUnicode_AsUTF8AndSize(tool, &n);
    if (!name)
        return NULL;
    args_buf.len = 0;
    if (args == Py_None) {
        if (ptcx_buf_put(&args_buf, "{}", 2))
            return NULL;
    } else if (ptcx_encode(args, &args_buf, "args", 100)) {
        ptcx_buf_reset(&args_buf);
        return NULL;
    }
    return host_call(name, (size_t)n, &args_buf);
}

/* call(name, args) -> the call's id, or the host's refusal (< 0): as
 * ptcx_call_tool. */
static PyObject *call(PyObject *m, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 2 || !PyUnicode_Check(argv[0]))
        return PyErr_Format(PyExc_TypeError, "call(name: str, args)");
    return ptcx_call_tool(argv[0], argv[1]);
}

/* read_handle(h, as) -> the id of the call $handle {"ref", "as"}, or a
 * refusal (< 0). */
static PyObject *read_handle(PyObject *m, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 2 || !Py_IS_TYPE(argv[0], &handle_type) || !PyUnicode_Check(argv[1]))
        return PyErr_Format(PyExc_TypeError, "read_handle(handle, as: str)");
    const char *as = PyUnicode_AsUTF8(argv[1]);
    if (!as)
        return NULL;
    if (strcmp(as, "text") != 0 && strcmp(as, "json") != 0)
        return PyErr_Format(PyExc_ValueError, "a handle is read as text or json");
    char json[96];
    int len = snprintf(json, sizeof json, "{\"ref\":\"%s\",\"as\":\"%s\"}", ((handle_object *)argv[0])->ref, as);
    return PyLong_FromLong(ptcx_host_call("$handle", 7, json, (size_t)len));
}

static PyObject *log_line(PyObject *m, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 2 || !PyLong_Check(argv[0]) || !PyUnicode_Check(argv[1]))
        return PyErr_Format(PyExc_TypeError, "log(level: int, text: str)");
    long level = PyLong_AsLong(argv[0]);
    if (level < 0 || level > 4)
        return PyErr_Format(PyExc_ValueError, "a log level is 0 to 4");
    PyObject *b = PyUnicode_AsEncodedString(argv[1], "utf-8", "replace");
    if (!b)
        return NULL;
    ptcx_host_log((int32_t)level, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    Py_RETURN_NONE;
}

static PyObject *timer_set(PyObject *m, PyObject *ms)
{
    long d = PyLong_AsLong(ms);
    if (d == -1 && PyErr_Occurred())
        return NULL;
    if (d > INT32_MAX)
        d = INT32_MAX;
    if (d < 0)
        d = 0;
    return PyLong_FromLong(ptcx_host_timer_set((int32_t)d));
}

static PyObject *timer_clear(PyObject *m, PyObject *id)
{
    long i = PyLong_AsLong(id);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    if (i > 0 && i <= INT32_MAX)
        ptcx_host_timer_clear((int32_t)i);
    Py_RETURN_NONE;
}

static PyObject *settled(void)
{
    return PyErr_Format(PyExc_RuntimeError, "the program's outcome was given already");
}

/* result(value): the program's result, encoded (a TypeError naming the path
 * when it is not plain JSON: nothing is given then). */
static PyObject *result(PyObject *m, PyObject *v)
{
    if (ptcx_final >= 0)
        return settled();
    result_buf.len = 0;
    if (ptcx_encode(v, &result_buf, "result", 200)) {
        ptcx_buf_reset(&result_buf);
        return NULL;
    }
    ptcx_host_result(result_buf.buf, result_buf.len);
    ptcx_buf_reset(&result_buf);
    ptcx_final = PTCX_DONE;
    Py_RETURN_NONE;
}

/* no_result(): the program settled without a result. */
static PyObject *no_result(PyObject *m, PyObject *unused)
{
    if (ptcx_final >= 0)
        return settled();
    ptcx_final = PTCX_DONE;
    Py_RETURN_NONE;
}

/* error(json): the program's failure, error JSON (docs/abi.md) that the
 * runtime made. */
static PyObject *error(PyObject *m, PyObject *json)
{
    if (ptcx_final >= 0)
        return settled();
    Py_ssize_t n;
    const char *s = PyUnicode_Check(json) ? PyUnicode_AsUTF8AndSize(json, &n) : NULL;
    if (!s)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "error(json: str)");
    ptcx_host_error(s, (size_t)n);
    ptcx_final = PTCX_ERROR;
    Py_RETURN_NONE;
}

static PyObject *settled_status(PyObject *m, PyObject *unused) { return PyLong_FromLong(ptcx_final); }

static PyObject *memory_exhausted(PyObject *m, PyObject *unused) { return PyBool_FromLong(ptcx_memory_exhausted()); }

static PyObject *set_memory_limit(PyObject *m, PyObject *n)
{
    size_t bytes = PyLong_AsSize_t(n);
    if (bytes == (size_t)-1 && PyErr_Occurred())
        return NULL;
    ptcx_set_memory_limit(bytes);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_O, "bind(names): the tool names calls may use"},
    {"set_reader", set_reader, METH_O, "set_reader(fn): fn(handle, as) reads a handle"},
    {"make_handle", make_handle, METH_VARARGS, "make_handle(ref, size, integrity, confidentiality, tool)"},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "call(name, args) -> id, or a refusal (< 0)"},
    {"read_handle", (PyCFunction)(void (*)(void))read_handle, METH_FASTCALL, "read_handle(h, as) -> id"},
    {"log", (PyCFunction)(void (*)(void))log_line, METH_FASTCALL, "log(level, text)"},
    {"timer_set", timer_set, METH_O, "timer_set(ms) -> id, or a refusal (< 0)"},
    {"timer_clear", timer_clear, METH_O, "timer_clear(id)"},
    {"result", result, METH_O, "result(value): the program's result"},
    {"no_result", no_result, METH_NOARGS, "no_result(): the program settled without one"},
    {"error", error, METH_O, "error(json): the program's failure"},
    {"compile_program", (PyCFunction)(void (*)(void))ptcx_compile_program, METH_FASTCALL,
     "compile_program(source, filename) -> (code, has_result): has_result when the last statement is an expression, "
     "whose value the code assigns to <result>"},
    {"settled", settled_status, METH_NOARGS, "settled() -> the final status, or -1"},
    {"memory_exhausted", memory_exhausted, METH_NOARGS, "memory_exhausted() -> whether memory ran out"},
    {"set_memory_limit", set_memory_limit, METH_O, "set_memory_limit(bytes): the soft limit (0: none)"},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_ptcx",
    .m_doc = "The Python guest's way to the ptcx host (guest/python/glue/module.c).",
    .m_size = -1,
    .m_methods = methods,
};

PyObject *ptcx_module_init(void)
{
    if (PyType_Ready(&handle_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddObjectRef(m, "Handle", (PyObject *)&handle_type) < 0 || ptcx_loop_add(m) < 0 || ptcx_tool_add(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
