"""Talking to a text-protocol engine process: numbered commands out, answers back.

``EngineProcess`` starts the engine (its own process group, so stopping it stops its
helpers too), writes ``ID COMMAND`` lines to its stdin, and a reader thread splits its
stdout into answers (``=ID text`` or ``?ID text`` up to an empty line). Answers are
matched by id, so a late answer to a command the bridge stopped waiting for (a genmove
past its time) is recognized and dropped. The engine's stderr is copied line by line to
the ``cirulla.bots.text`` logger. Every exchange is kept in a short transcript, and every
departure from the protocol is reported to ``on_violation`` with the offending exchange.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

log = logging.getLogger("cirulla.bots.text")

#: Seconds an engine may take to answer anything but genmove.
COMMAND_TIMEOUT = 10.0
#: Seconds between SIGTERM and SIGKILL when stopping the engine.
STOP_GRACE = 2.0
TRANSCRIPT_LINES = 40

_ANSWER = re.compile(r"^([=?])(\d*)(?:\s(.*))?$")


class EngineError(RuntimeError):
    """The engine cannot go on: it exited, or cannot be started."""


@dataclass(frozen=True, slots=True)
class Answer:
    ok: bool
    id: int | None
    text: str


class EngineProcess:
    """One engine process speaking the text protocol on stdin/stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        on_violation: Callable[[str, str], None] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        if not argv:
            raise EngineError("no engine command given (cirulla bot text -- CMD ARGS...)")
        self.argv = list(argv)
        self.on_violation = on_violation
        self.transcript: collections.deque[str] = collections.deque(maxlen=TRANSCRIPT_LINES)
        self._answers: queue.Queue[Answer | None] = queue.Queue()
        self._next_id = 1
        self._lock = threading.Lock()
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env=env,
                bufsize=0,
            )
        except OSError as exc:
            raise EngineError(f"cannot start the engine {shlex.join(self.argv)}: {exc}") from None
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._reader = threading.Thread(target=self._read, name="engine-stdout", daemon=True)
        self._reader.start()
        threading.Thread(target=self._copy_stderr, name="engine-stderr", daemon=True).start()

    # ------------------------------------------------------------------ reading

    def _violation(self, problem: str) -> None:
        exchange = "\n".join(self.transcript)
        log.warning("protocol violation: %s", problem)
        if self.on_violation is not None:
            self.on_violation(problem, exchange)

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        current: Answer | None = None
        lines: list[str] = []
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.transcript.append(f"<< {line}")
            if current is None:
                if not line.strip():
                    continue  # blank lines between answers are tolerated
                m = _ANSWER.match(line)
                if m is None:
                    self._violation(f"expected an answer starting with '=' or '?', got {line!r}")
                    continue
                ident = int(m.group(2)) if m.group(2) else None
                current = Answer(m.group(1) == "=", ident, "")
                lines = [m.group(3) or ""]
            elif line == "":
                self._answers.put(Answer(current.ok, current.id, "\n".join(lines).strip()))
                current = None
            else:
                lines.append(line)
        if current is not None:
            self._violation("the engine's output ended inside an answer (no empty line after it)")
            self._answers.put(Answer(current.ok, current.id, "\n".join(lines).strip()))
        self._answers.put(None)  # end of output

    def _copy_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        for raw in iter(stream.readline, b""):
            log.info("engine: %s", raw.decode("utf-8", "replace").rstrip())

    # ------------------------------------------------------------------ commands

    def send(self, command: str) -> int:
        """Write ``ID command``; returns the id to wait for."""
        with self._lock:
            ident = self._next_id
            self._next_id += 1
            line = f"{ident} {command}"
            self.transcript.append(f">> {line}")
            log.debug("engine << %s", line)
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(line.encode() + b"\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise EngineError(self._exit_text("cannot write to the engine")) from None
        return ident

    def wait(
        self,
        ident: int,
        timeout: float | None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Answer | None:
        """The answer to command ``ident``; None on timeout or when ``cancelled()``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if cancelled():
                return None
            step = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
            if step <= 0:
                return None
            try:
                answer = self._answers.get(timeout=step)
            except queue.Empty:
                continue
            if answer is None:
                self._answers.put(None)
                raise EngineError(self._exit_text("the engine closed its output"))
            if answer.id == ident:
                log.debug("engine >> %s%d %s", "=" if answer.ok else "?", ident, answer.text)
                return answer
            if answer.id is None:
                self._violation(f"answer without the command's id (expected ={ident})")
                return answer
            if answer.id < ident:
                log.info("dropped the engine's late answer to command %d", answer.id)
                continue
            self._violation(f"answer with id {answer.id} to command {ident}")

    def call(self, command: str, timeout: float | None = COMMAND_TIMEOUT) -> Answer:
        """Send and wait; a missing answer is an ``EngineError``."""
        ident = self.send(command)
        answer = self.wait(ident, timeout)
        if answer is None:
            self._violation(f"no answer to {command.split()[0]!r} within {timeout:g}s")
            raise EngineError(f"the engine did not answer {command.split()[0]!r} in time")
        return answer

    # ------------------------------------------------------------------ the end

    def _exit_text(self, what: str) -> str:
        code = self.proc.poll()
        if code is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(0.5)
        status = "is still running" if code is None else f"exited with code {code}"
        return f"{what}: the engine {shlex.join(self.argv)} {status}"

    def close(self, quit_first: bool = True) -> int | None:
        """``quit``, then stop the process group if it lingers; returns the exit code."""
        if self.proc.poll() is None and quit_first:
            with contextlib.suppress(EngineError):
                ident = self.send("quit")
                self.wait(ident, STOP_GRACE)
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(STOP_GRACE)
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(STOP_GRACE)
        else:
            self._signal(signal.SIGKILL)  # whatever it left behind in its group
        return self.proc.returncode

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)
