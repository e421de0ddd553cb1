"""Issue 37, findings 4 and 6: what a sandbox binds is minimal and checked, with real
bubblewrap sandboxes. A private path (data folder, admin token, database, TLS key) is
never shown, whatever the layout: inside the installation (``--data`` in the venv),
inside a bot's folder, named through ``..`` or a symbolic link; ``/etc/ssl/private`` is
not there, the CA bundle is. A multi-file bot named by a relative path plays, and a
model's side file (ONNX external data) is bound with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cirulla.clients.matches import binds
from cirulla.clients.matches.relay import ServerRelay
from cirulla.clients.matches.sandbox import Confinement, SandboxUnavailable
from cirulla.env.encoding import NUM_ACTIONS, OBS_SIZE
from tests.env.test_onnx import FLOAT, field, node, value_info
from tests.ladder_harness import LadderProcess, wait_for

#: A bot program that reports, for each path given as JSON (its last word), what it sees.
PROBE = """
import json, os, sys
seen = {}
for label, path in json.loads(sys.argv[-1]).items():
    try:
        if os.path.isdir(path):
            seen[label] = "listed %d" % len(os.listdir(path))
        else:
            with open(path, "rb") as f:
                seen[label] = "read %d" % len(f.read())
    except OSError as exc:
        seen[label] = "blocked " + type(exc).__name__
print("SEEN " + json.dumps(seen), flush=True)
"""


def probe(
    tmp_path: Path, paths: dict[str, str], private: tuple[Path, ...], *words: str
) -> dict[str, str]:
    """Run PROBE (a file in its own bot folder, unless ``words`` name another program)
    in a real sandbox of a ``Confinement`` with ``private``; what it saw."""
    script = tmp_path / "probe-bot" / "probe.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(PROBE)
    argv = [sys.executable, *(words or (str(script),)), json.dumps(paths)]
    with ServerRelay("127.0.0.1:1") as relay:
        wrapped = Confinement(relay, private=private).wrap(argv, {"PATH": "/usr/bin:/bin"})
        done = subprocess.run(
            wrapped.argv, env=wrapped.env, preexec_fn=wrapped.preexec,
            pass_fds=wrapped.pass_fds, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("SEEN ")]
    assert lines, done.stdout + done.stderr
    return dict(json.loads(lines[0][5:]))


def ladder_folders(root: Path) -> tuple[Path, Path, Path]:
    """A data folder with an admin token and a match database, as a ladder leaves them."""
    data = root / "cirulla-ladder-data"
    data.mkdir(parents=True)
    (data / "admin-token").write_text("admin-token-of-the-ladder\n")
    (data / "matches.sqlite3").write_bytes(b"SQLite format 3\0" + b"hands" * 10)
    return data, data / "admin-token", data / "matches.sqlite3"


def test_ssl_private_is_not_bound_and_the_ca_bundle_is(tmp_path: Path) -> None:
    """Finding 4: all of /etc/ssl was bound, a TLS key under /etc/ssl/private with it;
    now only the CA bundle (and OpenSSL's configuration): certificates still verify."""
    seen = probe(
        tmp_path,
        {"private": "/etc/ssl/private", "bundle": "/etc/ssl/certs/ca-certificates.crt"},
        (),
    )
    assert seen["private"].startswith("blocked"), seen
    assert seen["bundle"].startswith("read"), seen
    code = "import ssl; print('CAS', ssl.create_default_context().cert_store_stats()['x509_ca'])"
    with ServerRelay("127.0.0.1:1") as relay:
        wrapped = Confinement(relay).wrap([sys.executable, "-c", code], {})
        done = subprocess.run(
            wrapped.argv, env=wrapped.env, pass_fds=wrapped.pass_fds,
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert "CAS " in done.stdout and int(done.stdout.split()[-1]) > 10, done.stderr


def test_a_bot_folder_around_the_data_folder_shows_the_bot_not_the_data(tmp_path: Path) -> None:
    """A bot's folder that holds the ladder's data folder, a link in it to the admin
    token, the token named through ``..``: the bot reads its own files, never the
    ladder's. A folder that IS the data folder is not bound at all."""
    folder = tmp_path / "probe-bot"
    folder.mkdir()
    data, token, matches = ladder_folders(folder)
    (folder / "weights.bin").write_bytes(b"w" * 100)
    (folder / "token-link").symlink_to(token)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    sneaky = f"{outside}/../probe-bot/cirulla-ladder-data/admin-token"
    paths = {
        "own file": str(folder / "weights.bin"),
        "data folder": str(data),
        "admin token": str(token),
        "match database": str(matches),
        "link to the token": str(folder / "token-link"),
        "token through ..": sneaky,
    }
    seen = probe(tmp_path, paths, (data, token))
    assert seen.pop("own file") == "read 100", seen
    assert seen.pop("data folder") == "listed 0", seen  # an empty read-only mask
    assert all(v.startswith("blocked") for v in seen.values()), seen
    # the token named on the command line itself (through ..) is not bound either
    script = folder / "probe.py"
    seen = probe(tmp_path, {"token": sneaky}, (data, token), str(script), sneaky)
    assert seen["token"].startswith("blocked"), seen
    # a bot program inside the data folder: nothing of it is bound, the bot cannot start
    inner = data / "bot.py"
    inner.write_text(PROBE)
    with ServerRelay("127.0.0.1:1") as relay:
        wrapped = Confinement(relay, private=(data,)).wrap([sys.executable, str(inner), "{}"], {})
        done = subprocess.run(
            wrapped.argv, env=wrapped.env, pass_fds=wrapped.pass_fds,
            capture_output=True, text=True,
        )  # fmt: skip
    assert "SEEN" not in done.stdout and done.returncode != 0


def test_the_installation_may_not_be_a_private_folder(tmp_path: Path) -> None:
    """Masking is impossible when the data folder is the Python installation's own
    folder: the runner refuses, one line, before any bot starts."""
    with ServerRelay() as relay:
        with pytest.raises(SandboxUnavailable) as info:
            Confinement(relay, private=(Path(sys.prefix),)).check()
        Confinement(relay, private=(tmp_path,)).check()  # elsewhere: fine
    message = str(info.value)
    assert "\n" not in message and sys.prefix in message


def make_venv(tmp_path: Path) -> Path:
    """A virtual environment in ``tmp_path`` whose Python finds this project (a .pth
    file adds the test's own site folders): the operator's ``/srv/cirulla/.venv``."""
    venv = tmp_path / "srv" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    import site

    site_packages = next((venv / "lib").glob("python3*/site-packages"))
    lines = [f"import site; site.addsitedir({p!r})" for p in site.getsitepackages()]
    (site_packages / "cirulla-test.pth").write_text("\n".join(lines) + "\n")
    return venv


SNOOP = """
import json, os, sys
paths = PATHS
seen = {}
for label, path in paths.items():
    try:
        with open(path, "rb") as f:
            seen[label] = len(f.read())
    except OSError as exc:
        seen[label] = "blocked " + type(exc).__name__
seen["prefix"] = sys.prefix
print("SEEN " + json.dumps(seen), flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])
"""


def test_a_data_folder_inside_the_venv_is_not_readable_from_the_sandbox(tmp_path: Path) -> None:
    """Finding 4: with ``--data`` inside the venv the ladder bound the whole prefix and a
    bot read ``admin-token`` and ``matches.sqlite3``. Now the prefix is bound with the
    data folder masked: the bot runs from the venv and plays, and reads neither."""
    venv = make_venv(tmp_path)
    python = venv / "bin" / "python"
    data = venv / "data"
    folder = tmp_path / "ladder"
    ladder = LadderProcess(
        folder, f"sqlite:///{folder / 'l.sqlite3'}", "--data", str(data), python=str(python)
    )
    bots = tmp_path / "bots"
    bots.mkdir()
    paths = {
        "admin-token": str(data / "admin-token"),
        "matches.sqlite3": str(data / "matches.sqlite3"),
        "pyvenv.cfg": str(venv / "pyvenv.cfg"),
    }
    (bots / "snoop.py").write_text(SNOOP.replace("PATHS", repr(paths)))
    try:
        ladder.start()
        ladder.cli("add", "random", "random")
        ladder.cli("add", "snoop", f"cmd:{{python}} {bots / 'snoop.py'}")

        def reports() -> list[dict[str, object]]:
            found = []
            for log in (data / "logs").glob("*.log"):
                for line in log.read_text(errors="replace").splitlines():
                    if line.startswith("SEEN "):
                        found.append(json.loads(line[5:]))
            return found

        seen = wait_for(reports, 240, "the snooper's report")[0]
    finally:
        ladder.stop()
    assert (data / "admin-token").is_file() and (data / "matches.sqlite3").is_file()
    assert seen["prefix"] == str(venv), seen  # it ran from the venv the data is in
    assert isinstance(seen["pyvenv.cfg"], int), seen  # the prefix is bound...
    assert str(seen["admin-token"]).startswith("blocked"), seen  # ...its data folder not
    assert str(seen["matches.sqlite3"]).startswith("blocked"), seen


MULTI_BOT = """
import os, sys
from helper import PLAYER  # a module beside it
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "book.txt")) as f:
    print("BOOK", f.read().strip(), flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", PLAYER])
"""


def test_a_multi_file_bot_named_by_a_relative_path_plays(tmp_path: Path) -> None:
    """Finding 6: ``cmd:{python} mybots/multi/bot.py`` importing a module beside it
    failed under --sandbox (only the file was bound). Its folder is bound now."""
    multi = tmp_path / "mybots" / "multi"
    (multi / "data").mkdir(parents=True)
    (multi / "bot.py").write_text(MULTI_BOT)
    (multi / "helper.py").write_text("PLAYER = 'greedy'\n")
    (multi / "data" / "book.txt").write_text("opening book v1")
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", "t", "--sandbox"]
    argv += ["--bot", "multi=cmd:{python} mybots/multi/bot.py", "--bot", "random"]
    argv += ["--games", "2", "--target", "11"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    logs = "\n".join(p.read_text() for p in (tmp_path / "t" / "logs").glob("m-*.log"))
    assert logs.count("BOOK opening book v1") == 2, logs  # it started in both games
    assert_played_cleanly(tmp_path / "t", "multi", 2)


def assert_played_cleanly(out: Path, bot: str, games: int) -> None:
    """``bot`` played ``games`` games of the tournament in ``out``, none void, no problem."""
    standings = json.loads((out / "results.json").read_text())["standings"]
    assert standings["games"] == games and standings["void_games"] == 0, standings
    entry = next(b for b in standings["bots"] if b["bot"] == bot)
    assert entry["games"] == games and entry["problems"] == {}, entry


def external_onnx(folder: Path) -> Path:
    """A one-layer ONNX network (``obs @ w``) whose weight lives in an external data
    file ``agent.onnx.data`` beside it, as exporters write large models."""
    rng = np.random.default_rng(7)
    weight = rng.standard_normal((OBS_SIZE, NUM_ACTIONS)).astype("<f4")
    raw = weight.tobytes()
    (folder / "agent.onnx.data").write_bytes(raw)
    entries = [("location", "agent.onnx.data"), ("offset", "0"), ("length", str(len(raw)))]
    external = b"".join(field(13, field(1, k) + field(2, v)) for k, v in entries)
    dims = b"".join(field(1, d) for d in weight.shape)
    tensor = dims + field(2, FLOAT) + field(8, "w") + external + field(14, 1)
    nodes = node("MatMul", ["obs", "w"], "m") + b""
    graph = field(1, nodes) + field(1, node("Identity", ["m"], "logits"))
    graph += field(2, "cirulla_policy") + field(5, tensor)
    graph += field(11, value_info("obs", OBS_SIZE)) + field(12, value_info("logits", NUM_ACTIONS))
    model = field(1, 8) + field(2, "cirulla-test") + field(7, graph) + field(8, field(2, 13))
    path = folder / "agent.onnx"
    path.write_bytes(model)
    return path


ONNX_BOT = """
import sys
import numpy as np
import onnxruntime
model = sys.argv[1].removeprefix("--model=")
session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
logits = session.run(None, {"obs": np.ones((1, OBS_SIZE), np.float32)})[0]
print("ONNX", logits.shape, flush=True)
try:
    open(model.rsplit("/", 1)[0] + "/other-secret.txt").read()
    print("READ the other file", flush=True)
except OSError:
    print("blocked the other file", flush=True)
"""


def test_an_onnx_models_external_data_is_bound_with_it(tmp_path: Path) -> None:
    """Issue 39 item 4: a bot that runs ``agent.onnx`` whose weights are in
    ``agent.onnx.data`` (as exporters write large models) finds them in its sandbox: a
    named file's side files (same folder, its name as prefix) are bound with it; another
    file of the models' folder is not."""
    models = tmp_path / "models"
    models.mkdir()
    model = external_onnx(models)
    (models / "other-secret.txt").write_text("not for the bot")
    bound = {b.dest for b in binds.bot_binds(["python", "-m", "x", f"policy:model={model}"])}
    assert bound == {str(model), str(model) + ".data"}
    bot = tmp_path / "onnx-bot" / "bot.py"
    bot.parent.mkdir()
    bot.write_text(ONNX_BOT.replace("OBS_SIZE", str(OBS_SIZE)))
    with ServerRelay("127.0.0.1:1") as relay:
        wrapped = Confinement(relay).wrap([sys.executable, str(bot), f"--model={model}"], {})
        done = subprocess.run(
            wrapped.argv, env=wrapped.env, preexec_fn=wrapped.preexec,
            pass_fds=wrapped.pass_fds, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert f"ONNX (1, {NUM_ACTIONS})" in done.stdout, done.stdout + done.stderr
    assert "blocked the other file" in done.stdout, done.stdout
    # the weights really are external: without the data file the model does not load
    os.rename(models / "agent.onnx.data", models / "moved.bin")
    import onnxruntime  # type: ignore[import-untyped,unused-ignore]

    with pytest.raises(Exception):  # noqa: B017 - onnxruntime's own error type
        onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])


def test_the_program_folder_rule(tmp_path: Path) -> None:
    """What a command line binds: the program's folder whole (not a top-level folder,
    nor a home); a file it names with its side files; an interpreter's folder never."""
    bot = tmp_path / "deep" / "bot"
    bot.mkdir(parents=True)
    (bot / "main.py").write_text("")
    (bot / "lib.py").write_text("")
    other = tmp_path / "weights"
    other.mkdir()
    (other / "w.npz").write_text("")
    (other / "w.npz.extra").write_text("")
    (other / "unrelated.npz").write_text("")
    got = binds.bot_binds([sys.executable, str(bot / "main.py"), f"--w={other / 'w.npz'}"])
    dests = {b.dest for b in got}
    assert str(bot) in dests
    assert {str(other / "w.npz"), str(other / "w.npz.extra")} <= dests
    assert str(other / "unrelated.npz") not in dests and str(other) not in dests
    assert not any(d.startswith(sys.prefix + "/") or d == sys.prefix for d in dests)
    assert not binds.own_folder_ok(Path("/tmp")) and not binds.own_folder_ok(Path("/"))
    assert not binds.own_folder_ok(Path(os.path.expanduser("~")))
    assert binds.own_folder_ok(bot)


def test_relative_folders_are_bound_like_absolute_ones_and_the_tls_key_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 6: a folder named by a relative path was not bound (only files were made
    absolute). Finding 4: the ladder's TLS key is one of its private paths."""
    from cirulla.ladder.serve import ServeOptions, private_paths

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mybots" / "multi" / "book").mkdir(parents=True)
    argv = binds.absolute_argv(["python", "bot.py", "--book=mybots/multi/book", "mybots/multi"])
    assert argv[2:] == [f"--book={tmp_path}/mybots/multi/book", f"{tmp_path}/mybots/multi"]
    dests = {b.dest for b in binds.bot_binds(argv)}
    assert str(tmp_path / "mybots" / "multi") in dests
    key = tmp_path / "tls" / "ladder.key"
    options = ServeOptions(data=tmp_path / "data", tls_cert=tmp_path / "c.pem", tls_key=key)
    assert key in private_paths(options, tmp_path / "data" / "admin-token")


def test_runners_refuse_an_output_or_data_folder_that_is_the_venv(tmp_path: Path) -> None:
    """Where masking is impossible (the data or output folder is the venv the bots run
    from) `ladder serve` and `tournament --sandbox` refuse in one line, before they
    narrow the folder's permissions (the venv's files stay as they were)."""
    venv = make_venv(tmp_path)
    python = str(venv / "bin" / "python")
    modes = {p: p.stat().st_mode for p in (venv, venv / "pyvenv.cfg", venv / "bin")}
    commands = {
        "ladder": [python, "-m", "cirulla", "ladder", "serve", "--data", str(venv),
                   "--db", f"sqlite:///{tmp_path / 'l.sqlite3'}", "--listen", "127.0.0.1:0"],
        "tournament": [python, "-m", "cirulla", "tournament", "--out", str(venv), "--sandbox",
                       "--bot", "random", "--bot", "greedy", "--games", "1"],
    }  # fmt: skip
    for name, argv in commands.items():
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and str(venv) in lines[0], (name, done.stderr)
        assert "Traceback" not in done.stderr
    assert {p: p.stat().st_mode for p in modes} == modes


def test_an_interpreter_shipped_in_a_bots_folder_names_no_folder_outside_it(
    tmp_path: Path,
) -> None:
    """The runner asks another interpreter where it imports from; one that lies in the
    bot's own folder is the author's code and could answer with any folder the runner
    reads (another bot's files): only folders inside its own bot folder are bound."""
    other = tmp_path / "bots" / "other"  # another author's bot, readable by the runner
    other.mkdir(parents=True)
    (other / "weights.npz").write_bytes(b"private to its author")

    def fake_python(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "lib").mkdir(exist_ok=True)
        python = folder / "python3"
        answer = json.dumps({"cirulla-probe": [str(other), str(folder / "lib")]})
        python.write_text(f"#!/bin/sh\nprintf '%s' '{answer}'\n")
        python.chmod(0o755)
        return python

    evil = tmp_path / "bots" / "evil"
    python = fake_python(evil)
    (evil / "bot.py").write_text("")
    dests = {b.dest for b in binds.bot_binds([str(python), str(evil / "bot.py")])}
    assert str(other) not in dests and not any(d.startswith(str(other) + "/") for d in dests)
    assert any(str(evil) == d or str(evil) in d for d in dests)  # its own folder still is

    # the same answer from the interpreter of a venv outside the bot's folder (the
    # operator's) is used
    operators = tmp_path / "venvs" / "operators"
    python = fake_python(operators / "bin")
    (operators / "pyvenv.cfg").write_text("home = /usr/bin\n")
    mine = tmp_path / "bots" / "mine"
    mine.mkdir()
    (mine / "bot.py").write_text("")
    dests = {b.dest for b in binds.bot_binds([str(python), str(mine / "bot.py")])}
    assert str(other) in dests
