/* medina_envs._tensors: the observation's tensors (docs/encoding.md), compiled.
 *
 * join: the planes and the action mask are bitboards (Python ints, bit q = square q of a
 * cols x rows grid) laid out as rows of 0/1 bytes on the ROWS x COLS canvas. In Python each
 * bitboard costs a few microseconds to unpack, and a step unpacks 36 of them; here the whole
 * view is one call.
 *
 * vector: the vector of floats (VECTOR_FIELDS, SEAT_FIELDS) from the engine state's fields.
 *
 * tensors.py holds the pure-Python join and observer.py the pure-Python vector (used where
 * this module is not built); the tests check each pair agrees byte for byte, and the layout
 * below is checked against medina_client.encoding when the module is loaded (LAYOUT).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* The largest grid: its bitboards' bytes fit this buffer. */
#define MAX_GRID_BYTES 64
/* The longest side of a canvas (so that no size below overflows). */
#define MAX_CANVAS_SIDE 4096

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
                     _PyType_Name(Py_TYPE(o)));
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
static PyObject *tensors_join(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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
    if (canvas_cols > MAX_CANVAS_SIDE || canvas_rows > MAX_CANVAS_SIDE) {
        PyErr_Format(PyExc_ValueError, "a %zd x %zd canvas is too large", canvas_cols,
                     canvas_rows);
        return NULL;
    }
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
                         _PyType_Name(Py_TYPE(pieces[i])));
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


/* ---- the vector ------------------------------------------------------------------------ */

/* Offsets of VECTOR_FIELDS (medina_client.encoding), in floats. */
enum {
    AT_RULESET = 0, AT_PLAYERS = 3, AT_PHASE = 6, AT_TO_MOVE = 9, AT_TURN = 13, AT_QUOTA = 14,
    AT_PLACED = 15, AT_TEA_POOL = 16, AT_EXHAUSTED = 17, AT_PALACE_TILES = 21,
    AT_TOWER_TILES = 41, AT_TOWER_MERCHANTS = 61, AT_SEATS = 65,
    SEAT_SLOTS = 4, VECTOR_SIZE = AT_SEATS + SEAT_SLOTS * 29,
};
/* Offsets of SEAT_FIELDS within a seat slot, in floats. */
enum {
    S_PRESENT = 0, S_ROOFTOPS = 1, S_BLOCKING = 5, S_NEUTRALS = 9, S_TEA = 10, S_OUT = 11,
    S_REVEALED = 12, S_KNOWN = 13, S_SUPPLY = 14, S_SCORE = 21, SEAT_SIZE = 29,
};
/* GameState.supply: SLOTS entries per seat, the neutral rooftops at NEUTRALS; the first
 * SUPPLY_SHOWN are the vector's supply entries. */
enum { SLOTS = 8, NEUTRALS = 7, SUPPLY_SHOWN = 7, SCORE_BYTES = 8 * 4 };

/* `o` as a long within lo..hi; -1 with ValueError naming `what` otherwise. */
static int bounded(PyObject *o, long lo, long hi, const char *what, long *out) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s is %ld, not in %ld..%ld", what, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Entry `i` of the list `list` (named `what`) as a long within lo..hi. */
static int entry(PyObject *list, Py_ssize_t i, long lo, long hi, const char *what, long *out) {
    if (!PyList_Check(list)) {
        PyErr_Format(PyExc_TypeError, "%s must be a list, not %.100s", what,
                     _PyType_Name(Py_TYPE(list)));
        return -1;
    }
    if (i >= PyList_GET_SIZE(list)) {
        PyErr_Format(PyExc_ValueError, "%s has %zd entries, fewer than %zd", what,
                     PyList_GET_SIZE(list), i + 1);
        return -1;
    }
    return bounded(PyList_GET_ITEM(list, i), lo, hi, what, out);
}

/* The one-hot of a tile's holder seen from `seat`: its seat slot, or 4 for the board edge. */
static long holder_slot(long holder, long seat, long players) {
    return holder < 0 ? 4 : (holder - seat + players) % players;
}

/* vector(ruleset, players, phase, to_move, turn, quota, placed, tea_pool, exhausted,
 *        palace_tiles, tower_tiles, tower_merchants, seat, supply, roofs, blocking, tea,
 *        revealed, score_rows) -> bytes
 *
 * The vector of `seat`'s view as float32 bytes. ruleset: 0 medina-v2, 1 medina-v1,
 * 2 medina-v1-2p; phase: the engine's Phase (1..3); to_move: the seat slot to move, -1 once
 * the game is over; the lists are GameState's; score_rows: per seat (in seat order) its
 * SEAT_FIELDS score entries as 32 bytes of float32. */
static PyObject *tensors_vector(PyObject *self, PyObject *const *a, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 19) {
        PyErr_Format(PyExc_TypeError, "vector() takes 19 arguments, not %zd", nargs);
        return NULL;
    }
    long ruleset, players, phase, to_move, turn, quota, placed, tea_pool, exhausted, seat,
        revealed;
    if (bounded(a[0], 0, 2, "ruleset", &ruleset) < 0 ||
        bounded(a[1], 2, SEAT_SLOTS, "players", &players) < 0 ||
        bounded(a[2], 1, 3, "phase", &phase) < 0 ||
        bounded(a[3], -1, players - 1, "to_move", &to_move) < 0 ||
        bounded(a[4], 0, LONG_MAX, "turn", &turn) < 0 ||
        bounded(a[5], 0, LONG_MAX, "quota", &quota) < 0 ||
        bounded(a[6], 0, LONG_MAX, "placed", &placed) < 0 ||
        bounded(a[7], 0, LONG_MAX, "tea_pool", &tea_pool) < 0 ||
        bounded(a[8], 0, 15, "exhausted", &exhausted) < 0 ||
        bounded(a[12], 0, players - 1, "seat", &seat) < 0 ||
        bounded(a[17], 0, (1L << players) - 1, "revealed", &revealed) < 0)
        return NULL;
    PyObject *result = PyBytes_FromStringAndSize(NULL, VECTOR_SIZE * (Py_ssize_t)sizeof(float));
    if (result == NULL) return NULL;
    float *v = (float *)PyBytes_AS_STRING(result);
    memset(v, 0, VECTOR_SIZE * sizeof(float));
    v[AT_RULESET + ruleset] = 1;
    v[AT_PLAYERS + players - 2] = 1;
    v[AT_PHASE + phase - 1] = 1;
    if (to_move >= 0) v[AT_TO_MOVE + to_move] = 1;
    v[AT_TURN] = (float)turn;
    v[AT_QUOTA] = (float)quota;
    v[AT_PLACED] = (float)placed;
    v[AT_TEA_POOL] = (float)tea_pool;
    for (int c = 0; c < 4; c++) v[AT_EXHAUSTED + c] = (float)((exhausted >> c) & 1);
    long x;
    for (Py_ssize_t t = 0; t < 4; t++) {
        if (entry(a[9], t, -1, players - 1, "palace_tiles", &x) < 0) goto fail;
        v[AT_PALACE_TILES + 5 * t + holder_slot(x, seat, players)] = 1;
        if (entry(a[10], t, -1, players - 1, "tower_tiles", &x) < 0) goto fail;
        v[AT_TOWER_TILES + 5 * t + holder_slot(x, seat, players)] = 1;
        if (entry(a[11], t, 0, LONG_MAX, "tower_merchants", &x) < 0) goto fail;
        v[AT_TOWER_MERCHANTS + t] = (float)x;
    }
    PyObject *supply = a[13], *roofs = a[14], *blocking = a[15], *tea = a[16], *scores = a[18];
    if (!PyTuple_Check(scores) && !PyList_Check(scores)) {
        PyErr_Format(PyExc_TypeError, "score_rows must be a list or tuple, not %.100s",
                     _PyType_Name(Py_TYPE(scores)));
        goto fail;
    }
    if (PySequence_Fast_GET_SIZE(scores) != players) {
        PyErr_Format(PyExc_ValueError, "score_rows has %zd rows, not one per seat (%ld)",
                     PySequence_Fast_GET_SIZE(scores), players);
        goto fail;
    }
    /* Seat slots from the viewer on, in turn order. */
    for (long k = 0; k < players; k++) {
        long p = (seat + k) % players, own[SLOTS], roof, block, held;
        float *slot = v + AT_SEATS + k * SEAT_SIZE;
        int empty = 1;
        for (int i = 0; i < SLOTS; i++) {
            if (entry(supply, p * SLOTS + i, 0, LONG_MAX, "supply", &own[i]) < 0) goto fail;
            if (own[i]) empty = 0;
        }
        if (entry(roofs, p, 0, 15, "roofs", &roof) < 0 ||
            entry(blocking, p, 0, 15, "blocking", &block) < 0 ||
            entry(tea, p, 0, LONG_MAX, "tea", &held) < 0)
            goto fail;
        long shown_p = (revealed >> p) & 1;
        int shown = k == 0 || shown_p;
        slot[S_PRESENT] = 1;
        for (int c = 0; c < 4; c++) {
            slot[S_ROOFTOPS + c] = (float)((roof >> c) & 1);
            slot[S_BLOCKING + c] = (float)((block >> c) & 1);
        }
        slot[S_NEUTRALS] = (float)own[NEUTRALS];
        slot[S_TEA] = (float)held;
        slot[S_OUT] = (float)(empty && !roof && !block); /* GameState.pieces_left == 0 */
        slot[S_REVEALED] = (float)shown_p;
        slot[S_KNOWN] = (float)shown;
        if (shown)
            for (int i = 0; i < SUPPLY_SHOWN; i++) slot[S_SUPPLY + i] = (float)own[i];
        PyObject *row = PySequence_Fast_GET_ITEM(scores, p);
        if (!PyBytes_Check(row) || PyBytes_GET_SIZE(row) != SCORE_BYTES) {
            PyErr_SetString(PyExc_ValueError, "a score row must be 32 bytes (8 float32)");
            goto fail;
        }
        memcpy(slot + S_SCORE, PyBytes_AS_STRING(row), SCORE_BYTES);
    }
    return result;
fail:
    Py_DECREF(result);
    return NULL;
}

static PyMethodDef tensors_methods[] = {
    {"join", (PyCFunction)(void (*)(void))tensors_join, METH_FASTCALL,
     "join(masks, cols, rows, canvas_cols, canvas_rows, tail) -> bytearray: the canvas rows "
     "of the bitboards end to end, then the tail's bytes."},
    {"vector", (PyCFunction)(void (*)(void))tensors_vector, METH_FASTCALL,
     "vector(ruleset, players, phase, to_move, turn, quota, placed, tea_pool, exhausted, "
     "palace_tiles, tower_tiles, tower_merchants, seat, supply, roofs, blocking, tea, revealed, "
     "score_rows) -> bytes: the vector of a seat's view as float32 bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef tensors_module = {
    PyModuleDef_HEAD_INIT, "_tensors", "The observation's tensors, compiled.", -1,
    tensors_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tensors(void) {
    for (int v = 0; v < 256; v++)
        for (int bit = 0; bit < 8; bit++) SPREAD[v][bit] = (unsigned char)((v >> bit) & 1);
    PyObject *module = PyModule_Create(&tensors_module);
    if (module == NULL) return NULL;
    /* The layout compiled in, for tensors.py to check against medina_client.encoding. */
    PyObject *layout = Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}"
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}(iii)",
        "ruleset", AT_RULESET, "players", AT_PLAYERS, "phase", AT_PHASE, "to_move", AT_TO_MOVE,
        "turn", AT_TURN, "quota", AT_QUOTA, "placed", AT_PLACED, "tea_pool", AT_TEA_POOL,
        "exhausted", AT_EXHAUSTED, "palace_tiles", AT_PALACE_TILES, "tower_tiles", AT_TOWER_TILES,
        "tower_merchants", AT_TOWER_MERCHANTS, "seat_0", AT_SEATS, "size", VECTOR_SIZE,
        "present", S_PRESENT, "rooftops", S_ROOFTOPS, "blocking_rooftops", S_BLOCKING,
        "neutral_rooftops", S_NEUTRALS, "tea", S_TEA, "out_of_pieces", S_OUT,
        "revealed", S_REVEALED, "supply_known", S_KNOWN, "supply", S_SUPPLY, "score", S_SCORE,
        SLOTS, NEUTRALS, SEAT_SIZE);
    if (layout == NULL || PyModule_AddObject(module, "LAYOUT", layout) < 0) {
        Py_XDECREF(layout);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
