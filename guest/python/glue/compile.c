/* compile.c: _ptcx.compile_program, a program's source compiled as
 * runtime.py runs it, in C. The source is parsed once into CPython's C AST
 * (an arena, no Python objects); when its last statement is an expression
 * statement, that statement is taken off the module's body and compiled
 * on its own as an expression (its value is the program's result). The
 * same as compile(source, "<program>", "exec", PyCF_ONLY_AST | top-level
 * await) then compile() of the module and of the expression, as runtime.py
 * did, without turning the AST into Python objects and back (ast2obj,
 * obj2ast and the AST's validation: most of a short program's compile
 * time). It uses CPython's internal parser and compiler entry points
 * (Py_BUILD_CORE), which libpython3.13.a holds. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <string.h>

#include "internal/pycore_ast.h"
#include "internal/pycore_compile.h"
#include "internal/pycore_parser.h"
#include "internal/pycore_pyarena.h"

#include "ptcx.h"

/* compile_program(source, filename) -> (body, last): body the module's
 * code without a final expression statement, last that expression's code
 * or None. SyntaxError and the rest as compile() raises them. */
PyObject *ptcx_compile_program(PyObject *m, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 2 || !PyUnicode_Check(argv[0]) || !PyUnicode_Check(argv[1])) {
        PyErr_SetString(PyExc_TypeError, "compile_program(source, filename): two str");
        return NULL;
    }
    Py_ssize_t size;
    const char *str = PyUnicode_AsUTF8AndSize(argv[0], &size);
    if (!str)
        return NULL;
    if (strlen(str) != (size_t)size) {
        PyErr_SetString(PyExc_ValueError, "source code string cannot contain null bytes");
        return NULL;
    }
    PyObject *filename = argv[1];
    PyCompilerFlags flags = _PyCompilerFlags_INIT;
    flags.cf_flags = PyCF_ALLOW_TOP_LEVEL_AWAIT | PyCF_SOURCE_IS_UTF8;
    PyArena *arena = _PyArena_New();
    if (!arena)
        return NULL;
    PyObject *body = NULL, *last = NULL, *out = NULL;
    mod_ty mod = _PyParser_ASTFromString(str, filename, Py_file_input, &flags, arena);
    if (!mod)
        goto done;
    asdl_stmt_seq *stmts = mod->v.Module.body;
    Py_ssize_t n = asdl_seq_LEN(stmts);
    if (n > 0) {
        stmt_ty s = asdl_seq_GET(stmts, n - 1);
        if (s->kind == Expr_kind) {
            mod_ty e = _PyAST_Expression(s->v.Expr.value, arena);
            if (!e)
                goto done;
            last = (PyObject *)_PyAST_Compile(e, filename, &flags, -1, arena);
            if (!last)
                goto done;
            stmts->size = n - 1;
        }
    }
    body = (PyObject *)_PyAST_Compile(mod, filename, &flags, -1, arena);
    if (!body)
        goto done;
    out = PyTuple_Pack(2, body, last ? last : Py_None);
done:
    Py_XDECREF(body);
    Py_XDECREF(last);
    _PyArena_Free(arena);
    return out;
}
