/*
 * cirulla.server.convert._framing: a seat's decision request written as protobuf bytes
 * from the game's state in one call (convert/framing.py's ``decision_frame``).
 *
 * The match server sends one DecisionRequest per decision: the seat's whole view and
 * every legal action. Built in Python from a ``View`` and cached pieces it cost more of
 * the server's CPU than anything but gRPC itself; here the game's slots are read
 * directly and the bytes written as protobuf writes them (field order, proto3 zero
 * values left out, ``optional`` fields written whenever set), the legal actions and
 * their notation from their codes. The Python writer in framing.py stays the reference:
 * tests/server/test_framing_native.py compares both with protobuf's own bytes over whole
 * games, and every legal action's notation with ``Action.__str__``.
 *
 * Optional: without a C compiler the server frames decisions in Python.
 */
#include "outbuf.h"
#include <stdint.h>

/* ------------------------------------------------------------------ the output buffer */

static Buf out_buf = {NULL, 0, 0, 4096};

static int varint_size(uint64_t v) {
    int n = 1;
    while (v > 0x7F) {
        v >>= 7;
        n++;
    }
    return n;
}

static unsigned char *put_varint_at(unsigned char *p, uint64_t v) {
    while (v > 0x7F) {
        *p++ = (unsigned char)(v & 0x7F) | 0x80;
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static int put_varint(Buf *b, uint64_t v) {
    if (buf_reserve(b, 10) < 0) return -1;
    b->len = put_varint_at(b->data + b->len, v) - b->data;
    return 0;
}

/* A varint field: its tag (field number < 16, wire type 0) and value. */
static int put_uint_field(Buf *b, int number, uint64_t v) {
    if (buf_reserve(b, 11) < 0) return -1;
    unsigned char *p = b->data + b->len;
    *p++ = (unsigned char)(number << 3);
    b->len = put_varint_at(p, v) - b->data;
    return 0;
}

/* A field without presence: nothing when 0. */
static int put_uint_nz(Buf *b, int number, uint64_t v) {
    return v ? put_uint_field(b, number, v) : 0;
}

/* A length-delimited field whose body was written from ``start`` on: the body moves up to
   make room for the tag (field number < 16) and the length. */
static int close_message(Buf *b, int number, Py_ssize_t start) {
    uint64_t size = (uint64_t)(b->len - start);
    int head = 1 + varint_size(size);
    if (buf_reserve(b, head) < 0) return -1;
    unsigned char *p = b->data + start;
    memmove(p + head, p, (size_t)size);
    *p++ = (unsigned char)(number << 3 | 2);
    put_varint_at(p, size);
    b->len += head;
    return 0;
}

/* ------------------------------------------------------------------ cards */

/* Each of the 40 cards' serialized Card message and its name (``setup``). */
static PyObject *card_bytes[40];
static char card_names[40][4];
static int card_name_len[40];

/* A repeated Card field ``number`` (< 16) holding the cards of ``mask``, ascending. */
static int put_cards(Buf *b, int number, uint64_t mask) {
    while (mask) {
        int card = __builtin_ctzll(mask);
        mask &= mask - 1;
        if (card >= 40 || card_bytes[card] == NULL) {
            PyErr_SetString(PyExc_ValueError, "card mask out of range (or setup not called)");
            return -1;
        }
        Py_ssize_t n = PyBytes_GET_SIZE(card_bytes[card]);
        if (buf_reserve(b, n + 11) < 0) return -1;
        unsigned char *p = b->data + b->len;
        *p++ = (unsigned char)(number << 3 | 2);
        p = put_varint_at(p, (uint64_t)n);
        memcpy(p, PyBytes_AS_STRING(card_bytes[card]), (size_t)n);
        b->len = (p - b->data) + n;
    }
    return 0;
}

/* ------------------------------------------------------------------ reading the game */

static PyObject *s_n, *s_sides, *s_side_of, *s_deal_no, *s_dealer, *s_round, *s_turn,
    *s_winner, *s_deal_over, *s_hands, *s_table, *s_wild, *s_declared, *s_captured,
    *s_scope, *s_stock, *s_totals, *s_last_taker;

/* ``obj`` as an unsigned 64-bit value; -1 with an exception when it is not one. */
static int as_u64(PyObject *obj, uint64_t *out) {
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    *out = (uint64_t)v;
    return 0;
}

static int attr_u64(PyObject *game, PyObject *name, uint64_t *out) {
    PyObject *v = PyObject_GetAttr(game, name);
    if (v == NULL) return -1;
    int r = as_u64(v, out);
    Py_DECREF(v);
    return r;
}

static int attr_i64(PyObject *game, PyObject *name, long long *out) {
    PyObject *v = PyObject_GetAttr(game, name);
    if (v == NULL) return -1;
    long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = x;
    return 0;
}

/* Item ``i`` of the list (or tuple) attribute ``seq`` as an unsigned value. */
static int item_u64(PyObject *seq, Py_ssize_t i, uint64_t *out) {
    PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
    return as_u64(v, out);
}

/* The list attribute ``name`` as a fast sequence of at least ``n`` items (new reference). */
static PyObject *attr_seq(PyObject *game, PyObject *name, Py_ssize_t n) {
    PyObject *v = PyObject_GetAttr(game, name);
    if (v == NULL) return NULL;
    PyObject *seq = PySequence_Fast(v, "expected a list");
    Py_DECREF(v);
    if (seq != NULL && PySequence_Fast_GET_SIZE(seq) < n) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "a game list is shorter than its seats or sides");
        return NULL;
    }
    return seq;
}

#define MAX_SEATS 8

/* The View (game.proto) of ``seat`` as framing.view_bytes writes it. */
static int put_view(Buf *b, PyObject *game, long seat, uint64_t game_number, uint64_t sequence,
                    PyObject *seats) {
    long long n_ll, sides_ll, deal_no, dealer, round, turn, last_taker;
    uint64_t table, wild;
    if (attr_i64(game, s_n, &n_ll) < 0 || attr_i64(game, s_sides, &sides_ll) < 0) return -1;
    if (n_ll < 1 || n_ll > MAX_SEATS || sides_ll < 1 || sides_ll > n_ll) {
        PyErr_SetString(PyExc_ValueError, "unsupported number of seats or sides");
        return -1;
    }
    Py_ssize_t n = (Py_ssize_t)n_ll, sides = (Py_ssize_t)sides_ll;
    if (!PyTuple_Check(seats) || PyTuple_GET_SIZE(seats) != n) {
        PyErr_SetString(PyExc_TypeError, "seats: a tuple of (side, name, connected) per seat");
        return -1;
    }
    if (attr_i64(game, s_deal_no, &deal_no) < 0 || attr_i64(game, s_dealer, &dealer) < 0 ||
        attr_i64(game, s_round, &round) < 0 || attr_i64(game, s_turn, &turn) < 0 ||
        attr_i64(game, s_last_taker, &last_taker) < 0 || attr_u64(game, s_table, &table) < 0 ||
        attr_u64(game, s_wild, &wild) < 0)
        return -1;
    PyObject *winner = PyObject_GetAttr(game, s_winner);
    if (winner == NULL) return -1;
    int has_winner = winner != Py_None;
    Py_DECREF(winner);
    PyObject *deal_over = PyObject_GetAttr(game, s_deal_over);
    if (deal_over == NULL) return -1;
    int over = PyObject_IsTrue(deal_over);
    Py_DECREF(deal_over);
    if (over < 0) return -1;

    int rc = -1;
    PyObject *hands = NULL, *declared = NULL, *captured = NULL, *scope = NULL, *totals = NULL,
             *side_of = NULL, *stock = NULL;
    hands = attr_seq(game, s_hands, n);
    declared = hands ? attr_seq(game, s_declared, n) : NULL;
    captured = declared ? attr_seq(game, s_captured, sides) : NULL;
    scope = captured ? attr_seq(game, s_scope, sides) : NULL;
    totals = scope ? attr_seq(game, s_totals, sides) : NULL;
    side_of = totals ? attr_seq(game, s_side_of, n) : NULL;
    stock = side_of ? PyObject_GetAttr(game, s_stock) : NULL;
    if (stock == NULL) goto done;
    Py_ssize_t stock_count = PyObject_Length(stock);
    if (stock_count < 0) goto done;

    uint64_t hand = 0;
    if (seat >= 0) {
        if (seat >= n) {
            PyErr_SetString(PyExc_ValueError, "seat out of range");
            goto done;
        }
        if (item_u64(hands, seat, &hand) < 0) goto done;
        if (put_uint_field(b, 1, (uint64_t)seat) < 0) goto done;
    }
    if (put_uint_field(b, 2, (uint64_t)n) < 0 || put_uint_nz(b, 3, game_number) < 0 ||
        put_uint_nz(b, 4, (uint64_t)deal_no) < 0 || put_uint_nz(b, 5, (uint64_t)round) < 0 ||
        put_uint_nz(b, 6, (uint64_t)dealer) < 0)
        goto done;
    if (!has_winner && !over && put_uint_field(b, 7, (uint64_t)turn) < 0) goto done;
    if (put_cards(b, 8, hand) < 0 || put_cards(b, 9, table) < 0 || put_uint_nz(b, 10, wild) < 0)
        goto done;
    for (Py_ssize_t s = 0; s < n; s++) { /* SeatState: seats = 11 */
        PyObject *info = PyTuple_GET_ITEM(seats, s);
        if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) != 3 ||
            !PyBytes_Check(PyTuple_GET_ITEM(info, 1))) {
            PyErr_SetString(PyExc_TypeError, "seats: a tuple of (side, name, connected)");
            goto done;
        }
        uint64_t side, size, decl;
        if (as_u64(PyTuple_GET_ITEM(info, 0), &side) < 0 || item_u64(hands, s, &size) < 0 ||
            item_u64(declared, s, &decl) < 0)
            goto done;
        int connected = PyObject_IsTrue(PyTuple_GET_ITEM(info, 2));
        if (connected < 0) goto done;
        PyObject *name = PyTuple_GET_ITEM(info, 1);
        Py_ssize_t start = b->len;
        if (put_uint_nz(b, 1, (uint64_t)s) < 0 || put_uint_nz(b, 2, side) < 0) goto done;
        if (PyBytes_GET_SIZE(name)) {
            Py_ssize_t name_start = b->len;
            if (buf_put(b, PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name)) < 0 ||
                close_message(b, 3, name_start) < 0)
                goto done;
        }
        if (put_uint_nz(b, 4, (uint64_t)__builtin_popcountll(size)) < 0 ||
            put_cards(b, 5, decl) < 0 || (connected && put_uint_field(b, 6, 1) < 0) ||
            close_message(b, 11, start) < 0)
            goto done;
    }
    for (Py_ssize_t side = 0; side < sides; side++) { /* SideState: sides = 12 */
        uint64_t cap, sc, total;
        if (item_u64(captured, side, &cap) < 0 || item_u64(scope, side, &sc) < 0 ||
            item_u64(totals, side, &total) < 0)
            goto done;
        Py_ssize_t start = b->len;
        if (put_uint_nz(b, 1, (uint64_t)side) < 0) goto done;
        Py_ssize_t seats_start = b->len;
        for (Py_ssize_t s = 0; s < n; s++) {
            uint64_t of;
            if (item_u64(side_of, s, &of) < 0) goto done;
            if (of == (uint64_t)side && put_varint(b, (uint64_t)s) < 0) goto done;
        }
        if (b->len > seats_start && close_message(b, 2, seats_start) < 0) goto done;
        if (put_cards(b, 3, cap) < 0 || put_uint_nz(b, 4, sc) < 0 || put_uint_nz(b, 5, total) < 0 ||
            close_message(b, 12, start) < 0)
            goto done;
    }
    if (put_uint_nz(b, 13, (uint64_t)stock_count) < 0) goto done;
    if (last_taker >= 0 && put_uint_field(b, 14, (uint64_t)last_taker) < 0) goto done;
    if (put_uint_nz(b, 15, sequence) < 0) goto done;
    rc = 0;
done:
    Py_XDECREF(hands);
    Py_XDECREF(declared);
    Py_XDECREF(captured);
    Py_XDECREF(scope);
    Py_XDECREF(totals);
    Py_XDECREF(side_of);
    Py_XDECREF(stock);
    return rc;
}

/* ------------------------------------------------------------------ module functions */

static PyObject *framing_setup(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    PyObject *cards = nargs == 2 ? args[0] : NULL, *names = nargs == 2 ? args[1] : NULL;
    if (cards == NULL || !PyTuple_Check(cards) || PyTuple_GET_SIZE(cards) != 40 ||
        !PyTuple_Check(names) || PyTuple_GET_SIZE(names) != 40) {
        PyErr_SetString(PyExc_TypeError,
                        "setup(cards, names): the 40 cards' serialized Card and their names");
        return NULL;
    }
    for (int i = 0; i < 40; i++) {
        PyObject *c = PyTuple_GET_ITEM(cards, i), *name = PyTuple_GET_ITEM(names, i);
        if (!PyBytes_Check(c) || PyBytes_GET_SIZE(c) > 127 || !PyBytes_Check(name) ||
            PyBytes_GET_SIZE(name) < 1 || PyBytes_GET_SIZE(name) > 3) {
            PyErr_SetString(PyExc_TypeError,
                            "setup: each card is bytes (under 128), each name 1-3 bytes");
            return NULL;
        }
    }
    for (int i = 0; i < 40; i++) {
        PyObject *c = PyTuple_GET_ITEM(cards, i), *name = PyTuple_GET_ITEM(names, i);
        Py_INCREF(c);
        Py_XSETREF(card_bytes[i], c);
        card_name_len[i] = (int)PyBytes_GET_SIZE(name);
        memcpy(card_names[i], PyBytes_AS_STRING(name), (size_t)card_name_len[i]);
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ actions */

/* An action code's parts (actions.decode): card, declaration code (kind << 4 | the value
   named for 7H, 0: none), capture mask. 0 if they are out of range (-1, an exception). */
static int decode_code(PyObject *code, int *card, int *decl, uint64_t *capture) {
    uint64_t c;
    if (as_u64(code, &c) < 0) return -1;
    *card = (int)(c & 63);
    *decl = (int)(c >> 6 & 63);
    *capture = c >> 12;
    int kind = *decl >> 4;
    if (*card >= 40 || (*capture >> 40) != 0 || (*decl && kind != 1 && kind != 2) ||
        card_bytes[*card] == NULL) {
        PyErr_SetString(PyExc_ValueError, "not an action code (or setup not called)");
        return -1;
    }
    return 0;
}

/* The action's notation (Action.__str__): "[low|three[:7H=N] ]CARD[:CARD+CARD...]". */
static int put_notation(Buf *b, int card, int decl, uint64_t capture) {
    if (buf_reserve(b, 16 + 3 + 1 + 40 * 4) < 0) return -1;
    unsigned char *p = b->data + b->len;
    if (decl) {
        const char *word = (decl >> 4) == 1 ? "low" : "three";
        size_t n = strlen(word);
        memcpy(p, word, n);
        p += n;
        int wild = decl & 15;
        if (wild) {
            memcpy(p, ":7H=", 4);
            p += 4;
            if (wild >= 10) *p++ = (unsigned char)('0' + wild / 10);
            *p++ = (unsigned char)('0' + wild % 10);
        }
        *p++ = ' ';
    }
    memcpy(p, card_names[card], (size_t)card_name_len[card]);
    p += card_name_len[card];
    char sep = ':';
    while (capture) {
        int c = __builtin_ctzll(capture);
        capture &= capture - 1;
        *p++ = (unsigned char)sep;
        sep = '+';
        memcpy(p, card_names[c], (size_t)card_name_len[c]);
        p += card_name_len[c];
    }
    b->len = p - b->data;
    return 0;
}

/* A LegalAction's fields after ``index`` (framing._legal_body): action = 2 (Action: card = 1,
   captures = 2, declaration = 3, wild_value = 4, optional), notation = 3. */
static int put_legal_body(Buf *b, int card, int decl, uint64_t capture) {
    Py_ssize_t action_start = b->len;
    Py_ssize_t card_start = b->len;
    if (buf_put(b, PyBytes_AS_STRING(card_bytes[card]), PyBytes_GET_SIZE(card_bytes[card])) <
            0 ||
        close_message(b, 1, card_start) < 0 || put_cards(b, 2, capture) < 0)
        return -1;
    if (decl && (put_uint_field(b, 3, (uint64_t)(decl >> 4)) < 0 ||
                 ((decl & 15) && put_uint_field(b, 4, (uint64_t)(decl & 15)) < 0)))
        return -1;
    if (close_message(b, 2, action_start) < 0) return -1;
    Py_ssize_t text_start = b->len;
    if (put_notation(b, card, decl, capture) < 0) return -1;
    return close_message(b, 3, text_start);
}

static Buf text_buf = {NULL, 0, 0, 64}; /* notation()'s */

static PyObject *framing_notation(PyObject *self, PyObject *code) {
    (void)self;
    int card, decl;
    uint64_t capture;
    if (decode_code(code, &card, &decl, &capture) < 0) return NULL;
    text_buf.len = 0;
    if (put_notation(&text_buf, card, decl, capture) < 0) return NULL;
    return PyUnicode_FromStringAndSize((const char *)text_buf.data, text_buf.len);
}

/* An optional uint64 field of the Clock: written whenever not None. */
static int put_optional(Buf *b, int number, PyObject *v) {
    if (v == Py_None) return 0;
    uint64_t x;
    if (as_u64(v, &x) < 0) return -1;
    return put_uint_field(b, number, x);
}

static PyObject *framing_decision(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    /* decision(game, seat, decision_id, codes, game_number, sequence, seats, clock,
                default_index) */
    (void)self;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "decision() takes 9 arguments");
        return NULL;
    }
    PyObject *game = args[0], *codes = args[3], *seats = args[6], *clock = args[7];
    long seat = PyLong_AsLong(args[1]);
    uint64_t decision_id, game_number, sequence, default_index;
    if ((seat == -1 && PyErr_Occurred()) || as_u64(args[2], &decision_id) < 0 ||
        as_u64(args[4], &game_number) < 0 || as_u64(args[5], &sequence) < 0 ||
        as_u64(args[8], &default_index) < 0)
        return NULL;
    if (seat < 0) {
        PyErr_SetString(PyExc_ValueError, "a decision is a seat's");
        return NULL;
    }
    PyObject *fast = PySequence_Fast(codes, "codes: a list of legal action codes");
    if (fast == NULL) return NULL;
    PyObject *result = NULL;
    Buf *b = &out_buf;
    b->len = 0;
    /* PlayResponse.decision_request = 6: DecisionRequest */
    if (put_uint_nz(b, 1, decision_id) < 0) goto done;
    Py_ssize_t view_start = b->len;
    if (put_view(b, game, seat, game_number, sequence, seats) < 0 ||
        close_message(b, 2, view_start) < 0)
        goto done;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    for (Py_ssize_t i = 0; i < count; i++) { /* legal_actions = 3: LegalAction */
        int card, decl;
        uint64_t capture;
        if (decode_code(PySequence_Fast_GET_ITEM(fast, i), &card, &decl, &capture) < 0)
            goto done;
        Py_ssize_t start = b->len;
        /* LegalAction.index = 1 comes before the action (2) and its notation (3) */
        if (put_uint_nz(b, 1, (uint64_t)i) < 0 || put_legal_body(b, card, decl, capture) < 0 ||
            close_message(b, 3, start) < 0)
            goto done;
    }
    Py_ssize_t clock_start = b->len; /* clock = 4, always present */
    if (clock != Py_None) {
        if (!PyTuple_Check(clock) || PyTuple_GET_SIZE(clock) != 3) {
            PyErr_SetString(PyExc_TypeError, "clock: None or (move, bank, increment)");
            goto done;
        }
        if (put_optional(b, 1, PyTuple_GET_ITEM(clock, 0)) < 0 ||
            put_optional(b, 2, PyTuple_GET_ITEM(clock, 1)) < 0 ||
            put_optional(b, 3, PyTuple_GET_ITEM(clock, 2)) < 0)
            goto done;
    }
    if (close_message(b, 4, clock_start) < 0 || put_uint_nz(b, 5, default_index) < 0 ||
        close_message(b, 6, 0) < 0)
        goto done;
    result = PyBytes_FromStringAndSize((const char *)b->data, b->len);
done:
    Py_DECREF(fast);
    return result;
}

static PyObject *s_seat, *s_side, *s_card, *s_value, *s_captured, *s_scopa, *s_ace_sweep;

#define WILD_CARD 25 /* 7H (cards.WILD): its value is written when it counts as another */

static PyObject *framing_card_played(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    /* card_played(event, sequence, game_number, deal_number, private_to, notation,
                   by_timeout) */
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "card_played() takes 7 arguments");
        return NULL;
    }
    PyObject *event = args[0], *private_to = args[4], *notation = args[5];
    uint64_t sequence, game_number, deal_number, seat, side, card, value, captured;
    if (as_u64(args[1], &sequence) < 0 || as_u64(args[2], &game_number) < 0 ||
        as_u64(args[3], &deal_number) < 0 || attr_u64(event, s_seat, &seat) < 0 ||
        attr_u64(event, s_side, &side) < 0 || attr_u64(event, s_card, &card) < 0 ||
        attr_u64(event, s_value, &value) < 0 || attr_u64(event, s_captured, &captured) < 0)
        return NULL;
    if (card >= 40 || card_bytes[card] == NULL) {
        PyErr_SetString(PyExc_ValueError, "no such card (or setup not called)");
        return NULL;
    }
    if (!PyUnicode_Check(notation)) {
        PyErr_SetString(PyExc_TypeError, "notation: a str");
        return NULL;
    }
    Py_ssize_t text_len;
    const char *text = PyUnicode_AsUTF8AndSize(notation, &text_len);
    if (text == NULL) return NULL;
    int flags[3];
    PyObject *names[2] = {s_scopa, s_ace_sweep};
    for (int i = 0; i < 2; i++) {
        PyObject *v = PyObject_GetAttr(event, names[i]);
        if (v == NULL) return NULL;
        flags[i] = PyObject_IsTrue(v);
        Py_DECREF(v);
        if (flags[i] < 0) return NULL;
    }
    flags[2] = PyObject_IsTrue(args[6]);
    if (flags[2] < 0) return NULL;
    Buf *b = &out_buf;
    b->len = 0;
    /* PlayResponse.event = 4: Event (sequence = 1, game_number = 2, deal_number = 3,
       private_to_seat = 4, optional; card_played = 15: CardPlayed) */
    if (put_uint_nz(b, 1, sequence) < 0 || put_uint_nz(b, 2, game_number) < 0 ||
        put_uint_nz(b, 3, deal_number) < 0)
        return NULL;
    if (private_to != Py_None) {
        uint64_t p;
        if (as_u64(private_to, &p) < 0 || put_uint_field(b, 4, p) < 0) return NULL;
    }
    /* CardPlayed: seat = 1, side = 2, card = 3, captured = 4, scopa = 5, ace_sweep = 6,
       wild_value = 7 (optional), notation = 8, by_timeout = 9 */
    Py_ssize_t body = b->len;
    if (put_uint_nz(b, 1, seat) < 0 || put_uint_nz(b, 2, side) < 0) return NULL;
    Py_ssize_t card_start = b->len;
    if (buf_put(b, PyBytes_AS_STRING(card_bytes[card]), PyBytes_GET_SIZE(card_bytes[card])) <
            0 ||
        close_message(b, 3, card_start) < 0 || put_cards(b, 4, captured) < 0 ||
        put_uint_nz(b, 5, (uint64_t)flags[0]) < 0 || put_uint_nz(b, 6, (uint64_t)flags[1]) < 0)
        return NULL;
    if (card == WILD_CARD && value != 7 && put_uint_field(b, 7, value) < 0) return NULL;
    if (text_len) {
        Py_ssize_t text_start = b->len;
        if (buf_put(b, text, text_len) < 0 || close_message(b, 8, text_start) < 0) return NULL;
    }
    if (put_uint_nz(b, 9, (uint64_t)flags[2]) < 0 || close_message(b, 15, body) < 0 ||
        close_message(b, 4, 0) < 0)
        return NULL;
    return PyBytes_FromStringAndSize((const char *)b->data, b->len);
}

/* ------------------------------------------------------------------ a stream message */

/* close_message for any field number (its tag a varint of one byte or more). */
static int close_field(Buf *b, uint64_t number, Py_ssize_t start) {
    uint64_t size = (uint64_t)(b->len - start), tag = number << 3 | 2;
    int head = varint_size(tag) + varint_size(size);
    if (buf_reserve(b, head) < 0) return -1;
    unsigned char *p = b->data + start;
    memmove(p + head, p, (size_t)size);
    p = put_varint_at(p, tag);
    put_varint_at(p, size);
    b->len += head;
    return 0;
}

/* The Event's head (sequence = 1, game_number = 2, deal_number = 3, private_to_seat = 4,
   optional) of an event written into the empty buffer. */
static int put_event_head(Buf *b, PyObject *const *args, PyObject *private_to) {
    uint64_t sequence, game_number, deal_number;
    if (as_u64(args[0], &sequence) < 0 || as_u64(args[1], &game_number) < 0 ||
        as_u64(args[2], &deal_number) < 0)
        return -1;
    b->len = 0;
    if (put_uint_nz(b, 1, sequence) < 0 || put_uint_nz(b, 2, game_number) < 0 ||
        put_uint_nz(b, 3, deal_number) < 0)
        return -1;
    if (private_to != Py_None) {
        uint64_t p;
        if (as_u64(private_to, &p) < 0 || put_uint_field(b, 4, p) < 0) return -1;
    }
    return 0;
}

/* hand_dealt(sequence, game_number, deal_number, private_to, seat, round, hand):
   PlayResponse{event{hand_dealt (11): HandDealt{seat = 1, round = 2, cards = 3}}}. */
static PyObject *framing_hand_dealt(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "hand_dealt() takes 7 arguments");
        return NULL;
    }
    uint64_t seat, round, hand;
    Buf *b = &out_buf;
    if (as_u64(args[4], &seat) < 0 || as_u64(args[5], &round) < 0 ||
        as_u64(args[6], &hand) < 0 || put_event_head(b, args, args[3]) < 0)
        return NULL;
    Py_ssize_t body = b->len;
    if (put_uint_nz(b, 1, seat) < 0 || put_uint_nz(b, 2, round) < 0 ||
        put_cards(b, 3, hand) < 0 || close_field(b, 11, body) < 0 || close_message(b, 4, 0) < 0)
        return NULL;
    return PyBytes_FromStringAndSize((const char *)b->data, b->len);
}

/* round_dealt(sequence, game_number, deal_number, private_to, round, hand_sizes,
   stock_count):
   PlayResponse{event{round_dealt (16): RoundDealt{round = 1, hand_sizes = 2 (packed),
   stock_count = 3}}}. */
static PyObject *framing_round_dealt(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "round_dealt() takes 7 arguments");
        return NULL;
    }
    uint64_t round, stock;
    Buf *b = &out_buf;
    if (as_u64(args[4], &round) < 0 || as_u64(args[6], &stock) < 0) return NULL;
    PyObject *sizes = PySequence_Fast(args[5], "hand_sizes: a sequence of ints");
    if (sizes == NULL) return NULL;
    PyObject *result = NULL;
    if (put_event_head(b, args, args[3]) < 0) goto done;
    Py_ssize_t body = b->len;
    if (put_uint_nz(b, 1, round) < 0) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sizes);
    if (n) {
        Py_ssize_t packed = b->len;
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t v;
            if (as_u64(PySequence_Fast_GET_ITEM(sizes, i), &v) < 0 || put_varint(b, v) < 0)
                goto done;
        }
        if (close_message(b, 2, packed) < 0) goto done;
    }
    if (put_uint_nz(b, 3, stock) < 0 || close_field(b, 16, body) < 0 ||
        close_message(b, 4, 0) < 0)
        goto done;
    result = PyBytes_FromStringAndSize((const char *)b->data, b->len);
done:
    Py_DECREF(sizes);
    return result;
}

/* accepted(decision_id, index, elapsed_ms): PlayResponse{action_accepted} (7), its
   ActionAccepted's decision_id = 1, legal_action_index = 2, elapsed_ms = 3. */
static PyObject *framing_accepted(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "accepted() takes 3 arguments");
        return NULL;
    }
    uint64_t decision_id, index, elapsed;
    if (as_u64(args[0], &decision_id) < 0 || as_u64(args[1], &index) < 0 ||
        as_u64(args[2], &elapsed) < 0)
        return NULL;
    Buf *b = &out_buf;
    b->len = 0;
    if (put_uint_nz(b, 1, decision_id) < 0 || put_uint_nz(b, 2, index) < 0 ||
        put_uint_nz(b, 3, elapsed) < 0 || close_message(b, 7, 0) < 0)
        return NULL;
    return PyBytes_FromStringAndSize((const char *)b->data, b->len);
}

static PyObject *s_framed;

/* batch(msgs): one stream message for consecutive messages whose bytes were written when
   they were made (``framed``): the one's own bytes, or PlayResponse{batch} (11) of
   PlayResponseBatch.responses (1), each entry its message's bytes; None if one of them
   has no ``framed`` bytes (the caller writes those). */
static PyObject *framing_batch(PyObject *self, PyObject *msgs) {
    (void)self;
    PyObject *seq = PySequence_Fast(msgs, "batch(msgs): msgs must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *parts[64];
    PyObject **framed = n <= 64 ? parts : PyMem_Malloc((size_t)n * sizeof(PyObject *));
    if (framed == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    PyObject *result = NULL;
    Py_ssize_t got = 0, inner = 0;
    if (n == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    for (; got < n; got++) {
        PyObject *part = PyObject_GetAttr(PySequence_Fast_GET_ITEM(seq, got), s_framed);
        if (part == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) goto done;
            PyErr_Clear();
            result = Py_NewRef(Py_None);
            goto done;
        }
        if (!PyBytes_Check(part)) {
            Py_DECREF(part);
            result = Py_NewRef(Py_None);
            goto done;
        }
        framed[got] = part;
        uint64_t size = (uint64_t)PyBytes_GET_SIZE(part);
        inner += 1 + varint_size(size) + (Py_ssize_t)size;
    }
    if (n == 1) {
        result = Py_NewRef(framed[0]);
        goto done;
    }
    Py_ssize_t total = 1 + varint_size((uint64_t)inner) + inner;
    result = PyBytes_FromStringAndSize(NULL, total);
    if (result == NULL) goto done;
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(result);
    *p++ = 11 << 3 | 2;
    p = put_varint_at(p, (uint64_t)inner);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t size = PyBytes_GET_SIZE(framed[i]);
        *p++ = 1 << 3 | 2;
        p = put_varint_at(p, (uint64_t)size);
        memcpy(p, PyBytes_AS_STRING(framed[i]), (size_t)size);
        p += size;
    }
done:
    for (Py_ssize_t i = 0; i < got; i++) Py_DECREF(framed[i]);
    if (framed != parts) PyMem_Free(framed);
    Py_DECREF(seq);
    return result;
}

/* ------------------------------------------------------------------ reading a submission */

/* One varint at *p (before end): 0 and the value, or -1. */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return -1;
        unsigned char byte = *(*p)++;
        v |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* submit_index(data): (decision_id, legal_action_index) of a serialized PlayRequest that
   is a SubmitAction by index and nothing else (what a bot sends at every decision), else
   None (protobuf reads it). */
static PyObject *framing_submit_index(PyObject *self, PyObject *data) {
    (void)self;
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "submit_index(data): data must be bytes");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(data);
    const unsigned char *end = p + PyBytes_GET_SIZE(data);
    uint64_t size, id = 0, index = 0, v;
    int has_id = 0, has_index = 0;
    /* PlayRequest.submit_action = 2 (length-delimited), the whole frame */
    if (p >= end || *p++ != (2 << 3 | 2) || get_varint(&p, end, &size) ||
        size != (uint64_t)(end - p))
        Py_RETURN_NONE;
    while (p < end) {
        unsigned char tag = *p++; /* SubmitAction.decision_id = 1, legal_action_index = 2 */
        if (get_varint(&p, end, &v)) Py_RETURN_NONE;
        if (tag == (1 << 3) && !has_id) {
            has_id = 1;
            id = v;
        } else if (tag == (2 << 3) && !has_index && v <= 0xFFFFFFFFu) {
            has_index = 1;
            index = v;
        } else {
            Py_RETURN_NONE;
        }
    }
    if (!has_index) Py_RETURN_NONE;
    return Py_BuildValue("(KK)", (unsigned long long)id, (unsigned long long)index);
}

/* play_request(fallback, data): ``submit_index(data)``, or ``fallback(data)`` for any
   other frame: a Play stream's request deserializer in one native call. */
static PyObject *framing_play_request(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "play_request() takes 2 arguments");
        return NULL;
    }
    PyObject *fast = framing_submit_index(self, args[1]);
    if (fast != Py_None) return fast;
    Py_DECREF(fast);
    return PyObject_CallOneArg(args[0], args[1]);
}

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)(void (*)(void))framing_setup, METH_FASTCALL,
     "setup(cards, names): the 40 cards' serialized Card messages and names (UTF-8)."},
    {"decision", (PyCFunction)(void (*)(void))framing_decision, METH_FASTCALL,
     "decision(game, seat, decision_id, codes, game_number, sequence, seats, clock, "
     "default_index) -> the serialized PlayResponse{decision_request}."},
    {"notation", framing_notation, METH_O, "notation(code) -> the action's notation."},
    {"submit_index", framing_submit_index, METH_O,
     "submit_index(data) -> (decision_id, legal_action_index) of a serialized PlayRequest "
     "that is a SubmitAction by index and nothing else, else None."},
    {"card_played", (PyCFunction)(void (*)(void))framing_card_played, METH_FASTCALL,
     "card_played(event, sequence, game_number, deal_number, private_to, notation, "
     "by_timeout) -> the serialized PlayResponse{event{card_played}}."},
    {"hand_dealt", (PyCFunction)(void (*)(void))framing_hand_dealt, METH_FASTCALL,
     "hand_dealt(sequence, game_number, deal_number, private_to, seat, round, hand) -> the "
     "serialized PlayResponse{event{hand_dealt}}."},
    {"round_dealt", (PyCFunction)(void (*)(void))framing_round_dealt, METH_FASTCALL,
     "round_dealt(sequence, game_number, deal_number, private_to, round, hand_sizes, "
     "stock_count) -> the serialized PlayResponse{event{round_dealt}}."},
    {"accepted", (PyCFunction)(void (*)(void))framing_accepted, METH_FASTCALL,
     "accepted(decision_id, index, elapsed_ms) -> the serialized "
     "PlayResponse{action_accepted}."},
    {"batch", framing_batch, METH_O,
     "batch(msgs) -> one stream message of the messages' framed bytes (a batch unless "
     "there is one), or None if one has none."},
    {"play_request", (PyCFunction)(void (*)(void))framing_play_request, METH_FASTCALL,
     "play_request(fallback, data) -> submit_index(data), or fallback(data) for any other "
     "frame."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "cirulla.server.convert._framing",
    "A seat's decision request as protobuf bytes from the game's state (framing.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__framing(void) {
#define INTERN(var, text)                                  \
    if ((var = PyUnicode_InternFromString(text)) == NULL) \
        return NULL;
    INTERN(s_n, "n");
    INTERN(s_sides, "sides");
    INTERN(s_side_of, "side_of");
    INTERN(s_deal_no, "deal_no");
    INTERN(s_dealer, "dealer");
    INTERN(s_round, "round");
    INTERN(s_turn, "turn");
    INTERN(s_winner, "winner");
    INTERN(s_deal_over, "deal_over");
    INTERN(s_hands, "hands");
    INTERN(s_table, "table");
    INTERN(s_wild, "wild");
    INTERN(s_declared, "declared");
    INTERN(s_captured, "captured");
    INTERN(s_scope, "scope");
    INTERN(s_stock, "stock");
    INTERN(s_totals, "totals");
    INTERN(s_last_taker, "last_taker");
    INTERN(s_seat, "seat");
    INTERN(s_side, "side");
    INTERN(s_card, "card");
    INTERN(s_value, "value");
    INTERN(s_captured, "captured");
    INTERN(s_scopa, "scopa");
    INTERN(s_ace_sweep, "ace_sweep");
    INTERN(s_framed, "framed");
#undef INTERN
    return PyModule_Create(&module);
}
