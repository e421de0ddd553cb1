/*
 * cirulla.bots._decode: a DecisionRequest's bytes read in one call into what the bot kit
 * hands a policy (bots/cirulla/bots/convert.py's ``decision_from_proto``).
 *
 * A bot reads one DecisionRequest per decision: the seat's view and every legal action.
 * Read field by field through protobuf's Python objects (a message object per card of
 * every pile, three attributes each) it cost a bot more than its own choice; here the
 * serialized message is read as protobuf reads it and the view's cards become masks, each
 * legal action its rules-core code.
 *
 * It reads only what the server writes: cards in their canonical form, each singular
 * field once, every legal index once. Anything else (a card given by its code alone, a
 * card listed twice, a bad index or declaration, a field repeated, a malformed message)
 * makes it return None, and the Python reader, the reference, reads the message and
 * names what is wrong (tests/bots/test_decode.py compares both over whole games).
 *
 * Optional: without a C compiler the kit reads decisions in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_SEATS 4
#define MAX_LEGAL 4096

/* Each of the 40 cards' serialized Card message (``setup``). */
static unsigned char card_body[40][16];
static int card_len[40];
static int ready = 0;

typedef struct {
    const unsigned char *p, *end;
} Reader;

/* 0 and the value, or -1 on a malformed varint. */
static int read_varint(Reader *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return -1;
        unsigned char byte = *r->p++;
        v |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* A length-delimited field's body as a reader of its own. */
static int read_body(Reader *r, Reader *body) {
    uint64_t size;
    if (read_varint(r, &size) || size > (uint64_t)(r->end - r->p)) return -1;
    body->p = r->p;
    body->end = r->p + size;
    r->p += size;
    return 0;
}

/* Skip a field of an unknown number, as protobuf does (groups are not read: -1). */
static int skip(Reader *r, int wire) {
    uint64_t v;
    Reader body;
    switch (wire) {
    case 0: return read_varint(r, &v);
    case 1:
        if (r->end - r->p < 8) return -1;
        r->p += 8;
        return 0;
    case 2: return read_body(r, &body);
    case 5:
        if (r->end - r->p < 4) return -1;
        r->p += 4;
        return 0;
    default: return -1;
    }
}

/* The next field's number and wire type; 0 at the end, -1 if malformed. */
static int next_field(Reader *r, int *number, int *wire) {
    if (r->p >= r->end) return 0;
    uint64_t tag;
    if (read_varint(r, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF) return -1;
    *number = (int)(tag >> 3);
    *wire = (int)(tag & 7);
    return 1;
}

/* The card whose canonical body starts with suit s and rank r (``setup``), or -1. */
static signed char by_suit_rank[8][16];

/* A Card message's body: the card, if it is one of the 40 as the server writes them
   (suit = 1 and rank = 2 first, small enough for one byte each, then its code). */
static int read_card(Reader *body) {
    Py_ssize_t n = body->end - body->p;
    const unsigned char *p = body->p;
    if (n < 4 || p[0] != (1 << 3) || p[2] != (2 << 3) || p[1] >= 8 || p[3] >= 16) return -1;
    int c = by_suit_rank[p[1]][p[3]];
    if (c < 0 || card_len[c] != n || memcmp(card_body[c], p, (size_t)n) != 0) return -1;
    return c;
}

/* One card of a set: added to ``mask``; -1 if not canonical or already there. */
static int add_card(Reader *r, uint64_t *mask) {
    Reader body;
    if (read_body(r, &body)) return -1;
    int c = read_card(&body);
    if (c < 0 || (*mask >> c & 1)) return -1;
    *mask |= (uint64_t)1 << c;
    return 0;
}

/* Field ``seen`` bits: a singular field met twice is left to the Python reader (protobuf
   would keep the last value, or merge two messages). */
#define ONCE(bit)                     \
    do {                              \
        if (seen & ((uint32_t)1 << (bit))) return -1; \
        seen |= (uint32_t)1 << (bit); \
    } while (0)

typedef struct {
    int has_seat, seat, players, deal, round, dealer, has_to_move, to_move;
    uint64_t hand, table;
    int has_wild, wild;
    int n_seats, hand_count[MAX_SEATS];
    uint64_t declared[MAX_SEATS];
    int n_sides, scope[MAX_SEATS], total[MAX_SEATS];
    uint64_t captured[MAX_SEATS];
    int stock, has_last_taker, last_taker;
} ViewData;

static int small(uint64_t v, int *out) {
    if (v > 0xFFFFFFFFu) return -1; /* a uint32 field: protobuf keeps 32 bits */
    *out = (int)(v & 0x7FFFFFFF);
    return v > 0x7FFFFFFF ? -1 : 0;
}

static int read_seat_state(Reader *r, ViewData *v) {
    Reader body;
    if (v->n_seats >= MAX_SEATS || read_body(r, &body)) return -1;
    int i = v->n_seats++;
    v->hand_count[i] = 0;
    v->declared[i] = 0;
    uint32_t seen = 0;
    int number, wire, more;
    uint64_t x;
    while ((more = next_field(&body, &number, &wire)) > 0) {
        if (number == 4 && wire == 0) {
            ONCE(4);
            if (read_varint(&body, &x) || small(x, &v->hand_count[i])) return -1;
        } else if (number == 5 && wire == 2) {
            if (add_card(&body, &v->declared[i])) return -1;
        } else if ((number == 1 || number == 2 || number == 6) && wire == 0) {
            ONCE(number);
            if (read_varint(&body, &x)) return -1;
        } else if (number == 3 && wire == 2) {
            ONCE(3);
            if (skip(&body, wire)) return -1; /* the name */
        } else if (number <= 6 || skip(&body, wire)) {
            return -1;
        }
    }
    return more;
}

static int read_side_state(Reader *r, ViewData *v) {
    Reader body;
    if (v->n_sides >= MAX_SEATS || read_body(r, &body)) return -1;
    int i = v->n_sides++;
    v->scope[i] = v->total[i] = 0;
    v->captured[i] = 0;
    uint32_t seen = 0;
    int number, wire, more;
    uint64_t x;
    while ((more = next_field(&body, &number, &wire)) > 0) {
        if (number == 3 && wire == 2) {
            if (add_card(&body, &v->captured[i])) return -1;
        } else if (number == 4 && wire == 0) {
            ONCE(4);
            if (read_varint(&body, &x) || small(x, &v->scope[i])) return -1;
        } else if (number == 5 && wire == 0) {
            ONCE(5);
            if (read_varint(&body, &x) || small(x, &v->total[i])) return -1;
        } else if (number == 1 && wire == 0) {
            ONCE(1);
            if (read_varint(&body, &x)) return -1;
        } else if (number == 2 && (wire == 0 || wire == 2)) {
            if (skip(&body, wire)) return -1; /* the side's seats, packed or not */
        } else if (number <= 5 || skip(&body, wire)) {
            return -1;
        }
    }
    return more;
}

static int read_view(Reader *r, ViewData *v) {
    Reader body;
    if (read_body(r, &body)) return -1;
    uint32_t seen = 0;
    int number, wire, more;
    uint64_t x;
    while ((more = next_field(&body, &number, &wire)) > 0) {
        if (number == 8 && wire == 2) {
            if (add_card(&body, &v->hand)) return -1;
        } else if (number == 9 && wire == 2) {
            if (add_card(&body, &v->table)) return -1;
        } else if (number == 11 && wire == 2) {
            if (read_seat_state(&body, v)) return -1;
        } else if (number == 12 && wire == 2) {
            if (read_side_state(&body, v)) return -1;
        } else if (number <= 15 && number != 8 && number != 9 && number != 11 &&
                   number != 12 && wire == 0) {
            ONCE(number);
            int value;
            if (read_varint(&body, &x)) return -1;
            if (number == 15) continue; /* the event sequence: 64 bits, not used here */
            if (small(x, &value)) return -1;
            switch (number) {
            case 1: v->has_seat = 1; v->seat = value; break;
            case 2: v->players = value; break;
            case 4: v->deal = value; break;
            case 5: v->round = value; break;
            case 6: v->dealer = value; break;
            case 7: v->has_to_move = 1; v->to_move = value; break;
            case 10: v->has_wild = 1; v->wild = value; break;
            case 13: v->stock = value; break;
            case 14: v->has_last_taker = 1; v->last_taker = value; break;
            default: break; /* 3: the game number */
            }
        } else if (number <= 15 || skip(&body, wire)) {
            return -1;
        }
    }
    return more;
}

/* An Action message's body as its rules-core code (actions.encode); -1 unless valid. */
static int64_t read_action(Reader *r) {
    Reader body;
    if (read_body(r, &body)) return -1;
    uint32_t seen = 0;
    int number, wire, more, card = -1, has_wild = 0;
    uint64_t captures = 0, kind = 0, wild = 0;
    while ((more = next_field(&body, &number, &wire)) > 0) {
        if (number == 1 && wire == 2) {
            ONCE(1);
            Reader cb;
            if (read_body(&body, &cb) || (card = read_card(&cb)) < 0) return -1;
        } else if (number == 2 && wire == 2) {
            if (add_card(&body, &captures)) return -1;
        } else if (number == 3 && wire == 0) {
            ONCE(3);
            if (read_varint(&body, &kind)) return -1;
        } else if (number == 4 && wire == 0) {
            ONCE(4);
            has_wild = 1;
            if (read_varint(&body, &wild)) return -1;
        } else if (number <= 4 || skip(&body, wire)) {
            return -1;
        }
    }
    if (more < 0 || card < 0 || (captures >> card & 1)) return -1;
    int64_t decl = 0;
    if (kind) {
        if (kind > 2 || (has_wild && (wild < 1 || wild > 10))) return -1;
        decl = (int64_t)(kind << 4 | (has_wild ? wild : 0));
    } else if (has_wild) {
        return -1;
    }
    return (int64_t)card | decl << 6 | (int64_t)captures << 12;
}

static PyObject *decode_setup(PyObject *self, PyObject *cards) {
    if (!PyTuple_Check(cards) || PyTuple_GET_SIZE(cards) != 40) {
        PyErr_SetString(PyExc_ValueError, "setup needs the 40 cards' serialized Card messages");
        return NULL;
    }
    memset(by_suit_rank, -1, sizeof by_suit_rank);
    for (int c = 0; c < 40; c++) {
        PyObject *b = PyTuple_GET_ITEM(cards, c);
        const unsigned char *p = (const unsigned char *)(PyBytes_Check(b) ? PyBytes_AS_STRING(b) : "");
        if (!PyBytes_Check(b) || PyBytes_GET_SIZE(b) > 16 || PyBytes_GET_SIZE(b) < 4 ||
            p[0] != (1 << 3) || p[2] != (2 << 3) || p[1] >= 8 || p[3] >= 16) {
            PyErr_SetString(PyExc_ValueError,
                             "a card's message must be bytes of 4 to 16, suit and rank first");
            return NULL;
        }
        card_len[c] = (int)PyBytes_GET_SIZE(b);
        memcpy(card_body[c], p, (size_t)card_len[c]);
        by_suit_rank[p[1]][p[3]] = (signed char)c;
    }
    ready = 1;
    Py_RETURN_NONE;
}

static PyObject *opt_int(int has, int v) {
    if (!has) Py_RETURN_NONE;
    return PyLong_FromLong(v);
}

static PyObject *int_tuple(const int *v, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *mask_tuple(const uint64_t *v, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *decode_decision(PyObject *self, PyObject *data) {
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "decision(data): data must be bytes");
        return NULL;
    }
    if (!ready) Py_RETURN_NONE;
    Reader r = {(const unsigned char *)PyBytes_AS_STRING(data),
                (const unsigned char *)PyBytes_AS_STRING(data) + PyBytes_GET_SIZE(data)};
    ViewData v;
    memset(&v, 0, sizeof v);
    /* the legal actions as they come (index, code), then in index order */
    static int64_t got_code[MAX_LEGAL], codes[MAX_LEGAL];
    static uint64_t got_index[MAX_LEGAL];
    static unsigned char placed[MAX_LEGAL];
    int n_legal = 0, has_view = 0, number, wire, more;
    while ((more = next_field(&r, &number, &wire)) > 0) {
        if (number == 2 && wire == 2) {
            if (has_view++ || read_view(&r, &v)) Py_RETURN_NONE;
        } else if (number == 3 && wire == 2) {
            Reader body;
            if (n_legal >= MAX_LEGAL || read_body(&r, &body)) Py_RETURN_NONE;
            uint64_t index = 0;
            int64_t code = -1;
            uint32_t seen = 0;
            int n, w, m;
            while ((m = next_field(&body, &n, &w)) > 0) {
                if (n >= 1 && n <= 3 && w == (n == 1 ? 0 : 2)) {
                    if (seen & (1u << n)) Py_RETURN_NONE;
                    seen |= 1u << n;
                    if (n == 1 ? read_varint(&body, &index)
                               : n == 2 ? (code = read_action(&body)) < 0
                                        : skip(&body, w)) /* the notation */
                        Py_RETURN_NONE;
                } else if (n <= 3 || skip(&body, w)) {
                    Py_RETURN_NONE;
                }
            }
            if (m < 0 || code < 0) Py_RETURN_NONE;
            got_index[n_legal] = index;
            got_code[n_legal] = code;
            n_legal++;
        } else if ((number == 1 || number == 5) ? wire != 0 : number == 4 ? wire != 2 : 0) {
            Py_RETURN_NONE;
        } else if (skip(&r, wire)) { /* the decision id, clock, default: read by the kit */
            Py_RETURN_NONE;
        }
    }
    if (more < 0 || !has_view || n_legal == 0) Py_RETURN_NONE;
    memset(placed, 0, (size_t)n_legal);
    for (int i = 0; i < n_legal; i++) {
        uint64_t index = got_index[i];
        if (index >= (uint64_t)n_legal || placed[index]) Py_RETURN_NONE;
        placed[index] = 1;
        codes[index] = got_code[i];
    }
    PyObject *code_list = PyList_New(n_legal);
    if (!code_list) return NULL;
    for (int i = 0; i < n_legal; i++) {
        PyObject *c = PyLong_FromLongLong(codes[i]);
        if (!c) {
            Py_DECREF(code_list);
            return NULL;
        }
        PyList_SET_ITEM(code_list, i, c);
    }
    PyObject *view = Py_BuildValue(
        "(NiiiiNKKiNNNNiNNi)", opt_int(v.has_seat, v.seat), v.deal, v.dealer, v.round,
        v.players, opt_int(v.has_to_move, v.to_move), (unsigned long long)v.hand,
        (unsigned long long)v.table, v.has_wild ? v.wild : 0, int_tuple(v.hand_count, v.n_seats),
        mask_tuple(v.declared, v.n_seats), mask_tuple(v.captured, v.n_sides),
        int_tuple(v.scope, v.n_sides), v.stock, int_tuple(v.total, v.n_sides),
        opt_int(v.has_last_taker, v.last_taker), v.n_sides);
    if (!view) {
        Py_DECREF(code_list);
        return NULL;
    }
    return Py_BuildValue("(NN)", view, code_list);
}

static PyMethodDef methods[] = {
    {"setup", decode_setup, METH_O,
     "setup(cards): the 40 cards' serialized Card messages, as the server writes them."},
    {"decision", decode_decision, METH_O,
     "decision(data) -> (view, codes) of a serialized DecisionRequest, or None: the "
     "Python reader reads it (convert.decision_from_proto)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "cirulla.bots._decode",
    "A DecisionRequest's bytes read in one call (bots/cirulla/bots/convert.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__decode(void) { return PyModule_Create(&module); }
