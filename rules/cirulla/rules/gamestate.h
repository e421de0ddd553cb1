/* ------------------------------------------------------------------ game.py's Game, state in C

   native.GameState: the base of game.py's Game when the native core runs. The game's whole
   state lives in engine.h's G; the hot methods (legal_codes, legal_actions, is_legal,
   apply, apply_code, copy, _first_deal) work on it without a Python int made or read per
   field, which is what a Python caller of the API paid for before (the state in Python
   slots, converted both ways on every move).

   The zones (hands, captured, declared, scope, totals, stock) are real Python lists, kept
   in step with G lazily: a zone's list is written from G only when it is read after G
   changed it (``dirty``), and once handed out it may be changed in place by anyone (the
   Python reference methods do: ``hands[seat] ^= bit``), so G reads it back before its next
   use (``exposed``). A list kept from before a move is therefore current only once read
   again through the game's attribute. deal_no and winner are object members (the api
   loop reads them after every move): Python may assign them, so G takes them from there
   at every use. The Python methods of game.py stay the reference; tests/rules/test_native.py
   plays them beside these step by step. */

enum { Z_HANDS, Z_CAPTURED, Z_DECLARED, Z_SCOPE, Z_TOTALS, Z_STOCK, Z_COUNT };
static const char *const ZONE_NAMES[Z_COUNT] = {"hands", "captured", "declared",
                                                "scope", "totals",   "stock"};

typedef struct {
    PyObject_HEAD G g;
    int has_options;
    PyObject *options, *side_of, *deck_source, *decks_used, *last_score;
    PyObject *deal_no_obj, *winner_obj; /* members: the truth for G's deal_no and winner */
    PyObject *seen_deal_no, *seen_winner; /* the objects G's values were last taken from */
    PyObject *zone[Z_COUNT];            /* the zones' lists, NULL until first read */
    unsigned dirty, exposed;            /* by zone bit: see above */
    PyObject *history;                  /* list of (seat, code), NULL until read */
    long long *hist;                    /* seat, code pairs not yet in the list */
    int nhist, hist_cap;
    u64 key_hand, key_table;            /* the position the legal codes are for */
    int key_wild, key_valid;
    u64 *codes;                         /* its legal codes (key_valid), ncodes of them */
    int ncodes, codes_cap;
    PyObject *legal_codes;              /* their ints (a tuple), NULL until asked for */
    PyObject **acts;                    /* their Actions (has_acts), owned references */
    int acts_cap, has_acts;
} StateObject;

static PyTypeObject StateType;

static int zone_len(const G *g, int z) {
    return z == Z_STOCK ? g->nstock : z == Z_HANDS || z == Z_DECLARED ? g->n : g->sides;
}

static long long zone_value(const G *g, int z, int i) {
    switch (z) {
    case Z_HANDS: return (long long)g->hands[i];
    case Z_CAPTURED: return (long long)g->captured[i];
    case Z_DECLARED: return (long long)g->declared[i];
    case Z_SCOPE: return g->scope[i];
    case Z_TOTALS: return g->totals[i];
    default: return g->stock[i];
    }
}

static PyObject *zone_item(const G *g, int z, int i) {
    return PyLong_FromLongLong(zone_value(g, z, i)); /* masks are below 2**40 */
}

/* one item of a zone's list into G: -1 with a one-line error naming the zone */
static int zone_store(G *g, int z, int i, PyObject *x) {
    long long v;
    if (!small_int(x, &v)) {
        v = PyLong_Check(x) ? PyLong_AsLongLong(x) : -1;
        if (v == -1 && PyErr_Occurred()) PyErr_Clear();
        if (!PyLong_Check(x)) v = -1;
    }
    switch (z) {
    case Z_HANDS:
    case Z_CAPTURED:
    case Z_DECLARED:
        if (v < 0 || (u64)v & ~ALL_CARDS) break;
        (z == Z_HANDS ? g->hands : z == Z_CAPTURED ? g->captured : g->declared)[i] = (u64)v;
        return 0;
    case Z_SCOPE:
    case Z_TOTALS:
        if (!PyLong_Check(x) || v < -1000000000LL || v > 1000000000LL) break;
        (z == Z_SCOPE ? g->scope : g->totals)[i] = (int)v;
        return 0;
    default:
        if (v < 0 || v >= NUM_CARDS) break;
        g->stock[i] = (uint8_t)v;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "Game.%s[%d] is %R: not a %s", ZONE_NAMES[z], i, x,
                 z == Z_STOCK ? "card index 0-39"
                 : z == Z_SCOPE || z == Z_TOTALS ? "point count"
                                                 : "card mask");
    return -1;
}

/* the exposed zones' lists read back into G (before any use of G's zones) */
static int absorb_zone(StateObject *self, int z) {
    G *g = &self->g;
    PyObject *list = self->zone[z];
    Py_ssize_t k = PyList_GET_SIZE(list);
    if (z == Z_STOCK ? k > NUM_CARDS : k != zone_len(g, z)) {
        PyErr_Format(PyExc_ValueError, "Game.%s has %zd entries: it needs %s", ZONE_NAMES[z], k,
                     z == Z_STOCK           ? "at most 40 cards"
                     : z == Z_HANDS || z == Z_DECLARED ? "one per seat"
                                                       : "one per side");
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++)
        if (zone_store(g, z, (int)i, PyList_GET_ITEM(list, i))) return -1;
    if (z == Z_STOCK) g->nstock = (int)k;
    return 0;
}

/* deal_no and winner from their members, the exposed zones from their lists */
static int absorb_all(StateObject *self);

static inline int absorb(StateObject *self) {
    /* the members still hold the objects publish() left (or the ones read last time): G
       already has their values */
    if (!self->exposed && self->winner_obj == self->seen_winner &&
        self->deal_no_obj == self->seen_deal_no && self->has_options)
        return 0;
    return absorb_all(self);
}

static int absorb_all(StateObject *self) {
    G *g = &self->g;
    if (!self->has_options) {
        PyErr_SetString(PyExc_ValueError, "Game.options is not set");
        return -1;
    }
    long long v;
    PyObject *w = self->winner_obj, *d = self->deal_no_obj;
    if (!w || !d) {
        PyErr_SetString(PyExc_ValueError, "Game.winner and Game.deal_no must be set");
        return -1;
    }
    if (w == Py_None) g->winner = -1;
    else if (small_int(w, &v) && v >= 0 && v < g->sides) g->winner = (int)v;
    else {
        PyErr_Format(PyExc_ValueError, "Game.winner is %R: not a side or None", w);
        return -1;
    }
    if (small_int(d, &v) && v >= 0 && v < INT_MAX) g->deal_no = (int)v;
    else {
        PyErr_Format(PyExc_ValueError, "Game.deal_no is %R: not a deal number", d);
        return -1;
    }
    /* held, so that no other object can ever be at their addresses */
    Py_XSETREF(self->seen_winner, Py_NewRef(w));
    Py_XSETREF(self->seen_deal_no, Py_NewRef(d));
    unsigned ex = self->exposed;
    for (int z = 0; ex; z++, ex >>= 1)
        if (ex & 1) {
            if (absorb_zone(self, z)) return -1;
            self->exposed &= ~(1u << z);
        }
    return 0;
}

/* after G moved: deal_no and winner back to their members (new objects only on change) */
static int publish(StateObject *self, int deal_no, int winner) {
    G *g = &self->g;
    if (g->deal_no != deal_no) {
        PyObject *d = PyLong_FromLong(g->deal_no);
        if (!d) return -1;
        Py_SETREF(self->deal_no_obj, d);
    }
    if (g->winner != winner) {
        PyObject *w = g->winner < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(g->winner);
        if (!w) return -1;
        Py_SETREF(self->winner_obj, w);
    }
    Py_XSETREF(self->seen_deal_no, Py_NewRef(self->deal_no_obj));
    Py_XSETREF(self->seen_winner, Py_NewRef(self->winner_obj));
    return 0;
}

/* the zone's list written from G (in place: its identity kept), or made */
static PyObject *zone_list(StateObject *self, int z) {
    G *g = &self->g;
    PyObject *list = self->zone[z];
    int k = zone_len(g, z);
    if (!list) {
        if (!(list = PyList_New(k))) return NULL;
        for (int i = 0; i < k; i++) {
            PyObject *x = zone_item(g, z, i);
            if (!x) {
                Py_DECREF(list);
                return NULL;
            }
            PyList_SET_ITEM(list, i, x);
        }
        self->zone[z] = list;
    } else if (self->dirty >> z & 1) {
        if (PyList_GET_SIZE(list) > k && PyList_SetSlice(list, k, PyList_GET_SIZE(list), NULL))
            return NULL;
        for (int i = 0; i < k; i++) {
            long long old_value;
            if (i < PyList_GET_SIZE(list) && small_int(PyList_GET_ITEM(list, i), &old_value) &&
                old_value == zone_value(g, z, i))
                continue; /* unchanged: no int made */
            PyObject *x = zone_item(g, z, i);
            if (!x) return NULL;
            if (i < PyList_GET_SIZE(list)) {
                PyList_SetItem(list, i, x);
            } else if (PyList_Append(list, x)) {
                Py_DECREF(x);
                return NULL;
            } else {
                Py_DECREF(x);
            }
        }
    }
    self->dirty &= ~(1u << z);
    self->exposed |= 1u << z;
    return Py_NewRef(list);
}

static PyObject *State_get_zone(StateObject *self, void *z) {
    if (!self->has_options) return PyErr_Format(PyExc_AttributeError, "Game.options is not set");
    return zone_list(self, (int)(intptr_t)z);
}

static int State_set_zone(StateObject *self, PyObject *value, void *zp) {
    int z = (int)(intptr_t)zp;
    if (!value) {
        PyErr_Format(PyExc_AttributeError, "Game.%s cannot be deleted", ZONE_NAMES[z]);
        return -1;
    }
    PyObject *list = PyList_CheckExact(value) ? Py_NewRef(value) : PySequence_List(value);
    if (!list) return -1;
    Py_XSETREF(self->zone[z], list);
    self->dirty &= ~(1u << z);
    self->exposed |= 1u << z;
    return 0;
}

/* G's zones as they were before a move, to mark only the zones it changed as dirty (a view
   read after a move then rewrites a hand and maybe a pile, not every zone) */
typedef struct {
    u64 hands[MAX_PLAYERS], captured[MAX_PLAYERS], declared[MAX_PLAYERS];
    int scope[MAX_PLAYERS], totals[MAX_PLAYERS], nstock, deal_no;
} Zones;

static void zones_before(const G *g, Zones *z) {
    memcpy(z->hands, g->hands, sizeof z->hands);
    memcpy(z->captured, g->captured, sizeof z->captured);
    memcpy(z->declared, g->declared, sizeof z->declared);
    memcpy(z->scope, g->scope, sizeof z->scope);
    memcpy(z->totals, g->totals, sizeof z->totals);
    z->nstock = g->nstock;
    z->deal_no = g->deal_no;
}

static unsigned zones_changed(const G *g, const Zones *z) {
    unsigned d = 0;
    if (memcmp(z->hands, g->hands, sizeof z->hands)) d |= 1u << Z_HANDS;
    if (memcmp(z->captured, g->captured, sizeof z->captured)) d |= 1u << Z_CAPTURED;
    if (memcmp(z->declared, g->declared, sizeof z->declared)) d |= 1u << Z_DECLARED;
    if (memcmp(z->scope, g->scope, sizeof z->scope)) d |= 1u << Z_SCOPE;
    if (memcmp(z->totals, g->totals, sizeof z->totals)) d |= 1u << Z_TOTALS;
    /* the stock changes only by dealing: a round (fewer cards) or a new deal */
    if (z->nstock != g->nstock || z->deal_no != g->deal_no) d |= 1u << Z_STOCK;
    return d;
}

/* ------------------------------------------------------------------ scalar fields */

enum {
    S_DEALER, S_ROUND, S_TURN, S_IN_HANDS, S_LAST_TAKER, S_WILD, S_TABLE, S_CAPPOTTO,
    S_DEAL_ONLY, S_DEAL_OVER, S_N, S_SIDES
};

static int *scalar_of(G *g, int f) {
    switch (f) {
    case S_DEALER: return &g->dealer;
    case S_ROUND: return &g->round;
    case S_TURN: return &g->turn;
    case S_IN_HANDS: return &g->in_hands;
    case S_LAST_TAKER: return &g->last_taker;
    case S_WILD: return &g->wild;
    case S_CAPPOTTO: return &g->cappotto;
    case S_DEAL_ONLY: return &g->deal_only;
    case S_DEAL_OVER: return &g->deal_over;
    case S_N: return &g->n;
    default: return &g->sides;
    }
}

static PyObject *State_get_scalar(StateObject *self, void *fp) {
    int f = (int)(intptr_t)fp;
    if (f == S_TABLE) return PyLong_FromUnsignedLongLong(self->g.table);
    int v = *scalar_of(&self->g, f);
    if (f == S_CAPPOTTO || f == S_DEAL_ONLY || f == S_DEAL_OVER) return PyBool_FromLong(v);
    return PyLong_FromLong(v);
}

static int State_set_scalar(StateObject *self, PyObject *value, void *fp) {
    int f = (int)(intptr_t)fp;
    static const char *const names[] = {"dealer", "round", "turn", "in_hands", "last_taker",
                                        "wild", "table", "cappotto", "deal_only", "deal_over"};
    if (!value) {
        PyErr_Format(PyExc_AttributeError, "Game.%s cannot be deleted", names[f]);
        return -1;
    }
    if (f == S_CAPPOTTO || f == S_DEAL_ONLY || f == S_DEAL_OVER) {
        int t = PyObject_IsTrue(value);
        if (t < 0) return -1;
        *scalar_of(&self->g, f) = t;
        return 0;
    }
    long long v = PyLong_Check(value) ? PyLong_AsLongLong(value) : -1;
    if (PyErr_Occurred()) PyErr_Clear();
    int n = self->g.n ? self->g.n : MAX_PLAYERS;
    long long lo = f == S_DEALER || f == S_LAST_TAKER ? -1 : f == S_ROUND ? 1 : 0,
              hi = f == S_TABLE      ? (long long)ALL_CARDS
                   : f == S_WILD     ? 10
                   : f == S_ROUND    ? NUM_CARDS
                   : f == S_IN_HANDS ? 3 * MAX_PLAYERS
                   : f == S_LAST_TAKER ? (self->g.sides ? self->g.sides : MAX_PLAYERS) - 1
                                       : n - 1;
    if (!PyLong_Check(value) || v < lo || v > hi || (f == S_TABLE && (u64)v & ~ALL_CARDS)) {
        PyErr_Format(PyExc_ValueError, "Game.%s is %R: out of range", names[f], value);
        return -1;
    }
    if (f == S_TABLE) self->g.table = (u64)v;
    else *scalar_of(&self->g, f) = (int)v;
    return 0;
}

/* ------------------------------------------------------------------ options and the rest */

static PyObject *State_get_options(StateObject *self, void *unused) {
    (void)unused;
    if (!self->has_options) return PyErr_Format(PyExc_AttributeError, "Game.options is not set");
    return Py_NewRef(self->options);
}

static void clear_legal(StateObject *self) {
    self->key_valid = 0;
    Py_CLEAR(self->legal_codes);
    if (self->has_acts)
        for (int i = 0; i < self->ncodes; i++) Py_CLEAR(self->acts[i]);
    self->has_acts = 0;
}

/* A game's options, set first by Game.__init__ and Game.setup: they fix the seats and sides,
   so assigning them starts the state afresh (every other field is set after them). */
static int State_set_options(StateObject *self, PyObject *value, void *unused) {
    (void)unused;
    Opts o;
    if (!value) {
        PyErr_SetString(PyExc_AttributeError, "Game.options cannot be deleted");
        return -1;
    }
    if (opts_of(value, &o)) return -1;
    if (o.players < 2 || o.players > MAX_PLAYERS) {
        PyErr_SetString(PyExc_ValueError, "Game.options.players must be 2 to 4");
        return -1;
    }
    PyObject *side_of = PyTuple_New(o.players);
    if (!side_of) return -1;
    g_init(&self->g, &o);
    for (int s = 0; s < o.players; s++)
        PyTuple_SET_ITEM(side_of, s, PyLong_FromLong(self->g.side_of[s]));
    Py_XSETREF(self->options, Py_NewRef(value));
    Py_XSETREF(self->side_of, side_of);
    for (int z = 0; z < Z_COUNT; z++) Py_CLEAR(self->zone[z]);
    self->dirty = self->exposed = 0;
    Py_XSETREF(self->winner_obj, Py_NewRef(Py_None));
    Py_XSETREF(self->deal_no_obj, PyLong_FromLong(0));
    clear_legal(self);
    self->has_options = 1;
    return 0;
}

/* the cards left to deal and the cards in each hand: read without handing out the stock's
   or the hands' list (a list handed out is read back into G before the next move) */
static PyObject *State_get_stock_count(StateObject *self, void *unused) {
    (void)unused;
    if (absorb(self)) return NULL;
    return PyLong_FromLong(self->g.nstock);
}

static PyObject *State_hand_sizes(StateObject *self, PyObject *unused) {
    (void)unused;
    if (absorb(self)) return NULL;
    PyObject *t = PyTuple_New(self->g.n);
    for (int s = 0; t && s < self->g.n; s++) {
        PyObject *x = PyLong_FromLong(__builtin_popcountll(self->g.hands[s]));
        if (!x) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, s, x);
    }
    return t;
}

static PyObject *State_get_side_of(StateObject *self, void *unused) {
    (void)unused;
    if (!self->has_options) return PyErr_Format(PyExc_AttributeError, "Game.options is not set");
    return Py_NewRef(self->side_of);
}

/* the pairs played since the list was last read, appended to it as (seat, code) */
static PyObject *history_list(StateObject *self) {
    if (!self->history && !(self->history = PyList_New(0))) return NULL;
    for (int i = 0; i < self->nhist; i += 2) {
        PyObject *t = Py_BuildValue("(LL)", self->hist[i], self->hist[i + 1]);
        if (!t || PyList_Append(self->history, t)) {
            Py_XDECREF(t);
            return NULL;
        }
        Py_DECREF(t);
    }
    self->nhist = 0;
    return self->history;
}

static PyObject *State_get_history(StateObject *self, void *unused) {
    (void)unused;
    PyObject *h = history_list(self);
    return h ? Py_NewRef(h) : NULL;
}

static int State_set_history(StateObject *self, PyObject *value, void *unused) {
    (void)unused;
    if (!value || !PyList_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "Game.history must be a list of (seat, code)");
        return -1;
    }
    Py_XSETREF(self->history, Py_NewRef(value));
    self->nhist = 0;
    return 0;
}

static int push_history(StateObject *self, int seat, u64 code) {
    if (self->nhist + 2 > self->hist_cap) {
        int cap = self->hist_cap ? 2 * self->hist_cap : 128;
        long long *h = PyMem_Realloc(self->hist, sizeof(long long) * (size_t)cap);
        if (!h) {
            PyErr_NoMemory();
            return -1;
        }
        self->hist = h;
        self->hist_cap = cap;
    }
    self->hist[self->nhist++] = seat;
    self->hist[self->nhist++] = (long long)code;
    return 0;
}

/* ------------------------------------------------------------------ legal actions */

static int stopped(const G *g) { return g->winner >= 0 || g->deal_over; }

/* whether ``codes`` are the legal codes of the position to move: they depend only on the
   mover's hand, the table and the wild value */
static inline int codes_current(const StateObject *self) {
    const G *g = &self->g;
    return self->key_valid && self->key_hand == g->hands[g->turn] &&
           self->key_table == g->table && self->key_wild == g->wild;
}

/* The legal codes of the position to move in ``codes``, unless they are for this very
   position already; -1 on error */
static int legal_position(StateObject *self) {
    G *g = &self->g;
    u64 hand = g->hands[g->turn];
    if (codes_current(self)) return 0;
    Tab t;
    if (tab_init(&shared_scratch, &t, g->table, g->wild) ||
        legal_codes(&shared_scratch, &t, hand, g->wild, g->o.must_capture,
                    g->o.pairing_precedence) ||
        grow((void **)&self->codes, &self->codes_cap, shared_scratch.ncodes, sizeof(u64))) {
        PyErr_NoMemory();
        return -1;
    }
    clear_legal(self);
    memcpy(self->codes, shared_scratch.codes, sizeof(u64) * (size_t)shared_scratch.ncodes);
    self->ncodes = shared_scratch.ncodes;
    self->key_hand = hand;
    self->key_table = g->table;
    self->key_wild = g->wild;
    self->key_valid = 1;
    return 0;
}

/* the position's tuple of code ints, made once; a borrowed reference (the empty tuple when
   nothing can be played) */
static PyObject *codes_of_position(StateObject *self) {
    static PyObject *empty;
    if (stopped(&self->g)) {
        if (!empty && !(empty = PyTuple_New(0))) return NULL;
        return empty;
    }
    if (legal_position(self)) return NULL;
    if (!self->legal_codes) {
        PyObject *t = PyTuple_New(self->ncodes);
        for (int i = 0; t && i < self->ncodes; i++) {
            PyObject *x = PyLong_FromUnsignedLongLong(self->codes[i]);
            if (!x) Py_CLEAR(t);
            else PyTuple_SET_ITEM(t, i, x);
        }
        /* ints: nothing for the collector */
        if (t && PyObject_GC_IsTracked(t)) PyObject_GC_UnTrack(t);
        self->legal_codes = t;
    }
    return self->legal_codes;
}

/* the position's Actions in ``acts`` (made once, Action.from_int's shared ones); their
   count, or -1 on error */
static int actions_of_position(StateObject *self) {
    if (stopped(&self->g)) return 0;
    if (legal_position(self)) return -1;
    if (self->has_acts) return self->ncodes;
    if (grow((void **)&self->acts, &self->acts_cap, self->ncodes, sizeof(PyObject *))) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < self->ncodes; i++) {
        PyObject *a = interned_action(self->codes[i], NULL);
        if (!a) {
            while (i--) Py_CLEAR(self->acts[i]);
            return -1;
        }
        self->acts[i] = a;
    }
    self->has_acts = 1;
    return self->ncodes;
}

static PyObject *State_legal_codes(StateObject *self, PyObject *unused) {
    (void)unused;
    if (absorb(self)) return NULL;
    PyObject *t = codes_of_position(self);
    return t ? list_of(t) : NULL;
}

static PyObject *State_legal_actions(StateObject *self, PyObject *unused) {
    (void)unused;
    if (absorb(self)) return NULL;
    int n = actions_of_position(self);
    PyObject *list = n < 0 ? NULL : PyList_New(n);
    for (int i = 0; list && i < n; i++) PyList_SET_ITEM(list, i, Py_NewRef(self->acts[i]));
    return list;
}

/* the code of ``action`` (an Action or an int) if it is one of the position's legal ones
   (an Action from legal_actions() found by identity, its code read from the position's
   own array: neither the Action nor its int is read); 0 with *code unset otherwise */
static int legal_code_of(StateObject *self, PyObject *action, u64 *code) {
    PyObject *code_obj = action;
    if (stopped(&self->g)) return 0;
    if (Py_TYPE(action) == action_type) {
        if (self->has_acts && codes_current(self)) {
            PyObject **acts = self->acts;
            for (int i = 0; i < self->ncodes; i++)
                if (acts[i] == action) {
                    *code = self->codes[i];
                    return 1;
                }
        }
        code_obj = *(PyObject **)((char *)action + action_code_off);
    }
    if (!code_obj || !PyLong_CheckExact(code_obj)) return 0;
    u64 c;
    if (as_u64(code_obj, &c)) {
        PyErr_Clear();
        return 0;
    }
    if (legal_position(self)) return -1;
    for (int i = 0; i < self->ncodes; i++)
        if (self->codes[i] == c) {
            *code = c;
            return 1;
        }
    return 0;
}

static PyObject *State_is_legal(StateObject *self, PyObject *action) {
    if (absorb(self)) return NULL;
    u64 code;
    int r = legal_code_of(self, action, &code);
    if (r < 0) return NULL;
    if (!r && Py_TYPE(action) != action_type && !PyLong_Check(action))
        return PyErr_Format(PyExc_TypeError, "is_legal takes an Action or an int code");
    return PyBool_FromLong(r);
}

/* ------------------------------------------------------------------ playing */

typedef struct {
    DealCtx d;          /* d.events: the caller's list, or NULL */
    EventsObject *lazy; /* or apply's answer, the events made when read */
} PlayCtx;

static int state_emit(void *ctx, int type, const long long *a, int n) {
    PlayCtx *p = ctx;
    if (p->lazy) { /* the deal's score now (last_score), everything else recorded */
        if (type == EV_DEAL_SCORED && deal_emit(&p->d, type, a, n)) return -1;
        return events_record(p->lazy, type, a, n);
    }
    return emit_event(&p->d, type, a, n);
}

/* 1 with a ValueError when the move would deal the next round from a stock too short for
   it (the reference's stock.pop() would run out; engine.h reads the stock's top 3n cards) */
static int stock_short(const G *g) {
    if (g->in_hands != 1 || g->nstock == 0 || g->nstock >= 3 * g->n) return 0;
    PyErr_Format(PyExc_ValueError, "Game.stock has %d cards: a round deals %d", g->nstock,
                 3 * g->n);
    return 1;
}

/* one move on G (or the first deal: code < 0), its events into ``events`` or ``lazy`` (or
   none); deal_no, winner, the last score, the zones' lists and the history kept in step */
static int state_play(StateObject *self, long long code, PyObject *events, EventsObject *lazy) {
    G *g = &self->g;
    if (!self->deck_source || !self->decks_used || !PyList_Check(self->decks_used)) {
        PyErr_SetString(PyExc_ValueError, "Game.deck_source and Game.decks_used must be set");
        return -1;
    }
    if (code >= 0 && stock_short(g)) return -1;
    PlayCtx p = {{events, NULL, self->deck_source, self->decks_used, g, NULL}, lazy};
    int deal_no = g->deal_no, winner = g->winner;
    /* events are needed at a deal's end even without a list: its score (last_score) */
    int ends = code < 0 || (g->in_hands == 1 && g->nstock == 0);
    g->emit = events || lazy || ends ? state_emit : NULL;
    g->emit_ctx = &p;
    g->deck = deal_deck; /* DeckSource.next_deck: seeded decks shuffled several at once */
    g->deck_ctx = &p.d;
    g->pause_at_round_end = 0;
    Zones before;
    zones_before(g, &before);
    int rc = code < 0 ? g_start_deal(g) : g_play(g, (u64)code);
    /* a deck that could not be had (DeckError) leaves the hands as the reference does:
       empty, as the deal that ended (or the game not dealt yet) left them, not a redeal's */
    if (rc && ends) memset(g->hands, 0, sizeof g->hands);
    g->emit = NULL;
    g->deck = NULL;
    if (p.d.score) {
        if (lazy) Py_XSETREF(lazy->score, Py_NewRef(p.d.score));
        Py_XSETREF(self->last_score, p.d.score);
    }
    self->dirty |= zones_changed(g, &before);
    if (publish(self, deal_no, winner)) rc = -1;
    return rc;
}

static PyObject *State_apply_code(StateObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "apply_code(code, events=None)");
        return NULL;
    }
    PyObject *events = nargs == 2 && args[1] != Py_None ? args[1] : NULL;
    if (events && !PyList_Check(events)) {
        PyErr_SetString(PyExc_TypeError, "apply_code: events must be a list");
        return NULL;
    }
    u64 code;
    if (absorb(self) || as_u64(args[0], &code)) return NULL;
    if ((code & 63) >= NUM_CARDS || stopped(&self->g)) {
        PyErr_SetString(PyExc_ValueError,
                        stopped(&self->g) ? "apply_code: nothing to play (the game or deal is over)"
                                          : "apply_code: card index out of range");
        return NULL;
    }
    if (state_play(self, (long long)code, events, NULL)) return NULL;
    Py_RETURN_NONE;
}

/* Game.apply's everyday case: an Action or int code among the position's legal ones, by
   the seat to move (or no seat named); anything else to game.py's ``_apply_checked``,
   which parses text and explains what is wrong. */
static PyObject *State_apply(StateObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw < 1 || nargs + nkw > 2) {
        PyErr_SetString(PyExc_TypeError, "apply(action, seat=None)");
        return NULL;
    }
    PyObject *action = nargs >= 1 ? args[0] : NULL, *seat = nargs >= 2 ? args[1] : Py_None;
    int fast = nargs >= 1;
    if (fast && nkw == 1) {
        fast = nargs == 1 &&
               PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "seat") == 0;
        seat = args[1];
    }
    if (absorb(self)) return NULL;
    u64 code = 0;
    G *g = &self->g;
    if (fast) fast = !stopped(g) && (Py_TYPE(action) == action_type || PyLong_CheckExact(action));
    if (fast && seat != Py_None) {
        long long st;
        fast = small_int(seat, &st) && st == g->turn;
    }
    if (fast) {
        int r = legal_code_of(self, action, &code);
        if (r < 0) return NULL;
        fast = r;
    }
    if (!fast) {
        PyObject *slow = PyObject_GetAttrString((PyObject *)self, "_apply_checked");
        if (!slow) return NULL;
        PyObject *r = PyObject_Vectorcall(slow, args, (size_t)nargs, kwnames);
        Py_DECREF(slow);
        return r;
    }
    if (stock_short(g) || push_history(self, g->turn, code)) return NULL;
    EventsObject *events = events_new();
    if (!events) return NULL;
    if (state_play(self, (long long)code, NULL, events)) {
        Py_DECREF(events);
        return NULL;
    }
    return (PyObject *)events;
}

static PyObject *State_first_deal(StateObject *self, PyObject *events) {
    if (events != Py_None && !PyList_Check(events)) {
        PyErr_SetString(PyExc_TypeError, "_first_deal: events must be a list or None");
        return NULL;
    }
    if (absorb(self) || state_play(self, -1, events == Py_None ? NULL : events, NULL)) return NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ copies and the type */

/* Game.copy: a cheap independent copy (search copies drop the history by default); the
   legal tuples are shared (immutable, keyed by the position) */
static PyObject *State_copy(StateObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"deal_only", "history", NULL};
    PyObject *deal_only = Py_None;
    int history = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$Op:copy", names, &deal_only, &history))
        return NULL;
    if (absorb(self)) return NULL;
    StateObject *new = (StateObject *)Py_TYPE(self)->tp_alloc(Py_TYPE(self), 0);
    if (!new) return NULL;
    new->g = self->g;
    new->has_options = 1;
    if (deal_only != Py_None) {
        int t = PyObject_IsTrue(deal_only);
        if (t < 0) {
            Py_DECREF(new);
            return NULL;
        }
        new->g.deal_only = t;
    }
    new->options = Py_NewRef(self->options);
    new->side_of = Py_NewRef(self->side_of);
    new->deck_source = Py_XNewRef(self->deck_source);
    new->last_score = Py_XNewRef(self->last_score);
    new->deal_no_obj = Py_NewRef(self->deal_no_obj);
    new->winner_obj = Py_NewRef(self->winner_obj);
    new->key_hand = self->key_hand;
    new->key_table = self->key_table;
    new->key_wild = self->key_wild;
    new->key_valid = self->key_valid;
    new->legal_codes = Py_XNewRef(self->legal_codes);
    if (self->key_valid) {
        if (grow((void **)&new->codes, &new->codes_cap, self->ncodes, sizeof(u64))) {
            Py_DECREF(new);
            return PyErr_NoMemory();
        }
        memcpy(new->codes, self->codes, sizeof(u64) * (size_t)self->ncodes);
        new->ncodes = self->ncodes;
        if (self->has_acts) {
            if (grow((void **)&new->acts, &new->acts_cap, self->ncodes, sizeof(PyObject *))) {
                new->key_valid = 0;
                Py_DECREF(new);
                return PyErr_NoMemory();
            }
            for (int i = 0; i < self->ncodes; i++) new->acts[i] = Py_NewRef(self->acts[i]);
            new->has_acts = 1;
        }
    }
    if (history) {
        PyObject *h = history_list(self);
        new->history = h ? PyList_GetSlice(h, 0, PyList_GET_SIZE(h)) : NULL;
        new->decks_used = self->decks_used && PyList_Check(self->decks_used)
                              ? PyList_GetSlice(self->decks_used, 0,
                                                PyList_GET_SIZE(self->decks_used))
                              : PyList_New(0);
    } else {
        new->history = PyList_New(0);
        new->decks_used = PyList_New(0);
    }
    if (!new->history || !new->decks_used) Py_CLEAR(new);
    return (PyObject *)new;
}

static int State_traverse(StateObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->options);
    Py_VISIT(self->side_of);
    Py_VISIT(self->deck_source);
    Py_VISIT(self->decks_used);
    Py_VISIT(self->last_score);
    Py_VISIT(self->deal_no_obj);
    Py_VISIT(self->winner_obj);
    Py_VISIT(self->seen_deal_no);
    Py_VISIT(self->seen_winner);
    for (int z = 0; z < Z_COUNT; z++) Py_VISIT(self->zone[z]);
    Py_VISIT(self->history);
    Py_VISIT(self->legal_codes);
    for (int i = 0; self->has_acts && i < self->ncodes; i++) Py_VISIT(self->acts[i]);
    return 0;
}

static int State_clear(StateObject *self) {
    Py_CLEAR(self->options);
    Py_CLEAR(self->side_of);
    Py_CLEAR(self->deck_source);
    Py_CLEAR(self->decks_used);
    Py_CLEAR(self->last_score);
    Py_CLEAR(self->deal_no_obj);
    Py_CLEAR(self->winner_obj);
    Py_CLEAR(self->seen_deal_no);
    Py_CLEAR(self->seen_winner);
    for (int z = 0; z < Z_COUNT; z++) Py_CLEAR(self->zone[z]);
    Py_CLEAR(self->history);
    clear_legal(self);
    self->has_options = 0;
    return 0;
}

static void State_dealloc(StateObject *self) {
    PyObject_GC_UnTrack(self);
    State_clear(self);
    PyMem_Free(self->hist);
    free(self->codes); /* grow()'s realloc */
    free(self->acts);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define ZONE(name, z) {name, (getter)State_get_zone, (setter)State_set_zone, NULL, (void *)(intptr_t)(z)}
#define SCALAR(name, f) {name, (getter)State_get_scalar, (setter)State_set_scalar, NULL, (void *)(intptr_t)(f)}
/* the position's cached legal tuples, (codes, actions) or None; assigning None drops them
   (tests rebuild a position's list) */
static PyObject *State_get_legal(StateObject *self, void *unused) {
    (void)unused;
    if (!self->key_valid) Py_RETURN_NONE;
    PyObject *acts = self->has_acts ? PyTuple_New(self->ncodes) : Py_NewRef(Py_None);
    for (int i = 0; acts && self->has_acts && i < self->ncodes; i++)
        PyTuple_SET_ITEM(acts, i, Py_NewRef(self->acts[i]));
    return acts ? Py_BuildValue("(ON)", self->legal_codes ? self->legal_codes : Py_None, acts)
                : NULL;
}

static int State_set_legal(StateObject *self, PyObject *value, void *unused) {
    (void)unused;
    if (value != Py_None) {
        PyErr_SetString(PyExc_ValueError, "Game._legal can only be reset (None)");
        return -1;
    }
    clear_legal(self);
    return 0;
}

static PyGetSetDef State_getset[] = {
    {"_legal", (getter)State_get_legal, (setter)State_set_legal, NULL, NULL},
    {"options", (getter)State_get_options, (setter)State_set_options, NULL, NULL},
    {"side_of", (getter)State_get_side_of, NULL, NULL, NULL},
    {"stock_count", (getter)State_get_stock_count, NULL, NULL, NULL},
    {"n", (getter)State_get_scalar, NULL, NULL, (void *)(intptr_t)S_N},
    {"sides", (getter)State_get_scalar, NULL, NULL, (void *)(intptr_t)S_SIDES},
    {"history", (getter)State_get_history, (setter)State_set_history, NULL, NULL},
    ZONE("hands", Z_HANDS),
    ZONE("captured", Z_CAPTURED),
    ZONE("declared", Z_DECLARED),
    ZONE("scope", Z_SCOPE),
    ZONE("totals", Z_TOTALS),
    ZONE("stock", Z_STOCK),
    SCALAR("dealer", S_DEALER),
    SCALAR("round", S_ROUND),
    SCALAR("turn", S_TURN),
    SCALAR("in_hands", S_IN_HANDS),
    SCALAR("last_taker", S_LAST_TAKER),
    SCALAR("wild", S_WILD),
    SCALAR("table", S_TABLE),
    SCALAR("cappotto", S_CAPPOTTO),
    SCALAR("deal_only", S_DEAL_ONLY),
    SCALAR("deal_over", S_DEAL_OVER),
    {NULL, NULL, NULL, NULL, NULL}};
#undef ZONE
#undef SCALAR

static PyMemberDef State_members[] = {
    {"deal_no", T_OBJECT_EX, offsetof(StateObject, deal_no_obj), 0, NULL},
    {"winner", T_OBJECT_EX, offsetof(StateObject, winner_obj), 0, NULL},
    {"deck_source", T_OBJECT_EX, offsetof(StateObject, deck_source), 0, NULL},
    {"decks_used", T_OBJECT_EX, offsetof(StateObject, decks_used), 0, NULL},
    {"last_score", T_OBJECT_EX, offsetof(StateObject, last_score), 0, NULL},
    {NULL, 0, 0, 0, NULL}};

PyDoc_STRVAR(legal_codes_m_doc,
             "legal_codes() -> list\n\n"
             "The legal actions of the seat to move as int codes, in the protocol's order "
             "(computed once per position; a new list each call, the caller's).");
PyDoc_STRVAR(legal_actions_m_doc,
             "legal_actions() -> list\n\n"
             "The legal actions in legal_codes' order: shared immutable Actions (one per code, "
             "Action.from_int's).");
PyDoc_STRVAR(is_legal_m_doc, "is_legal(action) -> bool\n\nWhether an Action or int code is legal now.");
PyDoc_STRVAR(apply_m_doc,
             "apply(action, seat=None) -> Sequence[Event]\n\n"
             "Checked move for the referee: raises IllegalActionError and changes nothing. "
             "Returns the move's events, an immutable sequence made when first read.");
PyDoc_STRVAR(apply_code_m_doc,
             "apply_code(code, events=None) -> None\n\n"
             "Unchecked fast path for search: a code from legal_codes(); a list as events "
             "collects the events.");
PyDoc_STRVAR(copy_m_doc,
             "copy(deal_only=None, history=False) -> Game\n\n"
             "A cheap independent copy (search copies drop the history by default); both "
             "arguments by keyword only.");
PyDoc_STRVAR(hand_sizes_m_doc, "hand_sizes() -> tuple\n\nThe number of cards in each hand.");
PyDoc_STRVAR(first_deal_m_doc,
             "_first_deal(events) -> None\n\nThe game's first deal (Game.__init__'s), in C.");

static PyMethodDef State_methods[] = {
    {"legal_codes", (PyCFunction)State_legal_codes, METH_NOARGS, legal_codes_m_doc},
    {"legal_actions", (PyCFunction)State_legal_actions, METH_NOARGS, legal_actions_m_doc},
    {"is_legal", (PyCFunction)State_is_legal, METH_O, is_legal_m_doc},
    {"apply", (PyCFunction)(void (*)(void))State_apply, METH_FASTCALL | METH_KEYWORDS,
     apply_m_doc},
    {"apply_code", (PyCFunction)(void (*)(void))State_apply_code, METH_FASTCALL,
     apply_code_m_doc},
    {"copy", (PyCFunction)(void (*)(void))State_copy, METH_VARARGS | METH_KEYWORDS, copy_m_doc},
    {"hand_sizes", (PyCFunction)State_hand_sizes, METH_NOARGS, hand_sizes_m_doc},
    {"_first_deal", (PyCFunction)State_first_deal, METH_O, first_deal_m_doc},
    {NULL, NULL, 0, NULL}};

PyDoc_STRVAR(State_doc,
             "GameState()\n\n"
             "The base of game.py's Game when the native core runs: the game's state in C, "
             "its hot methods (legal_codes, legal_actions, is_legal, apply, apply_code, copy, "
             "_first_deal) on it, the zones as lists kept in step with it.");

static PyTypeObject StateType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cirulla.rules._native.GameState",
    .tp_basicsize = sizeof(StateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = State_doc,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)State_dealloc,
    .tp_traverse = (traverseproc)State_traverse,
    .tp_clear = (inquiry)State_clear,
    .tp_methods = State_methods,
    .tp_members = State_members,
    .tp_getset = State_getset,
};
