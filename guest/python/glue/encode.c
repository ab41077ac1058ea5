/*
 * encode.c: the JSON of a tool call's arguments and of the program's result,
 * in one pass in C. Plain JSON in Python is None, bool, int, float (finite),
 * str, list, tuple and dict (their subclasses too, read as the base type: no
 * Python code runs while encoding), a dict's keys str, or int, float, bool
 * or None made strings as json.dumps makes them. A Handle (module.c) is
 * written as its marker {"$ptcx.handle": ref}: its ref never reaches Python
 * code. Anything else raises TypeError naming the path and the type
 * ("args['opts'][2] is a set").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ptcx.h"

#define MAX_PATH 256

typedef struct {
    ptcx_buf *out;
    const char *root;
    int max_depth, depth;
    /* The containers being encoded, outermost first, and where in each:
     * the key (a dict's) or the index. */
    PyObject *stack[MAX_PATH];
    PyObject *keys[MAX_PATH];
    Py_ssize_t index[MAX_PATH];
} encoder;

static int grow(ptcx_buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    char *p = PyMem_RawRealloc(b->buf, cap);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    b->buf = p;
    b->cap = cap;
    return 0;
}

static int put(ptcx_buf *b, const char *s, size_t n)
{
    if (grow(b, n))
        return -1;
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    return 0;
}

int ptcx_buf_put(ptcx_buf *b, const char *s, size_t n) { return put(b, s, n); }

void ptcx_buf_reset(ptcx_buf *b)
{
    b->len = 0;
    if (b->cap > 64 * 1024) {
        PyMem_RawFree(b->buf);
        b->buf = NULL;
        b->cap = 0;
    }
}

/* refuse raises TypeError: the path to the value, then what. */
static int refuse(encoder *e, const char *fmt, ...)
{
    PyObject *path = PyUnicode_FromString(e->root);
    for (int i = 0; path && i < e->depth && i < MAX_PATH; i++) {
        PyObject *seg;
        if (e->keys[i]) {
            PyObject *r = PyObject_Repr(e->keys[i]);
            seg = r ? PyUnicode_FromFormat("[%U]", r) : NULL;
            Py_XDECREF(r);
        } else {
            seg = PyUnicode_FromFormat("[%zd]", e->index[i]);
        }
        PyObject *joined = seg ? PyUnicode_Concat(path, seg) : NULL;
        Py_XDECREF(seg);
        Py_SETREF(path, joined);
    }
    if (!path)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    PyObject *what = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (what)
        PyErr_Format(PyExc_TypeError, "%U %U", path, what);
    Py_DECREF(path);
    Py_XDECREF(what);
    return -1;
}

static int put_string(encoder *e, PyObject *s)
{
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(s, &n);
    if (!p) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear();
            return refuse(e, "is a str with a lone surrogate, which is not text");
        }
        return -1;
    }
    ptcx_buf *b = e->out;
    if (grow(b, (size_t)n + 2))
        return -1;
    b->buf[b->len++] = '"';
    Py_ssize_t start = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (put(b, p + start, (size_t)(i - start)))
            return -1;
        char esc[8];
        switch (c) {
        case '"': memcpy(esc, "\\\"", 3); break;
        case '\\': memcpy(esc, "\\\\", 3); break;
        case '\n': memcpy(esc, "\\n", 3); break;
        case '\r': memcpy(esc, "\\r", 3); break;
        case '\t': memcpy(esc, "\\t", 3); break;
        default: snprintf(esc, sizeof esc, "\\u%04x", c);
        }
        if (put(b, esc, strlen(esc)))
            return -1;
        start = i + 1;
    }
    if (put(b, p + start, (size_t)(n - start)) || put(b, "\"", 1))
        return -1;
    return 0;
}

static int put_int(encoder *e, PyObject *v)
{
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (!overflow) {
        /* Digits from the end, not snprintf (its format machinery was
         * 1-2% of a nested call in the guest's profile); the magnitude as
         * unsigned, so that LLONG_MIN negates. */
        char s[24];
        char *p = s + sizeof s;
        unsigned long long u = x < 0 ? 0 - (unsigned long long)x : (unsigned long long)x;
        do {
            *--p = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (x < 0)
            *--p = '-';
        return put(e->out, p, (size_t)(s + sizeof s - p));
    }
    PyObject *r = PyLong_Type.tp_repr(v);
    if (!r)
        return -1;
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(r, &n);
    int ret = p ? put(e->out, p, (size_t)n) : -1;
    Py_DECREF(r);
    return ret;
}

static int put_float(encoder *e, double d, bool as_key)
{
    if (!isfinite(d)) {
        if (as_key)
            return refuse(e, "has the key %s, which is not a JSON number",
                          isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
        return refuse(e, "is the float %s, which is not a JSON number", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
    }
    char *s = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!s)
        return -1;
    int ret = as_key ? put(e->out, "\"", 1) : 0;
    if (!ret)
        ret = put(e->out, s, strlen(s));
    if (!ret && as_key)
        ret = put(e->out, "\"", 1);
    PyMem_Free(s);
    return ret;
}

static int put_value(encoder *e, PyObject *v);

static int enter(encoder *e, PyObject *container)
{
    if (e->depth >= e->max_depth)
        return refuse(e, "nests deeper than %d levels", e->max_depth);
    for (int i = 0; i < e->depth; i++) {
        if (e->stack[i] == container)
            return refuse(e, "is a circular reference to one of its parents");
    }
    e->stack[e->depth] = container;
    e->keys[e->depth] = NULL;
    e->index[e->depth] = 0;
    e->depth++;
    return 0;
}

static int put_key(encoder *e, PyObject *k)
{
    if (PyUnicode_Check(k))
        return put_string(e, k);
    if (k == Py_None)
        return put(e->out, "\"null\"", 6);
    if (k == Py_True)
        return put(e->out, "\"true\"", 6);
    if (k == Py_False)
        return put(e->out, "\"false\"", 7);
    if (PyLong_Check(k)) {
        if (put(e->out, "\"", 1) || put_int(e, k))
            return -1;
        return put(e->out, "\"", 1);
    }
    if (PyFloat_Check(k))
        return put_float(e, PyFloat_AS_DOUBLE(k), true);
    return refuse(e, "has a key of type %s, which is not a JSON object key (str)", Py_TYPE(k)->tp_name);
}

static int put_dict(encoder *e, PyObject *d)
{
    if (enter(e, d))
        return -1;
    if (put(e->out, "{", 1))
        return -1;
    Py_ssize_t pos = 0;
    PyObject *k, *val;
    bool first = true;
    while (PyDict_Next(d, &pos, &k, &val)) {
        if (!first && put(e->out, ",", 1))
            return -1;
        first = false;
        e->depth--; /* a key's refusal names the dict */
        int r = put_key(e, k);
        e->depth++;
        if (r || put(e->out, ":", 1))
            return -1;
        e->keys[e->depth - 1] = k;
        if (put_value(e, val))
            return -1;
    }
    e->depth--;
    return put(e->out, "}", 1);
}

static int put_list(encoder *e, PyObject *l)
{
    if (enter(e, l))
        return -1;
    if (put(e->out, "[", 1))
        return -1;
    bool tuple = PyTuple_Check(l);
    for (Py_ssize_t i = 0; i < (tuple ? PyTuple_GET_SIZE(l) : PyList_GET_SIZE(l)); i++) {
        if (i > 0 && put(e->out, ",", 1))
            return -1;
        e->index[e->depth - 1] = i;
        if (put_value(e, tuple ? PyTuple_GET_ITEM(l, i) : PyList_GET_ITEM(l, i)))
            return -1;
    }
    e->depth--;
    return put(e->out, "]", 1);
}

static int put_value(encoder *e, PyObject *v)
{
    if (v == Py_None)
        return put(e->out, "null", 4);
    if (v == Py_True)
        return put(e->out, "true", 4);
    if (v == Py_False)
        return put(e->out, "false", 5);
    if (PyUnicode_Check(v))
        return put_string(e, v);
    if (PyLong_Check(v))
        return put_int(e, v);
    if (PyFloat_Check(v))
        return put_float(e, PyFloat_AS_DOUBLE(v), false);
    if (PyDict_Check(v))
        return put_dict(e, v);
    if (PyList_Check(v) || PyTuple_Check(v))
        return put_list(e, v);
    const char *ref = ptcx_handle_ref(v);
    if (ref) {
        if (put(e->out, "{\"$ptcx.handle\":\"", 17) || put(e->out, ref, strlen(ref)))
            return -1;
        return put(e->out, "\"}", 2);
    }
    if (PyCoro_CheckExact(v) || ptcx_is_call(v))
        return refuse(e, "is a coroutine, which is not JSON (a tool call or async function not awaited?)");
    if (PyBytes_Check(v))
        return refuse(e, "is bytes, which is not JSON (decode it to a str)");
    if (PyAnySet_Check(v))
        return refuse(e, "is a %s, which is not JSON (make it a list)", Py_TYPE(v)->tp_name);
    return refuse(e, "is a %s, which is not JSON", Py_TYPE(v)->tp_name);
}

int ptcx_encode(PyObject *v, ptcx_buf *out, const char *root, int max_depth)
{
    encoder e;
    e.out = out;
    e.root = root;
    e.max_depth = max_depth < MAX_PATH ? max_depth : MAX_PATH;
    e.depth = 0;
    return put_value(&e, v);
}
