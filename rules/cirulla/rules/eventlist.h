/* ------------------------------------------------------------------ a move's events, built when read

   native.Events: what Game.apply returns where the native core runs. A move's events are
   kept as engine.h emitted them (a type and its numbers each) and made into the event
   objects (game.py's dataclasses, through the same makers as before) the first time
   anything reads them: a search or a random player that never looks at a move's events
   does not pay for them. Once made they are kept, so every read sees the same objects.

   It is an immutable sequence (registered as collections.abc.Sequence by game.py): len,
   indexing and slices, iteration, ``in``, ``==`` with a list of the same events (or
   another Events), ``+`` with a list (either side) giving a list, count and index,
   pickling and copying as a list. A caller that wants to change it makes a list of it. */

typedef struct {
    PyObject_HEAD long long *rec; /* records: type, argument count, arguments */
    int nrec, cap, count;           /* count: the events (records) held */
    long long inline_rec[24];       /* a card played, a declaration: no allocation */
    PyObject *score;                /* the DealScore of a deal scored in the move, or NULL */
    PyObject *made;                 /* the event objects once made (a tuple), else NULL */
} EventsObject;

static PyTypeObject EventsType;

/* Not a container the collector visits: the events, once made, are kept in a tuple, and
   they hold ints and tuples only, so no cycle can pass through it. */
static EventsObject *events_new(void) {
    EventsObject *self = PyObject_New(EventsObject, &EventsType);
    if (!self) return NULL;
    self->rec = self->inline_rec;
    self->nrec = self->count = 0;
    self->cap = (int)(sizeof self->inline_rec / sizeof self->inline_rec[0]);
    self->score = self->made = NULL;
    return self;
}

static int events_record(EventsObject *self, int type, const long long *a, int n) {
    if (self->nrec + n + 2 > self->cap) {
        int cap = 2 * self->cap + n + 2;
        long long *r = PyMem_Malloc(sizeof(long long) * (size_t)cap);
        if (!r) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(r, self->rec, sizeof(long long) * (size_t)self->nrec);
        if (self->rec != self->inline_rec) PyMem_Free(self->rec);
        self->rec = r;
        self->cap = cap;
    }
    self->rec[self->nrec++] = type;
    self->rec[self->nrec++] = n;
    memcpy(self->rec + self->nrec, a, sizeof(long long) * (size_t)n);
    self->nrec += n;
    self->count++;
    return 0;
}

/* one event emitted by engine.h, made into its object at the end of ``d->events``:
   play_emit makes a move's own events, deal_emit a deal's end and start (and keeps the
   DealScore of EV_DEAL_SCORED in ``d->score`` even with no list) */
static int emit_event(DealCtx *d, int type, const long long *a, int n) {
    if (type == EV_CARD_PLAYED || type == EV_DECLARED || type == EV_ROUND_DEALT)
        return d->events ? play_emit(d->events, type, a, n) : 0;
    return deal_emit(d, type, a, n);
}

/* the event objects, made on the first read (a borrowed reference to the tuple) */
static PyObject *events_list(EventsObject *self) {
    if (self->made) return self->made;
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    DealCtx d = {list, NULL, NULL, NULL, NULL, self->score};
    for (int i = 0; i < self->nrec;) {
        int type = (int)self->rec[i], n = (int)self->rec[i + 1];
        const long long *a = self->rec + i + 2;
        if (emit_event(&d, type, a, n)) {
            Py_XDECREF(d.score);
            Py_DECREF(list);
            return NULL;
        }
        i += n + 2;
    }
    Py_XDECREF(d.score);
    self->made = PyList_AsTuple(list);
    Py_DECREF(list);
    if (!self->made) return NULL;
    if (self->rec != self->inline_rec) PyMem_Free(self->rec);
    self->rec = self->inline_rec;
    self->nrec = 0;
    return self->made;
}

static void Events_dealloc(EventsObject *self) {
    Py_XDECREF(self->made);
    Py_XDECREF(self->score);
    if (self->rec != self->inline_rec) PyMem_Free(self->rec);
    PyObject_Free(self);
}

static Py_ssize_t Events_len(EventsObject *self) {
    return self->made ? PyTuple_GET_SIZE(self->made) : self->count;
}

static PyObject *Events_subscript(EventsObject *self, PyObject *key) {
    PyObject *events = events_list(self);
    if (!events) return NULL;
    if (!PySlice_Check(key)) return PyObject_GetItem(events, key);
    PyObject *part = PyObject_GetItem(events, key); /* a slice is a list, as a list's is */
    PyObject *list = part ? PySequence_List(part) : NULL;
    Py_XDECREF(part);
    return list;
}

static PyObject *Events_item(EventsObject *self, Py_ssize_t i) {
    PyObject *list = events_list(self);
    if (!list) return NULL;
    if (i < 0 || i >= PyTuple_GET_SIZE(list)) {
        PyErr_SetString(PyExc_IndexError, "event index out of range");
        return NULL;
    }
    return Py_NewRef(PyTuple_GET_ITEM(list, i));
}

static int Events_contains(EventsObject *self, PyObject *x) {
    PyObject *list = events_list(self);
    return list ? PySequence_Contains(list, x) : -1;
}

static PyObject *Events_iter(EventsObject *self) {
    PyObject *list = events_list(self);
    return list ? PyObject_GetIter(list) : NULL;
}

/* a new list of an Events' events, a new reference to anything else */
static PyObject *as_list(PyObject *o) {
    if (Py_TYPE(o) != &EventsType) return Py_NewRef(o);
    PyObject *events = events_list((EventsObject *)o);
    return events ? PySequence_List(events) : NULL;
}

static PyObject *Events_richcompare(PyObject *a, PyObject *b, int op) {
    PyObject *x = as_list(a), *y = x ? as_list(b) : NULL, *r;
    if (!y) r = NULL;
    else if (!PyList_Check(x) || !PyList_Check(y)) r = Py_NewRef(Py_NotImplemented);
    else r = PyObject_RichCompare(x, y, op);
    Py_XDECREF(x);
    Py_XDECREF(y);
    return r;
}

static PyObject *Events_add(PyObject *a, PyObject *b) {
    PyObject *x = as_list(a), *y = x ? as_list(b) : NULL, *r;
    if (!y) r = NULL;
    else if (!PyList_Check(x) || !PyList_Check(y)) r = Py_NewRef(Py_NotImplemented);
    else r = PySequence_Concat(x, y);
    Py_XDECREF(x);
    Py_XDECREF(y);
    return r;
}

static PyObject *Events_repr(EventsObject *self) {
    PyObject *list = as_list((PyObject *)self), *r = list ? PyObject_Repr(list) : NULL;
    Py_XDECREF(list);
    return r;
}

static PyObject *Events_list_method(EventsObject *self, const char *name, PyObject *arg) {
    PyObject *list = events_list(self);
    return list ? PyObject_CallMethod(list, name, "O", arg) : NULL;
}

static PyObject *Events_count(EventsObject *self, PyObject *x) {
    return Events_list_method(self, "count", x);
}

static PyObject *Events_index(EventsObject *self, PyObject *x) {
    return Events_list_method(self, "index", x);
}

static PyObject *Events_reduce(EventsObject *self, PyObject *unused) {
    (void)unused;
    PyObject *list = events_list(self);
    return list ? Py_BuildValue("(O(O))", (PyObject *)&PyList_Type, list) : NULL;
}

static PyMethodDef Events_methods[] = {
    {"count", (PyCFunction)Events_count, METH_O, "count(value) -> int\n\nlist.count."},
    {"index", (PyCFunction)Events_index, METH_O, "index(value) -> int\n\nlist.index."},
    {"__reduce__", (PyCFunction)Events_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PySequenceMethods Events_as_sequence = {
    .sq_length = (lenfunc)Events_len,
    .sq_item = (ssizeargfunc)Events_item,
    .sq_contains = (objobjproc)Events_contains,
};

static PyMappingMethods Events_as_mapping = {
    .mp_length = (lenfunc)Events_len,
    .mp_subscript = (binaryfunc)Events_subscript,
};

static PyNumberMethods Events_as_number = {.nb_add = Events_add};

PyDoc_STRVAR(Events_doc,
             "Events()\n\n"
             "A move's events (game.apply's answer): an immutable sequence made into the event "
             "objects when first read; list(events) for a list.");

static PyTypeObject EventsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cirulla.rules._native.Events",
    .tp_basicsize = sizeof(EventsObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_SEQUENCE,
    .tp_doc = Events_doc,
    .tp_dealloc = (destructor)Events_dealloc,
    .tp_repr = (reprfunc)Events_repr,
    .tp_as_sequence = &Events_as_sequence,
    .tp_as_mapping = &Events_as_mapping,
    .tp_as_number = &Events_as_number,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_iter = (getiterfunc)Events_iter,
    .tp_richcompare = Events_richcompare,
    .tp_methods = Events_methods,
};
