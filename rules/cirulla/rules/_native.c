/*
 * cirulla.rules._native: the compiled rules core as a Python module, for the rules core's
 * Python side (cirulla.rules.core) and its benchmark. The state machine is engine.h; the
 * bots' search is on the bots' floor (bots/cirulla/bots/_search.c), built on the same
 * header.
 */
#include "engine.h"
#include <structmember.h>

/* ------------------------------------------------------------------ random-play benchmark */

/* rules/cirulla/rules/bench.py:bench_rules, the whole loop in C, for ``seconds`` of CPU time. */
static int bench_run(const Opts *o, double seconds, u64 seed, long long *deals, long long *games,
                     long long *actions, double *elapsed, double *cpu) {
    Rng rng = {seed}, deck_rng = {seed ^ 0x5bd1e995ULL};
    Scratch s = {0};
    G g;
    Tab t;
    int rc = 0;
    *deals = *games = *actions = 0;
    g_init(&g, o);
    g.deck = rng_deck;
    g.deck_ctx = &deck_rng;
    g.dealer = o->players - 2;
    double start = now_seconds(), cpu_start = cpu_seconds(), deadline = cpu_start + seconds;
    g_start_deal(&g);
    for (;;) {
        int deal_no = g.deal_no;
        while (g.deal_no == deal_no && g.winner < 0) {
            if (tab_init(&s, &t, g.table, g.wild) ||
                legal_codes(&s, &t, g.hands[g.turn], g.wild, o->must_capture,
                            o->pairing_precedence)) {
                rc = -1;
                goto out;
            }
            g_play(&g, s.codes[rng_below(&rng, (uint32_t)s.ncodes)]);
            (*actions)++;
        }
        (*deals)++;
        if (g.winner >= 0) {
            (*games)++;
            g_init(&g, o);
            g.deck = rng_deck;
            g.deck_ctx = &deck_rng;
            g.dealer = o->players - 2;
            g_start_deal(&g);
        }
        if (*deals % 64 == 0 && cpu_seconds() >= deadline) break;
    }
out:
    *elapsed = now_seconds() - start;
    *cpu = cpu_seconds() - cpu_start;
    scratch_free(&s);
    return rc;
}

/* FNV-1a over 64-bit words: the fingerprint of a run of random games */
static inline u64 fnv_mix(u64 h, u64 x) {
    for (int i = 0; i < 8; i++) {
        h ^= (x >> (8 * i)) & 0xff;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* bench_run's loop for a fixed number of deals, fingerprinting every action code and every
   deal's totals: the benchmark's games, so a faster core can show it plays the same ones. */
static int digest_run(const Opts *o, long long ndeals, u64 seed, u64 *digest,
                      long long *actions) {
    Rng rng = {seed}, deck_rng = {seed ^ 0x5bd1e995ULL};
    Scratch s = {0};
    G g;
    Tab t;
    u64 h = 0xcbf29ce484222325ULL;
    *actions = 0;
    g_init(&g, o);
    g.deck = rng_deck;
    g.deck_ctx = &deck_rng;
    g.dealer = o->players - 2;
    g_start_deal(&g);
    for (long long d = 0; d < ndeals; d++) {
        int deal_no = g.deal_no;
        while (g.deal_no == deal_no && g.winner < 0) {
            if (tab_init(&s, &t, g.table, g.wild) ||
                legal_codes(&s, &t, g.hands[g.turn], g.wild, o->must_capture,
                            o->pairing_precedence)) {
                scratch_free(&s);
                return -1;
            }
            u64 code = s.codes[rng_below(&rng, (uint32_t)s.ncodes)];
            h = fnv_mix(h, code);
            h = fnv_mix(h, (u64)s.ncodes);
            g_play(&g, code);
            (*actions)++;
        }
        for (int i = 0; i < g.sides; i++) h = fnv_mix(h, (u64)(uint32_t)g.totals[i]);
        if (g.winner >= 0) {
            h = fnv_mix(h, (u64)g.winner);
            g_init(&g, o);
            g.deck = rng_deck;
            g.deck_ctx = &deck_rng;
            g.dealer = o->players - 2;
            g_start_deal(&g);
        }
    }
    scratch_free(&s);
    *digest = h;
    return 0;
}

PyDoc_STRVAR(random_deals_digest_doc,
             "random_deals_digest(options, deals, seed) -> (digest, actions)\n\n"
             "bench_rules's random-play loop for ``deals`` deals: a fingerprint (FNV-1a) of every "
             "action code, the number of legal actions at each step, and every deal's totals.");

static PyObject *py_random_deals_digest(PyObject *self, PyObject *args) {
    PyObject *opts_obj;
    long long deals, actions;
    unsigned long long seed;
    u64 digest;
    Opts o;
    (void)self;
    if (!PyArg_ParseTuple(args, "OLK", &opts_obj, &deals, &seed)) return NULL;
    if (parse_opts(opts_obj, &o)) return NULL;
    if (digest_run(&o, deals, seed, &digest, &actions)) return PyErr_NoMemory();
    return Py_BuildValue("(KL)", (unsigned long long)digest, actions);
}

PyDoc_STRVAR(legal_codes_doc,
             "legal_codes(hand, table, wild, must_capture, pairing_precedence) -> list\n\n"
             "Game.legal_codes for the seat holding ``hand``, in the protocol's order.");

static PyObject *py_legal_codes(PyObject *self, PyObject *args) {
    unsigned long long hand, table;
    int wild, must, pp;
    (void)self;
    if (!PyArg_ParseTuple(args, "KKipp", &hand, &table, &wild, &must, &pp)) return NULL;
    if ((hand | table) >> NUM_CARDS || wild < 0 || wild > 10) {
        PyErr_SetString(PyExc_ValueError, "legal_codes: masks of 40 cards, wild value 0..10");
        return NULL;
    }
    Scratch s = {0};
    Tab t;
    PyObject *res = NULL;
    if (tab_init(&s, &t, table, wild) || legal_codes(&s, &t, hand, wild, must, pp))
        PyErr_NoMemory();
    else
        res = codes_list(&s);
    scratch_free(&s);
    return res;
}

PyDoc_STRVAR(captures_doc,
             "captures(table, played_value, wild_value, pairing_precedence) -> tuple\n\n"
             "captures.legal_captures: capture masks, ascending.");

static PyObject *py_captures(PyObject *self, PyObject *args) {
    unsigned long long table;
    int v, wild, pp, len;
    (void)self;
    if (!PyArg_ParseTuple(args, "Kiip", &table, &v, &wild, &pp)) return NULL;
    if (table >> NUM_CARDS || v < 1 || v > 10 || wild < 0 || wild > 10) {
        PyErr_SetString(PyExc_ValueError, "captures: 40-card table, value 1..10, wild 0..10");
        return NULL;
    }
    Scratch s = {0};
    Tab t;
    PyObject *res = NULL;
    const u64 *sets = NULL;
    if (!tab_init(&s, &t, table, wild)) sets = tab_caps(&s, &t, v, pp, &len);
    if (!sets) {
        PyErr_NoMemory();
    } else if ((res = PyTuple_New(len))) {
        for (int i = 0; i < len; i++) {
            PyObject *x = PyLong_FromUnsignedLongLong(sets[i]);
            if (!x) {
                Py_CLEAR(res);
                break;
            }
            PyTuple_SET_ITEM(res, i, x);
        }
    }
    scratch_free(&s);
    return res;
}

static PyObject *py_declaration_codes(PyObject *self, PyObject *arg) {
    u64 hand;
    int codes[10];
    (void)self;
    if (get_mask(arg, &hand)) return NULL;
    int n = decl_codes(hand, codes);
    PyObject *res = PyTuple_New(n);
    if (!res) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(res, i, PyLong_FromLong(codes[i]));
    return res;
}

static PyObject *py_dealer_bonus(PyObject *self, PyObject *args) {
    unsigned long long table;
    int low;
    (void)self;
    if (!PyArg_ParseTuple(args, "Kp", &table, &low)) return NULL;
    return PyLong_FromLong(dealer_bonus(table & ALL_CARDS, low));
}

PyDoc_STRVAR(score_deal_doc,
             "score_deal(options, captured, scope) -> (cappotto, items)\n\n"
             "scoring.score_deal: cappotto side or -1, and per side the 7 items (cards, "
             "coins, settebello, primiera, scope, grande, piccola).");

static PyObject *py_score_deal(PyObject *self, PyObject *args) {
    PyObject *opts_obj, *cap_obj, *scope_obj;
    Opts o;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO", &opts_obj, &cap_obj, &scope_obj)) return NULL;
    if (parse_opts(opts_obj, &o)) return NULL;
    Py_ssize_t sides = PySequence_Size(cap_obj);
    if (sides < 1 || sides > MAX_PLAYERS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "score_deal: 1..4 sides");
        return NULL;
    }
    long long cap[MAX_PLAYERS], sc[MAX_PLAYERS];
    if (get_ints(cap_obj, (int)sides, cap, 1, "captured") ||
        get_ints(scope_obj, (int)sides, sc, 0, "scope"))
        return NULL;
    u64 captured[MAX_PLAYERS];
    int scope[MAX_PLAYERS], items[MAX_PLAYERS][S_ITEMS];
    for (int i = 0; i < sides; i++) {
        captured[i] = (u64)cap[i];
        scope[i] = (int)sc[i];
    }
    int cappotto = score_deal(&o, (int)sides, captured, scope, items);
    PyObject *per = PyTuple_New(sides);
    if (!per) return NULL;
    for (int i = 0; i < sides; i++)
        PyTuple_SET_ITEM(per, i,
                         Py_BuildValue("(iiiiiii)", items[i][0], items[i][1], items[i][2],
                                       items[i][3], items[i][4], items[i][5], items[i][6]));
    return Py_BuildValue("(iN)", cappotto, per);
}

PyDoc_STRVAR(sample_world_doc,
             "sample_world(options, view, seed) -> (hands, stock)\n\n"
             "views.sample_world's zones: every hand, and the stock in dealing order, dealt "
             "uniformly from what the view does not see (the search's sampler, with evidence, "
             "is cirulla.bots._search.sample_world).");

static PyObject *py_sample_world(PyObject *self, PyObject *args) {
    PyObject *opts_obj, *view_obj;
    unsigned long long seed;
    Opts o;
    ViewIn v;
    World w;
    G g;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOK", &opts_obj, &view_obj, &seed)) return NULL;
    if (parse_opts(opts_obj, &o) || parse_view(view_obj, &o, &v)) return NULL;
    const char *err = world_init(&w, &o, &v);
    if (err) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    Rng r = {seed};
    world_sample(&w, &g, &r);
    return zones_tuple(&g);
}

PyDoc_STRVAR(bench_rules_doc,
             "bench_rules(options, cpu_seconds, seed) -> (deals, games, actions, wall, cpu)\n\n"
             "rules/cirulla/rules/bench.py's random-policy loop, entirely native, for cpu_seconds of CPU.");

static PyObject *py_bench_rules(PyObject *self, PyObject *args) {
    PyObject *opts_obj;
    double seconds;
    unsigned long long seed;
    Opts o;
    long long deals, games, actions;
    double elapsed, cpu;
    int rc;
    (void)self;
    if (!PyArg_ParseTuple(args, "OdK", &opts_obj, &seconds, &seed)) return NULL;
    if (parse_opts(opts_obj, &o)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = bench_run(&o, seconds, seed, &deals, &games, &actions, &elapsed, &cpu);
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    return Py_BuildValue("(LLLdd)", deals, games, actions, elapsed, cpu);
}

/* ------------------------------------------------------------------ cheap frozen objects */

/* A frozen slots dataclass's generated __init__ sets each field through
   object.__setattr__: a few hundred nanoseconds a field, more than the rule it records. Its
   maker fills the fields' slots directly, as a dataclass without __post_init__ or defaults
   computed at init would: fields in order, every one given. The maker's self is the tuple
   (class, offsets as bytes). */
static PyObject *make_frozen(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(self, 0);
    PyObject *offs = PyTuple_GET_ITEM(self, 1);
    Py_ssize_t n = PyBytes_GET_SIZE(offs) / (Py_ssize_t)sizeof(Py_ssize_t);
    const Py_ssize_t *off = (const Py_ssize_t *)PyBytes_AS_STRING(offs);
    if (nargs != n) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments (%zd given)",
                     cls->tp_name, n, nargs);
        return NULL;
    }
    PyObject *obj = cls->tp_alloc(cls, 0);
    if (!obj) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        *(PyObject **)((char *)obj + off[i]) = args[i];
    }
    return obj;
}

static PyMethodDef make_frozen_def = {"make", (PyCFunction)(void (*)(void))make_frozen,
                                      METH_FASTCALL, "Build the object from its fields."};

PyDoc_STRVAR(frozen_maker_doc,
             "frozen_maker(cls, names) -> callable\n\n"
             "A constructor of the frozen slots dataclass ``cls`` taking its fields ``names`` "
             "positionally, in order, that fills the slots directly (the generated __init__ "
             "sets each through object.__setattr__). ValueError when a name is not a plain "
             "object slot of ``cls`` itself.");

static PyObject *py_frozen_maker(PyObject *self, PyObject *args) {
    PyObject *cls, *names;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &cls, &PyTuple_Type, &names)) return NULL;
    PyTypeObject *type = (PyTypeObject *)cls;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    PyObject *offs = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(Py_ssize_t));
    if (!offs) return NULL;
    Py_ssize_t *off = (Py_ssize_t *)PyBytes_AS_STRING(offs);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyDict_GetItemWithError(type->tp_dict, PyTuple_GET_ITEM(names, i));
        if (!d || !PyObject_TypeCheck(d, &PyMemberDescr_Type) ||
            ((PyMemberDescrObject *)d)->d_common.d_type != type ||
            ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
            Py_DECREF(offs);
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "%R is not an object slot of %s",
                             PyTuple_GET_ITEM(names, i), type->tp_name);
            return NULL;
        }
        off[i] = ((PyMemberDescrObject *)d)->d_member->offset;
    }
    PyObject *state = PyTuple_Pack(2, cls, offs);
    Py_DECREF(offs);
    if (!state) return NULL;
    PyObject *fn = PyCFunction_New(&make_frozen_def, state);
    Py_DECREF(state);
    return fn;
}

/* ------------------------------------------------------------------ the Game type */

typedef struct {
    PyObject_HEAD G g;
    uint8_t (*decks)[NUM_CARDS];
    int ndecks, next_deck;
    Rng rng;
    PyObject *events; /* list being filled by apply(), or NULL */
    Scratch s;
} GameObject;

static int list_deck(void *ctx, int deal_no, uint8_t *deck) {
    GameObject *self = ctx;
    if (!self->decks) return rng_deck(&self->rng, deal_no, deck);
    if (self->next_deck >= self->ndecks) {
        PyErr_Format(PyExc_ValueError,
                     "deal %d needs deck order #%d but only %d were given (a redeal takes the "
                     "next one)",
                     deal_no, self->next_deck + 1, self->ndecks);
        return -1;
    }
    memcpy(deck, self->decks[self->next_deck++], NUM_CARDS);
    return 0;
}

static int list_emit(void *ctx, int type, const long long *a, int n) {
    GameObject *self = ctx;
    if (!self->events) return 0;
    PyObject *t = PyTuple_New(n + 1);
    if (!t) return -1;
    PyTuple_SET_ITEM(t, 0, PyLong_FromLong(type));
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i + 1, PyLong_FromLongLong(a[i]));
    int rc = PyList_Append(self->events, t);
    Py_DECREF(t);
    return rc;
}

static void Game_dealloc(GameObject *self) {
    free(self->decks);
    Py_XDECREF(self->events);
    scratch_free(&self->s);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Game_init(GameObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"options", "decks", "seed", "first_dealer", "deal_only", NULL};
    PyObject *opts_obj, *decks_obj = Py_None;
    unsigned long long seed = 0;
    int first_dealer = -1, deal_only = 0;
    Opts o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OKip", names, &opts_obj, &decks_obj, &seed,
                                     &first_dealer, &deal_only))
        return -1;
    if (parse_opts(opts_obj, &o)) return -1;
    free(self->decks);
    self->decks = NULL;
    if (decks_obj != Py_None) {
        PyObject *seq = PySequence_Fast(decks_obj, "decks must be a sequence of deck orders");
        if (!seq) return -1;
        Py_ssize_t nd = PySequence_Fast_GET_SIZE(seq);
        self->decks = malloc((size_t)(nd ? nd : 1) * NUM_CARDS);
        self->ndecks = (int)nd;
        for (Py_ssize_t d = 0; d < nd; d++) {
            long long cards[NUM_CARDS];
            if (get_ints(PySequence_Fast_GET_ITEM(seq, d), NUM_CARDS, cards, 0, "deck")) {
                Py_DECREF(seq);
                return -1;
            }
            u64 seen = 0;
            for (int i = 0; i < NUM_CARDS; i++) {
                if (cards[i] < 0 || cards[i] >= NUM_CARDS) break;
                seen |= 1ULL << cards[i];
                self->decks[d][i] = (uint8_t)cards[i];
            }
            if (seen != ALL_CARDS) {
                Py_DECREF(seq);
                PyErr_SetString(PyExc_ValueError, "a deck order must list all 40 cards once each");
                return -1;
            }
        }
        Py_DECREF(seq);
    }
    self->next_deck = 0;
    self->rng.s = seed;
    g_init(&self->g, &o);
    if (first_dealer >= o.players) {
        PyErr_SetString(PyExc_ValueError, "first dealer must be a seat");
        return -1;
    }
    self->g.dealer = (first_dealer < 0 ? o.players - 1 : first_dealer) - 1;
    self->g.deal_only = deal_only;
    self->g.deck = list_deck;
    self->g.deck_ctx = self;
    self->g.emit = list_emit;
    self->g.emit_ctx = self;
    Py_CLEAR(self->events);
    self->events = PyList_New(0);
    if (!self->events) return -1;
    if (g_start_deal(&self->g)) return -1;
    return 0;
}

static PyObject *Game_take_events(GameObject *self, PyObject *unused) {
    (void)unused;
    PyObject *ev = self->events;
    self->events = PyList_New(0);
    if (!self->events) {
        self->events = ev;
        return NULL;
    }
    return ev;
}

static PyObject *Game_legal_codes(GameObject *self, PyObject *unused) {
    G *g = &self->g;
    Tab t;
    (void)unused;
    if (g->winner >= 0 || g->deal_over) return PyList_New(0);
    if (tab_init(&self->s, &t, g->table, g->wild) ||
        legal_codes(&self->s, &t, g->hands[g->turn], g->wild, g->o.must_capture,
                    g->o.pairing_precedence))
        return PyErr_NoMemory();
    return codes_list(&self->s);
}

static PyObject *Game_apply_code(GameObject *self, PyObject *arg) {
    unsigned long long code = PyLong_AsUnsignedLongLong(arg);
    if (code == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    G *g = &self->g;
    if (g->winner >= 0 || g->deal_over) {
        PyErr_SetString(PyExc_ValueError, "the deal is over; no more actions");
        return NULL;
    }
    /* unchecked like Game.apply_code, but never corrupt memory: the card must be held */
    if ((code & 63) >= NUM_CARDS || !(g->hands[g->turn] >> (code & 63) & 1)) {
        PyErr_SetString(PyExc_ValueError, "apply_code: the card is not in the hand to move");
        return NULL;
    }
    if (g_play(g, code)) return NULL;
    Py_RETURN_NONE;
}

static PyObject *mask_tuple(const u64 *m, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, PyLong_FromUnsignedLongLong(m[i]));
    return t;
}

static PyObject *int_tuple(const int *v, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, PyLong_FromLong(v[i]));
    return t;
}

static PyObject *Game_state(GameObject *self, PyObject *unused) {
    G *g = &self->g;
    (void)unused;
    PyObject *stock = PyList_New(g->nstock);
    if (!stock) return NULL;
    for (int j = 0; j < g->nstock; j++) PyList_SET_ITEM(stock, j, PyLong_FromLong(g->stock[j]));
    return Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:N,s:K,s:N,s:N,s:N,s:N,s:N,s:i,s:i,s:O,s:O,s:i,s:i}", "dealer",
        g->dealer, "deal_no", g->deal_no, "round", g->round, "turn", g->turn, "in_hands",
        g->in_hands, "hands", mask_tuple(g->hands, g->n), "table", (unsigned long long)g->table,
        "stock", stock, "captured", mask_tuple(g->captured, g->sides), "scope",
        int_tuple(g->scope, g->sides), "declared", mask_tuple(g->declared, g->n), "totals",
        int_tuple(g->totals, g->sides), "last_taker", g->last_taker, "wild", g->wild, "winner",
        g->winner >= 0 ? PyLong_FromLong(g->winner) : Py_None, "deal_over",
        g->deal_over ? Py_True : Py_False, "cappotto", g->cappotto, "deal_only", g->deal_only);
}

static PyMethodDef Game_methods[] = {
    {"legal_codes", (PyCFunction)Game_legal_codes, METH_NOARGS,
     "Legal action codes of the seat to move, in the protocol's order."},
    {"apply_code", (PyCFunction)Game_apply_code, METH_O,
     "Apply a legal action code; its events are queued for take_events()."},
    {"take_events", (PyCFunction)Game_take_events, METH_NOARGS,
     "The event tuples queued since the last call (dealing included), as a list."},
    {"state", (PyCFunction)Game_state, METH_NOARGS, "Every zone and counter, as a dict."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject GameType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cirulla.rules._native.Game",
    .tp_basicsize = sizeof(GameObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Game(options, decks=None, seed=0, first_dealer=-1, deal_only=False): the "
              "native state machine (game.py's Game) for the cross-core differential test.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Game_init,
    .tp_dealloc = (destructor)Game_dealloc,
    .tp_methods = Game_methods,
};

static PyMethodDef module_methods[] = {
    {"legal_codes", py_legal_codes, METH_VARARGS, legal_codes_doc},
    {"captures", py_captures, METH_VARARGS, captures_doc},
    {"declaration_codes", py_declaration_codes, METH_O,
     "declaration_codes(hand) -> tuple: actions.declaration_codes."},
    {"dealer_bonus", py_dealer_bonus, METH_VARARGS,
     "dealer_bonus(table, low_bonus) -> int: game.dealer_bonus."},
    {"score_deal", py_score_deal, METH_VARARGS, score_deal_doc},
    {"sample_world", py_sample_world, METH_VARARGS, sample_world_doc},
    {"bench_rules", py_bench_rules, METH_VARARGS, bench_rules_doc},
    {"random_deals_digest", py_random_deals_digest, METH_VARARGS, random_deals_digest_doc},
    {"frozen_maker", py_frozen_maker, METH_VARARGS, frozen_maker_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The compiled rules core (engine.h, _native.c; docs/rules.md).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
    if (PyType_Ready(&GameType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&GameType);
    if (PyModule_AddObject(m, "Game", (PyObject *)&GameType) < 0) {
        Py_DECREF(&GameType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
