"""Specs that work where they run: the relative paths of a bot spec are resolved when it
is registered (``cirulla ladder add``), in the folder the operator typed it in.

A ladder starts a bot in its own worker's folder (``serve``'s, or each ``ladder
worker``'s, on other machines too), and sandboxed in a private ``/tmp``: a relative path
(``cmd:{python} bots/mine.py``, ``policy:model=agent.npz``) would name a different file
there, or none. So ``add`` makes every relative path that names an existing file
absolute, and refuses one that looks like a path but names nothing, with one line, before
anything is registered. The ladder that registers it (``serve``) then refuses a spec whose
files lie in a folder its sandbox never shows a bot (``hidden_path``): such a bot was
accepted, started without its files and was deactivated after its third game.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from cirulla.bots.botspec import COMMAND_PREFIX, SERVE_PREFIX, TEXT_PREFIX, BotSpec
from cirulla.clients.matches.binds import install_binds, programs

#: Endings of the files a bot's command line usually names (programs, models).
FILE_SUFFIXES = frozenset(
    {
        *(".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".lua", ".jar", ".exe"),
        *(".bin", ".npz", ".onnx", ".pt", ".pth", ".json", ".txt"),
    }
)


class SpecPathError(ValueError):
    """A spec names a relative path that does not exist; the message says which."""


def _looks_like_path(word: str) -> bool:
    if not word or word.startswith("-") or "{" in word or "://" in word:
        return False
    return "/" in word or Path(word).suffix.lower() in FILE_SUFFIXES


def _resolved(word: str, cwd: Path) -> str:
    """``word`` made absolute when it is a relative path of an existing file or folder;
    SpecPathError when it looks like a path (a slash, a program or model ending) and
    names nothing; else unchanged."""
    if not word or word.startswith("-") or "{" in word or "://" in word:
        return word
    if Path(word).is_absolute():
        return word
    path = cwd / word
    if ("/" in word or path.suffix) and path.exists():
        return str(path.resolve())  # a bare word ("random") is a name, not a path
    if _looks_like_path(word):
        raise SpecPathError(
            f"spec: {word} does not exist (relative to {cwd}); "
            "give the path of the bot's file from this folder, or an absolute path"
        )
    return word


def _resolve_argument(arg: str, cwd: Path) -> str:
    """An argument, or the value of ``--option=value`` / ``key=value``."""
    key, sep, value = arg.partition("=")
    if sep and key and "/" not in key:
        return f"{key}={_resolved(value, cwd)}"
    return _resolved(arg, cwd)


def _quote(arg: str) -> str:
    """Shell-quoted, but a placeholder (``{python}``, ``{server}``) stays as typed."""
    return arg if re.fullmatch(r"\{\w+\}", arg) else shlex.quote(arg)


def resolve_spec_paths(spec: str, cwd: Path | None = None) -> str:
    """``spec`` with its relative paths resolved against ``cwd`` (default: the current
    folder); SpecPathError for a path that names nothing. ``connect`` and built-in
    kinds without file options come back unchanged."""
    cwd = (cwd or Path.cwd()).resolve()
    text = spec.strip()
    for prefix in (COMMAND_PREFIX, SERVE_PREFIX, TEXT_PREFIX):
        if text.startswith(prefix):
            args = shlex.split(text[len(prefix) :])
            out: list[str] = []
            module = False
            for arg in args:
                # the argument after -m is a module name (pkg.mod), not a file
                out.append(arg if module else _resolve_argument(arg, cwd))
                module = arg == "-m"
            if out == args:
                return spec
            return prefix + " ".join(_quote(a) for a in out)
    kind, sep, options = text.partition(":")
    if not sep:
        return spec
    items = options.split(",")
    resolved = [_resolve_argument(item, cwd) if "=" in item else item for item in items]
    return spec if resolved == items else f"{kind}:{','.join(resolved)}"


def _needed(spec: str) -> list[str]:
    """The files a bot cannot start or play without: a command's program (its first
    word, or the script an interpreter runs: ``binds.programs``) and a kind's option
    values that are absolute paths (``policy:model=...``). Other words of a command may
    name anything; a file it only reads is its own affair."""
    try:
        parsed = BotSpec.parse(spec)
    except ValueError:
        return []  # the store refuses it, naming what is wrong
    if parsed.form == "kind":
        return [v for v in parsed.options.values() if isinstance(v, str) and os.path.isabs(v)]
    return [str(p) for p in programs(parsed.args(), install_binds())]


def hidden_path(spec: str, private: Sequence[Path]) -> tuple[str, Path] | None:
    """The first file ``spec``'s bot needs (``_needed``) that is, or lies in, one of
    ``private`` (compared as real paths), with that private path; None when there is
    none. The sandbox never binds such a path, so the bot would start without it."""
    secrets = [Path(os.path.realpath(p)) for p in private]
    for word in _needed(spec):
        path = Path(os.path.realpath(word))
        for secret in secrets:
            if path.is_relative_to(secret):
                return word, secret
    return None
