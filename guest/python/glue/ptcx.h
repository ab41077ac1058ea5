/*
 * ptcx.h: declarations shared by the Python guest's glue (glue.c, module.c,
 * encode.c, memory.c). The ABI they implement is docs/abi.md's, version 3,
 * the QuickJS guest's (guest/glue/ptcx.h); its "Python guest" section says
 * what differs.
 */
#ifndef PTCX_PY_H
#define PTCX_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PTCX_ABI_VERSION 3

enum {
    PTCX_DONE = 0,
    PTCX_PENDING = 1,
    PTCX_ERROR = 2,
};

#define PTCX_IMPORT(name) __attribute__((import_module("ptcx"), import_name(name)))
#define PTCX_EXPORT(name) __attribute__((export_name(name)))

/* Host imports (module "ptcx"); see docs/abi.md. */
PTCX_IMPORT("call")
int32_t ptcx_host_call(const char *name, size_t name_len, const char *args, size_t args_len);
PTCX_IMPORT("log")
void ptcx_host_log(int32_t level, const char *text, size_t len);
PTCX_IMPORT("timer_set")
int32_t ptcx_host_timer_set(int32_t delay_ms);
PTCX_IMPORT("timer_clear")
void ptcx_host_timer_clear(int32_t id);
PTCX_IMPORT("result")
void ptcx_host_result(const char *json, size_t len);
PTCX_IMPORT("error")
void ptcx_host_error(const char *json, size_t len);
PTCX_IMPORT("poll")
int32_t ptcx_host_poll(void);

/* module.c: the built-in module _ptcx, the runtime's (runtime.py) way to
 * the host. */
PyObject *ptcx_module_init(void);
/* ptcx_final is the status the program settled with (PTCX_DONE once the
 * result was given, PTCX_ERROR once the error was), or -1. */
extern int32_t ptcx_final;
/* ptcx_report_static reports an error that the runtime cannot describe. */
int32_t ptcx_report_static(const char *json);
/* ptcx_call_tool makes a nested call of tool (a str) with args (None is
 * {}): the call's id, or the host's refusal (< 0). Raises AttributeError for
 * a name that is not bound, TypeError for arguments that are not plain
 * JSON. */
PyObject *ptcx_call_tool(PyObject *tool, PyObject *args);
/* ptcx_handle_ref returns the ref of a Handle (NULL: not a handle). */
const char *ptcx_handle_ref(PyObject *v);

/* encode.c: the JSON of plain values (None, bool, int, float, str, list,
 * tuple, dict; a Handle as its marker) into a buffer. */
typedef struct {
    char *buf;
    size_t len, cap;
} ptcx_buf;
/* ptcx_encode appends the JSON of v to out and returns 0; on a value that
 * is not plain JSON it raises TypeError (its message names the path from
 * root, e.g. "args['a'][2] is a set") and returns -1, as it does (with
 * MemoryError) when memory runs out. max_depth bounds the nesting. */
int ptcx_encode(PyObject *v, ptcx_buf *out, const char *root, int max_depth);
void ptcx_buf_reset(ptcx_buf *b);
int ptcx_buf_put(ptcx_buf *b, const char *s, size_t n);

/* compile.c: _ptcx.compile_program(source, filename) -> (code, has_result). */
PyObject *ptcx_compile_program(PyObject *m, PyObject *const *argv, Py_ssize_t argc);

/* decode.c: a result's compact JSON as the Python value json.loads makes of
 * it; NULL with *declined set (no exception) for JSON it leaves to json's
 * scanner, NULL with an exception (MemoryError) otherwise. */
PyObject *ptcx_decode_compact(const char *payload, size_t len, bool *declined);

/* loop.c: the event loop's hot path (call_soon, step, the common resume).
 * ptcx_loop_add adds its functions to _ptcx; ptcx_run_loop steps the loop
 * and settles a program that is done; ptcx_resume_fast answers a call with
 * a compact JSON value and runs the loop. Each returns a status, or -1
 * with an exception set; ptcx_resume_fast -2 when it did not take the
 * answer. */
int ptcx_loop_add(PyObject *m);
int32_t ptcx_run_loop(void);
int32_t ptcx_resume_fast(int32_t id, const char *payload, size_t len);

/* tool.c: the program's tool functions and their calls (make_tool,
 * tools_init, the type Call), added to _ptcx. */
int ptcx_tool_add(PyObject *m);
/* ptcx_is_call reports whether v is a tool's call (not yet awaited). */
bool ptcx_is_call(PyObject *v);

/* memory.c: the soft memory limit (the config's memoryLimit): memory.grow
 * past it is refused, and remembered. */
void ptcx_set_memory_limit(size_t bytes);
bool ptcx_memory_exhausted(void);
void ptcx_memory_forget(void);

#endif
