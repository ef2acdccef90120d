/* medina_envs._canvas: bitboards to canvas rows of 0/1 bytes, compiled.
 *
 * The observation's planes and action mask are bitboards (Python ints, bit q = square q
 * of a cols x rows grid) laid out as rows of 0/1 bytes on the ROWS x COLS canvas
 * (docs/encoding.md). In Python each bitboard costs a few microseconds to unpack, and a
 * step unpacks 36 of them; here the whole view is one call. canvas.py holds the pure-Python
 * equivalent (the fallback when this module is not built) and the tests check the two
 * agree byte for byte, errors included.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* The largest grid: its bitboards' bytes fit this buffer. */
#define MAX_GRID_BYTES 64

/* A byte's eight bits as eight 0/1 bytes, bit 0 first (filled when the module loads). */
static unsigned char SPREAD[256][8];

/* Write the `n` bits of `bits` (bit 0 first) as 0/1 bytes at `out`, which is zeroed. */
static void spread(unsigned char *out, const unsigned char *bits, Py_ssize_t n) {
    Py_ssize_t whole = n / 8;
    for (Py_ssize_t b = 0; b < whole; b++) {
        if (bits[b]) memcpy(out + 8 * b, SPREAD[bits[b]], 8);
    }
    if (n % 8 && bits[whole]) memcpy(out + 8 * whole, SPREAD[bits[whole]], (size_t)(n % 8));
}

/* The little-endian bytes of the non-negative int `o` into `out` (n bytes): 1, or 0 when
 * `o` is 0 (`out` untouched); -1 with an exception set when `o` is not an int, is negative
 * or has a bit at `squares` or above. */
static int bitboard_bytes(PyObject *o, unsigned char *out, size_t n, size_t squares) {
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "a bitboard must be an int, not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    int sign = _PyLong_Sign(o);
    if (sign < 0) {
        PyErr_SetString(PyExc_ValueError, "a bitboard must not be negative");
        return -1;
    }
    if (sign == 0) return 0; /* most slots and claims are empty */
    if (_PyLong_NumBits(o) > squares) {
        PyErr_SetString(PyExc_ValueError, "a bitboard has a square off its grid");
        return -1;
    }
    /* 3.13 added the last argument: raise on overflow (checked above). */
#if PY_VERSION_HEX >= 0x030D0000
    return _PyLong_AsByteArray((PyLongObject *)o, out, n, 1, 0, 1) < 0 ? -1 : 1;
#else
    return _PyLong_AsByteArray((PyLongObject *)o, out, n, 1, 0) < 0 ? -1 : 1;
#endif
}

/* join(masks, cols, rows, canvas_cols, canvas_rows, tail) -> bytearray
 *
 * The canvas rows of `masks` end to end (each canvas_cols * canvas_rows bytes: grid row r
 * of the bitboard at canvas row r, padded with 0), then the bytes of each piece of `tail`. */
static PyObject *canvas_join(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "join(masks, cols, rows, canvas_cols, canvas_rows, tail) takes 6 arguments");
        return NULL;
    }
    Py_ssize_t dims[4];
    for (int i = 0; i < 4; i++) {
        dims[i] = PyLong_AsSsize_t(args[1 + i]);
        if (dims[i] == -1 && PyErr_Occurred()) return NULL;
    }
    Py_ssize_t cols = dims[0], rows = dims[1], canvas_cols = dims[2], canvas_rows = dims[3];
    if (cols <= 0 || rows <= 0 || cols > canvas_cols || rows > canvas_rows) {
        PyErr_Format(PyExc_ValueError, "a %zd x %zd grid does not fit the %zd x %zd canvas",
                     cols, rows, canvas_cols, canvas_rows);
        return NULL;
    }
    Py_ssize_t squares = cols * rows;
    size_t grid_bytes = (size_t)((squares + 7) / 8);
    if (grid_bytes > MAX_GRID_BYTES) {
        PyErr_Format(PyExc_ValueError, "a %zd x %zd grid is too large", cols, rows);
        return NULL;
    }
    PyObject *masks = PySequence_Fast(args[0], "masks must be a sequence of ints");
    if (masks == NULL) return NULL;
    PyObject *tail = PySequence_Fast(args[5], "tail must be a sequence of bytes");
    if (tail == NULL) {
        Py_DECREF(masks);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(masks), t = PySequence_Fast_GET_SIZE(tail);
    PyObject **items = PySequence_Fast_ITEMS(masks), **pieces = PySequence_Fast_ITEMS(tail);
    Py_ssize_t cells = canvas_cols * canvas_rows, tail_len = 0;
    for (Py_ssize_t i = 0; i < t; i++) {
        if (!PyBytes_Check(pieces[i])) {
            PyErr_Format(PyExc_TypeError, "a tail piece must be bytes, not %.100s",
                         Py_TYPE(pieces[i])->tp_name);
            goto done;
        }
        tail_len += PyBytes_GET_SIZE(pieces[i]);
    }
    result = PyByteArray_FromStringAndSize(NULL, k * cells + tail_len);
    if (result == NULL) goto done;
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(result);
    memset(out, 0, (size_t)(k * cells));
    unsigned char grid[MAX_GRID_BYTES];
    /* A grid as wide as the canvas is one run of squares; one whose rows are whole bytes is
     * a run per row; any other, bit by bit. */
    int by_rows = cols != canvas_cols && cols % 8 == 0;
    for (Py_ssize_t i = 0; i < k; i++, out += cells) {
        memset(grid, 0, grid_bytes);
        int got = bitboard_bytes(items[i], grid, grid_bytes, (size_t)squares);
        if (got < 0) goto fail;
        if (got == 0) continue; /* its row stays 0 */
        if (cols == canvas_cols) {
            spread(out, grid, squares);
        } else if (by_rows) {
            for (Py_ssize_t r = 0; r < rows; r++)
                spread(out + r * canvas_cols, grid + r * (cols / 8), cols);
        } else {
            for (Py_ssize_t q = 0; q < squares; q++)
                out[(q / cols) * canvas_cols + q % cols] = (grid[q / 8] >> (q % 8)) & 1;
        }
    }
    for (Py_ssize_t i = 0; i < t; i++) {
        Py_ssize_t n = PyBytes_GET_SIZE(pieces[i]);
        memcpy(out, PyBytes_AS_STRING(pieces[i]), (size_t)n);
        out += n;
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    Py_DECREF(masks);
    Py_DECREF(tail);
    return result;
}

static PyMethodDef canvas_methods[] = {
    {"join", (PyCFunction)(void (*)(void))canvas_join, METH_FASTCALL,
     "join(masks, cols, rows, canvas_cols, canvas_rows, tail) -> bytearray: the canvas rows "
     "of the bitboards end to end, then the tail's bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef canvas_module = {
    PyModuleDef_HEAD_INIT, "_canvas", "Bitboards to canvas rows of 0/1 bytes, compiled.", -1,
    canvas_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__canvas(void) {
    for (int v = 0; v < 256; v++)
        for (int bit = 0; bit < 8; bit++) SPREAD[v][bit] = (unsigned char)((v >> bit) & 1);
    return PyModule_Create(&canvas_module);
}
