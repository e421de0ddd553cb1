"""The bubblewrap sandbox with real bwrap: what a hostile process inside cannot do."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cirulla.clients.matches import sandbox
from cirulla.clients.matches.relay import ServerRelay

# bubblewrap is installed by .ci/setup.d/15-sandbox.sh: no skip, a missing bwrap fails here


def run(
    code: str, env: dict[str, str] | None = None, **kw: object
) -> subprocess.CompletedProcess[str]:
    box = sandbox.Sandbox(**kw)  # type: ignore[arg-type]
    argv, outer, preexec = box.wrap([sys.executable, "-c", code], env or {}, server_socket=None)
    return subprocess.run(
        argv, env=outer, preexec_fn=preexec, capture_output=True, text=True, timeout=60
    )


def test_hidden_files_processes_and_network(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the deck")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    code = f"""
import os, socket
out = []
try: open({str(secret)!r}).read(); out.append('read')
except OSError: pass
pids = [p for p in os.listdir('/proc') if p.isdigit()]
if len(pids) > 3: out.append('pids %s' % pids)
try: open('/proc/{os.getpid()}/environ').read(); out.append('environ')
except OSError: pass
try: socket.create_connection(('127.0.0.1', {port}), timeout=2); out.append('tcp')
except OSError: pass
print('ESCAPES', out)
"""
    done = run(code, {"CIRULLA_NAME": "x"})
    listener.close()
    assert done.returncode == 0, done.stderr
    assert "ESCAPES []" in done.stdout, done.stdout


def test_environment_is_only_what_is_passed() -> None:
    os.environ["CIRULLA_SANDBOX_TEST_SECRET"] = "s3cr3t"
    try:
        done = run("import os; print(dict(os.environ))", {"CIRULLA_NAME": "me"})
    finally:
        del os.environ["CIRULLA_SANDBOX_TEST_SECRET"]
    assert "s3cr3t" not in done.stdout
    assert "'CIRULLA_NAME': 'me'" in done.stdout


def test_setsid_child_dies_with_the_sandbox(tmp_path: Path) -> None:
    marker = f"cirulla-sandbox-marker-{os.getpid()}"
    code = (
        "import os, subprocess, sys, time\n"
        "child = 'import os, time; os.setsid(); time.sleep(300)'\n"
        f"subprocess.Popen([sys.executable, '-c', child, '{marker}'])\n"
        "time.sleep(1)\n"
    )
    done = run(code)
    assert done.returncode == 0, done.stderr
    time.sleep(1)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps


def test_relay_reaches_the_server_and_nothing_else() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]

    def echo() -> None:
        conn, _ = listener.accept()
        conn.sendall(conn.recv(100).upper())
        conn.close()

    threading.Thread(target=echo, daemon=True).start()
    with ServerRelay(f"127.0.0.1:{port}") as relay:
        endpoint = relay.endpoint()
        assert oct(endpoint.path.parent.stat().st_mode & 0o777) == "0o700"
        code = (
            "import os, socket\n"
            "path = os.environ['CIRULLA_SERVER'].removeprefix('unix:')\n"
            "s = socket.socket(socket.AF_UNIX); s.connect(path); s.sendall(b'hello')\n"
            "print(s.recv(100))\n"
        )
        box = sandbox.Sandbox()
        argv, outer, preexec = box.wrap(
            [sys.executable, "-c", code], {"CIRULLA_SERVER": "x"}, server_socket=endpoint.path
        )
        done = subprocess.run(
            argv, env=outer, preexec_fn=preexec, capture_output=True, text=True, timeout=60
        )
    listener.close()
    assert "b'HELLO'" in done.stdout, done.stderr


def test_unavailable_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    reason = sandbox.available()
    assert reason is not None and "\n" not in reason and "bubblewrap" in reason
    with pytest.raises(sandbox.SandboxUnavailable):
        sandbox.require()
