"""Model files are bad input until checked: bounds read before anything is inflated.

A bot's weights (``learned``'s ``.npz``, ``policy:model=PATH.npz`` or ``.onnx``) come from
whoever wrote the bot, and a ladder or a tournament loads them in its bot processes. A
486-byte ``.npz`` whose array header claims 1 TiB made ``np.load`` try to allocate it; a
3 MB zip bomb was inflated to 3 GiB before any shape was looked at. So every loader
reads a model file through ``read_model``, which checks, in this order and reading only
the zip's central directory and each array's few header bytes:

* the file's size on disk (``MAX_FILE_BYTES``);
* the zip's entries: their number, their compression (stored or deflate), each one's
  claimed uncompressed size, their total (``MAX_ARRAYS_BYTES``) and, for an entry
  above ``RATIO_FROM_BYTES``, its compression ratio (``MAX_RATIO``);
* each ``.npy`` header: a known version, a bounded header, a plain numeric dtype, and a
  shape whose bytes are exactly what the entry holds (no claim the entry cannot back);
* the names, dtypes and dimensions the network expects (``ArraySpec``), and any check
  of the shapes together the loader adds (``check_shapes``).

Only then are the arrays read, from the bytes that were checked (the file is read once:
no other file can be swapped in between). Zip inflation never writes more than an
entry's claimed size, so the bounds hold while reading too. Any failure is one
``ValueError`` line naming the file and the limit or the array.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # NumPy is an extra: imported where a model is read
    import numpy as np
    import numpy.typing as npt

#: Largest model file read (``.npz`` or ``.onnx``), on disk.
MAX_FILE_BYTES = 256 * 1024 * 1024
#: Largest total of the arrays of an ``.npz`` once inflated.
MAX_ARRAYS_BYTES = 256 * 1024 * 1024
#: Largest compression ratio of one entry above ``RATIO_FROM_BYTES`` (weights compress
#: about 1.1 times; a run of zeros thousands of times).
MAX_RATIO = 200
RATIO_FROM_BYTES = 1024 * 1024
#: Most arrays in one ``.npz``.
MAX_ENTRIES = 256
#: Longest ``.npy`` header read (NumPy's own default bound).
MAX_HEADER_BYTES = 10_000
#: dtype kinds a network's array may have: bool, integers, floats.
NUMERIC_KINDS = "biuf"

#: The checked arrays' names and (shape, dtype) from their headers.
Headers = dict[str, tuple[tuple[int, ...], "np.dtype[np.generic]"]]
#: The arrays of a model file by name, each of a plain numeric dtype (``NUMERIC_KINDS``).
Arrays = dict[str, "npt.NDArray[np.generic]"]


@dataclass(frozen=True)
class ArraySpec:
    """What the network expects of one array: its dimensions and its dtype kinds
    (``"f"``: floats, ``"u"``: unsigned integers; ``NUMERIC_KINDS``)."""

    ndim: int
    kinds: str = "f"


def mib(n: float) -> str:
    """A size for a message: bytes, MiB or GiB."""
    if n < 1024 * 1024:
        return f"{int(n):,} bytes"
    return f"{n / (1024 * 1024):,.1f} MiB" if n < 1024**3 else f"{n / 1024**3:,.1f} GiB"


def read_bounded(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a model file no larger than ``limit`` (checked before reading)."""
    where = Path(path)
    try:
        size = where.stat().st_size
    except OSError:
        raise ValueError(f"{what} {path}: no such file") from None
    if not where.is_file():
        raise ValueError(f"{what} {path}: not a file")
    if size > limit:
        raise ValueError(
            f"{what} {path}: {size:,} bytes, above the {mib(limit)} limit of a model file"
        )
    with where.open("rb") as handle:
        blob = handle.read(limit + 1)
    if len(blob) > limit:  # it grew since
        raise ValueError(f"{what} {path}: above the {mib(limit)} limit of a model file")
    return blob


def npy_header(
    member: IO[bytes], what: str, name: str, size: int
) -> tuple[tuple[int, ...], np.dtype[np.generic]]:
    """The (shape, dtype) of one ``.npy`` entry, read from its first bytes only, and
    checked against the entry's claimed ``size``."""
    import numpy as np

    head = member.read(12 + MAX_HEADER_BYTES)
    fmt = np.lib.format
    stream = io.BytesIO(head)
    try:
        version = fmt.read_magic(stream)
        if version == (1, 0):
            shape, _fortran, dtype = fmt.read_array_header_1_0(stream)
        elif version in ((2, 0), (3, 0)):
            shape, _fortran, dtype = fmt.read_array_header_2_0(stream)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except (ValueError, SyntaxError, TypeError, EOFError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{what}: array {name} has no readable .npy header ({text})") from None
    if dtype.hasobject or dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"{what}: array {name} has dtype {dtype}, not a plain numeric type")
    if any(n < 0 for n in shape):
        raise ValueError(f"{what}: array {name} has a negative dimension in {shape}")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes + stream.tell() != size:
        raise ValueError(
            f"{what}: array {name} claims shape {shape} of {dtype} ({mib(nbytes)}) but its "
            f"entry holds {mib(size)}"
        )
    return tuple(int(n) for n in shape), dtype


def check_npz(blob: bytes, what: str, specs: Mapping[str, ArraySpec] | None) -> Headers:
    """The headers of an ``.npz``'s arrays, every bound checked (the module's list);
    ``specs``: the arrays expected, by name (None: any names, float arrays)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{what}: not a .npz file of arrays ({exc})") from None
    with archive:
        entries = archive.infolist()
        if len(entries) > MAX_ENTRIES:
            raise ValueError(f"{what}: {len(entries)} arrays, above the limit of {MAX_ENTRIES}")
        total = 0
        for info in entries:
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise ValueError(
                    f"{what}: entry {info.filename!r} uses compression {info.compress_type}; "
                    "only stored or deflate are read"
                )
            total += info.file_size
            if total > MAX_ARRAYS_BYTES:
                raise ValueError(
                    f"{what}: its arrays claim {mib(total)} or more once inflated, above the "
                    f"{mib(MAX_ARRAYS_BYTES)} limit"
                )
            if info.file_size > RATIO_FROM_BYTES and (
                info.file_size > MAX_RATIO * max(1, info.compress_size)
            ):
                raise ValueError(
                    f"{what}: entry {info.filename!r} inflates {info.compress_size:,} bytes "
                    f"to {mib(info.file_size)}, above the compression ratio limit {MAX_RATIO}"
                )
        headers: Headers = {}
        for info in entries:
            name = info.filename.removesuffix(".npy")
            if not info.filename.endswith(".npy") or name in headers:
                raise ValueError(f"{what}: entry {info.filename!r} is not one .npy array")
            spec = (specs or {}).get(name, ArraySpec(ndim=-1))
            if specs is not None and name not in specs:
                raise ValueError(
                    f"{what}: unexpected array {name!r} (expected {', '.join(sorted(specs))})"
                )
            try:
                with archive.open(info) as member:
                    shape, dtype = npy_header(member, what, name, info.file_size)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise ValueError(f"{what}: array {name} cannot be read ({exc})") from None
            if spec.ndim >= 0 and len(shape) != spec.ndim:
                raise ValueError(f"{what}: array {name} has shape {shape}, not {spec.ndim}-D")
            if dtype.kind not in spec.kinds:
                raise ValueError(f"{what}: array {name} has dtype {dtype}, not {spec.kinds!r}")
            headers[name] = (shape, dtype)
    absent = sorted(set(specs or {}) - set(headers))
    if absent:
        raise ValueError(f"{what}: no array {absent[0]}")
    return headers


def read_npz(
    path: str | Path,
    what: str,
    specs: Mapping[str, ArraySpec] | None = None,
    check_shapes: Callable[[Headers], None] | None = None,
    blob: bytes | None = None,
) -> Arrays:
    """The arrays of a checked ``.npz`` model file (``what``: how errors name it, e.g.
    "policy model"); ``blob``: its bytes when the caller read them (``read_bounded``)."""
    import numpy as np

    label = f"{what} {path}"
    data = read_bounded(path, what) if blob is None else blob
    headers = check_npz(data, label, specs)
    if check_shapes is not None:
        check_shapes(headers)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as loaded:
            return {k: loaded[k] for k in loaded.files}
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, MemoryError) as exc:
        raise ValueError(f"{label}: not a .npz file of arrays ({exc})") from None
