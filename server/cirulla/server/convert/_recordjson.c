/*
 * cirulla.server.convert._recordjson: a finished game's record entries written as JSON
 * text without building them as dicts first (recordkeeping.py's ``record_text``).
 *
 * A record holds every event of its game (about 400) and every action (about 250). Built
 * as dicts (``documents.event_entry``) and encoded by ``json.dumps`` they cost some 2 ms
 * of CPU per record, all of it holding the interpreter's lock, on the writer thread
 * beside the event loop. Here the common events (a card played, a hand dealt, a round
 * dealt) are written from the event objects' own fields, and the actions from their
 * dicts, into one buffer: the very bytes ``json.dumps(..., separators=(",", ":"))``
 * writes (keys in the same order, ASCII only). Anything else (another event type, a
 * string that needs escaping, a number past 64 bits, an unexpected extra field) is
 * written by the Python callback given, entry by entry: the Python writer stays the
 * reference, and tests/server/test_record_text.py compares both over whole games.
 *
 * Optional: without a C compiler the records are written in Python.
 */
#include "outbuf.h"
#include <stdint.h>

static Buf out_buf = {NULL, 0, 0, 65536};

#define PUT_LIT(b, lit) buf_put((b), (lit), (Py_ssize_t)(sizeof(lit) - 1))

/* What a writer returns: written, or not writable here (the caller falls back to Python,
   no exception set), or an error (an exception set). */
#define DONE 0
#define OTHER 1
#define ERROR -1

/* A str that JSON writes as it is (printable ASCII, no quote or backslash), as UTF-8. */
static const char *plain_text(PyObject *s, Py_ssize_t *n) {
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s)) return NULL;
    const char *text = (const char *)PyUnicode_1BYTE_DATA(s);
    Py_ssize_t len = PyUnicode_GET_LENGTH(s);
    for (Py_ssize_t i = 0; i < len; i++) {
        char c = text[i];
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') return NULL;
    }
    *n = len;
    return text;
}

/* An int in decimal, as repr writes it (snprintf cost more than the rest of an entry). */
static int put_int(Buf *b, long long x) {
    char digits[24];
    char *end = digits + sizeof digits, *p = end;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0) *--p = '-';
    return buf_put(b, p, end - p);
}

/* None, a bool, an int within 64 bits, a plain str, or a list or tuple of them. */
static int put_value(Buf *b, PyObject *v) {
    if (v == Py_None) return PUT_LIT(b, "null");
    if (v == Py_True) return PUT_LIT(b, "true");
    if (v == Py_False) return PUT_LIT(b, "false");
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow) return OTHER;
        if (x == -1 && PyErr_Occurred()) return ERROR;
        return put_int(b, x);
    }
    if (PyUnicode_CheckExact(v)) {
        Py_ssize_t n;
        const char *text = plain_text(v, &n);
        if (text == NULL) return OTHER;
        if (buf_reserve(b, n + 2) < 0) return ERROR;
        b->data[b->len++] = '"';
        memcpy(b->data + b->len, text, (size_t)n);
        b->len += n;
        b->data[b->len++] = '"';
        return DONE;
    }
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        PyObject **items = PySequence_Fast_ITEMS(v);
        if (PUT_LIT(b, "[") < 0) return ERROR;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i && PUT_LIT(b, ",") < 0) return ERROR;
            int r = put_value(b, items[i]);
            if (r != DONE) return r;
        }
        return PUT_LIT(b, "]");
    }
    return OTHER;
}

/* ,"key": (a plain str key) */
static int put_key(Buf *b, PyObject *key, int first) {
    Py_ssize_t n;
    const char *text = plain_text(key, &n);
    if (text == NULL) return OTHER;
    if (buf_reserve(b, n + 4) < 0) return ERROR;
    if (!first) b->data[b->len++] = ',';
    b->data[b->len++] = '"';
    memcpy(b->data + b->len, text, (size_t)n);
    b->len += n;
    b->data[b->len++] = '"';
    b->data[b->len++] = ':';
    return DONE;
}

/* ------------------------------------------------------------------ cards */

static char card_names[40][4];
static int card_name_len[40];
static int have_names = 0;

/* ["name",...] of the cards of ``mask`` in ascending order (cards.names_of). */
static int put_names(Buf *b, PyObject *mask_obj) {
    if (!PyLong_CheckExact(mask_obj)) return OTHER;
    int overflow = 0;
    long long mask = PyLong_AsLongLongAndOverflow(mask_obj, &overflow);
    if (overflow || mask < 0 || mask >= (1LL << 40)) return OTHER;
    if (mask == -1 && PyErr_Occurred()) return ERROR;
    if (buf_reserve(b, 2 + 6 * 40) < 0) return ERROR;
    b->data[b->len++] = '[';
    int first = 1;
    uint64_t m = (uint64_t)mask;
    while (m) {
        int card = __builtin_ctzll(m);
        m &= m - 1;
        if (!first) b->data[b->len++] = ',';
        first = 0;
        b->data[b->len++] = '"';
        memcpy(b->data + b->len, card_names[card], (size_t)card_name_len[card]);
        b->len += card_name_len[card];
        b->data[b->len++] = '"';
    }
    b->data[b->len++] = ']';
    return DONE;
}

static int put_card(Buf *b, PyObject *card_obj) {
    if (!PyLong_CheckExact(card_obj)) return OTHER;
    long card = PyLong_AsLong(card_obj);
    if (card == -1 && PyErr_Occurred()) return ERROR;
    if (card < 0 || card >= 40) return OTHER;
    if (buf_reserve(b, 6) < 0) return ERROR;
    b->data[b->len++] = '"';
    memcpy(b->data + b->len, card_names[card], (size_t)card_name_len[card]);
    b->len += card_name_len[card];
    b->data[b->len++] = '"';
    return DONE;
}

/* ------------------------------------------------------------------ events */

/* How each event type written here becomes its entry (``Event.to_dict``): its name, and
   per field its key, its conversion and its name as an attribute. */
#define PLAIN 0
#define MASK 1 /* a card mask: the cards' names (``names_of``) */
#define CARD 2 /* one card: its name */
#define MAX_FIELDS 12
#define MAX_TYPES 32

typedef struct {
    PyTypeObject *type;
    PyObject *name;            /* "CardPlayed" */
    int n;                     /* fields */
    PyObject *fields[MAX_FIELDS];
    int kinds[MAX_FIELDS];
    int deal_field;            /* the field named "deal" (it takes the entry's "deal"), -1 */
} EventSpec;

static EventSpec specs[MAX_TYPES];
static int n_specs = 0;
static PyTypeObject *kind_type; /* DeclarationKind: written as its label */
static PyObject *s_event, *s_sequence, *s_deal_number, *s_private_to, *s_extras, *s_label;

static const char *const HEAD_KEYS[] = {"sequence", "deal", "private_to", "type", NULL};

static int put_field(Buf *b, PyObject *v, int kind) {
    if (kind == MASK) return put_names(b, v);
    if (kind == CARD) return put_card(b, v);
    if (PyObject_TypeCheck(v, kind_type)) {
        PyObject *label = PyObject_GetAttr(v, s_label);
        if (label == NULL) return ERROR;
        int r = put_value(b, label);
        Py_DECREF(label);
        return r;
    }
    return put_value(b, v);
}

/* An extra field named as one of the entry's own keys would take its place in the dict
   (``documents.event_entry``): such an entry is left to Python. */
static int own_key(PyObject *key, const EventSpec *spec) {
    const char *text = PyUnicode_AsUTF8(key);
    if (text == NULL) return -1;
    for (int i = 0; HEAD_KEYS[i]; i++)
        if (strcmp(text, HEAD_KEYS[i]) == 0) return 1;
    for (int i = 0; i < spec->n; i++)
        if (PyUnicode_Compare(key, spec->fields[i]) == 0) return 1;
    return 0;
}

static int put_attr_value(Buf *b, const char *lit, Py_ssize_t n, PyObject *obj, PyObject *name,
                          int kind) {
    if (buf_put(b, lit, n) < 0) return ERROR;
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return ERROR;
    int r = put_field(b, v, kind);
    Py_DECREF(v);
    return r;
}

#define HEAD(b, lit, obj, name, kind)                                                      \
    do {                                                                                  \
        int r_ = put_attr_value((b), (lit), (Py_ssize_t)(sizeof(lit) - 1), (obj), (name), \
                                (kind));                                                  \
        if (r_ != DONE) return r_;                                                        \
    } while (0)

/* One record entry of a published event (``EventMsg``), as ``event_entry`` builds it. */
static int put_event(Buf *b, PyObject *msg) {
    PyObject *event = PyObject_GetAttr(msg, s_event);
    if (event == NULL) return ERROR;
    PyTypeObject *type = Py_TYPE(event);
    Py_DECREF(event); /* the message keeps it */
    const EventSpec *spec = NULL;
    for (int i = 0; i < n_specs; i++)
        if (specs[i].type == type) {
            spec = &specs[i];
            break;
        }
    if (spec == NULL) return OTHER;
    HEAD(b, "{\"sequence\":", msg, s_sequence, PLAIN);
    if (spec->deal_field >= 0) {
        HEAD(b, ",\"deal\":", event, spec->fields[spec->deal_field], PLAIN);
    } else {
        HEAD(b, ",\"deal\":", msg, s_deal_number, PLAIN);
    }
    HEAD(b, ",\"private_to\":", msg, s_private_to, PLAIN);
    PyObject *extras = PyObject_GetAttr(msg, s_extras);
    if (extras == NULL) return ERROR;
    int r = PyDict_CheckExact(extras) ? DONE : OTHER;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (r == DONE && PyDict_Next(extras, &pos, &key, &value)) {
        r = put_key(b, key, 0);
        if (r == DONE) {
            int own = own_key(key, spec);
            r = own < 0 ? ERROR : own ? OTHER : put_value(b, value);
        }
    }
    Py_DECREF(extras);
    if (r != DONE) return r;
    if (PUT_LIT(b, ",\"type\":") < 0 || put_value(b, spec->name) != DONE) return ERROR;
    for (int i = 0; i < spec->n; i++) {
        if (i == spec->deal_field) continue;
        if (put_key(b, spec->fields[i], 0) != DONE) return ERROR;
        PyObject *v = PyObject_GetAttr(event, spec->fields[i]);
        if (v == NULL) return ERROR;
        r = put_field(b, v, spec->kinds[i]);
        Py_DECREF(v);
        if (r != DONE) return r;
    }
    return PUT_LIT(b, "}");
}

/* A flat dict: {"key":value,...} with put_value's values. */
static int put_flat(Buf *b, PyObject *item) {
    if (!PyDict_CheckExact(item)) return OTHER;
    if (PUT_LIT(b, "{") < 0) return ERROR;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int first = 1;
    while (PyDict_Next(item, &pos, &key, &value)) {
        int r = put_key(b, key, first);
        if (r == DONE) r = put_value(b, value);
        if (r != DONE) return r;
        first = 0;
    }
    return PUT_LIT(b, "}");
}

/* [entry,...]: each item by ``writer``, or by ``fallback(item)`` (a str) where it cannot. */
static PyObject *write_list(PyObject *items, PyObject *fallback, int (*writer)(Buf *, PyObject *)) {
    if (!PyList_CheckExact(items) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "expected a list and a callable");
        return NULL;
    }
    Buf *b = &out_buf;
    b->len = 0;
    if (PUT_LIT(b, "[") < 0) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (i && PUT_LIT(b, ",") < 0) return NULL;
        Py_ssize_t start = b->len;
        Py_INCREF(item); /* a callback may change the list */
        int r = writer(b, item);
        if (r == OTHER) {
            b->len = start;
            PyObject *text = PyObject_CallOneArg(fallback, item);
            if (text == NULL) {
                r = ERROR;
            } else {
                Py_ssize_t n;
                const char *utf8 = PyUnicode_Check(text) ? PyUnicode_AsUTF8AndSize(text, &n)
                                                         : NULL;
                if (utf8 == NULL && !PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "the fallback must return a str");
                r = utf8 == NULL || buf_put(b, utf8, n) < 0 ? ERROR : DONE;
                Py_DECREF(text);
            }
        }
        Py_DECREF(item);
        if (r != DONE) return NULL;
    }
    if (PUT_LIT(b, "]") < 0) return NULL;
    return PyUnicode_DecodeUTF8((const char *)b->data, b->len, NULL);
}

/* ------------------------------------------------------------------ module functions */

static void clear_specs(void) {
    for (int i = 0; i < n_specs; i++) {
        Py_CLEAR(specs[i].type);
        Py_CLEAR(specs[i].name);
        for (int k = 0; k < specs[i].n; k++) Py_CLEAR(specs[i].fields[k]);
    }
    n_specs = 0;
}

static PyObject *rj_setup(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != 40 ||
        !PyDict_Check(args[1]) || !PyType_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "setup(names, types, DeclarationKind): the 40 cards' names, each event "
                        "type written natively with its field names in order, the kind type");
        return NULL;
    }
    for (int i = 0; i < 40; i++) {
        Py_ssize_t n;
        const char *text = plain_text(PyTuple_GET_ITEM(args[0], i), &n);
        if (text == NULL || n < 1 || n > 3) {
            PyErr_SetString(PyExc_ValueError, "setup: each card's name is 1-3 plain characters");
            return NULL;
        }
        memcpy(card_names[i], text, (size_t)n);
        card_name_len[i] = (int)n;
    }
    clear_specs();
    Py_ssize_t pos = 0;
    PyObject *type, *fields;
    while (PyDict_Next(args[1], &pos, &type, &fields)) {
        if (!PyType_Check(type) || !PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) > MAX_FIELDS ||
            n_specs == MAX_TYPES) {
            PyErr_SetString(PyExc_ValueError, "setup: types maps a class to its field names");
            clear_specs();
            return NULL;
        }
        EventSpec *spec = &specs[n_specs];
        int usable = 1;
        spec->deal_field = -1;
        spec->n = 0;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(fields); k++) {
            PyObject *field = PyTuple_GET_ITEM(fields, k);
            Py_ssize_t n;
            const char *text = plain_text(field, &n);
            if (text == NULL) {
                usable = 0;
                break;
            }
            if (strcmp(text, "deal") == 0) {
                spec->deal_field = (int)k;
            } else {
                for (int h = 0; HEAD_KEYS[h]; h++)
                    if (strcmp(text, HEAD_KEYS[h]) == 0) usable = 0;
            }
            spec->kinds[k] = strcmp(text, "card") == 0 ? CARD
                             : (strcmp(text, "table") == 0 || strcmp(text, "cards") == 0 ||
                                strcmp(text, "captured") == 0 || strcmp(text, "hand") == 0)
                                 ? MASK
                                 : PLAIN;
        }
        if (!usable) continue; /* written by Python */
        spec->n = (int)PyTuple_GET_SIZE(fields);
        for (int k = 0; k < spec->n; k++) {
            spec->fields[k] = PyTuple_GET_ITEM(fields, k);
            Py_INCREF(spec->fields[k]);
        }
        spec->name = PyObject_GetAttrString(type, "__name__");
        if (spec->name == NULL) {
            clear_specs();
            return NULL;
        }
        Py_INCREF(type);
        spec->type = (PyTypeObject *)type;
        n_specs++;
    }
    Py_INCREF(args[2]);
    Py_XSETREF(kind_type, (PyTypeObject *)args[2]);
    have_names = 1;
    Py_RETURN_NONE;
}

static PyObject *rj_events(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "events(messages, fallback) takes 2 arguments");
        return NULL;
    }
    if (!have_names) {
        PyErr_SetString(PyExc_RuntimeError, "setup() was not called");
        return NULL;
    }
    return write_list(args[0], args[1], put_event);
}

static PyObject *rj_flat(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "flat(items, fallback) takes 2 arguments");
        return NULL;
    }
    return write_list(args[0], args[1], put_flat);
}

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)(void (*)(void))rj_setup, METH_FASTCALL,
     "setup(names, types, DeclarationKind): the 40 cards' names, each event type written "
     "here with its field names in order (``Event.to_dict``'s), the declarations' kind."},
    {"events", (PyCFunction)(void (*)(void))rj_events, METH_FASTCALL,
     "events(messages, fallback) -> the JSON list of the messages' record entries."},
    {"flat", (PyCFunction)(void (*)(void))rj_flat, METH_FASTCALL,
     "flat(items, fallback) -> the JSON list of flat dicts (a record's actions)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "cirulla.server.convert._recordjson",
    "A record's event and action entries as JSON text (recordkeeping.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__recordjson(void) {
#define INTERN(var, text)                                  \
    if ((var = PyUnicode_InternFromString(text)) == NULL) \
        return NULL;
    INTERN(s_event, "event");
    INTERN(s_sequence, "sequence");
    INTERN(s_deal_number, "deal_number");
    INTERN(s_private_to, "private_to");
    INTERN(s_extras, "extras");
    INTERN(s_label, "label");
#undef INTERN
    return PyModule_Create(&module);
}
