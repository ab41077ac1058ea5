/*
 * tool.c: a program's tool functions (tools.read, tools["odd-name"]) in C.
 * Calling one gives a call: an awaitable that asyncio takes for a
 * coroutine (runtime.py registers its type with collections.abc.Coroutine,
 * so asyncio.create_task and gather take it). As a coroutine's body would,
 * it makes the nested call only when it is first awaited or sent to: then
 * the host is asked (module.c's ptcx_call_tool), the call's future is made and
 * registered in the runtime's calls, and the call waits on the future
 * through the future's own iterator (what `await fut` runs). A refused
 * call raises then too: ToolCallError (runtime.py's refused makes it),
 * TypeError for arguments that are not plain JSON. Without a frame or a
 * coroutine object per call, as the async def it replaces had.
 */
#include "ptcx.h"

static PyObject *future_type; /* asyncio.Future: bound to the running loop */
static PyObject *calls;       /* call id -> (future, tool name) */
static PyObject *refused;     /* runtime.py's refused(name, code) -> the exception */
static PyObject *globals;     /* runtime.py's globals: closing */
static PyObject *str_closing, *str_throw;

/* ---- the call ---- */

typedef struct {
    PyObject_HEAD
    PyObject *name, *args; /* args: a dict, one object, or None ({}) */
    PyObject *iter;        /* the future's iterator, once started */
    char finished;
} call_object;

static PyTypeObject call_type;

static int call_traverse(PyObject *self, visitproc visit, void *arg)
{
    call_object *c = (call_object *)self;
    Py_VISIT(c->name);
    Py_VISIT(c->args);
    Py_VISIT(c->iter);
    return 0;
}

static int call_clear(PyObject *self)
{
    call_object *c = (call_object *)self;
    Py_CLEAR(c->name);
    Py_CLEAR(c->args);
    Py_CLEAR(c->iter);
    return 0;
}

static PyObject *accessor(PyObject *name);

/* call_finalize warns of a call dropped without being awaited, which never
 * ran, as CPython warns of a coroutine never awaited (a warning is a log
 * line of level error, [error]). */
static void call_finalize(PyObject *self)
{
    call_object *c = (call_object *)self;
    if (c->finished || c->iter || !c->name)
        return;
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *a = accessor(c->name);
    if (!a || PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "the call tools%U(...) was never awaited, so it never ran", a) < 0)
        PyErr_WriteUnraisable(self);
    Py_XDECREF(a);
    PyErr_SetRaisedException(exc);
}

static void call_dealloc(PyObject *self)
{
    if (PyObject_CallFinalizerFromDealloc(self) < 0)
        return; /* resurrected */
    PyObject_GC_UnTrack(self);
    call_clear(self);
    PyObject_GC_Del(self);
}

/* accessor is how a program reaches the tool: .name, or ['name']. */
static PyObject *accessor(PyObject *name)
{
    return PyUnicode_IsIdentifier(name) ? PyUnicode_FromFormat(".%U", name) : PyUnicode_FromFormat("[%R]", name);
}

/* start makes the call: 0, or -1 with the exception the await raises. */
static int start(call_object *c)
{
    if (c->finished || c->iter) {
        PyErr_SetString(PyExc_RuntimeError, "cannot reuse already awaited coroutine");
        return -1;
    }
    c->finished = 1; /* also when the call fails: it is not made again */
    PyObject *closing = PyDict_GetItemWithError(globals, str_closing); /* borrowed */
    if (!closing && PyErr_Occurred())
        return -1;
    int on = closing ? PyObject_IsTrue(closing) : 0;
    if (on < 0)
        return -1;
    if (on) {
        PyObject *exc = PyDict_GetItemString(globals, "Closing");
        PyErr_SetNone(exc ? exc : PyExc_RuntimeError);
        return -1;
    }
    PyObject *id = ptcx_call_tool(c->name, c->args); /* module.c */
    if (!id) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyObject *e = PyErr_GetRaisedException();
            PyObject *a = accessor(c->name);
            if (a)
                PyErr_Format(PyExc_TypeError, "tools%U: the arguments are not plain JSON: %S", a, e);
            Py_XDECREF(a);
            Py_DECREF(e);
        }
        return -1;
    }
    long cid = PyLong_AsLong(id);
    if (cid <= 0) {
        Py_DECREF(id);
        PyObject *exc = PyObject_CallFunction(refused, "Ol", c->name, cid);
        if (exc) {
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
        }
        return -1;
    }
    PyObject *fut = PyObject_CallNoArgs(future_type);
    PyObject *entry = fut ? PyTuple_Pack(2, fut, c->name) : NULL;
    int e = entry ? PyDict_SetItem(calls, id, entry) : -1;
    Py_XDECREF(entry);
    Py_DECREF(id);
    if (e < 0) {
        Py_XDECREF(fut);
        return -1;
    }
    unaryfunc await = Py_TYPE(fut)->tp_as_async ? Py_TYPE(fut)->tp_as_async->am_await : NULL;
    c->iter = await ? await(fut) : PyObject_CallMethod(fut, "__await__", NULL);
    Py_DECREF(fut);
    if (!c->iter)
        return -1;
    c->finished = 0;
    return 0;
}

/* stopped turns the end of the future's iterator into the call's end. */
static void stopped(call_object *c)
{
    c->finished = 1;
    Py_CLEAR(c->iter);
}

static PySendResult call_am_send(PyObject *self, PyObject *arg, PyObject **result)
{
    call_object *c = (call_object *)self;
    if (!c->iter) {
        if (arg != Py_None && !c->finished) {
            PyErr_SetString(PyExc_TypeError, "can't send non-None value to a just-started coroutine");
            *result = NULL;
            return PYGEN_ERROR;
        }
        if (start(c) < 0) {
            *result = NULL;
            return PYGEN_ERROR;
        }
    }
    PySendResult r = PyIter_Send(c->iter, arg, result);
    if (r != PYGEN_NEXT)
        stopped(c);
    return r;
}

static PyObject *call_await(PyObject *self)
{
    call_object *c = (call_object *)self;
    if (!c->iter && start(c) < 0)
        return NULL;
    /* The future's iterator is the awaitable's: the awaiting frame drives
     * it, and this call is done with it. */
    PyObject *it = c->iter;
    c->iter = NULL;
    c->finished = 1;
    return it;
}

/* send(value), as a coroutine's. */
static PyObject *call_send(PyObject *self, PyObject *arg)
{
    PyObject *result;
    switch (call_am_send(self, arg, &result)) {
    case PYGEN_NEXT:
        return result;
    case PYGEN_RETURN: {
        PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, result);
        Py_DECREF(result);
        if (stop) {
            PyErr_SetObject(PyExc_StopIteration, stop);
            Py_DECREF(stop);
        }
        return NULL;
    }
    default:
        return NULL;
    }
}

/* throw(exc), as a coroutine's: into the future's iterator once started;
 * before, the call is not made and the exception raised. */
static PyObject *call_throw(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    call_object *c = (call_object *)self;
    if (argc < 1 || argc > 3)
        return PyErr_Format(PyExc_TypeError, "throw expected 1 to 3 arguments, got %zd", argc);
    if (c->iter) {
        /* Its own reference: throw may run Python code (an exception's
         * __init__), which may close this call meanwhile. */
        PyObject *it = Py_NewRef(c->iter);
        PyObject *stack[] = {it, argv[0], argc > 1 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL};
        PyObject *r = PyObject_VectorcallMethod(str_throw, stack, (size_t)(1 + argc), NULL);
        Py_DECREF(it);
        if (!r)
            stopped(c);
        return r;
    }
    c->finished = 1;
    PyObject *exc = argv[0];
    if (PyExceptionInstance_Check(exc)) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    } else if (PyExceptionClass_Check(exc)) {
        PyErr_SetObject(exc, argc > 1 && argv[1] != Py_None ? argv[1] : NULL);
    } else {
        PyErr_SetString(PyExc_TypeError, "exceptions must be classes or instances deriving from BaseException");
    }
    return NULL;
}

/* close(), as a coroutine's: the call (if made) is left to its future. */
static PyObject *call_close(PyObject *self, PyObject *unused)
{
    stopped((call_object *)self);
    Py_RETURN_NONE;
}

static PyObject *call_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<call of tool %R>", ((call_object *)self)->name);
}

static PyMethodDef call_methods[] = {
    {"send", call_send, METH_O, "send(value), as a coroutine's"},
    {"throw", (PyCFunction)(void (*)(void))call_throw, METH_FASTCALL, "throw(exc), as a coroutine's"},
    {"close", call_close, METH_NOARGS, "close(), as a coroutine's"},
    {NULL},
};

static PyAsyncMethods call_async = {
    .am_await = call_await,
    .am_send = call_am_send,
};

static PyTypeObject call_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptcx.Call",
    .tp_basicsize = sizeof(call_object),
    .tp_dealloc = call_dealloc,
    .tp_as_async = &call_async,
    .tp_repr = call_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A nested call of a tool, made when it is first awaited: await it, or give it to asyncio.",
    .tp_traverse = call_traverse,
    .tp_clear = call_clear,
    .tp_methods = call_methods,
    .tp_finalize = call_finalize,
};

bool ptcx_is_call(PyObject *v) { return Py_IS_TYPE(v, &call_type); }

/* ---- the tool ---- */

typedef struct {
    PyObject_HEAD
    PyObject *name;
    vectorcallfunc vectorcall;
} tool_object;

static void tool_dealloc(PyObject *self)
{
    Py_XDECREF(((tool_object *)self)->name);
    Py_TYPE(self)->tp_free(self);
}

/* tool_call(*args, **kwargs) -> a call: keyword arguments, or one dict (or
 * any one value: the host checks it against the schema), or none ({}). */
static PyObject *tool_vectorcall(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames)
{
    tool_object *t = (tool_object *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *args;
    if (nkw > 0) {
        if (nargs > 0) {
            PyObject *a = accessor(t->name);
            if (a)
                PyErr_Format(PyExc_TypeError, "tools%U: pass keyword arguments or one dict, not both", a);
            Py_XDECREF(a);
            return NULL;
        }
        args = PyDict_New();
        for (Py_ssize_t i = 0; args && i < nkw; i++) {
            if (PyDict_SetItem(args, PyTuple_GET_ITEM(kwnames, i), argv[i]) < 0)
                Py_CLEAR(args);
        }
        if (!args)
            return NULL;
    } else if (nargs == 1) {
        args = Py_NewRef(argv[0]);
    } else if (nargs == 0) {
        args = Py_NewRef(Py_None);
    } else {
        PyObject *a = accessor(t->name);
        if (a)
            PyErr_Format(PyExc_TypeError, "tools%U: pass keyword arguments or one dict, not %zd positional arguments", a,
                         nargs);
        Py_XDECREF(a);
        return NULL;
    }
    call_object *c = PyObject_GC_New(call_object, &call_type);
    if (!c) {
        Py_DECREF(args);
        return NULL;
    }
    c->name = Py_NewRef(t->name);
    c->args = args;
    c->iter = NULL;
    c->finished = 0;
    PyObject_GC_Track(c);
    return (PyObject *)c;
}

static PyObject *tool_get_name(PyObject *self, void *unused) { return Py_NewRef(((tool_object *)self)->name); }

static PyObject *tool_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<tool %R>", ((tool_object *)self)->name);
}

static PyGetSetDef tool_getset[] = {
    {"__name__", tool_get_name, NULL, "the tool's name", NULL},
    {"__qualname__", tool_get_name, NULL, "the tool's name", NULL},
    {NULL},
};

static PyTypeObject tool_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptcx.Tool",
    .tp_basicsize = sizeof(tool_object),
    .tp_dealloc = tool_dealloc,
    .tp_vectorcall_offset = offsetof(tool_object, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = tool_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A tool of the program's: await tools.name(key=value), or tools.name({...}).",
    .tp_getset = tool_getset,
};

/* make_tool(name) -> the tool's function. */
static PyObject *make_tool(PyObject *m, PyObject *name)
{
    if (!PyUnicode_Check(name))
        return PyErr_Format(PyExc_TypeError, "make_tool(name: str)");
    tool_object *t = PyObject_New(tool_object, &tool_type);
    if (!t)
        return NULL;
    t->name = Py_NewRef(name);
    t->vectorcall = tool_vectorcall;
    return (PyObject *)t;
}

/* tools_init(future_type, calls, refused, globals): what calls use, from
 * runtime.py. */
static PyObject *tools_init(PyObject *m, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 4 || !PyDict_Check(argv[1]) || !PyDict_Check(argv[3]))
        return PyErr_Format(PyExc_TypeError, "tools_init(future_type, calls, refused, globals)");
    PyObject **slots[] = {&future_type, &calls, &refused, &globals};
    for (Py_ssize_t i = 0; i < argc; i++)
        Py_XSETREF(*slots[i], Py_NewRef(argv[i]));
    Py_RETURN_NONE;
}

static PyMethodDef tool_methods[] = {
    {"make_tool", make_tool, METH_O, "make_tool(name) -> the tool's function"},
    {"tools_init", (PyCFunction)(void (*)(void))tools_init, METH_FASTCALL,
     "tools_init(future_type, calls, refused, globals)"},
    {NULL},
};

int ptcx_tool_add(PyObject *m)
{
    if (!str_closing && !(str_closing = PyUnicode_InternFromString("closing")))
        return -1;
    if (!str_throw && !(str_throw = PyUnicode_InternFromString("throw")))
        return -1;
    if (PyType_Ready(&call_type) < 0 || PyType_Ready(&tool_type) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "Call", (PyObject *)&call_type) < 0)
        return -1;
    return PyModule_AddFunctions(m, tool_methods);
}
