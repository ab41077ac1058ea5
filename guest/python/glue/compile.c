/* compile.c: _ptcx.compile_program, a program's source compiled as
 * runtime.py runs it, in C. The source is parsed once into CPython's C AST
 * (an arena, no Python objects); when its last statement is an expression
 * statement, that statement becomes an assignment of its value to a name
 * no program can write (its value is the program's result). The same as
 * compile(source, "<program>", "exec", PyCF_ONLY_AST | top-level await),
 * that change, then compile() of the module, without turning the AST into
 * Python objects and back (ast2obj, obj2ast and the AST's validation: most
 * of a short program's compile time). It uses CPython's internal parser and compiler entry points
 * (Py_BUILD_CORE), which libpython3.13.a holds. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <string.h>

#include "internal/pycore_ast.h"
#include "internal/pycore_compile.h"
#include "internal/pycore_parser.h"
#include "internal/pycore_pyarena.h"

#include "ptcx.h"

/* compile_program(source, filename) -> (code, has_result): the module's
 * code; when its last statement is an expression statement (has_result),
 * that statement assigns its value to the global RESULT_NAME instead, a
 * name no program can write (it is not an identifier), which runtime.py
 * takes the result from. One compile for both: a second code object for
 * the expression cost a symbol table, a code unit and an assembly more.
 * SyntaxError and the rest as compile() raises them. */
#define RESULT_NAME "<result>"

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
    /* The source is text already: a coding declaration in it is ignored,
     * as compile() of a str ignores it. */
    flags.cf_flags = PyCF_ALLOW_TOP_LEVEL_AWAIT | PyCF_SOURCE_IS_UTF8 | PyCF_IGNORE_COOKIE;
    PyArena *arena = _PyArena_New();
    if (!arena)
        return NULL;
    PyObject *code = NULL, *out = NULL;
    bool has_result = false;
    mod_ty mod = _PyParser_ASTFromString(str, filename, Py_file_input, &flags, arena);
    if (!mod)
        goto done;
    asdl_stmt_seq *stmts = mod->v.Module.body;
    Py_ssize_t n = asdl_seq_LEN(stmts);
    if (n > 0) {
        stmt_ty s = asdl_seq_GET(stmts, n - 1);
        if (s->kind == Expr_kind) {
            PyObject *id = PyUnicode_InternFromString(RESULT_NAME);
            if (!id || _PyArena_AddPyObject(arena, id) < 0) {
                Py_XDECREF(id);
                goto done;
            }
            expr_ty target = _PyAST_Name(id, Store, s->lineno, s->col_offset, s->end_lineno, s->end_col_offset, arena);
            asdl_expr_seq *targets = target ? _Py_asdl_expr_seq_new(1, arena) : NULL;
            if (!targets)
                goto done;
            asdl_seq_SET(targets, 0, target);
            stmt_ty assign = _PyAST_Assign(targets, s->v.Expr.value, NULL, s->lineno, s->col_offset, s->end_lineno,
                                           s->end_col_offset, arena);
            if (!assign)
                goto done;
            asdl_seq_SET(stmts, n - 1, assign);
            has_result = true;
        }
    }
    code = (PyObject *)_PyAST_Compile(mod, filename, &flags, -1, arena);
    if (!code)
        goto done;
    out = Py_BuildValue("(OO)", code, has_result ? Py_True : Py_False);
done:
    Py_XDECREF(code);
    _PyArena_Free(arena);
    return out;
}
