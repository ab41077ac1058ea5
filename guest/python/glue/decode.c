/*
 * decode.c: a nested call's result made Python values from its JSON in one
 * pass over the bytes, for the JSON the host sends (compact), as json.loads
 * makes them: dict (a key given twice keeps its first place and its last
 * value), list, str, int, float, True, False, None. It reads only what it
 * can read so without a doubt: no whitespace outside strings, no escape or
 * control character in a string, an int of at most 18 digits, a number's
 * text under 64 bytes, at most 64 levels. Anything else, and a string that
 * is not UTF-8, it declines, and loop.c leaves the payload to json's C
 * scanner as before, which then says what is wrong with it if anything is.
 * It replaced that scanner for the common result: the scanner's share of a
 * nested call's guest time was a sixth (docs/performance.md).
 */
#include "ptcx.h"

#define MAX_DEPTH 64
#define MAX_NUMBER 64
#define MAX_INT_DIGITS 18

typedef struct {
    const char *p, *end;
} reader;

/* decline gives up on the payload: NULL, no exception set. */
static PyObject *decline(void) { return NULL; }

static PyObject *value(reader *r, int depth);

/* string reads a string's body after its opening quote. */
static PyObject *string(reader *r)
{
    const char *start = r->p;
    for (; r->p < r->end; r->p++) {
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            PyObject *s = PyUnicode_DecodeUTF8(start, r->p - start, NULL);
            r->p++;
            if (!s && !PyErr_ExceptionMatches(PyExc_MemoryError)) {
                PyErr_Clear();
                return decline();
            }
            return s;
        }
        if (c == '\\' || c < 0x20)
            return decline();
    }
    return decline();
}

static bool at_digit(reader *r) { return r->p < r->end && *r->p >= '0' && *r->p <= '9'; }

/* number reads a number, as JSON writes it. */
static PyObject *number(reader *r)
{
    const char *start = r->p;
    bool is_float = false;
    if (*r->p == '-')
        r->p++;
    if (!at_digit(r))
        return decline();
    if (*r->p == '0') {
        r->p++;
    } else {
        while (at_digit(r))
            r->p++;
    }
    if (r->p < r->end && *r->p == '.') {
        is_float = true;
        r->p++;
        if (!at_digit(r))
            return decline();
        while (at_digit(r))
            r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        is_float = true;
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (!at_digit(r))
            return decline();
        while (at_digit(r))
            r->p++;
    }
    size_t n = (size_t)(r->p - start);
    if (!is_float) {
        size_t digits = n - (*start == '-');
        if (digits > MAX_INT_DIGITS)
            return decline();
        long long v = 0;
        for (const char *q = start + (*start == '-'); q < r->p; q++)
            v = v * 10 + (*q - '0');
        return PyLong_FromLongLong(*start == '-' ? -v : v);
    }
    if (n >= MAX_NUMBER)
        return decline();
    char buf[MAX_NUMBER];
    memcpy(buf, start, n);
    buf[n] = 0;
    /* What json's scanner calls for a float, and float() too. */
    double d = PyOS_string_to_double(buf, NULL, NULL);
    if (d == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError))
            return NULL;
        PyErr_Clear();
        return decline();
    }
    return PyFloat_FromDouble(d);
}

/* literal reads true, false or null. */
static PyObject *literal(reader *r, const char *text, size_t n, PyObject *v)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, text, n) != 0)
        return decline();
    r->p += n;
    return Py_NewRef(v);
}

static PyObject *array(reader *r, int depth)
{
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return list;
    }
    for (;;) {
        PyObject *v = value(r, depth);
        if (!v || PyList_Append(list, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(v);
        if (r->p >= r->end)
            break;
        char c = *r->p++;
        if (c == ']')
            return list;
        if (c != ',')
            break;
    }
    Py_DECREF(list);
    return decline();
}

static PyObject *object(reader *r, int depth)
{
    PyObject *dict = PyDict_New();
    if (!dict)
        return NULL;
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return dict;
    }
    for (;;) {
        if (r->p >= r->end || *r->p != '"')
            break;
        r->p++;
        PyObject *k = string(r);
        if (!k) {
            Py_DECREF(dict);
            return NULL;
        }
        if (r->p >= r->end || *r->p != ':') {
            Py_DECREF(k);
            break;
        }
        r->p++;
        PyObject *v = value(r, depth);
        int e = v ? PyDict_SetItem(dict, k, v) : -1;
        Py_DECREF(k);
        Py_XDECREF(v);
        if (e < 0) {
            Py_DECREF(dict);
            return NULL;
        }
        if (r->p >= r->end)
            break;
        char c = *r->p++;
        if (c == '}')
            return dict;
        if (c != ',')
            break;
    }
    Py_DECREF(dict);
    return decline();
}

static PyObject *value(reader *r, int depth)
{
    if (r->p >= r->end || depth >= MAX_DEPTH)
        return decline();
    switch (*r->p) {
    case '{':
        r->p++;
        return object(r, depth + 1);
    case '[':
        r->p++;
        return array(r, depth + 1);
    case '"':
        r->p++;
        return string(r);
    case 't':
        return literal(r, "true", 4, Py_True);
    case 'f':
        return literal(r, "false", 5, Py_False);
    case 'n':
        return literal(r, "null", 4, Py_None);
    default:
        return number(r);
    }
}

PyObject *ptcx_decode_compact(const char *payload, size_t len, bool *declined)
{
    /* A string with an escape (text with a newline or a quote: common) is
     * the scanner's; finding one only at its end would have built the value
     * twice. One pass of memchr costs less than a value built in vain. */
    if (memchr(payload, '\\', len)) {
        *declined = true;
        return NULL;
    }
    reader r = {.p = payload, .end = payload + len};
    PyObject *v = value(&r, 0);
    *declined = false;
    if (v && r.p == r.end)
        return v;
    Py_XDECREF(v);
    if (PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError))
            return NULL;
        PyErr_Clear();
    }
    *declined = true;
    return NULL;
}
