/* The environments' hot path in C: stepping, legality and the observation/mask encoding of
 * cirulla.env.encoding, written straight into caller-owned buffers (NumPy arrays through the
 * buffer protocol; no NumPy C-API).
 *
 * Compiled as its own extension module, cirulla.env._native, on the rules core's state
 * machine (rules/cirulla/rules/engine.h, included: every function of it is static, so
 * this module has its own copy and exports only itself).
 * env/cirulla/env/encoding.py is the reference these functions follow (tests/test_env_vector.py holds
 * both cores to identical observations, masks and rewards).
 */
#include "../../../rules/cirulla/rules/engine.h"

/* ----------------------------------------------------------- the encoding's layout */
/* Offsets of env/cirulla/env/encoding.py's OBS_FIELDS (checked against it at import: obs_layout()). */
enum {
    O_HAND = 0,
    O_TABLE = 40,
    O_CAPTURED = 80,
    O_DECLARED = 200,
    O_UNSEEN = 360,
    O_WILD = 400,
    O_HAND_SIZES = 411,
    O_SCOPE = 415,
    O_TOTALS = 418,
    O_STOCK = 421,
    O_ROUND = 422,
    O_DEAL = 423,
    O_DEALER = 424,
    O_TO_MOVE = 428,
    O_LAST_TAKER = 432,
    O_PLAYERS = 436,
    O_SEAT = 439,
    O_RULES = 443,
    O_PICCOLA = 450,
    OBS_SIZE = 451
};
#define HAND_SLOTS 3
#define CAPTURE_RANKS 64
#define NUM_ACTIONS (12 * HAND_SLOTS * CAPTURE_RANKS)

static void put_cards(float *out, u64 m) {
    while (m) {
        out[__builtin_ctzll(m)] = 1.0f;
        m &= m - 1;
    }
}

static void encode_obs(const G *g, int seat, float *out) {
    int n = g->n, sides = g->sides, me = g->side_of[seat];
    memset(out, 0, sizeof(float) * OBS_SIZE);
    u64 known = g->hands[seat] | g->table;
    put_cards(out + O_HAND, g->hands[seat]);
    put_cards(out + O_TABLE, g->table);
    for (int side = 0; side < sides; side++) {
        put_cards(out + O_CAPTURED + NUM_CARDS * ((side - me + sides) % sides), g->captured[side]);
        known |= g->captured[side];
        int rel = (side - me + sides) % sides;
        out[O_SCOPE + rel] = (float)g->scope[side];
        out[O_TOTALS + rel] = (float)g->totals[side];
    }
    for (int s = 0; s < n; s++) {
        int rel = (s - seat + n) % n;
        put_cards(out + O_DECLARED + NUM_CARDS * rel, g->declared[s]);
        known |= g->declared[s];
        out[O_HAND_SIZES + rel] = (float)popc(g->hands[s]);
    }
    put_cards(out + O_UNSEEN, ALL_CARDS & ~known);
    out[O_WILD + g->wild] = 1.0f;
    out[O_STOCK] = (float)g->nstock;
    out[O_ROUND] = (float)g->round;
    out[O_DEAL] = (float)g->deal_no;
    out[O_DEALER + (g->dealer - seat + n) % n] = 1.0f;
    if (g->winner < 0 && !g->deal_over) out[O_TO_MOVE + (g->turn - seat + n) % n] = 1.0f;
    out[O_LAST_TAKER + (g->last_taker < 0 ? 3 : (g->last_taker - me + sides) % sides)] = 1.0f;
    out[O_PLAYERS + n - 2] = 1.0f;
    out[O_SEAT + seat] = 1.0f;
    const Opts *o = &g->o;
    out[O_RULES + 0] = (float)o->must_capture;
    out[O_RULES + 1] = (float)o->pairing_precedence;
    out[O_RULES + 2] = (float)o->ace_sweep_scopa;
    out[O_RULES + 3] = (float)o->dealer_low_bonus;
    out[O_RULES + 4] = (float)o->primiera_needs_all_suits;
    out[O_RULES + 5] = (float)o->cappotto;
    out[O_RULES + 6] = (float)o->target;
    out[O_PICCOLA] = (float)o->piccola_max;
}

/* encoding.index_actions: the fixed index of each legal code in s->codes (-1 past the rank
 * bound), into idx; returns the count or -1 (memory). */
static int legal_indices(Scratch *s, const G *g, int *idx, int cap) {
    Tab t;
    if (g->winner >= 0 || g->deal_over) return 0;
    u64 hand = g->hands[g->turn];
    if (tab_init(s, &t, g->table, g->wild) ||
        legal_codes(s, &t, hand, g->wild, g->o.must_capture, g->o.pairing_precedence))
        return -1;
    if (s->ncodes > cap) return -1;
    u64 head = ~0ULL;
    int rank = 0;
    for (int i = 0; i < s->ncodes; i++) {
        u64 code = s->codes[i];
        u64 h = code & 0xFFF;
        rank = h == head ? rank + 1 : 0;
        head = h;
        if (rank >= CAPTURE_RANKS) {
            idx[i] = -1;
            continue;
        }
        int card = (int)(code & 63), decl = (int)(code >> 6 & 63);
        int variant = !decl ? 0 : (decl & 15) ? 1 + (decl & 15) : 1;
        int slot = popc(hand & ((1ULL << card) - 1));
        idx[i] = (variant * HAND_SLOTS + slot) * CAPTURE_RANKS + rank;
    }
    return s->ncodes;
}

/* ----------------------------------------------------------- the games */

/* vector.SplitmixDecks: deck k of an episode seeded ``seed`` is the k-th Fisher-Yates
 * shuffle (the core's shuffle) of 0..39 from one splitmix64 stream seeded ``seed``. */
typedef struct {
    PyObject_HEAD int count, maxcodes;
    Opts o;
    G *g;
    Rng *decks; /* per game */
    u64 *seeds;
    long long *episodes;
    int *idx;
    Rng policy;
    Scratch s;
} VecObject;

static void start_episode(VecObject *v, int i) {
    G *g = &v->g[i];
    v->decks[i].s = v->seeds[i] * 1000003ULL + (u64)v->episodes[i];
    g_init(g, &v->o);
    g->deck = rng_deck;
    g->deck_ctx = &v->decks[i];
    g->dealer = v->o.players - 2;
    g_start_deal(g);
}

static void Vec_dealloc(VecObject *self) {
    free(self->g);
    free(self->decks);
    free(self->seeds);
    free(self->episodes);
    free(self->idx);
    scratch_free(&self->s);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Vec_init(VecObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"options", "seeds", "policy_seed", NULL};
    PyObject *opts_obj, *seeds_obj;
    unsigned long long policy_seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|K", names, &opts_obj, &seeds_obj,
                                     &policy_seed))
        return -1;
    if (parse_opts(opts_obj, &self->o)) return -1;
    PyObject *seq = PySequence_Fast(seeds_obj, "seeds must be a sequence of ints");
    if (!seq) return -1;
    int count = (int)PySequence_Fast_GET_SIZE(seq);
    if (count < 1) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "seeds: at least one game");
        return -1;
    }
    self->count = count;
    self->maxcodes = 1 << 16;
    self->g = calloc((size_t)count, sizeof(G));
    self->decks = calloc((size_t)count, sizeof(Rng));
    self->seeds = calloc((size_t)count, sizeof(u64));
    self->episodes = calloc((size_t)count, sizeof(long long));
    self->idx = calloc((size_t)self->maxcodes, sizeof(int));
    if (!self->g || !self->decks || !self->seeds || !self->episodes || !self->idx) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < count; i++) {
        self->seeds[i] = PyLong_AsUnsignedLongLongMask(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        start_episode(self, i);
    }
    Py_DECREF(seq);
    self->policy.s = policy_seed;
    return 0;
}

typedef struct {
    Py_buffer b;
    int ok;
} Buf;

static int get_buf(PyObject *obj, Buf *buf, Py_ssize_t need, const char *what) {
    buf->ok = 0;
    if (PyObject_GetBuffer(obj, &buf->b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return -1;
    buf->ok = 1;
    if (buf->b.len < need) {
        PyErr_Format(PyExc_ValueError, "%s: buffer of %zd bytes, %zd needed", what, buf->b.len,
                     need);
        return -1;
    }
    return 0;
}

static void release(Buf *b, int n) {
    for (int i = 0; i < n; i++)
        if (b[i].ok) PyBuffer_Release(&b[i].b);
}

static int check_game(VecObject *v, int i) {
    if (i < 0 || i >= v->count) {
        PyErr_Format(PyExc_IndexError, "game %d out of range 0..%d", i, v->count - 1);
        return -1;
    }
    return 0;
}

/* the mask of game i's mover into m (NUM_ACTIONS bytes) */
static int write_mask(VecObject *v, int i, uint8_t *m) {
    memset(m, 0, NUM_ACTIONS);
    int k = legal_indices(&v->s, &v->g[i], v->idx, v->maxcodes);
    if (k < 0) {
        PyErr_NoMemory();
        return -1;
    }
    for (int j = 0; j < k; j++)
        if (v->idx[j] >= 0) m[v->idx[j]] = 1;
    return 0;
}

/* game i's legal code of fixed index ``index``, played; -1 with ValueError if not legal */
static int play_index(VecObject *v, int i, long long index) {
    G *g = &v->g[i];
    if (g->winner >= 0 || g->deal_over) {
        PyErr_Format(PyExc_ValueError, "game %d is over: reset it before stepping", i);
        return -1;
    }
    int k = legal_indices(&v->s, g, v->idx, v->maxcodes);
    if (k < 0) {
        PyErr_NoMemory();
        return -1;
    }
    for (int j = 0; j < k; j++)
        if (v->idx[j] == index) return g_play(g, v->s.codes[j]);
    PyErr_Format(PyExc_ValueError, "action index %lld is not legal in game %d", index, i);
    return -1;
}

static void write_rewards(const G *g, float *r) {
    for (int s = 0; s < MAX_PLAYERS; s++)
        r[s] = s < g->n ? (g->side_of[s] == g->winner ? 1.0f : -1.0f) : 0.0f;
}

static PyObject *Vec_fill(VecObject *self, PyObject *args) {
    PyObject *o_obs, *o_mask, *o_move;
    Buf b[3] = {{0}};
    if (!PyArg_ParseTuple(args, "OOO", &o_obs, &o_mask, &o_move)) return NULL;
    int n = self->count;
    if (get_buf(o_obs, &b[0], (Py_ssize_t)n * OBS_SIZE * 4, "obs") ||
        get_buf(o_mask, &b[1], (Py_ssize_t)n * NUM_ACTIONS, "masks") ||
        get_buf(o_move, &b[2], (Py_ssize_t)n * 8, "to_move")) {
        release(b, 3);
        return NULL;
    }
    float *obs = b[0].b.buf;
    uint8_t *mask = b[1].b.buf;
    long long *move = b[2].b.buf;
    for (int i = 0; i < n; i++) {
        G *g = &self->g[i];
        int seat = g->winner >= 0 || g->deal_over ? -1 : g->turn;
        move[i] = seat;
        if (seat >= 0) encode_obs(g, seat, obs + (size_t)i * OBS_SIZE);
        if (write_mask(self, i, mask + (size_t)i * NUM_ACTIONS)) {
            release(b, 3);
            return NULL;
        }
    }
    release(b, 3);
    Py_RETURN_NONE;
}

/* step(actions int64[N], obs, masks, rewards f32[N,4], terminated bool[N], to_move int64[N]) */
static PyObject *Vec_step(VecObject *self, PyObject *args) {
    PyObject *o[6];
    Buf b[6] = {{0}};
    if (!PyArg_ParseTuple(args, "OOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5])) return NULL;
    Py_ssize_t n = self->count;
    Py_ssize_t need[6] = {n * 8, n * OBS_SIZE * 4, n * NUM_ACTIONS, n * 16, n, n * 8};
    const char *what[6] = {"actions", "obs", "masks", "rewards", "terminated", "to_move"};
    for (int k = 0; k < 6; k++)
        if (get_buf(o[k], &b[k], need[k], what[k])) {
            release(b, 6);
            return NULL;
        }
    const long long *act = b[0].b.buf;
    float *obs = b[1].b.buf, *rew = b[3].b.buf;
    uint8_t *mask = b[2].b.buf, *term = b[4].b.buf;
    long long *move = b[5].b.buf;
    for (int i = 0; i < n; i++) {
        G *g = &self->g[i];
        if (play_index(self, i, act[i])) {
            release(b, 6);
            return NULL;
        }
        float *r = rew + 4 * i;
        if (g->winner >= 0) {
            write_rewards(g, r);
            term[i] = 1;
            self->episodes[i]++;
            start_episode(self, i);
        } else {
            r[0] = r[1] = r[2] = r[3] = 0.0f;
            term[i] = 0;
        }
        move[i] = g->turn;
        encode_obs(g, g->turn, obs + (size_t)i * OBS_SIZE);
        if (write_mask(self, i, mask + (size_t)i * NUM_ACTIONS)) {
            release(b, 6);
            return NULL;
        }
    }
    release(b, 6);
    Py_RETURN_NONE;
}

/* random_actions(out int64[N]): a uniformly drawn legal index per game (the random policy) */
static PyObject *Vec_random_actions(VecObject *self, PyObject *arg) {
    Buf b = {0};
    if (get_buf(arg, &b, (Py_ssize_t)self->count * 8, "actions")) {
        release(&b, 1);
        return NULL;
    }
    long long *out = b.b.buf;
    for (int i = 0; i < self->count; i++) {
        int k = legal_indices(&self->s, &self->g[i], self->idx, self->maxcodes), m = 0;
        if (k < 0) {
            release(&b, 1);
            return PyErr_NoMemory();
        }
        for (int j = 0; j < k; j++)
            if (self->idx[j] >= 0) self->idx[m++] = self->idx[j];
        out[i] = m ? self->idx[rng_below(&self->policy, (uint32_t)m)] : -1;
    }
    release(&b, 1);
    Py_RETURN_NONE;
}

static PyObject *Vec_observe(VecObject *self, PyObject *args) {
    int i, seat;
    PyObject *o_out;
    Buf b = {0};
    if (!PyArg_ParseTuple(args, "iiO", &i, &seat, &o_out) || check_game(self, i)) return NULL;
    if (seat < 0 || seat >= self->o.players) {
        PyErr_Format(PyExc_ValueError, "seat %d out of range 0..%d", seat, self->o.players - 1);
        return NULL;
    }
    if (get_buf(o_out, &b, OBS_SIZE * 4, "obs")) {
        release(&b, 1);
        return NULL;
    }
    encode_obs(&self->g[i], seat, b.b.buf);
    release(&b, 1);
    Py_RETURN_NONE;
}

static PyObject *Vec_mask(VecObject *self, PyObject *args) {
    int i;
    PyObject *o_out;
    Buf b = {0};
    if (!PyArg_ParseTuple(args, "iO", &i, &o_out) || check_game(self, i)) return NULL;
    if (get_buf(o_out, &b, NUM_ACTIONS, "mask") || write_mask(self, i, b.b.buf)) {
        release(&b, 1);
        return NULL;
    }
    release(&b, 1);
    Py_RETURN_NONE;
}

/* play(i, index) -> the seat to move next, or -1 once the game is over (it stays over until
 * reset_game(i, ...)) */
static PyObject *Vec_play(VecObject *self, PyObject *args) {
    int i;
    long long index;
    if (!PyArg_ParseTuple(args, "iL", &i, &index) || check_game(self, i)) return NULL;
    if (play_index(self, i, index)) return NULL;
    const G *g = &self->g[i];
    return PyLong_FromLong(g->winner >= 0 || g->deal_over ? -1 : g->turn);
}

/* play_code(i, code) -> as play: any legal action code, past the rank bound too */
static PyObject *Vec_play_code(VecObject *self, PyObject *args) {
    int i;
    unsigned long long code;
    if (!PyArg_ParseTuple(args, "iK", &i, &code) || check_game(self, i)) return NULL;
    G *g = &self->g[i];
    if (g->winner >= 0 || g->deal_over) {
        PyErr_Format(PyExc_ValueError, "game %d is over: reset it before stepping", i);
        return NULL;
    }
    int k = legal_indices(&self->s, g, self->idx, self->maxcodes), found = 0;
    if (k < 0) return PyErr_NoMemory();
    for (int j = 0; j < k && !found; j++) found = self->s.codes[j] == code;
    if (!found) {
        PyErr_Format(PyExc_ValueError, "action code %llu is not legal in game %d", code, i);
        return NULL;
    }
    if (g_play(g, code)) return NULL;
    return PyLong_FromLong(g->winner >= 0 || g->deal_over ? -1 : g->turn);
}

/* reset_game(i, seed=None): the next episode of game i, or episode 0 of ``seed`` */
static PyObject *Vec_reset_game(VecObject *self, PyObject *args) {
    int i;
    PyObject *seed = Py_None;
    if (!PyArg_ParseTuple(args, "i|O", &i, &seed) || check_game(self, i)) return NULL;
    if (seed != Py_None) {
        self->seeds[i] = PyLong_AsUnsignedLongLongMask(seed);
        if (PyErr_Occurred()) return NULL;
        self->episodes[i] = 0;
    } else {
        self->episodes[i]++;
    }
    start_episode(self, i);
    Py_RETURN_NONE;
}

/* legal(i) -> (codes, indices): encoding.legal_actions of game i, for the tests */
static PyObject *Vec_legal(VecObject *self, PyObject *args) {
    int i;
    if (!PyArg_ParseTuple(args, "i", &i) || check_game(self, i)) return NULL;
    int k = legal_indices(&self->s, &self->g[i], self->idx, self->maxcodes);
    if (k < 0) return PyErr_NoMemory();
    PyObject *codes = PyTuple_New(k), *idx = PyTuple_New(k);
    if (!codes || !idx) {
        Py_XDECREF(codes);
        Py_XDECREF(idx);
        return NULL;
    }
    for (int j = 0; j < k; j++) {
        PyTuple_SET_ITEM(codes, j, PyLong_FromUnsignedLongLong(self->s.codes[j]));
        PyTuple_SET_ITEM(idx, j, PyLong_FromLong(self->idx[j]));
    }
    return Py_BuildValue("(NN)", codes, idx);
}

/* status(i) -> (to_move or -1, winner or -1) */
static PyObject *Vec_status(VecObject *self, PyObject *args) {
    int i;
    if (!PyArg_ParseTuple(args, "i", &i) || check_game(self, i)) return NULL;
    const G *g = &self->g[i];
    return Py_BuildValue("(ii)", g->winner >= 0 || g->deal_over ? -1 : g->turn, g->winner);
}

static PyMethodDef Vec_methods[] = {
    {"fill", (PyCFunction)Vec_fill, METH_VARARGS, "fill(obs, masks, to_move): every game's."},
    {"step", (PyCFunction)Vec_step, METH_VARARGS,
     "step(actions, obs, masks, rewards, terminated, to_move): one action per game, auto-reset."},
    {"random_actions", (PyCFunction)Vec_random_actions, METH_O,
     "random_actions(out): a uniformly drawn legal index per game."},
    {"observe", (PyCFunction)Vec_observe, METH_VARARGS, "observe(i, seat, out)."},
    {"mask", (PyCFunction)Vec_mask, METH_VARARGS, "mask(i, out): the mover's legal indices."},
    {"play", (PyCFunction)Vec_play, METH_VARARGS, "play(i, index) -> next seat to move, -1 when over."},
    {"play_code", (PyCFunction)Vec_play_code, METH_VARARGS, "play_code(i, code): as play."},
    {"reset_game", (PyCFunction)Vec_reset_game, METH_VARARGS, "reset_game(i, seed=None)."},
    {"legal", (PyCFunction)Vec_legal, METH_VARARGS, "legal(i) -> (codes, indices)."},
    {"status", (PyCFunction)Vec_status, METH_VARARGS, "status(i) -> (to_move, winner)."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject VecType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cirulla.env._native.Games",
    .tp_basicsize = sizeof(VecObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Games(options, seeds, policy_seed=0): games stepped in the fixed encoding.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Vec_init,
    .tp_dealloc = (destructor)Vec_dealloc,
    .tp_methods = Vec_methods,
};

static PyObject *env_layout(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return Py_BuildValue("(iii)", OBS_SIZE, NUM_ACTIONS, CAPTURE_RANKS);
}

static PyMethodDef env_methods[] = {
    {"layout", env_layout, METH_NOARGS, "layout() -> (OBS_SIZE, NUM_ACTIONS, CAPTURE_RANKS)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef env_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The environments' native stepping and encoding (env/cirulla/env/_native_env.c).",
    .m_size = -1,
    .m_methods = env_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
    if (PyType_Ready(&VecType) < 0) return NULL;
    PyObject *m = PyModule_Create(&env_module);
    if (!m) return NULL;
    Py_INCREF(&VecType);
    if (PyModule_AddObject(m, "Games", (PyObject *)&VecType) < 0) {
        Py_DECREF(&VecType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
