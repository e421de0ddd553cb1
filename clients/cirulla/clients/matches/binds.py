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

``/etc/ssl/private`` (where TLS keys live) is private for every runner: whatever folder a
bind covers, it is masked there.

A command run by a Python interpreter other than the runner's (the python of another
virtual environment, one with PyTorch say: ``serve:/srv/torch-venv/bin/python -m
cirulla.bots.loop ...``) imports from folders the runner's installation does not cover:
that environment's site-packages, its base installation, the folders its ``.pth`` files
add, editable installs' source folders. ``interpreter_paths`` asks that interpreter for
them (in a probe sandbox) and each one is bound read-only and checked like every other
bind.

Symbolic links inside a bound folder resolve inside the sandbox, where only checked
paths exist: a link to a secret leads nowhere. Not seen: hard links and bind mounts
made on the host (a hard link of the admin token inside a bot's folder is that file).
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import json
import logging
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

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
#: Private for every runner, whatever it names: TLS keys live there.
ALWAYS_PRIVATE = (Path("/etc/ssl/private"),)


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
        # found, not imported: importing cirulla.env runs its Gymnasium registration
        # (Gymnasium and NumPy, 0.3 s of CPU at every ladder's and runner's start)
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:
            continue
        where = spec.submodule_search_locations if spec is not None else None
        # a namespace package's path also holds the editable finder's hook entry
        paths.update(Path(p) for p in where or () if Path(p).is_absolute())
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


#: The bot paths left out so far (each said once, at most this many remembered).
_dropped: set[str] = set()
MAX_DROPPED_SAID = 1024


def dropped(dest: str) -> None:
    """Say once, in the runner's log, that a bot's path is left out: the bot only sees
    ``no such file``, and a bot kept in the ladder's folder (where its SQLite database
    is, private) is an easy layout to fall into."""
    if dest in _dropped or len(_dropped) >= MAX_DROPPED_SAID:
        return
    _dropped.add(dest)
    log.warning(
        "--sandbox: %s is, or lies in, a private path of this runner (its data, database, "
        "output or a secret): not shown to the bot; keep a bot's files elsewhere",
        dest,
    )


def bwrap_args(extra: Sequence[Bind], private: Iterable[Path]) -> list[str]:
    """The read-only binds of a sandbox (the installation, then ``extra``, the bot's own
    paths), each checked; the masks come last, over what they mask. BindRefused when the
    installation cannot be bound without a private path; a bot's path that cannot is
    left out."""
    secrets = private_reals([*private, *ALWAYS_PRIVATE])
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
            dropped(bind.dest)
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


# -- another Python interpreter's own folders --------------------------------------------

#: The file names of a Python interpreter (``python``, ``python3``, ``python3.11``, ``pypy3``).
PYTHON_NAME = re.compile(r"(python|pypy)[0-9.]*[dmtu]?")
#: What the probe prints: where this interpreter imports from, as it starts for a bot. The
#: prefixes; ``sys.path`` once ``site`` has run (site-packages, and what every ``.pth``
#: file added, its ``import`` lines included); and the source folders of setuptools'
#: editable installs, whose finders (``__editable___*_finder``, loaded by a ``.pth``
#: line) map packages to folders that are not on ``sys.path``.
PROBE_CODE = """
import json, sys
found = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
found += [p for p in sys.path if isinstance(p, str)]
for name, module in list(sys.modules.items()):
    if name.startswith("__editable__"):
        found += [str(p) for p in dict(getattr(module, "MAPPING", None) or {}).values()]
        for more in dict(getattr(module, "NAMESPACES", None) or {}).values():
            found += [str(p) for p in more]
sys.stdout.write(json.dumps({"cirulla-probe": found}))
"""
#: At most this many seconds for the probe (an interpreter's start), and this much output.
PROBE_SECONDS = 30
PROBE_OUTPUT = 1024**2
#: At most this many folders taken from one interpreter's answer.
MAX_INTERPRETER_PATHS = 256

_probed: dict[tuple[str, tuple[Path, ...]], tuple[tuple[int, ...], tuple[Path, ...]]] = {}
_probe_lock = threading.Lock()


def is_python(word: str) -> bool:
    """Whether ``word`` is the absolute path of a Python interpreter (by its name or its
    real file's name: a venv's ``bin/python`` is a link to ``python3.11``)."""
    if not os.path.isabs(word) or not os.path.isfile(word):
        return False
    return any(PYTHON_NAME.fullmatch(n) for n in (Path(word).name, real(word).name))


def runners_own(python: str) -> bool:
    """Whether ``python`` is the runner's own interpreter (its installation is bound already,
    ``install_binds``): the same ``bin`` folder as ``sys.executable``."""
    return Path(os.path.abspath(python)).parent == Path(os.path.abspath(sys.executable)).parent


def interpreters(argv: Sequence[str]) -> list[str]:
    """The Python interpreters other than the runner's that a command line runs: the first
    word, and the first word after each ``--`` (the text bridge runs its engine so)."""
    starts = [0] + [i + 1 for i, arg in enumerate(argv) if arg == "--"]
    found = [argv[i] for i in starts if i < len(argv)]
    return [w for w in dict.fromkeys(found) if is_python(w) and not runners_own(w)]


@functools.cache
def _disables_userns(bwrap: str | None) -> bool:
    """Whether this bwrap runs a process with ``--unshare-user --disable-userns``: it
    has the option (bubblewrap 0.8 and later) and the host gives it a user namespace
    (a setuid bwrap on a host without them sandboxes without one: it keeps doing so)."""
    true = shutil.which("true")
    if bwrap is None or true is None:
        return False
    argv = [bwrap, "--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "--", true]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def no_privilege(bwrap: str | None) -> list[str]:
    """bwrap arguments: no capability inside, and no user namespace of its own where
    this bwrap can say so (every sandbox: a bot's, and the probe's, which runs an
    interpreter's ``.pth`` code).

    bwrap started by root keeps every capability for the sandbox's processes (in its
    namespaces): a bot remounted its read-only binds writable and wrote the host's files
    as root, mounted the cgroup filesystem and raised its own ``pids.max`` and CPU
    quota (tests/confinement/test_hostile_sandbox.py). ``--cap-drop ALL`` leaves it none
    (unprivileged, bwrap keeps none anyway); ``PROC_READ_ONLY`` keeps it from the
    kernel's settings, which root may write without one. ``--disable-userns`` stops it making user
    namespaces of its own, in which it would hold every capability again (over nothing
    of the host's, but the kernel's code behind them is a known road out)."""
    args = ["--cap-drop", "ALL"]
    if _disables_userns(bwrap):
        args += ["--unshare-user", "--disable-userns"]
    return args


#: After ``--proc /proc``: the kernel's settings read-only. A sandbox started by root
#: runs its bot as the host's uid 0 (no capability), and /proc/sys checks that uid, not
#: a capability: a bot could write 767 of them, ``kernel.core_pattern`` (a program the
#: host runs as root at the next crash) among them; bwrap covers /proc/sys only where it
#: finds it writable while it sets up. The bind's source is the host's /proc/sys: the
#: same settings, those of a namespace (network, host name) read as the reader's.
PROC_READ_ONLY = [
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
]


def probe_args(bwrap: str, python: str, secrets: Sequence[Path]) -> list[str] | None:
    """The probe sandbox: the whole machine read-only (an interpreter's folders may be
    anywhere, /tmp included) except the private paths, masked as in a bot's sandbox, and
    /run (empty: the host's service sockets live there); no network, its own /proc and
    /dev, nothing writable. None when a private path cannot be masked there."""
    hide = masks(Bind(Path("/"), "/"), secrets, install=False)
    if hide is None:
        return None
    head = ["--unshare-all", *no_privilege(bwrap), "--die-with-parent", "--new-session"]
    head += ["--ro-bind", "/", "/"]
    head += ["--proc", "/proc", *PROC_READ_ONLY, "--dev", "/dev"]
    head += ["--size", str(1024**2), "--tmpfs", "/run"]
    head += ["--remount-ro", "/run", "--chdir", "/"]
    return [bwrap, *head, *hide, "--", python, "-I", "-B", "-c", PROBE_CODE]


def _probe_limits() -> None:
    """CPU time, output (its stdout is a file: at most ``PROBE_OUTPUT``), no core file."""
    limits = (
        (resource.RLIMIT_CPU, PROBE_SECONDS),
        (resource.RLIMIT_FSIZE, PROBE_OUTPUT),
        (resource.RLIMIT_CORE, 0),
    )
    for which, value in limits:
        resource.setrlimit(which, (value, value))


def ask_interpreter(python: str, secrets: Sequence[Path]) -> list[str] | None:
    """Where ``python`` imports from, in its own words (``PROBE_CODE``); None (logged) when
    it cannot be asked.

    Why ask it rather than read its ``pyvenv.cfg`` and ``.pth`` files: a ``.pth`` line that
    starts with ``import`` is code (the CI's side venv adds another venv's site-packages by
    a ``glob``; every editable install is a finder loaded so), and only running it says what
    it adds; ``pyvenv.cfg`` gives the base installation but not its folders' layout. Running
    it is running code the operator installed, so it runs as a bot would: in a sandbox (no
    network, nothing writable, the runner's private paths masked), with ``-I`` (no
    ``PYTHON*`` variables, no user site, not the current folder: what a sandboxed bot's
    interpreter imports, as HOME and the folder are private there) and ``-B`` (no
    bytecode written). Its answer is only a list of folders, and each one is bound only if
    it exists, is not too broad (``own_folder_ok``) and passes the check every bind passes.
    """
    bwrap = shutil.which("bwrap")
    argv = probe_args(bwrap, python, secrets) if bwrap else None
    if argv is None:
        log.warning("--sandbox: cannot ask %s where it imports from (no bwrap, or a "
                    "private path cannot be masked)", python)  # fmt: skip
        return None
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"}
    try:
        with tempfile.TemporaryFile() as out:
            subprocess.run(
                argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.DEVNULL,
                timeout=PROBE_SECONDS, check=False, preexec_fn=_probe_limits,
            )  # fmt: skip
            out.seek(0)
            answer = json.loads(out.read(PROBE_OUTPUT).decode())["cirulla-probe"]
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError) as exc:
        log.warning("--sandbox: cannot ask %s where it imports from (%s)", python, exc)
        return None
    if not isinstance(answer, list):
        return None
    return [p for p in answer if isinstance(p, str)][:MAX_INTERPRETER_PATHS]


def _stamp(paths: Iterable[Path | str]) -> tuple[int, ...]:
    """The modification times of ``paths`` (0: missing): a ``pip install`` in the
    environment changes its site-packages folder, and the answer is asked again."""
    out = []
    for path in paths:
        try:
            out.append(os.stat(path).st_mtime_ns)
        except OSError:
            out.append(0)
    return tuple(out)


def interpreter_paths(python: str, private: Iterable[Path] = ()) -> tuple[Path, ...]:
    """The folders ``python`` (another interpreter than the runner's) imports from:
    its prefix, base prefix and the folders of its ``sys.path`` (``ask_interpreter``),
    those that exist and are not too broad; kept while its folders are unchanged."""
    secrets = tuple(private_reals([*private, *ALWAYS_PRIVATE]))
    key = (os.path.abspath(python), secrets)
    with _probe_lock:
        kept = _probed.get(key)
        if kept is not None and kept[0] == _stamp([python, *kept[1]]):
            return kept[1]
    answer = ask_interpreter(python, secrets)
    found: list[Path] = []
    for word in answer or ():
        path = Path(word)
        if not path.is_absolute() or not path.exists() or not own_folder_ok(path):
            continue  # "", a zip that is not there, "/", "/home": never a whole top folder
        found.append(Path(os.path.abspath(path)))
    paths = tuple(dict.fromkeys(found))
    if answer is not None:
        with _probe_lock:
            _probed[key] = (_stamp([python, *paths]), paths)
    return paths


def trusted_answer(python: str, paths: Sequence[Path], own: Sequence[Path]) -> list[Path]:
    """The folders of an interpreter's answer that are bound. An interpreter is the
    operator's, and its answer is trusted like the runner's own installation; but one
    that lies in a bot's own folder (shipped with the bot's files) is the bot author's
    code, and its answer could name any folder the runner can read (another bot's
    files): then only folders inside that same bot folder are taken."""
    home = real(python)
    mine = [real(folder) for folder in own if home.is_relative_to(real(folder))]
    if not mine:
        return list(paths)
    kept = [p for p in paths if any(real(p).is_relative_to(folder) for folder in mine)]
    if len(kept) < len(paths):
        log.warning(
            "--sandbox: %s lies in the bot's own folder: of the folders it names, only "
            "those inside that folder are shown to the bot",
            python,
        )
    return kept


def bot_binds(argv: Sequence[str], private: Iterable[Path] = ()) -> list[Bind]:
    """What a bot's command line (already made absolute) needs bound: every file and
    folder it names; the whole folder of its program (a multi-file bot imports or reads
    what lies beside it), a Python file it names counting as one (``policy:model=bot.py``
    imports the modules beside it); a named file's side files; a virtual environment's
    whole tree when its interpreter runs the bot, and, for an interpreter other than the
    runner's, every folder it imports from (``interpreter_paths``, asked with ``private``
    masked). Each ``Bind`` is seen at the path the command names, its source the real
    path (so the check sees what is really bound)."""
    install = install_binds()
    private = tuple(private)
    wanted: list[Path] = []
    program_set = set(programs(argv, install))
    own = [
        p.parent
        for p in (*program_set, *named_paths(argv))
        if p.suffix == ".py" or p in program_set
    ]
    for python in interpreters(argv):
        wanted += trusted_answer(python, interpreter_paths(python, private), own)
    for path in named_paths(argv):
        venv = _venv_root(path) if path.is_file() else None
        if venv is not None and not runners_own(str(path)):
            wanted.append(venv)  # before the next test: its python may link into the install
            continue
        if _installed(path, install):
            continue  # bound already, as part of the installation
        program = path in program_set or (path.suffix == ".py" and path.is_file())
        if program and own_folder_ok(path.parent):
            wanted.append(path.parent)
            continue
        wanted.append(path)
        if path.is_file():
            wanted += side_files(path)
    binds: list[Bind] = []
    # the widest first: a folder inside one bound already is not bound again
    for path in sorted(dict.fromkeys(wanted), key=lambda p: len(Path(os.path.abspath(p)).parts)):
        dest = os.path.abspath(path)
        if not covered(dest, binds) and not covered(dest, install):
            binds.append(Bind(real(path), dest))
    return binds
