"""Bot specs, the one module: a spec is parsed once where it enters (the command line, a
TOML bots file, a tournament's saved settings, the ladder's database) into a ``BotSpec``,
and every consumer (the runner, the bot pool, the ladder, the sandbox, the text bridge,
``cirulla bot``) reads its form, kind, options and command from that object. The kinds
and their options are ``cirulla.bots.specs``'s registry (this module imports it, never
the other way round).

The four forms:

- ``KIND[:key=value,...]``, a built-in kind (``mcts:iterations=500``, ``policy:model=a.npz``);
- ``cmd:COMMAND``, a program started for every game, which reads its seat from the
  environment (``CIRULLA_SERVER``, ``CIRULLA_MATCH``, ``CIRULLA_TOKEN``, ...);
- ``serve:COMMAND``, a program kept alive between games, one assignment per stdin line;
- ``text:COMMAND``, a text-protocol engine (docs/text-protocol.md), kept alive too.

>>> spec = BotSpec.parse("mcts:iterations=500")
>>> spec.form, spec.kind, dict(spec.options)
('kind', 'mcts', {'iterations': 500})
>>> BotSpec.parse("serve:{python} my_bot.py --fast").args()[1:]
['my_bot.py', '--fast']
>>> BotSpec.parse("cmd:").args()
Traceback (most recent call last):
...
ValueError: bot spec 'cmd:': the command after 'cmd:' is empty
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from cirulla.bots.policy import Policy
from cirulla.bots.specs import OptionValue, get_kind, make_policy

#: Prefix of a bot spec that is a command line rather than a built-in kind.
COMMAND_PREFIX = "cmd:"
#: Prefix of a command that plays many matches, one per assignment line on its stdin.
SERVE_PREFIX = "serve:"
#: Prefix of a text-protocol engine spec: ``text:CMD ARGS``.
TEXT_PREFIX = "text:"
#: Replaced in every command: the runner's own interpreter, so ``{python} my_bot.py``
#: finds the installed ``cirulla`` without an activated venv.
PYTHON_PLACEHOLDER = "{python}"
#: A placeholder that used to put the seat token on the command line; a spec using it is
#: refused before anything starts.
RETIRED_TOKEN = "{token}"

SpecForm = Literal["kind", "cmd", "serve", "text"]
#: What ``parse_bot_spec`` reads: a kind's options, or a text engine's ``command`` words.
KindArguments = dict[str, OptionValue | list[str]]
#: Each command form's prefix.
PREFIXES: dict[SpecForm, str] = {"cmd": COMMAND_PREFIX, "serve": SERVE_PREFIX, "text": TEXT_PREFIX}


def spec_form(spec: str) -> SpecForm:
    """The form of ``spec`` from its prefix alone (no validation)."""
    text = spec.strip()
    for form, prefix in PREFIXES.items():
        if text.startswith(prefix):
            return form
    return "kind"


def kind_options(spec: str) -> tuple[str, dict[str, OptionValue]]:
    """The kind form's name and its options, each converted by its type
    (``cirulla.bots.specs.KINDS``): ``"mcts:iterations=500,c=0.7"`` -> ``("mcts",
    {"iterations": 500, "c": 0.7})``."""
    name, _, rest = spec.strip().partition(":")
    kind = get_kind(name)
    options: dict[str, OptionValue] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise ValueError(f"bot spec {spec!r}: expected key=value, got {item!r}")
        options[key] = kind.convert(key, raw)
    return kind.name, options


def refuse_token_placeholder(args: Sequence[str]) -> None:
    """A seat token never goes on a command line: `ps` shows it to every local user."""
    if any(RETIRED_TOKEN in arg for arg in args):
        raise ValueError(
            f"bot spec: the {RETIRED_TOKEN} placeholder is no longer supported (a command "
            "line is visible to every local user); read the seat token from the CIRULLA_TOKEN "
            "environment variable the runner sets"
        )


@dataclass(frozen=True)
class BotSpec:
    """A parsed bot spec. ``kind``/``options`` for the kind form (``text`` with the engine
    command for ``text:``); ``command`` for the command forms, as typed after the prefix."""

    text: str
    form: SpecForm
    kind: str = ""
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    command: str = ""

    @classmethod
    def parse(cls, spec: str) -> BotSpec:
        """Parse and check ``spec``; a ValueError names what is wrong (an unknown kind or
        option, a bad value, an empty command, unbalanced quotes, the retired token)."""
        form = spec_form(spec)
        if form == "kind":
            kind, options = kind_options(spec)
            return cls(spec, form, kind=kind, options=options)
        prefix = PREFIXES[form]
        command = spec.strip()[len(prefix) :]
        try:
            args = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"bot spec {spec!r}: {exc}") from None
        if not args:
            raise ValueError(f"bot spec {spec!r}: the command after {prefix!r} is empty")
        refuse_token_placeholder(args)
        if form == "text":
            return cls(spec, form, kind="text", command=command)
        return cls(spec, form, command=command)

    def __str__(self) -> str:
        """The spec's canonical text, which ``parse`` reads back to an equal spec: the kind
        and its converted options in the order given, or the prefix and the command. What
        a process that takes a spec as a string (``python -m cirulla.bots.loop``) gets."""
        if self.form == "kind":
            items = ",".join(f"{key}={value}" for key, value in self.options.items())
            return f"{self.kind}:{items}" if items else self.kind
        return PREFIXES[self.form] + self.command

    def policy(self, seed: int | None = None) -> Policy:
        """A ready policy of a built-in kind (``cirulla.bots.specs.make_policy``)."""
        if self.form != "kind":
            raise ValueError(f"bot spec {self.text!r}: a {self.form}: spec is not a bot kind")
        return make_policy(self.kind, self.options, seed=seed)

    @classmethod
    def of(cls, spec: BotSpec | str) -> BotSpec:
        """``spec`` itself if parsed, else its text parsed (an API that takes either)."""
        return spec if isinstance(spec, BotSpec) else cls.parse(spec)

    @property
    def label(self) -> str:
        """The name a spec given without one goes by: its kind as typed (``mcts`` of
        ``mcts:iterations=500``), or its form (``serve``, ``text``)."""
        if self.form == "kind":
            return self.text.partition(":")[0].strip()
        return self.form

    @property
    def is_command(self) -> bool:
        """A ``cmd:`` or ``serve:`` program (it speaks the protocol itself)."""
        return self.form in ("cmd", "serve")

    @property
    def served(self) -> bool:
        """Kept alive between games: every form but ``cmd:``."""
        return self.form != "cmd"

    def args(self, values: Mapping[str, str] | None = None) -> list[str]:
        """The command's words, split like a shell's (no shell runs them), with
        ``{python}`` and each ``{key}`` of ``values`` filled in."""
        argv = []
        for arg in shlex.split(self.command):
            arg = arg.replace(PYTHON_PLACEHOLDER, sys.executable)
            for key, value in (values or {}).items():
                arg = arg.replace("{" + key + "}", value)
            argv.append(arg)
        return argv


def parse_bots(texts: Mapping[str, str]) -> dict[str, BotSpec]:
    """Bot name -> its spec parsed, in order (a ValueError names the first bad one)."""
    return {name: BotSpec.parse(text) for name, text in texts.items()}


def text_engine_argv(spec: str) -> list[str]:
    """The engine command of ``text:CMD ARGS`` (``{python}`` is this interpreter)."""
    parsed = BotSpec.parse(spec)
    if parsed.form != "text":
        raise ValueError(f"bot spec {spec!r}: not a text engine ({TEXT_PREFIX}CMD ARGS)")
    return parsed.args()


def parse_bot_spec(spec: str) -> tuple[str, KindArguments]:
    """``"mcts:iterations=500,c=0.7"`` -> ``("mcts", {"iterations": 500, "c": 0.7})``;
    ``"text:./engine -x"`` -> ``("text", {"command": ["./engine", "-x"]})`` (the kind a
    ``cirulla bot`` process plays: ``BotSpec.parse`` reads every form)."""
    parsed = BotSpec.parse(spec)
    if parsed.form == "text":
        return "text", {"command": parsed.args()}
    if parsed.is_command:
        raise ValueError(f"bot spec {spec!r}: a {parsed.form}: command is not a bot kind")
    return parsed.kind, dict(parsed.options)


def bot_command(
    spec: BotSpec | str,
    server: str,
    match_id: str,
    token: str | None,
    *,
    name: str | None = None,
    seed: int | None = None,
) -> list[str]:
    """Arguments (after the ``cirulla`` executable) that play ``spec`` (parsed, or the
    text of one, parsed here) in one seat.

    With ``token`` None the bot reads it from ``$CIRULLA_TOKEN``: runners pass it that way,
    since a command line is visible to every local user."""
    parsed = BotSpec.of(spec)
    if parsed.is_command:
        raise ValueError(f"bot spec {parsed.text!r}: a {parsed.form}: command is not a bot kind")
    # KEY=VALUE form: a token or id starting with "-" must not look like an option.
    args = ["bot", parsed.kind, f"--server={server}", f"--match={match_id}"]
    if token is not None:
        args.append(f"--token={token}")
    if name:
        args.append(f"--name={name}")
    if parsed.form == "text":
        return [*args, "--", *parsed.args()]
    if seed is not None:
        args += ["--seed", str(seed)]
    for key, value in parsed.options.items():
        args.append(f"--option={key}={value}")
    return args
