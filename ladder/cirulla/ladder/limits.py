"""A bot version's resource limits on the wire (``cirulla.v1.BotLimits``) and on screen.

The ladder stores a version's limits as ``parse_limits`` text (``bot_versions.limits``,
empty for the defaults), the form the tournament's ``--bot-limits`` and the sandbox
read. The published API carries them as numbers in fixed units (bytes, processes,
thousandths of a core), so that a client in any language can set and read them without
our text grammar; this module is the one place the two forms meet, and where a value
out of range is refused with the field's name (``limits.processes: ...``).
"""

from __future__ import annotations

from cirulla.bots.cgroups import GIB, MIB, BotLimits, format_bytes, parse_limits
from cirulla.ladder.store_rows import LadderError
from cirulla.v1 import ladder_pb2

#: Each field of ``BotLimits`` (the message): (its key in the text form, lowest and
#: highest value accepted (0 always means the default), how a bound reads).
_FIELDS: dict[str, tuple[str, int, int, str]] = {
    # below 16 MiB not even a bot's interpreter starts: a typo, not a wish
    "memory_bytes": ("memory", 16 * MIB, 1024 * GIB, "bytes"),
    "processes": ("processes", 1, 65536, ""),
    # at least a hundredth of a core: the kernel's CFS quota has a 1 ms floor per period
    "cpu_millicores": ("cpu", 10, 1024 * 1000, "thousandths of a core"),
    "output_bytes": ("output", 1 * MIB, 64 * GIB, "bytes"),
    "tmp_bytes": ("tmp", 1 * MIB, 1024 * GIB, "bytes"),
}


def _bound(value: int, unit: str) -> str:
    return format_bytes(value) if unit == "bytes" else f"{value}" + (f" {unit}" if unit else "")


def text_from_pb(pb: ladder_pb2.BotLimits) -> str:
    """The set fields of ``pb`` as ``parse_limits`` text (empty: every default); a
    LadderError naming the field (``limits.memory_bytes: ...``) for a value out of range."""
    parts = []
    for name, (key, low, high, unit) in _FIELDS.items():
        value = int(getattr(pb, name))
        if value == 0:
            continue
        if not low <= value <= high:
            raise LadderError(
                f"limits.{name}: {value} is out of range ({_bound(low, unit)} to "
                f"{_bound(high, unit)}; 0 for the ladder's default)"
            )
        parts.append(f"{key}={value / 1000:g}" if key == "cpu" else f"{key}={value}")
    return ",".join(parts)


def pb_from_limits(limits: BotLimits) -> ladder_pb2.BotLimits:
    """Every field of ``limits`` (the limits in force) as the message."""
    return ladder_pb2.BotLimits(
        memory_bytes=limits.memory_bytes,
        processes=limits.processes,
        cpu_millicores=round(limits.cpu * 1000),
        output_bytes=limits.output_bytes,
        tmp_bytes=limits.tmp_bytes,
    )


def effective(text: str) -> BotLimits:
    """A version's stored limits over the ladder's defaults (the sandbox's own reading)."""
    return parse_limits(text) if text else BotLimits()


def effective_pb(text: str) -> ladder_pb2.BotLimits:
    return pb_from_limits(effective(text))


def _short(value: int) -> str:
    for unit, size in (("T", 1024 * GIB), ("G", GIB), ("M", MIB), ("K", 1024)):
        if value >= size and value % size == 0:
            return f"{value // size}{unit}"
    return f"{value / MIB:.0f}M" if value >= MIB else f"{value}B"


def compact(pb: ladder_pb2.BotLimits) -> str:
    """``2G/256p/1cpu`` (memory, processes, cores): a standings column. A message with
    no memory (a connect-in bot's, which the ladder does not run) is ``-``."""
    if not pb.memory_bytes:
        return "-"
    cpu = f"{pb.cpu_millicores / 1000:g}cpu" if pb.cpu_millicores else "any-cpu"
    return f"{_short(pb.memory_bytes)}/{pb.processes}p/{cpu}"


def describe(pb: ladder_pb2.BotLimits) -> str:
    """``memory 2 GiB, 256 processes, 1 core, output 16 MiB, /tmp 512 MiB``: for a page."""
    if not pb.memory_bytes:
        return "none here (it runs on its own machine)"
    cores = pb.cpu_millicores / 1000
    cpu = f"{cores:g} core" + ("" if cores == 1 else "s") if pb.cpu_millicores else "any CPU"
    return (
        f"memory {format_bytes(pb.memory_bytes)}, {pb.processes} processes, {cpu}, "
        f"output {format_bytes(pb.output_bytes)}, /tmp {format_bytes(pb.tmp_bytes)}"
    )
