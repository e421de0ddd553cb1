"""Lines from an untrusted byte stream, in bounded memory.

An engine may write anything on its stdout and stderr: binary garbage, or one line of
gigabytes without a newline. ``read_lines`` reads the pipe in chunks (never byte by
byte, which is what ``readline`` on an unbuffered pipe does) and never holds more than
one chunk plus ``max_bytes`` of a line: a longer line is cut, its first ``max_bytes``
are returned flagged as cut, and the rest, up to its newline, is read and discarded.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

#: Bytes read from the pipe at a time.
CHUNK_BYTES = 64 * 1024


def read_lines(fd: int, max_bytes: int, chunk: int = CHUNK_BYTES) -> Iterator[tuple[bytes, bool]]:
    """``(line, cut)`` for each line of ``fd`` until end of file, without its ``\\n``;
    ``cut`` is True for the head of a line longer than ``max_bytes``."""
    pending = bytearray()
    skipping = False  # inside the discarded rest of a cut line
    while True:
        try:
            data = os.read(fd, chunk)
        except OSError:
            data = b""
        if not data:
            break
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if skipping:
                skipping = False
            else:
                pending += data[start:end]
                yield bytes(pending[:max_bytes]), len(pending) > max_bytes
                pending.clear()
            start = end + 1
        if not skipping:
            pending += data[start:]
            if len(pending) > max_bytes:
                yield bytes(pending[:max_bytes]), True
                pending.clear()
                skipping = True
    if pending and not skipping:
        yield bytes(pending), False
