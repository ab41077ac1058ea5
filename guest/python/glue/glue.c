/*
 * glue.c: the Python guest's exports (CPython 3.13 on wasm32-wasi, a reactor
 * module; guest/python/build.sh links it against libpython3.13.a).
 *
 * This is the first foundation only: initialise the interpreter once, and run
 * a string of code, returning its result or its exception as JSON. The bridge
 * to host tools and the event loop come later.
 *
 * The exports (wasm32: pointers and lengths are i32):
 *
 *   ptcx_py_init() -> i32
 *       Initialises the interpreter once: an isolated configuration (no
 *       environment variables, no user site, no site import, no bytecode
 *       writing, unbuffered stdio, no signal handlers) whose only module path
 *       is the stdlib zip, /usr/local/lib/python313.zip, which the host mounts
 *       read-only; then imports what ptcx_py_run uses (json, and with it re;
 *       the built-in _ast, not the ast module, which costs more). Returns 0,
 *       or -1 when initialisation failed (CPython's message on stderr). A
 *       second call returns the first call's status.
 *
 *   ptcx_py_malloc(size) -> ptr, ptcx_py_free(ptr)
 *       Guest memory for the host to write code into and read results from.
 *
 *   ptcx_py_run(code, code_len, out, out_cap) -> i32
 *       Runs code_len bytes of UTF-8 source at code in the module __main__
 *       (whose globals stay from one call to the next, as in a REPL), and
 *       writes a JSON object to out, at most out_cap bytes. Returns the JSON's
 *       full length: when it is more than out_cap, out holds only its first
 *       out_cap bytes and ptcx_py_result copies the whole of it into a larger
 *       buffer. Returns -1 when the interpreter could not be initialised
 *       (ptcx_py_run initialises it if ptcx_py_init was not called).
 *       The JSON is one of:
 *         {"ok":true,"value":V}    V: the value of the program's last
 *                                  statement when that is an expression, as
 *                                  in a REPL (null otherwise or for None),
 *                                  when json.dumps can encode it;
 *         {"ok":true,"repr":"..."} the value's repr() when it cannot;
 *         {"ok":false,"error":{"type":"RecursionError","message":"...",
 *                              "line":N}}
 *                                  the exception the program raised (any
 *                                  BaseException, SystemExit included), "line"
 *                                  the last line of the program in its
 *                                  traceback (absent when none is).
 *       print() writes to the guest's stdout (WASI fd 1), which the host reads.
 *
 *   ptcx_py_result(out, out_cap) -> i32
 *       Copies the last ptcx_py_run's JSON again (at most out_cap bytes) and
 *       returns its full length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name(#name)))

/* The stdlib zip, as the host mounts it (guest/python/mkzip.py names the
 * modules' files under it). */
#define STDLIB_ZIP L"/usr/local/lib/python313.zip"

/* The part of the glue written in Python: the run function that splits off
 * a final expression, runs the program and encodes its outcome. */
static const char helper[] =
	"import _ast, json\n"
	"import __main__\n"
	"_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode\n"
	"def _value(v):\n"
	"    try:\n"
	"        return _encode({'ok': True, 'value': v})\n"
	"    except Exception:\n"
	"        pass\n"
	"    try:\n"
	"        r = repr(v)\n"
	"    except Exception as e:\n"
	"        r = '<%s object (repr failed: %s)>' % (type(v).__name__, type(e).__name__)\n"
	"    return _encode({'ok': True, 'repr': r})\n"
	"def _error(e):\n"
	"    try:\n"
	"        message = str(e)\n"
	"    except Exception:\n"
	"        message = '<unprintable %s>' % type(e).__name__\n"
	"    err = {'type': type(e).__name__, 'message': message}\n"
	"    line = None\n"
	"    tb = e.__traceback__\n"
	"    while tb is not None:\n"
	"        if tb.tb_frame.f_code.co_filename == '<program>':\n"
	"            line = tb.tb_lineno\n"
	"        tb = tb.tb_next\n"
	"    if line is None and isinstance(e, SyntaxError) and e.filename == '<program>':\n"
	"        line = e.lineno\n"
	"    if line is not None:\n"
	"        err['line'] = line\n"
	"    return _encode({'ok': False, 'error': err})\n"
	"def run(source):\n"
	"    try:\n"
	"        g = __main__.__dict__\n"
	"        tree = compile(source.decode('utf-8'), '<program>', 'exec', _ast.PyCF_ONLY_AST)\n"
	"        last = None\n"
	"        if tree.body and isinstance(tree.body[-1], _ast.Expr):\n"
	"            last = _ast.Expression(tree.body.pop().value)\n"
	"        exec(compile(tree, '<program>', 'exec'), g)\n"
	"        v = eval(compile(last, '<program>', 'eval'), g) if last is not None else None\n"
	"    except BaseException as e:\n"
	"        return _error(e)\n"
	"    return _value(v)\n";

/* What is returned when even the helper fails (no memory left to build the
 * JSON, say). */
static const char helper_failed[] =
	"{\"ok\":false,\"error\":{\"type\":\"InternalError\",\"message\":\"the guest could not encode the outcome\"}}";

static int init_status = 1; /* 1: not yet; 0: initialised; -1: failed */
static PyObject *run_fn;    /* helper's run(source: bytes) -> str */
static char *result;        /* the last run's JSON (malloc'd) */
static size_t result_len;

static int init(void) {
	PyConfig config;
	PyConfig_InitIsolatedConfig(&config);
	config.site_import = 0;
	config.write_bytecode = 0;
	config.buffered_stdio = 0;
	config.install_signal_handlers = 0;
	config.module_search_paths_set = 1;
	PyStatus status = PyWideStringList_Append(&config.module_search_paths, STDLIB_ZIP);
	if (!PyStatus_Exception(status))
		status = PyConfig_SetString(&config, &config.home, L"/usr/local");
	if (!PyStatus_Exception(status))
		status = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(status)) {
		fprintf(stderr, "ptcx_py_init: %s: %s\n", status.func ? status.func : "Py_InitializeFromConfig",
			status.err_msg ? status.err_msg : "failed");
		return -1;
	}
	PyObject *globals = PyDict_New();
	if (globals == NULL || PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0)
		goto fail;
	PyObject *r = PyRun_String(helper, Py_file_input, globals, globals);
	if (r == NULL)
		goto fail;
	Py_DECREF(r);
	run_fn = PyDict_GetItemString(globals, "run"); /* borrowed */
	if (run_fn == NULL)
		goto fail;
	Py_INCREF(run_fn);
	Py_DECREF(globals);
	return 0;
fail:
	PyErr_Print();
	Py_XDECREF(globals);
	return -1;
}

EXPORT(ptcx_py_init) int32_t ptcx_py_init(void) {
	if (init_status == 1)
		init_status = init();
	return init_status;
}

EXPORT(ptcx_py_malloc) void *ptcx_py_malloc(int32_t size) {
	return size < 0 ? NULL : malloc((size_t)size);
}

EXPORT(ptcx_py_free) void ptcx_py_free(void *p) {
	free(p);
}

static int32_t copy_result(char *out, int32_t out_cap) {
	if (out != NULL && out_cap > 0)
		memcpy(out, result, result_len < (size_t)out_cap ? result_len : (size_t)out_cap);
	return (int32_t)result_len;
}

static void keep_result(const char *json, size_t n) {
	char *p = malloc(n ? n : 1);
	if (p == NULL) {
		json = helper_failed;
		n = sizeof helper_failed - 1;
		p = (char *)helper_failed;
	} else {
		memcpy(p, json, n);
	}
	if (result != helper_failed)
		free(result);
	result = p;
	result_len = n;
}

EXPORT(ptcx_py_run) int32_t ptcx_py_run(const char *code, int32_t code_len, char *out, int32_t out_cap) {
	if (ptcx_py_init() != 0)
		return -1;
	if (code_len < 0)
		code_len = 0;
	PyObject *src = PyBytes_FromStringAndSize(code, code_len);
	PyObject *r = src ? PyObject_CallOneArg(run_fn, src) : NULL;
	Py_XDECREF(src);
	Py_ssize_t n = 0;
	const char *json = r ? PyUnicode_AsUTF8AndSize(r, &n) : NULL;
	if (json == NULL) {
		PyErr_Clear();
		keep_result(helper_failed, sizeof helper_failed - 1);
	} else {
		keep_result(json, (size_t)n);
	}
	Py_XDECREF(r);
	return copy_result(out, out_cap);
}

EXPORT(ptcx_py_result) int32_t ptcx_py_result(char *out, int32_t out_cap) {
	if (result == NULL)
		return 0;
	return copy_result(out, out_cap);
}
