"""A seat's bot process as the runners start it: which specs are programs or kept alive,
the command line of a seat or of a kept-alive bot, and the environment it gets (an
allow-list of the runner's, plus the seat's CIRULLA_* values; never the operator's
secrets). ``cirulla.clients.matches.supervise`` starts and stops the processes.
"""

from __future__ import annotations

import os
import sys

from cirulla.bots.botspec import BotSpec, bot_command
from cirulla.bots.processes import cirulla_command

#: Placeholders a command spec may use; each is replaced inside every argument. The same
#: values are also in the environment as CIRULLA_SERVER, CIRULLA_MATCH, ... The seat token
#: is only there (CIRULLA_TOKEN): a command line is visible to every local user (`ps`).
PLACEHOLDERS = ("server", "match", "seat", "name", "seed")
#: The per-match values a runner puts in a seat's environment as CIRULLA_<KEY>.
SEAT_KEYS = ("server", "match", "token", "seat", "name", "seed")


def is_command_spec(spec: BotSpec) -> bool:
    """A ``cmd:`` or ``serve:`` program (``cirulla.bots.botspec``)."""
    return spec.is_command


def is_served_spec(spec: BotSpec) -> bool:
    """True for bots kept alive between games: built-in kinds, ``serve:`` commands and
    ``text:`` engines (``cirulla.bots.text.served`` keeps the engine from match to match:
    the text protocol's ``newgame`` starts each game). Only ``cmd:`` bots are started
    for every game."""
    return spec.served


def seat_values(
    *, server: str, match: str, token: str, seat: int, name: str, seed: int
) -> dict[str, str]:
    return {
        "server": server,
        "match": match,
        "token": token,
        "seat": str(seat),
        "name": name,
        "seed": str(seed),
    }


#: Variables of the runner's environment a bot process gets (what a program needs to
#: run: its PATH, HOME, locale and time zone, and how much gRPC's core may print:
#: ``cirulla.logs.quiet_grpc``); every other one stays with the runner,
#: above all CIRULLA_ADMIN_TOKEN and whatever secrets the operator's shell holds.
PASSED_ENV = (
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "GRPC_VERBOSITY",
    "GRPC_ENABLE_FORK_SUPPORT",
    # the CA file a bot needs to reach a TLS server, and the rules core choice: by name,
    # not by prefix (an operator's CIRULLA_TLS_KEY or the like stays with the runner)
    "CIRULLA_TLS_CA",
    "CIRULLA_CORE",
)
#: Prefixes of passed variables: the locale's LC_*.
PASSED_PREFIXES = ("LC_",)


def program_env() -> dict[str, str]:
    """The allow-listed part of the runner's environment (``PASSED_ENV``)."""
    return {
        key: value
        for key, value in os.environ.items()
        if key in PASSED_ENV or key.startswith(PASSED_PREFIXES)
    }


def seat_env(values: dict[str, str]) -> dict[str, str]:
    """A seat's environment: ``program_env()`` plus this seat's CIRULLA_SERVER,
    CIRULLA_MATCH, CIRULLA_TOKEN, CIRULLA_SEAT, CIRULLA_NAME and CIRULLA_SEED only."""
    env = program_env()
    env.update({f"CIRULLA_{key.upper()}": value for key, value in values.items()})
    return env


def bot_argv(spec: BotSpec, values: dict[str, str]) -> list[str]:
    """The command line that plays one seat: a built-in kind or an external command."""
    if spec.is_command:
        return command_argv(spec, values)

    # No token argument: `cirulla bot` reads it from CIRULLA_TOKEN (``seat_env``).
    args = bot_command(
        spec,
        values["server"],
        values["match"],
        None,
        name=values["name"],
        seed=int(values["seed"]),
    )
    return cirulla_command() + _attach_dash_values(args)


def served_argv(spec: BotSpec, name: str) -> list[str]:
    """The command line of a long-lived bot (``cirulla.bots.loop`` for a built-in kind:
    it gets the spec's canonical text, ``str(spec)``, and parses it where it enters that
    process)."""
    if spec.form == "serve":
        return command_argv(spec, {"name": name})
    if spec.form == "text":
        # the engine's words apart (after --), as a cmd: command's are: the sandbox binds,
        # and makes absolute, the files a command line names word by word
        engine = spec.args()  # {python} replaced
        return [sys.executable, "-m", "cirulla.bots.text.served", f"--name={name}", "--", *engine]
    return [sys.executable, "-m", "cirulla.bots.loop", str(spec), f"--name={name}"]


def command_argv(spec: BotSpec, values: dict[str, str]) -> list[str]:
    """The command's words with ``{python}`` and the placeholders filled in (never the
    token: it is only in the environment, and ``BotSpec.parse`` refuses ``{token}``)."""
    return spec.args({key: values[key] for key in PLACEHOLDERS if key in values})


def _attach_dash_values(args: list[str]) -> list[str]:
    """``["--token", "-x"]`` -> ``["--token=-x"]``: argparse would read ``-x`` as an option
    (server tokens are URL-safe base64 and may start with a dash)."""
    out: list[str] = []
    for arg in args:
        if out and arg.startswith("-") and out[-1] in _VALUE_OPTIONS:
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


#: Options of ``cirulla bot`` that take a value (which may start with a dash).
_VALUE_OPTIONS = ("--server", "--match", "--token", "--name", "--seed", "--option")
