/*
 * loop.c: the hot path of the runtime's event loop (runtime.py's Loop), in
 * C: what every awaited nested call goes through, without a Python frame.
 *
 *   - call_soon, the loop's call_soon for the C Future and Task (they call
 *     it when a call's future is resolved, and to step a task): a callback
 *     with its context becomes a wakeup, a small C handle, appended to the
 *     loop's ready queue. Without a context, or in debug mode, the loop's
 *     own (Python) call_soon makes an asyncio handle.
 *   - step runs the ready callbacks until there are none: a wakeup in its
 *     context (Context.run's work), an asyncio handle by its _run; an
 *     exception of a wakeup's callback goes to the loop's handler, as
 *     Handle._run sends it (runtime.py's Loop._callback_failed), and
 *     SystemExit and KeyboardInterrupt end the step.
 *   - ptcx_resume_fast is ptcx_resume's common case: a call the program
 *     waits on answered with a compact JSON value. It resolves the call's
 *     future (one cancelled meanwhile drops it), steps the loop, and
 *     settles the program if it is done (runtime.py's settle); anything
 *     else goes to runtime.py's resume.
 *
 * runtime.py hands this file what it uses once, in loop_init; the loop is
 * running from then on (asyncio's running loop, _thread_id), as a
 * program's code only ever runs inside a step.
 */
#include "ptcx.h"

static PyObject *ready;           /* the loop's ready deque */
static PyObject *append, *popleft; /* its bound methods */
static PyObject *py_call_soon;    /* Loop.call_soon bound to the loop */
static PyObject *callback_failed; /* Loop._callback_failed bound to the loop */
static PyObject *calls;           /* call id -> (future, tool name) */
static PyObject *scan_once;       /* the C JSON scanner's scan_once */
static PyObject *globals;         /* runtime.py's globals: its main task */
static PyObject *settle;          /* runtime.py's settle() */
static PyObject *step_failed;     /* runtime.py's step_failed(exc) */
static PyObject *invalid_state;   /* asyncio.InvalidStateError */
static bool debug;                /* the loop's debug mode (set_debug) */
static PyObject *str_append, *str_popleft, *str_cancelled, *str_run, *str_done, *str_set_result, *str_main, *str_context;

/* ---- the wakeup ---- */

typedef struct {
    PyObject_HEAD
    PyObject *callback, *args, *context;
    PyObject *arg; /* the one argument of most (a task's wakeup: the future), in args too */
    char cancelled;
} wakeup_object;

static int wakeup_traverse(PyObject *self, visitproc visit, void *arg)
{
    wakeup_object *w = (wakeup_object *)self;
    Py_VISIT(w->callback);
    Py_VISIT(w->args);
    Py_VISIT(w->context);
    return 0;
}

static int wakeup_clear(PyObject *self)
{
    wakeup_object *w = (wakeup_object *)self;
    Py_CLEAR(w->callback);
    Py_CLEAR(w->args);
    Py_CLEAR(w->context);
    w->arg = NULL;
    return 0;
}

static void wakeup_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    wakeup_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *wakeup_cancel(PyObject *self, PyObject *unused)
{
    ((wakeup_object *)self)->cancelled = 1;
    Py_RETURN_NONE;
}

static PyObject *wakeup_is_cancelled(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(((wakeup_object *)self)->cancelled);
}

static PyObject *wakeup_get_context(PyObject *self, PyObject *unused)
{
    return Py_NewRef(((wakeup_object *)self)->context);
}

static PyMethodDef wakeup_methods[] = {
    {"cancel", wakeup_cancel, METH_NOARGS, "cancel(): the callback is not run"},
    {"cancelled", wakeup_is_cancelled, METH_NOARGS, "cancelled() -> whether it was cancelled"},
    {"get_context", wakeup_get_context, METH_NOARGS, "get_context() -> the context the callback runs in"},
    {NULL},
};

static PyMemberDef wakeup_members[] = {
    {"_callback", Py_T_OBJECT_EX, offsetof(wakeup_object, callback), Py_READONLY, NULL},
    {"_args", Py_T_OBJECT_EX, offsetof(wakeup_object, args), Py_READONLY, NULL},
    {"_context", Py_T_OBJECT_EX, offsetof(wakeup_object, context), Py_READONLY, NULL},
    {"_cancelled", Py_T_BOOL, offsetof(wakeup_object, cancelled), Py_READONLY, NULL},
    {NULL},
};

static PyTypeObject wakeup_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptcx.Wakeup",
    .tp_basicsize = sizeof(wakeup_object),
    .tp_dealloc = wakeup_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A ready callback of ptcx's event loop, with its context: the handle its call_soon returns.",
    .tp_traverse = wakeup_traverse,
    .tp_clear = wakeup_clear,
    .tp_methods = wakeup_methods,
    .tp_members = wakeup_members,
};

/* ---- call_soon and step ---- */

/* call_soon(callback, *args, context=None) -> a handle. */
static PyObject *call_soon(PyObject *m, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!ready)
        return PyErr_Format(PyExc_RuntimeError, "the loop is not set up");
    PyObject *context = NULL;
    if (kwnames && PyTuple_GET_SIZE(kwnames) == 1 &&
        (PyTuple_GET_ITEM(kwnames, 0) == str_context || PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, 0), str_context) == 0))
        context = argv[nargs];
    if (debug || nargs < 1 || !context || !PyContext_CheckExact(context))
        return PyObject_Vectorcall(py_call_soon, argv, (size_t)nargs, kwnames);
    wakeup_object *w = PyObject_GC_New(wakeup_object, &wakeup_type);
    if (!w)
        return NULL;
    w->cancelled = 0;
    w->callback = Py_NewRef(argv[0]);
    w->context = Py_NewRef(context);
    w->args = PyTuple_New(nargs - 1);
    for (Py_ssize_t i = 1; w->args && i < nargs; i++)
        PyTuple_SET_ITEM(w->args, i - 1, Py_NewRef(argv[i]));
    w->arg = w->args && nargs == 2 ? PyTuple_GET_ITEM(w->args, 0) : NULL;
    PyObject_GC_Track(w);
    if (!w->args) {
        Py_DECREF(w);
        return NULL;
    }
    PyObject *r = PyObject_CallOneArg(append, (PyObject *)w);
    if (!r) {
        Py_DECREF(w);
        return NULL;
    }
    Py_DECREF(r);
    return (PyObject *)w;
}

/* run_wakeup runs w's callback in its context; on an exception other than
 * SystemExit and KeyboardInterrupt it reports it to the loop's handler. 0,
 * or -1 with an exception set (which ends the step). */
static int run_wakeup(wakeup_object *w)
{
    PyObject *r = NULL;
    if (PyContext_Enter(w->context) == 0) {
        r = w->arg ? PyObject_CallOneArg(w->callback, w->arg) : PyObject_Call(w->callback, w->args, NULL);
        if (PyContext_Exit(w->context) < 0)
            Py_CLEAR(r);
    }
    if (r) {
        Py_DECREF(r);
        return 0;
    }
    if (PyErr_ExceptionMatches(PyExc_SystemExit) || PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
        return -1;
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *stack[] = {(PyObject *)w, w->callback, w->args, exc};
    r = PyObject_Vectorcall(callback_failed, stack, 4, NULL);
    Py_DECREF(exc);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* run_handle runs an asyncio handle (its _run reports its exceptions) unless
 * it was cancelled. */
static int run_handle(PyObject *h)
{
    PyObject *c = PyObject_GetAttr(h, str_cancelled);
    if (!c)
        return -1;
    int cancelled = PyObject_IsTrue(c);
    Py_DECREF(c);
    if (cancelled)
        return cancelled < 0 ? -1 : 0;
    PyObject *r = PyObject_CallMethodNoArgs(h, str_run);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* ptcx_step runs the ready callbacks until there are none. 0, or -1 with
 * the exception that ended the step set. */
static int ptcx_step(void)
{
    for (;;) {
        Py_ssize_t n = PyObject_Length(ready);
        if (n <= 0)
            return (int)n;
        PyObject *h = PyObject_CallNoArgs(popleft);
        if (!h)
            return -1;
        int e;
        if (Py_IS_TYPE(h, &wakeup_type))
            e = ((wakeup_object *)h)->cancelled ? 0 : run_wakeup((wakeup_object *)h);
        else
            e = run_handle(h);
        Py_DECREF(h);
        if (e < 0)
            return -1;
    }
}

static PyObject *step(PyObject *m, PyObject *unused)
{
    if (!ready)
        return PyErr_Format(PyExc_RuntimeError, "the loop is not set up");
    if (ptcx_step() < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- running the program ---- */

/* ptcx_run_loop is runtime.py's run(): steps the loop, and settles the
 * program when its task is done. A status, or -1 with an exception set. */
int32_t ptcx_run_loop(void)
{
    PyObject *r;
    if (ptcx_step() < 0) {
        PyObject *exc = PyErr_GetRaisedException();
        r = PyObject_CallOneArg(step_failed, exc);
        Py_DECREF(exc);
    } else {
        PyObject *main = PyDict_GetItemWithError(globals, str_main); /* borrowed */
        if (!main)
            return PyErr_Occurred() ? -1 : PTCX_PENDING;
        if (main == Py_None)
            return PTCX_PENDING;
        PyObject *done = PyObject_CallMethodNoArgs(main, str_done);
        if (!done)
            return -1;
        int is = PyObject_IsTrue(done);
        Py_DECREF(done);
        if (is <= 0)
            return is < 0 ? -1 : PTCX_PENDING;
        r = PyObject_CallNoArgs(settle);
    }
    if (!r)
        return -1;
    long s = PyLong_AsLong(r);
    Py_DECREF(r);
    if (s == -1 && PyErr_Occurred())
        return -1;
    return (int32_t)s;
}

/* scan is the payload's value as json's C scanner reads it, when it reads
 * the payload whole: NULL otherwise (with the scanner's exception, if any). */
static PyObject *scan(const char *payload, size_t len)
{
    PyObject *s = PyUnicode_DecodeUTF8(payload, (Py_ssize_t)len, NULL);
    if (!s)
        return NULL;
    PyObject *zero = PyLong_FromLong(0);
    PyObject *scanned = zero ? PyObject_CallFunctionObjArgs(scan_once, s, zero, NULL) : NULL;
    Py_XDECREF(zero);
    Py_ssize_t end = -1;
    if (scanned && PyTuple_CheckExact(scanned) && PyTuple_GET_SIZE(scanned) == 2)
        end = PyLong_AsSsize_t(PyTuple_GET_ITEM(scanned, 1));
    Py_ssize_t whole = PyUnicode_GET_LENGTH(s);
    Py_DECREF(s);
    PyObject *v = NULL;
    if (scanned && end == whole)
        v = Py_NewRef(PyTuple_GET_ITEM(scanned, 0));
    Py_XDECREF(scanned);
    return v;
}

/* ptcx_resume_fast answers call id with the compact JSON payload when the
 * program waits on it and decode.c, or else json's scanner, reads the
 * payload whole, then runs
 * the loop: a status, -1 with an exception set, or -2 when it did not take
 * the answer (runtime.py's resume does then, with nothing changed). */
int32_t ptcx_resume_fast(int32_t id, const char *payload, size_t len)
{
    if (!calls || len == 0)
        return -2;
    PyObject *key = PyLong_FromLong(id);
    if (!key)
        return -1;
    PyObject *entry = PyDict_GetItemWithError(calls, key); /* borrowed */
    if (!entry || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2) {
        Py_DECREF(key);
        return PyErr_Occurred() ? -1 : -2;
    }
    /* A reference of its own: decoding and scanning allocate, and a
     * finalizer run by a collection then could empty calls. */
    PyObject *fut = Py_NewRef(PyTuple_GET_ITEM(entry, 0));
    bool declined;
    PyObject *v = ptcx_decode_compact(payload, len, &declined); /* decode.c */
    if (!v && declined)
        v = scan(payload, len);
    if (!v) {
        Py_DECREF(fut);
        Py_DECREF(key);
        if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_MemoryError))
            return -1;
        PyErr_Clear(); /* not JSON the scanner reads whole: runtime.py's resume says why */
        return -2;
    }
    int popped = PyDict_DelItem(calls, key);
    Py_DECREF(key);
    PyObject *r = popped < 0 ? NULL : PyObject_CallMethodOneArg(fut, str_set_result, v);
    Py_DECREF(fut);
    Py_DECREF(v);
    if (!r) {
        /* A future done already (cancelled while the call ran) takes no
         * result: the answer is dropped, as runtime.py's resume drops it. */
        if (popped < 0 || !PyErr_ExceptionMatches(invalid_state))
            return -1;
        PyErr_Clear();
    }
    Py_XDECREF(r);
    return ptcx_run_loop();
}

/* ---- set-up ---- */

/* loop_init(ready, call_soon, callback_failed, calls, scan_once, globals,
 * settle, step_failed, invalid_state): what the loop's hot path uses, from
 * runtime.py. */
static PyObject *loop_init(PyObject *m, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 9 || !PyDict_Check(argv[3]) || !PyDict_Check(argv[5]) || !PyExceptionClass_Check(argv[8]))
        return PyErr_Format(PyExc_TypeError, "loop_init(ready, call_soon, callback_failed, calls, scan_once, globals, "
                                             "settle, step_failed, invalid_state)");
    PyObject *a = PyObject_GetAttr(argv[0], str_append);
    PyObject *p = a ? PyObject_GetAttr(argv[0], str_popleft) : NULL;
    if (!p) {
        Py_XDECREF(a);
        return NULL;
    }
    Py_XSETREF(append, a);
    Py_XSETREF(popleft, p);
    PyObject **slots[] = {&ready,   &py_call_soon, &callback_failed, &calls,        &scan_once,
                          &globals, &settle,       &step_failed,     &invalid_state};
    for (Py_ssize_t i = 0; i < argc; i++)
        Py_XSETREF(*slots[i], Py_NewRef(argv[i]));
    Py_RETURN_NONE;
}

/* set_debug(enabled): the loop's debug mode, which takes the long way. */
static PyObject *set_debug(PyObject *m, PyObject *enabled)
{
    int on = PyObject_IsTrue(enabled);
    if (on < 0)
        return NULL;
    debug = on;
    Py_RETURN_NONE;
}

/* get_debug() -> the loop's debug mode: the loop's get_debug, which the C
 * Future and Task call whenever they are made (a call's future is one),
 * as a C function called without a tuple of arguments. */
static PyObject *get_debug(PyObject *m, PyObject *unused) { return PyBool_FromLong(debug); }

static PyMethodDef loop_methods[] = {
    {"loop_init", (PyCFunction)(void (*)(void))loop_init, METH_FASTCALL,
     "loop_init(ready, call_soon, callback_failed, calls, scan_once, globals, settle, step_failed, invalid_state)"},
    {"call_soon", (PyCFunction)(void (*)(void))call_soon, METH_FASTCALL | METH_KEYWORDS,
     "call_soon(callback, *args, context=None) -> a handle"},
    {"step", step, METH_NOARGS, "step(): runs the ready callbacks until there are none"},
    {"set_debug", set_debug, METH_O, "set_debug(enabled): the loop's debug mode"},
    {"get_debug", get_debug, METH_NOARGS, "get_debug() -> the loop's debug mode"},
    {NULL},
};

int ptcx_loop_add(PyObject *m)
{
    struct {
        PyObject **s;
        const char *text;
    } names[] = {{&str_append, "append"}, {&str_popleft, "popleft"},     {&str_cancelled, "_cancelled"},
                 {&str_run, "_run"},       {&str_done, "done"},           {&str_set_result, "set_result"},
                 {&str_main, "main"},      {&str_context, "context"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!*names[i].s && !(*names[i].s = PyUnicode_InternFromString(names[i].text)))
            return -1;
    }
    if (PyType_Ready(&wakeup_type) < 0)
        return -1;
    return PyModule_AddFunctions(m, loop_methods);
}
