"""What a sandbox binds read-only, and the check every bound path passes.

A bot needs its interpreter and libraries (the system's programs and libraries, a few
files of ``/etc``, the Python installation and this project's packages) and its own
files: the files its command line names, the folder of its program, a model's side
files. Nothing else of the machine is bound.

Every bound path is checked, by its real path (symbolic links and ``..`` resolved),
against the runner's private paths (a ladder's data folder, admin token, databases, TLS
key; a tournament's output folder), whatever the operator's layout:

* a private path inside a bound folder (``--data`` inside the venv, a bot folder that
  holds the data folder) is masked where the sandbox sees it: an empty read-only tmpfs
  over a folder, ``/dev/null`` over a file. A private path that does not exist yet
  (a state file written later) is masked by its nearest existing folder;
* a bound path that is, or lies inside, a private path is never bound: a bot's file
  there is dropped (the bot does not see it); the installation the runner runs from is
  allowed inside a private folder (a venv inside the data folder holds none of its
  files) but not equal to one;
* where masking is impossible (the private path is the bound folder itself, or would be
  created directly in it), a bot's path is dropped, and the installation's refuses the
  sandbox with one line (``BindRefused``).

Symbolic links inside a bound folder resolve inside the sandbox, where only checked
paths exist: a link to a secret leads nowhere. Not seen: hard links and bind mounts
made on the host (a hard link of the admin token inside a bot's folder is that file).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: System folders a program needs read-only (those missing on a machine are skipped).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Files of /etc a program may need: the dynamic linker's cache, the time zone, the
#: alternatives' links (``java``), and of ``/etc/ssl`` only the CA certificates bundle
#: and OpenSSL's configuration (never ``/etc/ssl/private``, where TLS keys live).
ETC_PATHS = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/nsswitch.conf",
    "/etc/ssl/openssl.cnf",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/certs/java/cacerts",
)
#: The project's packages a bot process imports (those not installed are skipped).
PACKAGES = ("cirulla", "cirulla.rules", "cirulla.bots", "cirulla.clients", "cirulla.env")
#: Side files bound beside one named file at most (``agent.onnx.data``, ...).
MAX_SIDE_FILES = 64


class BindRefused(ValueError):
    """The installation cannot be bound without a private path; the message is one line."""


@dataclass(frozen=True)
class Bind:
    """``source`` (a real path) seen read-only at ``dest`` in the sandbox."""

    source: Path
    dest: str


def real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def python_paths() -> tuple[Path, ...]:
    """The Python installation and this project's packages (editable installs too)."""
    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).parent}
    for name in PACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        # a namespace package's path also holds the editable finder's hook entry
        paths.update(Path(p) for p in getattr(module, "__path__", ()) if Path(p).is_absolute())
    return tuple(sorted(paths))


def system_symlinks() -> list[str]:
    """bwrap arguments for the merged-/usr links (``/bin -> usr/bin``)."""
    args = []
    for name in SYSTEM_PATHS:
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
    return args


def jvm_config() -> list[str]:
    """Debian's JVM configuration folders (``/etc/java-17-openjdk``: ``jvm.cfg``, the
    security properties), which a JVM reads at start: no secret, and without them a Java
    bot fails before its first word ("Error loading java.security file")."""
    import glob

    return sorted(glob.glob("/etc/java-*-openjdk"))


def install_binds() -> list[Bind]:
    """The system's programs and libraries, the files of /etc, the Python installation."""
    names = [n for n in SYSTEM_PATHS if not os.path.islink(n)] + list(ETC_PATHS)
    names += jvm_config()
    binds = [Bind(real(n), n) for n in names if os.path.exists(n)]
    # a path inside one already bound would need a mount point in a read-only tree
    for path in python_paths():
        if path.exists() and not covered(str(path), binds):
            binds.append(Bind(real(path), str(path)))
    return binds


def covered(dest: str, binds: Iterable[Bind]) -> bool:
    """Whether ``dest`` lies in (or is) a folder already bound."""
    return any(Path(dest).is_relative_to(b.dest) for b in binds)


def inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def private_reals(private: Iterable[Path]) -> list[Path]:
    """The real paths of the private paths; one that does not exist yet is resolved by
    its nearest existing folder (the part below it cannot hold a link)."""
    out = []
    for path in private:
        path = Path(os.path.abspath(path))
        missing: list[str] = []
        while not os.path.lexists(path) and path.parent != path:
            missing.insert(0, path.name)
            path = path.parent
        out.append(real(path).joinpath(*missing))
    return out


def masks(bind: Bind, private: Sequence[Path], *, install: bool) -> list[str] | None:
    """bwrap arguments hiding every private path inside ``bind`` from the sandbox, or
    None when ``bind`` may not be bound (it is, or lies in, a private path: the
    installation may lie in a private folder, never be one) or a private path in it
    cannot be masked."""
    targets: set[Path] = set()
    for secret in private:
        if bind.source == secret:
            return None
        if bind.source.is_relative_to(secret):
            if install:
                continue
            return None
        if not secret.is_relative_to(bind.source):
            continue
        target = secret
        while not os.path.lexists(target):  # not there yet: mask the folder it will be in
            target = target.parent
        if target == bind.source:
            return None
        targets.add(target)
    args: list[str] = []
    # one inside another is hidden with it (and has no mount point left in the sandbox)
    for target in sorted(targets):
        if any(target != t and target.is_relative_to(t) for t in targets):
            continue
        where = str(Path(bind.dest, target.relative_to(bind.source)))
        if os.path.isdir(target):
            args += ["--tmpfs", where, "--remount-ro", where]
        else:
            args += ["--ro-bind", "/dev/null", where]
    return args


def bwrap_args(extra: Sequence[Bind], private: Iterable[Path]) -> list[str]:
    """The read-only binds of a sandbox (the installation, then ``extra``, the bot's own
    paths), each checked; the masks come last, over what they mask. BindRefused when the
    installation cannot be bound without a private path; a bot's path that cannot is
    left out."""
    secrets = private_reals(private)
    args = system_symlinks()
    hide: list[str] = []
    install = install_binds()
    for bind in install:
        found = masks(bind, secrets, install=True)
        if found is None:
            raise BindRefused(
                f"--sandbox: {bind.dest} (the installation bots run from) is or holds a "
                "private path of this runner that cannot be hidden from them; move the data "
                "or output folder out of it"
            )
        args += ["--ro-bind", str(bind.source), bind.dest]
        hide += found
    for bind in extra:
        if covered(bind.dest, install):
            continue
        found = masks(bind, secrets, install=False)
        if found is None:
            continue
        args += ["--ro-bind-try", str(bind.source), bind.dest]
        hide += found
    return args + hide


# -- the paths a bot's command line names ------------------------------------------------


def _absolute(candidate: str) -> str | None:
    """``candidate`` as an absolute path if it names an existing file or folder by a
    relative path (``agent.npz``, ``bots/mine.py``, ``mybots/multi``), else None: inside
    the sandbox the working folder is its private /tmp, so a relative path would name
    nothing there. ``..`` is resolved by name (as the shell's ``cd`` does)."""
    if not candidate or os.path.isabs(candidate) or not os.path.exists(candidate):
        return None
    if "/" not in candidate and not Path(candidate).suffix:
        return None  # a bare word ("random") is a name, not a path
    return os.path.abspath(candidate)


def absolute_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with every relative path of an existing file or folder (an argument, or
    a ``key=value``'s value) made absolute, so the sandboxed process finds what is bound
    for it."""
    out = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        whole = _absolute(arg)
        if whole is not None:
            out.append(whole)
        elif sep and (found := _absolute(value)) is not None:
            out.append(f"{key}={found}")
        else:
            out.append(arg)
    return out


def named_paths(argv: Sequence[str]) -> tuple[Path, ...]:
    """The files and folders a command line names (an argument, or the value of a
    ``--option=value``) that exist: a bot sees its own program and nothing else of the
    machine's files, so the organiser names what it needs on its command line."""
    found: list[Path] = []
    for arg in absolute_argv(argv):
        for candidate in (arg, arg.partition("=")[2]):
            if os.path.isabs(candidate) and os.path.exists(candidate) and candidate != "/":
                found.append(Path(candidate))
    return tuple(dict.fromkeys(found))


def _installed(path: Path, install: Sequence[Bind]) -> bool:
    """Whether ``path`` is part of the installation (bound already): an interpreter."""
    real_path = real(path)
    return any(real_path.is_relative_to(b.source) for b in install) or covered(str(path), install)


def _venv_root(path: Path) -> Path | None:
    """The virtual environment ``path`` (its ``bin/python``) belongs to, if any."""
    folder = Path(path).parent
    if folder.name == "bin" and (folder.parent / "pyvenv.cfg").is_file():
        return folder.parent
    return None


def own_folder_ok(folder: Path) -> bool:
    """A program's folder is bound whole unless that would bind far more than a bot's
    folder: the root, a top-level folder (``/tmp``, ``/home``), a home folder or one
    around it."""
    resolved = real(folder)
    if len(resolved.parts) < 3:
        return False
    home = real(os.path.expanduser("~"))
    return not inside(home, resolved)


def programs(argv: Sequence[str], install: Sequence[Bind]) -> list[Path]:
    """The program files of a command line: its first word, unless that is an
    interpreter of the installation (or of a virtual environment), in which case the
    first later word that names a file (``{python} bots/mine.py``, ``java -jar x.jar``,
    ``node engine.js``); the same after a ``--`` (the text bridge runs its engine so)."""
    found: list[Path] = []
    starts = [0] + [i + 1 for i, arg in enumerate(argv) if arg == "--"]
    for start in starts:
        words = list(argv[start:])
        if not words:
            continue
        first = Path(words[0])
        interpreter = _installed(first, install) or _venv_root(first) is not None
        if first.is_absolute() and first.is_file() and not interpreter:
            found.append(first)
            continue
        for word in words[1:]:
            if word == "--":
                break
            if word.startswith("-") or "=" in word or not os.path.isabs(word):
                continue
            if os.path.isfile(word) and not _installed(Path(word), install):
                found.append(Path(word))
                break
    return found


def side_files(path: Path) -> list[Path]:
    """The files beside ``path`` whose name starts with its name: a model's external
    data (ONNX ``agent.onnx`` + ``agent.onnx.data``), at most ``MAX_SIDE_FILES``."""
    try:
        names = sorted(os.listdir(path.parent))
    except OSError:
        return []
    found = [
        path.parent / n
        for n in names
        if n != path.name and n.startswith(path.name) and (path.parent / n).is_file()
    ]
    return found[:MAX_SIDE_FILES]


def bot_binds(argv: Sequence[str]) -> list[Bind]:
    """What a bot's command line (already made absolute) needs bound: every file and
    folder it names; the whole folder of its program (a multi-file bot imports or reads
    what lies beside it); a named file's side files; a virtual environment's whole tree
    when its interpreter runs the bot. Each ``Bind`` is seen at the path the command
    names, its source the real path (so the check sees what is really bound)."""
    install = install_binds()
    wanted: list[Path] = []
    program_set = set(programs(argv, install))
    for path in named_paths(argv):
        if _installed(path, install):
            continue  # bound already, as part of the installation
        venv = _venv_root(path) if path.is_file() else None
        if venv is not None:
            wanted.append(venv)
            continue
        if path in program_set and own_folder_ok(path.parent):
            wanted.append(path.parent)
            continue
        wanted.append(path)
        if path.is_file():
            wanted += side_files(path)
    binds: list[Bind] = []
    for path in dict.fromkeys(wanted):
        dest = os.path.abspath(path)
        if not covered(dest, binds):
            binds.append(Bind(real(path), dest))
    return binds
