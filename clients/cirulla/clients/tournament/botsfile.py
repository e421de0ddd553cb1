"""Saved bot definitions: a small TOML file of named bot specs (like cutechess's engines
file), so long ``cmd:`` lines are written once and reused by tournaments (``--bots-file``)
and, later, the ladder.

```toml
[bots]
greedy = "greedy"
strong = "mcts:iterations=800"

[bots.mine]
spec = "cmd:{python} my_bot.py"
```

A bot is either a spec string or a table with ``spec`` (and room for more keys later;
unknown keys are refused so a typo does not pass silently). Names follow the tournament's
``--bot NAME=SPEC`` rule.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from cirulla.bots.botspec import BotSpec

NAME = re.compile(r"[A-Za-z0-9_.+-]+")
TABLE_KEYS = ("spec",)


def load_bots_file(path: Path) -> dict[str, BotSpec]:
    """Bot name -> spec (parsed here, where it enters), in file order; ValueError naming
    the file and the entry."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"--bots-file {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"--bots-file {path}: not valid TOML ({exc})") from None
    unknown = set(data) - {"bots"}
    if unknown:
        raise ValueError(f"--bots-file {path}: unknown sections {', '.join(sorted(unknown))}")
    entries = data.get("bots")
    if not isinstance(entries, dict) or not entries:
        raise ValueError(f"--bots-file {path}: needs a [bots] table with at least one bot")
    bots: dict[str, BotSpec] = {}
    for name, entry in entries.items():
        where = f"--bots-file {path}: bot {name!r}"
        if not NAME.fullmatch(name):
            raise ValueError(f"{where}: names use letters, digits and _ . + -")
        if isinstance(entry, dict):
            extra = set(entry) - set(TABLE_KEYS)
            if extra:
                raise ValueError(f"{where}: unknown keys {', '.join(sorted(extra))}")
            entry = entry.get("spec")
        if not isinstance(entry, str) or not entry.strip():
            raise ValueError(f"{where}: needs a spec string")
        try:
            bots[name] = BotSpec.parse(entry.strip())
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return bots
