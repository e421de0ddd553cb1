/* The environments' hot path in C: stepping, legality and the observation/mask encoding of
 * cirulla.rules.encoding, written straight into caller-owned buffers (NumPy arrays through the
 * buffer protocol; no NumPy C-API).
 *
 * Compiled as its own extension module, cirulla.env._native, on the rules core's state
 * machine (rules/cirulla/rules/engine.h, included: every function of it is static, so
 * this module has its own copy and exports only itself).
 * rules/cirulla/rules/encoding.py is the reference these functions follow (tests/env/test_vector.py holds
 * both cores to identical observations, masks and rewards).
 */
#include "../../../rules/cirulla/rules/engine.h"

/* ----------------------------------------------------------- the encoding's layout */
/* Offsets of rules/cirulla/rules/encoding.py's OBS_FIELDS (checked against it at import: obs_layout()). */
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

/* ----------------------------------------------------------- rewards */
/* env/cirulla/env/rewards.py's modes: the game's end (+1/-1), each deal's sign, each deal's
 * points; a deal's value for a seat is its side's deal points minus the mean of the others'. */
enum { REWARD_GAME = 0, REWARD_DEAL = 1, REWARD_POINTS = 2 };

static float deal_margin(const G *g, int side) {
    float mine = 0.0f, others = 0.0f;
    for (int i = 0; i < g->sides; i++) {
        int t = 0;
        for (int k = 0; k < S_ITEMS; k++) t += g->score[i][k];
        if (i == side) mine = (float)t;
        else others += (float)t;
    }
    return mine - others / (float)(g->sides - 1);
}

/* Per seat, the reward of a step: ``ended`` the step ended a deal (g->score holds it). */
static void step_rewards(const G *g, int mode, int ended, float *r) {
    for (int s = 0; s < MAX_PLAYERS; s++) {
        float v = 0.0f;
        if (s < g->n) {
            if (mode == REWARD_GAME) {
                if (g->winner >= 0) v = g->side_of[s] == g->winner ? 1.0f : -1.0f;
            } else if (ended) {
                v = deal_margin(g, g->side_of[s]);
                if (mode == REWARD_DEAL) v = v > 0 ? 1.0f : v < 0 ? -1.0f : 0.0f;
            }
        }
        r[s] = v;
    }
}

/* A play through g_play that tells whether it ended a deal (scored in g->score). */
static int play_scored(G *g, u64 code, int *ended) {
    int deal = g->deal_no, winner = g->winner;
    if (g_play(g, code)) return -1;
    *ended = g->deal_no != deal || (g->winner >= 0 && winner < 0) || g->deal_over;
    return 0;
}

/* (cappotto or -1, ((cards, coins, settebello, primiera, scope, grande, piccola), ...)) of
 * the last scored deal, or None before the first */
static PyObject *score_tuple(const G *g) {
    if (!g->has_score) Py_RETURN_NONE;
    PyObject *sides = PyTuple_New(g->sides);
    if (!sides) return NULL;
    for (int i = 0; i < g->sides; i++) {
        PyObject *items = PyTuple_New(S_ITEMS);
        if (!items) {
            Py_DECREF(sides);
            return NULL;
        }
        for (int k = 0; k < S_ITEMS; k++) PyTuple_SET_ITEM(items, k, PyLong_FromLong(g->score[i][k]));
        PyTuple_SET_ITEM(sides, i, items);
    }
    return Py_BuildValue("(iN)", g->score_cappotto, sides);
}

static PyObject *masks_tuple(const u64 *m, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, PyLong_FromUnsignedLongLong(m[i]));
    return t;
}

static PyObject *ints_tuple(const int *v, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, PyLong_FromLong(v[i]));
    return t;
}

/* Everything of a game a view is built from (vector.view_of_zones reads it): (deal, dealer,
 * round, to_move or -1, hands, table, wild, declared, captured, scope, stock count, totals,
 * last_taker or -1, winner or -1, stock in dealing order) */
static PyObject *state_tuple(const G *g) {
    int to_move = g->winner >= 0 || g->deal_over ? -1 : g->turn;
    PyObject *stock = PyList_New(g->nstock);
    if (!stock) return NULL;
    for (int j = 0; j < g->nstock; j++)
        PyList_SET_ITEM(stock, j, PyLong_FromLong(g->stock[g->nstock - 1 - j]));
    return Py_BuildValue("(iiiiNKiNNNiNiiN)", g->deal_no, g->dealer, g->round, to_move,
                         masks_tuple(g->hands, g->n), (unsigned long long)g->table, g->wild,
                         masks_tuple(g->declared, g->n), masks_tuple(g->captured, g->sides),
                         ints_tuple(g->scope, g->sides), g->nstock,
                         ints_tuple(g->totals, g->sides), g->last_taker, g->winner, stock);
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
    int reward_mode; /* REWARD_GAME, REWARD_DEAL or REWARD_POINTS */
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
static int play_index(VecObject *v, int i, long long index, int *ended) {
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
        if (v->idx[j] == index) return play_scored(g, v->s.codes[j], ended);
    PyErr_Format(PyExc_ValueError, "action index %lld is not legal in game %d", index, i);
    return -1;
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
        int ended = 0;
        if (play_index(self, i, act[i], &ended)) {
            release(b, 6);
            return NULL;
        }
        float *r = rew + 4 * i;
        step_rewards(g, self->reward_mode, ended, r);
        if (g->winner >= 0) {
            term[i] = 1;
            self->episodes[i]++;
            start_episode(self, i);
        } else {
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
 * reset_game(i, ...)); plus 16 when the play ended a deal (``score(i)`` tells its points) */
static PyObject *Vec_play(VecObject *self, PyObject *args) {
    int i, ended = 0;
    long long index;
    if (!PyArg_ParseTuple(args, "iL", &i, &index) || check_game(self, i)) return NULL;
    if (play_index(self, i, index, &ended)) return NULL;
    const G *g = &self->g[i];
    return PyLong_FromLong((g->winner >= 0 || g->deal_over ? -1 : g->turn) + 16 * ended);
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
    int ended = 0;
    if (play_scored(g, code, &ended)) return NULL;
    return PyLong_FromLong((g->winner >= 0 || g->deal_over ? -1 : g->turn) + 16 * ended);
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

static PyObject *Vec_score(VecObject *self, PyObject *args) {
    int i;
    if (!PyArg_ParseTuple(args, "i", &i) || check_game(self, i)) return NULL;
    return score_tuple(&self->g[i]);
}

static PyObject *Vec_zones(VecObject *self, PyObject *args) {
    int i;
    if (!PyArg_ParseTuple(args, "i", &i) || check_game(self, i)) return NULL;
    return state_tuple(&self->g[i]);
}

static PyObject *Vec_set_reward(VecObject *self, PyObject *arg) {
    long mode = PyLong_AsLong(arg);
    if (mode == -1 && PyErr_Occurred()) return NULL;
    if (mode < REWARD_GAME || mode > REWARD_POINTS) {
        PyErr_Format(PyExc_ValueError, "reward mode %ld: expected 0, 1 or 2", mode);
        return NULL;
    }
    self->reward_mode = (int)mode;
    Py_RETURN_NONE;
}

static PyMethodDef Vec_methods[] = {
    {"score", (PyCFunction)Vec_score, METH_VARARGS,
     "score(i) -> (cappotto, per-side items) of the last scored deal, or None."},
    {"zones", (PyCFunction)Vec_zones, METH_VARARGS, "zones(i) -> the state a view is built from."},
    {"set_reward", (PyCFunction)Vec_set_reward, METH_O, "set_reward(mode): 0 game, 1 deal, 2 points."},
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


/* ----------------------------------------------------------- the OpenSpiel state */
/* One position of the OpenSpiel game python_cirulla (env/cirulla/env/openspiel.py wraps it):
 * the game steps in place on the native core (no copy per step), observations are written
 * by encode_obs, and a deck is dealt at chance nodes. CHANCE_CARDS: 40 explicit chance
 * nodes, each the next card of the deck drawn uniformly from those left (exact: every deck
 * equally likely); CHANCE_SAMPLED: no chance nodes, the state shuffles each deck itself
 * from its own splitmix64 stream (OpenSpiel's sampled stochastic mode; a clone carries the
 * stream on, so it deals the same future; reseed() gives it another). The game runs deal
 * by deal (deal_only): a play that ends a deal leaves it scored and over, and the next deal
 * starts once its deck is dealt. A deck whose table would hold two aces is dealt again,
 * as the rules' redeal, by 40 more chance nodes. */
enum { CHANCE_CARDS = 0, CHANCE_SAMPLED = 1 };
#define PY_CHANCE (-1)
#define PY_TERMINAL (-4)
#define FLOAT_CACHE 2048

static PyObject *float_cache[FLOAT_CACHE]; /* 0.0 .. 2047.0: every observation entry */
static Scratch spiel_scratch;              /* the GIL serialises every state's use */

typedef struct {
    PyObject_HEAD G g;
    int mode, dealing, ndrawn, redeals;
    uint8_t drawn[NUM_CARDS], ready[NUM_CARDS];
    Rng rng;
    u64 *history; /* seat << 56 | code of every play, in order */
    int nhistory, caphistory;
    int nlegal, legal_ok;
    u64 *codes;
    int *idx;
    int caplegal;
} SpielObject;

static PyTypeObject SpielType;

static int ready_deck(void *ctx, int deal_no, uint8_t *deck) {
    (void)deal_no;
    SpielObject *st = ctx;
    if (st->mode == CHANCE_SAMPLED) return rng_deck(&st->rng, deal_no, deck);
    memcpy(deck, st->ready, NUM_CARDS);
    return 0;
}

static int spiel_over(const SpielObject *st) { return st->g.winner >= 0; }

static int spiel_player(const SpielObject *st) {
    if (spiel_over(st)) return PY_TERMINAL;
    if (st->dealing) return PY_CHANCE;
    return st->g.turn;
}

/* The next deal's deck is needed (or dealt at once, sampled). */
static void spiel_need_deck(SpielObject *st) {
    st->legal_ok = 0;
    if (st->mode == CHANCE_SAMPLED) {
        g_start_deal(&st->g);
        st->dealing = 0;
        return;
    }
    st->dealing = 1;
    st->ndrawn = 0;
}

static int spiel_legal(SpielObject *st) {
    if (st->legal_ok) return st->nlegal;
    Scratch *s = &spiel_scratch;
    int k = 0;
    if (!st->dealing && !spiel_over(st)) {
        int cap = 1 << 16;
        if (st->caplegal < cap) {
            int *idx = realloc(st->idx, sizeof(int) * (size_t)cap);
            if (!idx) return -1;
            st->idx = idx;
            u64 *codes = realloc(st->codes, sizeof(u64) * (size_t)cap);
            if (!codes) return -1;
            st->codes = codes;
            st->caplegal = cap;
        }
        k = legal_indices(s, &st->g, st->idx, st->caplegal);
        if (k < 0) return -1;
        memcpy(st->codes, s->codes, sizeof(u64) * (size_t)k);
    }
    st->nlegal = k;
    st->legal_ok = 1;
    return k;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static PyObject *Spiel_new_state(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *names[] = {"options", "mode", "seed", NULL};
    PyObject *opts_obj;
    int mode = CHANCE_CARDS;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|iK", names, &opts_obj, &mode, &seed))
        return NULL;
    if (mode != CHANCE_CARDS && mode != CHANCE_SAMPLED) {
        PyErr_Format(PyExc_ValueError, "chance mode %d: expected 0 (cards) or 1 (sampled)", mode);
        return NULL;
    }
    Opts o;
    if (parse_opts(opts_obj, &o)) return NULL;
    SpielObject *st = (SpielObject *)type->tp_alloc(type, 0);
    if (!st) return NULL;
    g_init(&st->g, &o);
    st->g.deal_only = 1;
    st->g.deck = ready_deck;
    st->g.deck_ctx = st;
    st->g.dealer = o.players - 2;
    st->g.deal_over = 1;
    st->mode = mode;
    st->rng.s = seed;
    spiel_need_deck(st);
    return (PyObject *)st;
}

static void Spiel_dealloc(SpielObject *st) {
    free(st->history);
    free(st->codes);
    free(st->idx);
    Py_TYPE(st)->tp_free((PyObject *)st);
}

static PyObject *Spiel_current_player(SpielObject *st, PyObject *unused) {
    (void)unused;
    return PyLong_FromLong(spiel_player(st));
}

static PyObject *Spiel_is_terminal(SpielObject *st, PyObject *unused) {
    (void)unused;
    return PyBool_FromLong(spiel_over(st));
}

static PyObject *Spiel_is_chance(SpielObject *st, PyObject *unused) {
    (void)unused;
    return PyBool_FromLong(!spiel_over(st) && st->dealing);
}

/* legal_actions() -> the mover's fixed indices, ascending; at a chance node the cards not
 * drawn yet (OpenSpiel's convention); empty at the end */
static PyObject *Spiel_legal_actions(SpielObject *st, PyObject *unused) {
    (void)unused;
    if (st->dealing && !spiel_over(st)) {
        u64 used = 0;
        for (int j = 0; j < st->ndrawn; j++) used |= 1ULL << st->drawn[j];
        PyObject *out = PyList_New(NUM_CARDS - st->ndrawn);
        if (!out) return NULL;
        for (int c = 0, m = 0; c < NUM_CARDS; c++)
            if (!(used >> c & 1)) PyList_SET_ITEM(out, m++, PyLong_FromLong(c));
        return out;
    }
    int k = spiel_legal(st);
    if (k < 0) return PyErr_NoMemory();
    int sorted[4096], m = 0;
    for (int j = 0; j < k && m < 4096; j++)
        if (st->idx[j] >= 0) sorted[m++] = st->idx[j];
    qsort(sorted, (size_t)m, sizeof(int), cmp_int);
    PyObject *out = PyList_New(m);
    if (!out) return NULL;
    for (int j = 0; j < m; j++) PyList_SET_ITEM(out, j, PyLong_FromLong(sorted[j]));
    return out;
}

static PyObject *chance_tuples[NUM_CARDS + 1][NUM_CARDS]; /* [cards left][card] */

/* chance_outcomes() -> [(card, 1/left), ...] of the cards not drawn yet */
static PyObject *Spiel_chance_outcomes(SpielObject *st, PyObject *unused) {
    (void)unused;
    if (!st->dealing || spiel_over(st)) return PyList_New(0);
    u64 used = 0;
    for (int j = 0; j < st->ndrawn; j++) used |= 1ULL << st->drawn[j];
    int left = NUM_CARDS - st->ndrawn;
    PyObject *out = PyList_New(left);
    if (!out) return NULL;
    int m = 0;
    for (int c = 0; c < NUM_CARDS; c++) {
        if (used >> c & 1) continue;
        PyObject *t = chance_tuples[left][c];
        if (!t) {
            t = Py_BuildValue("(id)", c, 1.0 / left);
            if (!t) {
                Py_DECREF(out);
                return NULL;
            }
            chance_tuples[left][c] = t;
        }
        Py_INCREF(t);
        PyList_SET_ITEM(out, m++, t);
    }
    return out;
}

static int spiel_record(SpielObject *st, u64 entry) {
    if (st->nhistory == st->caphistory) {
        int cap = st->caphistory ? 2 * st->caphistory : 256;
        u64 *h = realloc(st->history, sizeof(u64) * (size_t)cap);
        if (!h) return -1;
        st->history = h;
        st->caphistory = cap;
    }
    st->history[st->nhistory++] = entry;
    return 0;
}

/* apply(action) -> 2 for a chance outcome (the card drawn), else the mover's fixed index
 * played: 1 when it ended a deal, 0 otherwise */
static PyObject *Spiel_apply(SpielObject *st, PyObject *arg) {
    long long a = PyLong_AsLongLong(arg);
    if (a == -1 && PyErr_Occurred()) return NULL;
    if (spiel_over(st)) {
        PyErr_SetString(PyExc_ValueError, "the game is over: no more actions");
        return NULL;
    }
    if (st->dealing) {
        if (a < 0 || a >= NUM_CARDS) goto illegal;
        for (int j = 0; j < st->ndrawn; j++)
            if (st->drawn[j] == a) goto illegal;
        st->drawn[st->ndrawn++] = (uint8_t)a;
        if (st->ndrawn < NUM_CARDS) return PyLong_FromLong(2);
        int n = st->g.n;
        u64 table = 0;
        for (int k = 3 * n; k < 3 * n + 4; k++) table |= 1ULL << st->drawn[k];
        st->ndrawn = 0;
        if (popc(table & ACES) >= 2) { /* the rules' redeal: a fresh deck */
            st->redeals++;
            return PyLong_FromLong(2);
        }
        memcpy(st->ready, st->drawn, NUM_CARDS);
        if (g_start_deal(&st->g)) return NULL;
        st->dealing = 0;
        st->legal_ok = 0;
        return PyLong_FromLong(2);
    }
    int k = spiel_legal(st);
    if (k < 0) return PyErr_NoMemory();
    for (int j = 0; j < k; j++) {
        if (st->idx[j] != a) continue;
        u64 code = st->codes[j];
        if (spiel_record(st, (u64)st->g.turn << 56 | code)) return PyErr_NoMemory();
        int ended = 0;
        if (play_scored(&st->g, code, &ended)) return NULL;
        st->legal_ok = 0;
        if (st->g.deal_over && st->g.winner < 0) spiel_need_deck(st);
        return PyLong_FromLong(ended);
    }
illegal:
    PyErr_Format(PyExc_ValueError, "action %lld is not legal in this position", a);
    return NULL;
}

/* code_of(index) -> the mover's action code of a legal fixed index (ValueError if not) */
static PyObject *Spiel_code_of(SpielObject *st, PyObject *arg) {
    long long a = PyLong_AsLongLong(arg);
    if (a == -1 && PyErr_Occurred()) return NULL;
    int k = spiel_legal(st);
    if (k < 0) return PyErr_NoMemory();
    for (int j = 0; j < k; j++)
        if (st->idx[j] == a) return PyLong_FromUnsignedLongLong(st->codes[j]);
    PyErr_Format(PyExc_ValueError, "action %lld is not legal in this position", a);
    return NULL;
}

static int parse_seat(SpielObject *st, PyObject *arg, int *seat) {
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v >= st->g.n) {
        PyErr_Format(PyExc_ValueError, "player %ld: expected 0..%d", v, st->g.n - 1);
        return -1;
    }
    *seat = (int)v;
    return 0;
}

/* tensor(player) -> the observation of ``player`` as a list of floats (OpenSpiel's type) */
static PyObject *Spiel_tensor(SpielObject *st, PyObject *arg) {
    int seat;
    if (parse_seat(st, arg, &seat)) return NULL;
    float obs[OBS_SIZE];
    if (st->g.deal_no == 0) memset(obs, 0, sizeof obs);
    else encode_obs(&st->g, seat, obs);
    PyObject *out = PyList_New(OBS_SIZE);
    if (!out) return NULL;
    for (int k = 0; k < OBS_SIZE; k++) {
        float v = obs[k];
        int iv = (int)v;
        PyObject *f;
        if ((float)iv == v && iv >= 0 && iv < FLOAT_CACHE) {
            f = float_cache[iv];
            Py_INCREF(f);
        } else if (!(f = PyFloat_FromDouble(v))) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, f);
    }
    return out;
}

/* observe(player, out): the observation written into a float32 buffer */
static PyObject *Spiel_observe(SpielObject *st, PyObject *args) {
    PyObject *o_seat, *o_out;
    int seat;
    Buf b = {0};
    if (!PyArg_ParseTuple(args, "OO", &o_seat, &o_out) || parse_seat(st, o_seat, &seat))
        return NULL;
    if (get_buf(o_out, &b, OBS_SIZE * 4, "obs")) {
        release(&b, 1);
        return NULL;
    }
    if (st->g.deal_no == 0) memset(b.b.buf, 0, OBS_SIZE * 4);
    else encode_obs(&st->g, seat, b.b.buf);
    release(&b, 1);
    Py_RETURN_NONE;
}

/* status() -> (player, winning side or -1, deal number, cards drawn, redeals) */
static PyObject *Spiel_status(SpielObject *st, PyObject *unused) {
    (void)unused;
    return Py_BuildValue("(iiiii)", spiel_player(st), st->g.winner, st->g.deal_no,
                         st->ndrawn, st->redeals);
}

/* deal_rewards(mode) -> per seat, the reward of the last scored deal (deal_margin) */
static PyObject *Spiel_deal_rewards(SpielObject *st, PyObject *arg) {
    long mode = PyLong_AsLong(arg);
    if (mode == -1 && PyErr_Occurred()) return NULL;
    float r[MAX_PLAYERS];
    step_rewards(&st->g, (int)mode, st->g.has_score, r);
    PyObject *out = PyList_New(st->g.n);
    if (!out) return NULL;
    for (int s = 0; s < st->g.n; s++) PyList_SET_ITEM(out, s, PyFloat_FromDouble(r[s]));
    return out;
}

static PyObject *Spiel_zones(SpielObject *st, PyObject *unused) {
    (void)unused;
    return state_tuple(&st->g);
}

static PyObject *Spiel_score(SpielObject *st, PyObject *unused) {
    (void)unused;
    return score_tuple(&st->g);
}

/* history() -> [(seat, code), ...] of every play so far */
static PyObject *Spiel_history(SpielObject *st, PyObject *unused) {
    (void)unused;
    PyObject *out = PyList_New(st->nhistory);
    if (!out) return NULL;
    for (int j = 0; j < st->nhistory; j++) {
        u64 e = st->history[j];
        PyList_SET_ITEM(out, j, Py_BuildValue("(iK)", (int)(e >> 56), e & ((1ULL << 56) - 1)));
    }
    return out;
}

/* drawn() -> the cards drawn so far of the deck being dealt */
static PyObject *Spiel_drawn(SpielObject *st, PyObject *unused) {
    (void)unused;
    PyObject *out = PyList_New(st->ndrawn);
    if (!out) return NULL;
    for (int j = 0; j < st->ndrawn; j++) PyList_SET_ITEM(out, j, PyLong_FromLong(st->drawn[j]));
    return out;
}

static PyObject *Spiel_clone(SpielObject *st, PyObject *unused) { /* or deepcopy's memo */
    (void)unused;
    SpielObject *c = (SpielObject *)SpielType.tp_alloc(&SpielType, 0);
    if (!c) return NULL;
    c->g = st->g;
    c->g.deck_ctx = c;
    c->mode = st->mode;
    c->dealing = st->dealing;
    c->ndrawn = st->ndrawn;
    c->redeals = st->redeals;
    memcpy(c->drawn, st->drawn, sizeof c->drawn);
    memcpy(c->ready, st->ready, sizeof c->ready);
    c->rng = st->rng; /* sampled: a clone deals the same future (OpenSpiel's convention) */
    if (st->nhistory) {
        c->history = malloc(sizeof(u64) * (size_t)st->caphistory);
        if (!c->history) {
            Py_DECREF(c);
            return PyErr_NoMemory();
        }
        memcpy(c->history, st->history, sizeof(u64) * (size_t)st->nhistory);
        c->nhistory = st->nhistory;
        c->caphistory = st->caphistory;
    }
    return (PyObject *)c;
}

/* set_hidden(hands, stock): the hidden zones replaced (resample_from_infostate; the caller
 * deals them consistently with a seat's view: sample_world) */
static PyObject *Spiel_set_hidden(SpielObject *st, PyObject *args) {
    PyObject *hands, *stock;
    if (!PyArg_ParseTuple(args, "OO", &hands, &stock)) return NULL;
    long long h[MAX_PLAYERS], k[NUM_CARDS];
    if (get_ints(hands, st->g.n, h, 1, "hands") || get_ints(stock, st->g.nstock, k, 0, "stock"))
        return NULL;
    for (int s = 0; s < st->g.n; s++) st->g.hands[s] = (u64)h[s];
    for (int j = 0; j < st->g.nstock; j++) st->g.stock[st->g.nstock - 1 - j] = (uint8_t)k[j];
    st->legal_ok = 0;
    Py_RETURN_NONE;
}

/* reseed(seed): the future decks of a sampled state from another stream */
static PyObject *Spiel_reseed(SpielObject *st, PyObject *arg) {
    unsigned long long seed = PyLong_AsUnsignedLongLongMask(arg);
    if (PyErr_Occurred()) return NULL;
    st->rng.s = seed;
    Py_RETURN_NONE;
}

static PyMethodDef Spiel_methods[] = {
    {"reseed", (PyCFunction)Spiel_reseed, METH_O, "reseed(seed): another future (sampled)."},
    {"current_player", (PyCFunction)Spiel_current_player, METH_NOARGS, "-1 chance, -4 over."},
    {"is_terminal", (PyCFunction)Spiel_is_terminal, METH_NOARGS, "the game is over."},
    {"is_chance", (PyCFunction)Spiel_is_chance, METH_NOARGS, "a deck is being dealt."},
    {"legal_actions", (PyCFunction)Spiel_legal_actions, METH_NOARGS, "ascending indices."},
    {"chance_outcomes", (PyCFunction)Spiel_chance_outcomes, METH_NOARGS, "[(card, p)]."},
    {"apply", (PyCFunction)Spiel_apply, METH_O, "apply(action)."},
    {"code_of", (PyCFunction)Spiel_code_of, METH_O, "code_of(index) -> action code."},
    {"tensor", (PyCFunction)Spiel_tensor, METH_O, "tensor(player) -> list of floats."},
    {"observe", (PyCFunction)Spiel_observe, METH_VARARGS, "observe(player, out)."},
    {"status", (PyCFunction)Spiel_status, METH_NOARGS,
     "(player, winner, deal, cards drawn, redeals)."},
    {"deal_rewards", (PyCFunction)Spiel_deal_rewards, METH_O, "deal_rewards(mode)."},
    {"zones", (PyCFunction)Spiel_zones, METH_NOARGS, "the state a view is built from."},
    {"score", (PyCFunction)Spiel_score, METH_NOARGS, "the last scored deal's items."},
    {"history", (PyCFunction)Spiel_history, METH_NOARGS, "[(seat, code)] of every play."},
    {"drawn", (PyCFunction)Spiel_drawn, METH_NOARGS, "cards drawn of the deck being dealt."},
    {"clone", (PyCFunction)Spiel_clone, METH_NOARGS, "an independent copy."},
    {"__deepcopy__", (PyCFunction)Spiel_clone, METH_O, "a clone (copy.deepcopy)."},
    {"set_hidden", (PyCFunction)Spiel_set_hidden, METH_VARARGS, "set_hidden(hands, stock)."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject SpielType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cirulla.env._native.SpielState",
    .tp_basicsize = sizeof(SpielObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SpielState(options, mode=0, seed=0): a position of python_cirulla.",
    .tp_new = Spiel_new_state,
    .tp_dealloc = (destructor)Spiel_dealloc,
    .tp_methods = Spiel_methods,
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
    if (PyType_Ready(&VecType) < 0 || PyType_Ready(&SpielType) < 0) return NULL;
    for (int v = 0; v < FLOAT_CACHE; v++)
        if (!float_cache[v] && !(float_cache[v] = PyFloat_FromDouble((double)v))) return NULL;
    PyObject *m = PyModule_Create(&env_module);
    if (!m) return NULL;
    Py_INCREF(&VecType);
    if (PyModule_AddObject(m, "Games", (PyObject *)&VecType) < 0) {
        Py_DECREF(&VecType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&SpielType);
    if (PyModule_AddObject(m, "SpielState", (PyObject *)&SpielType) < 0) {
        Py_DECREF(&SpielType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
