/*
 * glue.c: the exports of the ptcx guest ABI, version 3 (docs/abi.md), over
 * CPython 3.13 for wasm32-wasi (a reactor module; build.sh links it against
 * libpython3.13.a). docs/abi.md's "Python guest" section says what differs
 * from the QuickJS guest.
 *
 * ptcx_init initialises the interpreter once (an isolated configuration:
 * no environment, no site, no bytecode writing, no signal handlers; the
 * stdlib zip, /usr/local/lib/python313.zip, its only module path) with the
 * built-in module _ptcx (module.c), and runs the runtime (runtime.py,
 * embedded by build.sh as runtime.h), which imports what programs use. The
 * other exports call the runtime's functions, which run the program's
 * event loop until nothing is ready and return the status; _ptcx records
 * the outcome given to the host (ptcx_final), which the exports return.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptcx.h"
#include "runtime.h"

#define STDLIB_ZIP L"/usr/local/lib/python313.zip"

static int init_status = -1; /* -1: not yet; else PTCX_DONE or PTCX_ERROR */
static PyObject *fn_start, *fn_resume, *fn_timer, *fn_next, *fn_restored;
static bool started;

static const char out_of_memory_json[] =
    "{\"kind\":\"memory\",\"message\":\"out of memory: the program exceeded its memory limit\"}";

PTCX_EXPORT("ptcx_abi_version")
int32_t ptcx_abi_version(void) { return PTCX_ABI_VERSION; }

static char *buffer;
static size_t buffer_cap;

/* ptcx_buffer returns the exchange buffer, grown to at least size bytes,
 * or 0 when memory runs out. */
PTCX_EXPORT("ptcx_buffer")
char *ptcx_buffer(size_t size)
{
    if (size == 0)
        size = 1;
    if (size > buffer_cap) {
        char *b = realloc(buffer, size);
        if (!b)
            return NULL;
        buffer = b;
        buffer_cap = size;
    }
    return buffer;
}

/* fail_pending reports the exception that escaped the runtime (a bug of
 * the runtime's, or memory that ran out while it reported): as memory when
 * memory ran out, else as an exception named by its type and message. */
static int32_t fail_pending(const char *what)
{
    ptcx_set_memory_limit(0);
    PyObject *exc = PyErr_GetRaisedException();
    if (ptcx_final >= 0) {
        Py_XDECREF(exc);
        return ptcx_final;
    }
    if (ptcx_memory_exhausted() || (exc && PyErr_GivenExceptionMatches(exc, PyExc_MemoryError))) {
        Py_XDECREF(exc);
        return ptcx_report_static(out_of_memory_json);
    }
    char json[600];
    int n = snprintf(json, sizeof json, "{\"kind\":\"exception\",\"message\":\"%s: ", what);
    PyObject *s = exc ? PyObject_Str(exc) : NULL;
    const char *text = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!text) {
        PyErr_Clear();
        text = exc ? Py_TYPE(exc)->tp_name : "unknown error";
    }
    for (const char *p = text; *p && n < (int)sizeof json - 4; p++) {
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
            json[n++] = *p;
    }
    json[n++] = '"';
    json[n++] = '}';
    json[n] = 0;
    Py_XDECREF(s);
    Py_XDECREF(exc);
    return ptcx_report_static(json);
}

static int32_t status_of(long s, const char *what);

/* status turns what a runtime function returned into the export's status. */
static int32_t status(PyObject *r, const char *what)
{
    if (!r)
        return fail_pending(what);
    long s = PyLong_AsLong(r);
    Py_DECREF(r);
    if (s == -1 && PyErr_Occurred())
        return fail_pending(what);
    return status_of(s, what);
}

/* status_of turns a status the runtime returned (or -1, an exception set)
 * into the export's status. */
static int32_t status_of(long s, const char *what)
{
    if (s == -1)
        return fail_pending(what);
    if (ptcx_final >= 0)
        return ptcx_final;
    if (s == PTCX_PENDING)
        return PTCX_PENDING;
    return ptcx_report_static("{\"kind\":\"exception\",\"message\":\"the guest's runtime settled without an outcome\"}");
}

static int init(void)
{
    if (PyImport_AppendInittab("_ptcx", ptcx_module_init) < 0)
        return -1;
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.site_import = 0;
    config.write_bytecode = 0;
    config.buffered_stdio = 0;
    config.install_signal_handlers = 0;
    config.module_search_paths_set = 1;
    PyStatus st = PyWideStringList_Append(&config.module_search_paths, STDLIB_ZIP);
    if (!PyStatus_Exception(st))
        st = PyConfig_SetString(&config, &config.home, L"/usr/local");
    if (!PyStatus_Exception(st))
        st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
        char json[300];
        snprintf(json, sizeof json, "{\"kind\":\"exception\",\"message\":\"initialising CPython failed: %s\"}",
                 st.err_msg ? st.err_msg : "unknown");
        ptcx_report_static(json);
        return -1;
    }
    PyObject *code = Py_CompileString((const char *)ptcx_runtime, "<ptcx>", Py_file_input);
    PyObject *mod = code ? PyImport_ExecCodeModuleEx("_ptcx_runtime", code, "<ptcx>") : NULL;
    Py_XDECREF(code);
    if (!mod)
        return -1;
    struct {
        const char *name;
        PyObject **fn;
    } fns[] = {{"start", &fn_start}, {"resume", &fn_resume}, {"timer", &fn_timer},
               {"next_program", &fn_next}, {"restored", &fn_restored}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        *fns[i].fn = PyObject_GetAttrString(mod, fns[i].name);
        if (!*fns[i].fn) {
            Py_DECREF(mod);
            return -1;
        }
    }
    Py_DECREF(mod);
    return 0;
}

/* ptcx_init initialises CPython and the runtime, once. The Python guest has
 * no prelude bytecode: len must be 0. */
PTCX_EXPORT("ptcx_init")
int32_t ptcx_init(const uint8_t *bytecode, size_t len)
{
    if (init_status >= 0)
        return init_status;
    if (init() == 0)
        return init_status = PTCX_DONE;
    if (ptcx_final < 0 && Py_IsInitialized() && PyErr_Occurred())
        fail_pending("initialising the runtime failed");
    ptcx_report_static("{\"kind\":\"exception\",\"message\":\"initialising the runtime failed\"}");
    /* A later ptcx_start reports nothing more: the host stops at this error. */
    return init_status = PTCX_ERROR;
}

static bool ready(void) { return init_status == PTCX_DONE; }

PTCX_EXPORT("ptcx_start")
int32_t ptcx_start(const char *cfg, size_t len)
{
    if (ptcx_final >= 0)
        return ptcx_final;
    if (!ready() || started)
        return ptcx_report_static("{\"kind\":\"exception\",\"message\":\"ptcx_start called out of order\"}");
    started = true;
    /* The first poll: the meter's import is used by the glue too, so the
     * linker keeps it; the host checks its deadlines here. */
    ptcx_host_poll();
    PyObject *b = PyBytes_FromStringAndSize(cfg ? cfg : "", cfg ? (Py_ssize_t)len : 0);
    PyObject *r = b ? PyObject_CallOneArg(fn_start, b) : NULL;
    Py_XDECREF(b);
    return status(r, "starting the program failed");
}

PTCX_EXPORT("ptcx_resume")
int32_t ptcx_resume(int32_t id, int32_t ok, const char *payload, size_t len)
{
    if (ptcx_final >= 0)
        return ptcx_final;
    if (!started)
        return ptcx_report_static("{\"kind\":\"exception\",\"message\":\"ptcx_resume called before ptcx_start\"}");
    if (ok == 1 && payload) {
        int32_t s = ptcx_resume_fast(id, payload, len); /* loop.c */
        if (s != -2)
            return status_of(s, "resuming the program failed");
    }
    PyObject *b = PyBytes_FromStringAndSize(payload ? payload : "", payload ? (Py_ssize_t)len : 0);
    PyObject *r = b ? PyObject_CallFunction(fn_resume, "iiO", (int)id, (int)ok, b) : NULL;
    Py_XDECREF(b);
    return status(r, "resuming the program failed");
}

PTCX_EXPORT("ptcx_timer")
int32_t ptcx_timer(int32_t id)
{
    if (ptcx_final >= 0)
        return ptcx_final;
    if (!started)
        return ptcx_report_static("{\"kind\":\"exception\",\"message\":\"ptcx_timer called before ptcx_start\"}");
    return status(PyObject_CallFunction(fn_timer, "i", (int)id), "firing a timer failed");
}

/* ptcx_stalled: the program is pending and the host holds no call and no
 * timer for it. When memory ran out, that is reported; else pending. */
PTCX_EXPORT("ptcx_stalled")
int32_t ptcx_stalled(void)
{
    if (ptcx_final >= 0)
        return ptcx_final;
    if (!ptcx_memory_exhausted())
        return PTCX_PENDING;
    return ptcx_report_static(out_of_memory_json);
}

/* ptcx_restored: on an instance restored from the image, reseed random. */
PTCX_EXPORT("ptcx_restored")
int32_t ptcx_restored(void)
{
    if (!ready() || started || ptcx_final >= 0)
        return PTCX_ERROR;
    PyObject *r = PyObject_CallNoArgs(fn_restored);
    if (!r) {
        PyErr_Clear();
        return PTCX_ERROR;
    }
    Py_DECREF(r);
    return PTCX_DONE;
}

/* ptcx_next readies a session's instance for its next program: the last
 * program's task, calls and timers are forgotten, random is reseeded; the
 * globals of __main__ stay. */
PTCX_EXPORT("ptcx_next")
int32_t ptcx_next(void)
{
    if (!ready())
        return PTCX_ERROR;
    ptcx_set_memory_limit(0);
    ptcx_final = -1;
    started = false;
    ptcx_memory_forget();
    PyObject *r = PyObject_CallNoArgs(fn_next);
    if (!r) {
        PyErr_Clear();
        return PTCX_ERROR;
    }
    Py_DECREF(r);
    return PTCX_DONE;
}
