/*
 * cirulla.bots._decode: a Play stream's messages read in one call into what the bot kit
 * keeps of them, and its answers written (bots/cirulla/bots/kit_stream.py; a lone
 * DecisionRequest for convert.py's ``decision_from_proto``).
 *
 * A bot reads one DecisionRequest per decision: the seat's view and every legal action.
 * Read field by field through protobuf's Python objects (a message object per card of
 * every pile, three attributes each) it cost a bot more than its own choice; here the
 * serialized message is read as protobuf reads it and the view's cards become masks, each
 * legal action its rules-core code. ``play`` reads a whole stream message so (a batch's
 * responses in order): of the events, views and acceptances the kit keeps only the largest
 * sequence (their bodies read only as far as that: their fields' framing), of every other
 * message where its bytes are (protobuf parses it when the kit handles it). ``submit``
 * writes the answer protobuf would.
 *
 * It reads only what the server writes: one body per response, cards in their canonical
 * form, each singular field once, every legal index once. Anything else (a card given by
 * its code alone, a card listed twice, a bad index or declaration, a field repeated, a
 * nested batch, a malformed message) makes it return None, and the Python reader or
 * protobuf, the reference, reads the message and names what is wrong
 * (tests/bots/test_decode.py and test_kit_stream.py compare both over whole games).
 *
 * Optional: without a C compiler the kit reads its stream through protobuf.
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

/* A DecisionRequest as the kit answers it: its id, default and clock beside the view
   and the legal actions' codes (``codes``, in index order). */
typedef struct {
    uint64_t decision_id, default_index, move_ms, bank_ms, increment_ms;
    int has_move, has_bank, n_legal;
    ViewData v;
} Decision;

static int64_t codes[MAX_LEGAL];

static int read_clock(Reader *r, Decision *d) {
    Reader body;
    if (read_body(r, &body)) return -1;
    uint32_t seen = 0;
    int number, wire, more;
    uint64_t x;
    while ((more = next_field(&body, &number, &wire)) > 0) {
        if (number >= 1 && number <= 3) {
            if (wire != 0) return -1;
            ONCE(number);
            if (read_varint(&body, &x)) return -1;
            if (number == 1) {
                d->has_move = 1;
                d->move_ms = x;
            } else if (number == 2) {
                d->has_bank = 1;
                d->bank_ms = x;
            } else {
                d->increment_ms = x;
            }
        } else if (skip(&body, wire)) {
            return -1;
        }
    }
    return more;
}

/* One LegalAction's body: its index and its action's code (-1 unless as the server
   writes it). */
static int read_legal(Reader *r, uint64_t *index, int64_t *code) {
    Reader body;
    if (read_body(r, &body)) return -1;
    *index = 0;
    *code = -1;
    uint32_t seen = 0;
    int n, w, m;
    while ((m = next_field(&body, &n, &w)) > 0) {
        if (n >= 1 && n <= 3 && w == (n == 1 ? 0 : 2)) {
            ONCE(n);
            if (n == 1 ? read_varint(&body, index)
                       : n == 2 ? (*code = read_action(&body)) < 0
                                : skip(&body, w)) /* the notation */
                return -1;
        } else if (n <= 3 || skip(&body, w)) {
            return -1;
        }
    }
    return m < 0 || *code < 0 ? -1 : 0;
}

/* A DecisionRequest's body: 0, or -1 where the Python reader reads it (the codes in
   ``codes``). */
static int read_decision(Reader *r, Decision *d) {
    memset(d, 0, sizeof *d);
    static int64_t got_code[MAX_LEGAL];
    static uint64_t got_index[MAX_LEGAL];
    static unsigned char placed[MAX_LEGAL];
    uint32_t seen = 0;
    int n_legal = 0, has_view = 0, number, wire, more;
    uint64_t x;
    while ((more = next_field(r, &number, &wire)) > 0) {
        if (number == 2 && wire == 2) {
            if (has_view++ || read_view(r, &d->v)) return -1;
        } else if (number == 3 && wire == 2) {
            if (n_legal >= MAX_LEGAL || read_legal(r, &got_index[n_legal], &got_code[n_legal]))
                return -1;
            n_legal++;
        } else if (number == 1 || number == 5) {
            if (wire != 0) return -1;
            ONCE(number);
            if (read_varint(r, &x)) return -1;
            if (number == 1) {
                d->decision_id = x;
            } else {
                if (x > 0xFFFFFFFFu) return -1; /* a uint32: protobuf keeps 32 bits */
                d->default_index = x;
            }
        } else if (number == 4) {
            if (wire != 2) return -1;
            ONCE(4);
            if (read_clock(r, d)) return -1;
        } else if (number <= 5 || skip(r, wire)) {
            return -1;
        }
    }
    if (more < 0 || !has_view || n_legal == 0) return -1;
    memset(placed, 0, (size_t)n_legal);
    for (int i = 0; i < n_legal; i++) {
        uint64_t index = got_index[i];
        if (index >= (uint64_t)n_legal || placed[index]) return -1;
        placed[index] = 1;
        codes[index] = got_code[i];
    }
    d->n_legal = n_legal;
    return 0;
}

/* The view fields (``ViewFields``) of a decision read. */
static PyObject *view_fields(const ViewData *v) {
    return Py_BuildValue(
        "(NiiiiNKKiNNNNiNNi)", opt_int(v->has_seat, v->seat), v->deal, v->dealer, v->round,
        v->players, opt_int(v->has_to_move, v->to_move), (unsigned long long)v->hand,
        (unsigned long long)v->table, v->has_wild ? v->wild : 0,
        int_tuple(v->hand_count, v->n_seats), mask_tuple(v->declared, v->n_seats),
        mask_tuple(v->captured, v->n_sides), int_tuple(v->scope, v->n_sides), v->stock,
        int_tuple(v->total, v->n_sides), opt_int(v->has_last_taker, v->last_taker), v->n_sides);
}

static PyObject *code_list(int n) {
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *c = PyLong_FromLongLong(codes[i]);
        if (!c) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, c);
    }
    return list;
}

static PyObject *decode_decision(PyObject *self, PyObject *data) {
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "decision(data): data must be bytes");
        return NULL;
    }
    if (!ready) Py_RETURN_NONE;
    Reader r = {(const unsigned char *)PyBytes_AS_STRING(data),
                (const unsigned char *)PyBytes_AS_STRING(data) + PyBytes_GET_SIZE(data)};
    Decision d;
    if (read_decision(&r, &d)) Py_RETURN_NONE;
    PyObject *list = code_list(d.n_legal);
    if (!list) return NULL;
    return Py_BuildValue("(NN)", view_fields(&d.v), list);
}

/* ---- A Play stream message (``play``) ---- */

/* The entries of one stream message, in order; the sequence of a run of events, views and
   acceptances waiting to be appended as one int (the largest: all the kit keeps of
   them). */
typedef struct {
    PyObject *entries;
    const unsigned char *base;
    int pending;
    uint64_t sequence;
} Out;

/* Results: 0 read, -1 not read natively (protobuf reads the message), -2 a Python error. */
static int flush(Out *o) {
    if (!o->pending) return 0;
    o->pending = 0;
    PyObject *x = PyLong_FromUnsignedLongLong(o->sequence);
    if (!x) return -2;
    int failed = PyList_Append(o->entries, x);
    Py_DECREF(x);
    return failed ? -2 : 0;
}

static int append(Out *o, PyObject *entry) {
    if (!entry) return -2;
    int failed = PyList_Append(o->entries, entry);
    Py_DECREF(entry);
    return failed ? -2 : 0;
}

/* The varint field ``wanted`` of a message body (0 when absent, as protobuf reads it);
   every other field skipped. */
static int sequence_of(Reader *body, int wanted, uint64_t *sequence) {
    int number, wire, more, seen = 0;
    *sequence = 0;
    while ((more = next_field(body, &number, &wire)) > 0) {
        if (number == wanted) {
            if (wire != 0 || seen++ || read_varint(body, sequence)) return -1;
        } else if (skip(body, wire)) {
            return -1;
        }
    }
    return more;
}

static PyObject *opt_u64(int has, uint64_t v) {
    if (!has) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(v);
}

/* One PlayResponse (the stream message, or an entry of its batch): exactly one body. */
static int read_response(Reader *r, Out *o, int in_batch) {
    Py_ssize_t start = r->p - o->base, end = r->end - o->base;
    Reader body;
    int kind = 0, number, wire, more;
    while ((more = next_field(r, &number, &wire)) > 0) {
        if (number >= 1 && number <= 11) {
            if (wire != 2 || kind || read_body(r, &body)) return -1;
            kind = number;
        } else if (skip(r, wire)) {
            return -1;
        }
    }
    if (more < 0 || !kind) return -1;
    if (kind == 11) { /* a batch: its responses in order */
        if (in_batch) return -1;
        while ((more = next_field(&body, &number, &wire)) > 0) {
            if (number == 1) {
                Reader item;
                if (wire != 2 || read_body(&body, &item)) return -1;
                int rc = read_response(&item, o, 1);
                if (rc) return rc;
            } else if (skip(&body, wire)) {
                return -1;
            }
        }
        return more;
    }
    if (kind == 4 || kind == 5 || kind == 7) {
        /* an event's sequence, a view's event_sequence; an acceptance has none (0: no
           field is number 0, its fields are only skipped) */
        uint64_t sequence;
        if (sequence_of(&body, kind == 4 ? 1 : kind == 5 ? 15 : 0, &sequence)) return -1;
        if (!o->pending || sequence > o->sequence) o->sequence = sequence;
        o->pending = 1;
        return 0;
    }
    if (kind == 6) {
        Decision d;
        if (read_decision(&body, &d)) return -1;
        int rc = flush(o);
        if (rc) return rc;
        PyObject *list = code_list(d.n_legal);
        if (!list) return -2;
        return append(o, Py_BuildValue("(innKKNNKNN)", kind, start, end,
                                       (unsigned long long)d.decision_id,
                                       (unsigned long long)d.default_index,
                                       opt_u64(d.has_move, d.move_ms),
                                       opt_u64(d.has_bank, d.bank_ms),
                                       (unsigned long long)d.increment_ms, view_fields(&d.v),
                                       list));
    }
    int rc = flush(o);
    if (rc) return rc;
    return append(o, Py_BuildValue("(inn)", kind, start, end));
}

static PyObject *decode_play(PyObject *self, PyObject *data) {
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "play(data): data must be bytes");
        return NULL;
    }
    if (!ready) Py_RETURN_NONE;
    const unsigned char *base = (const unsigned char *)PyBytes_AS_STRING(data);
    Reader r = {base, base + PyBytes_GET_SIZE(data)};
    Out o = {PyList_New(0), base, 0, 0};
    if (!o.entries) return NULL;
    int rc = read_response(&r, &o, 0);
    if (!rc) rc = flush(&o);
    if (rc) {
        Py_DECREF(o.entries);
        if (rc == -2) return NULL;
        Py_RETURN_NONE;
    }
    return o.entries;
}

/* PlayRequest{submit_action: SubmitAction{decision_id, legal_action_index}}, as protobuf
   writes it: a zero decision id left out, the index (a oneof member) always written. */
static PyObject *decode_submit(PyObject *self, PyObject *args) {
    unsigned long long decision_id;
    unsigned long long index;
    if (!PyArg_ParseTuple(args, "KK", &decision_id, &index)) return NULL;
    if (index > 0xFFFFFFFFu) {
        PyErr_SetString(PyExc_OverflowError, "submit: the index is a uint32");
        return NULL;
    }
    unsigned char buf[32], *p = buf + 2;
    if (decision_id) {
        *p++ = 1 << 3;
        for (uint64_t v = decision_id; ; v >>= 7) {
            *p++ = (unsigned char)((v & 0x7F) | (v >= 0x80 ? 0x80 : 0));
            if (v < 0x80) break;
        }
    }
    *p++ = 2 << 3;
    for (uint64_t v = index; ; v >>= 7) {
        *p++ = (unsigned char)((v & 0x7F) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80) break;
    }
    buf[0] = 2 << 3 | 2;
    buf[1] = (unsigned char)(p - buf - 2); /* at most 17: one byte */
    return PyBytes_FromStringAndSize((const char *)buf, p - buf);
}

static PyMethodDef methods[] = {
    {"setup", decode_setup, METH_O,
     "setup(cards): the 40 cards' serialized Card messages, as the server writes them."},
    {"decision", decode_decision, METH_O,
     "decision(data) -> (view, codes) of a serialized DecisionRequest, or None: the "
     "Python reader reads it (convert.decision_from_proto)."},
    {"play", decode_play, METH_O,
     "play(data) -> the entries of a serialized PlayResponse (a batch's in order), or None: "
     "protobuf reads it (kit_stream.entries)."},
    {"submit", decode_submit, METH_VARARGS,
     "submit(decision_id, index) -> a serialized PlayRequest answering the decision with "
     "that legal action index."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cirulla.bots._decode",
    .m_doc = "A Play stream's messages read, and answers written, from their bytes "
             "(bots/cirulla/bots/kit_stream.py, convert.py).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__decode(void) { return PyModule_Create(&module); }
