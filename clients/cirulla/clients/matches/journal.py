"""What a tournament keeps on disk, so that it can be interrupted and resumed.

``OUT/tournament.json`` holds the settings (everything the schedule is rebuilt from);
``OUT/games.jsonl`` gets one line per finished game, appended with a single ``write`` on
an ``O_APPEND`` file and fsynced, so a crash can at worst leave a torn last line, which
the reader ignores (that game is simply played again). ``results.json`` is rewritten
atomically (temporary file + rename) whenever the standings change.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from cirulla.bots.botspec import BotSpec, parse_bots
from cirulla.clients.matches.outcome import Outcome
from cirulla.rules.options import OptionValue

SETTINGS_FILE = "tournament.json"
JOURNAL_FILE = "games.jsonl"
RESULTS_FILE = "results.json"
LOCK_FILE = ".lock"


#: Why a game ended, as ``GameResult.end`` records it: the rules ended it (``target``, a
#: side reached the target; ``cappotto``, a side took all ten coins), a seat forfeited on
#: its clock (``forfeit``), a seat never joined (``never-joined``), the game's wall-clock
#: limit ran out (``time-limit``), or the server ended it otherwise (``void``). Results
#: that show a score need it: a game won 7 to 27 is a cappotto, not a mistake.
GAME_ENDS = ("target", "cappotto", "forfeit", "never-joined", "time-limit", "void")

#: The outcomes a tournament's game result records (``no-join`` is the ladder's).
SEAT_OUTCOMES = tuple(o for o in Outcome if o is not Outcome.NO_JOIN)


class DeckSet(TypedDict, total=False):
    """One deck set of ``--deals FILE`` (``cirulla.clients.tournament.deals``): its deck
    seed, or its explicit deck orders (one per deal, each a list of 40 card codes)."""

    seed: int
    decks: list[list[str]]


@dataclass(frozen=True, slots=True)
class Settings:
    """Tournament settings as saved in ``tournament.json``; the schedule's only inputs.
    ``bots``: each bot's spec, parsed where it entered (the command line, a bots file,
    ``from_dict`` for a saved tournament or a pool job, the ladder's match); saved as its
    canonical text."""

    bots: dict[str, BotSpec]
    players: int = 2
    format: str = "round-robin"
    games: int = 4
    seed: int = 0
    #: Rule options that differ from the preset (``cirulla.rules.Options`` fields).
    rules: dict[str, OptionValue] = field(default_factory=dict)
    preset: str = "standard"
    move_limit_ms: int = 10_000
    #: Per-seat time bank of a game (``--tc``), 0 = none; the server deducts every decision.
    game_bank_ms: int = 0
    #: Added to the bank after each decision a seat answers (``--tc BANK+INC``).
    increment_ms: int = 0
    #: Grace past a deadline before the timeout policy applies (``--tc-margin``).
    margin_ms: int = 0
    disconnect_grace_ms: int = 1_000
    game_timeout: float = 600.0
    sprt: tuple[float, float, float, float] | None = None
    #: Fixed deck sets from ``--deals FILE`` (tournament.deals), None: from ``seed``.
    deals: list[DeckSet] | None = None
    #: Base of the bots' CIRULLA_SEED values (``schedule.bot_seed``), independent of the
    #: deck seeds; None in a tournament.json written before it existed (resume draws one).
    bot_seed: int | None = None
    #: Every bot runs in a bubblewrap sandbox (``--sandbox``, ``cirulla.clients.matches.sandbox``);
    #: saved so that a ``--resume`` never drops it.
    sandbox: bool = False
    #: A bot's own limits in the sandbox (``--bot-limits NAME:memory=4G,...``), the
    #: ``cirulla.bots.cgroups.parse_limits`` form, by bot name; the others get the defaults.
    bot_limits: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        # each spec's canonical text (str(spec)): what a resumed run or a pool worker parses
        data["bots"] = {name: str(spec) for name, spec in self.bots.items()}
        data["sprt"] = list(self.sprt) if self.sprt is not None else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        data = dict(data)
        sprt = data.get("sprt")
        data["sprt"] = tuple(float(x) for x in sprt) if sprt is not None else None
        bots = data.get("bots")
        if isinstance(bots, dict):  # saved before a rule changed: refused here ({token})
            data["bots"] = parse_bots(bots)
        elif bots is not None:
            raise TypeError(f"bots must be a table of name: spec, not {type(bots).__name__}")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"{SETTINGS_FILE}: unknown settings {', '.join(sorted(unknown))}")
        return cls(**data)


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished (or forfeited) game, as journaled.

    ``winner`` is the winning side; None when the server gave no winner, e.g. because a
    seat never joined: then the sides in ``forfeit_sides`` lose and the others draw.
    ``totals`` are the points per side and ``deals`` the number of deals scored, from
    which points per deal follow. ``seat_outcomes`` says per seat whether the bot played
    normally or why it lost (crash, timeout, illegal, forfeit, disconnect).
    """

    index: int
    match_id: str
    seats: tuple[str, ...]
    seed: int
    deal_set: int
    group: tuple[str, ...]
    winner: int | None
    totals: tuple[int, ...]
    deals: int
    seat_outcomes: tuple[str, ...]
    notes: tuple[str, ...] = ()
    forfeit_sides: tuple[int, ...] = ()
    seconds: float = 0.0
    #: Seats whose bot never joined the match (crashed at start, wrong command, hung).
    unjoined: tuple[int, ...] = ()
    #: Per seat, the bot's log file, relative to the output folder.
    logs: tuple[str, ...] = ()
    #: Why the game ended (``GAME_ENDS``); empty in a journal written before it existed.
    end: str = ""

    def to_dict(self) -> dict[str, object]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameResult:
        data = dict(data)
        for key in (
            "seats",
            "group",
            "totals",
            "seat_outcomes",
            "notes",
            "forfeit_sides",
            "unjoined",
            "logs",
        ):
            data[key] = tuple(data.get(key, ()))
        return cls(**data)


def private_tree(out: Path) -> None:
    """Make ``out`` and the runner's folders and files in it owner-only (0700 / 0600):
    a folder written before by an older version, or under a wider umask, is narrowed."""
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    for path in (out, *out.rglob("*")):
        if path.is_symlink():
            continue
        with contextlib.suppress(OSError):
            path.chmod(0o700 if path.is_dir() else path.stat().st_mode & 0o700)


def write_json_atomic(path: Path, data: object) -> None:
    """Replace ``path`` so that readers see the old or the new file, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save_settings(out: Path, settings: Settings) -> None:
    write_json_atomic(out / SETTINGS_FILE, settings.to_dict())


def load_settings(out: Path) -> Settings:
    path = out / SETTINGS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"cannot resume: {path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"cannot resume: {path} is not valid JSON ({exc})") from None
    try:
        return Settings.from_dict(data)
    except (KeyError, TypeError, AttributeError) as exc:
        # JSON, but not the settings this runner wrote (edited by hand, another file)
        what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ValueError(f"cannot resume: {path} is not a tournament's settings ({what})") from None


class Journal:
    """Append-only log of finished games, keyed by schedule index."""

    def __init__(self, out: Path) -> None:
        self.path = out / JOURNAL_FILE

    def append(self, result: GameResult) -> None:
        line = (json.dumps(result.to_dict(), separators=(",", ":")) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> dict[int, GameResult]:
        """Finished games by index; a torn or unreadable line is skipped (it replays)."""
        results: dict[int, GameResult] = {}
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return results
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                result = GameResult.from_dict(json.loads(line))
            except (json.JSONDecodeError, TypeError, KeyError):
                continue
            results[result.index] = result
        return results


class OutputLock:
    """Exclusive use of an output folder: two runners appending to one journal would play
    the same games twice."""

    def __init__(self, out: Path) -> None:
        self.path = out / LOCK_FILE
        self._fd: int | None = None

    def __enter__(self) -> OutputLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ValueError(
                f"another cirulla tournament is running in {self.path.parent}"
            ) from None
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
