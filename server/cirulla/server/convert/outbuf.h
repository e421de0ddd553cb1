/*
 * The growing output buffer of the match server's native writers: _framing.c writes
 * protobuf bytes into it, _recordjson.c JSON text. Each keeps one between calls (the
 * interpreter's lock is held throughout), so a message costs no allocation once the
 * buffer has grown to the largest seen.
 */
#ifndef CIRULLA_OUTBUF_H
#define CIRULLA_OUTBUF_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    unsigned char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    Py_ssize_t first; /* the size of its first allocation (64 if not set) */
} Buf;

/* Room for ``extra`` more bytes (doubling); -1 with MemoryError set. */
static int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (b->len + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : b->first > 0 ? b->first : 64;
    while (cap < b->len + extra) cap *= 2;
    unsigned char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const void *src, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

#endif
