"""Talking to a text-protocol engine process: numbered commands out, answers back.

``EngineProcess`` starts the engine in its own process group, tied to the bridge
(``die_with_parent``: it gets SIGKILL if the bridge dies) and under resource limits
(``EngineLimits``); the bridge adopts its orphans (``processes.become_subreaper``), so
``close`` stops the engine and everything it started. It writes ``ID COMMAND`` lines to
the engine's stdin, and a reader thread splits its stdout into answers (``=ID text`` or
``?ID text`` up to an empty line), in bounded memory whatever the engine writes
(``lines.read_lines``). Answers are matched by id: only the answer to the command being
waited for is handed on, and a late answer to a command the bridge stopped waiting for
(a genmove past its time) is recognized and dropped. The engine's stderr is copied line
by line to the ``cirulla.bots.text`` logger (lines cut, the total bounded). Every
exchange is kept in a short transcript, and every departure from the protocol is
recorded (``Violations``) with the offending exchange.
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

from cirulla.bots.processes import die_with_parent
from cirulla.bots.text.limits import DEFAULT_LIMITS, EngineLimits
from cirulla.bots.text.lines import read_lines
from cirulla.bots.text.processes import EngineTree, become_subreaper, children_of
from cirulla.bots.text.violations import Violations, printable, quote
from cirulla.programs import start_hint

log = logging.getLogger("cirulla.bots.text")

#: Seconds an engine may take to answer anything but genmove.
COMMAND_TIMEOUT = 10.0
#: Seconds between SIGTERM and SIGKILL when stopping the engine.
STOP_GRACE = 2.0
#: Seconds the helpers an engine left behind get between SIGTERM and SIGKILL once the
#: engine itself has exited.
LEFTOVER_GRACE = 0.5
TRANSCRIPT_LINES = 40
#: Characters of each line kept in the transcript.
TRANSCRIPT_LINE_CHARS = 200
#: Longest line of an answer; the rest of a longer line is discarded.
MAX_LINE_BYTES = 16 * 1024
#: Longest answer (all its lines); the rest up to its empty line is discarded.
MAX_ANSWER_CHARS = 64 * 1024
#: Longest stderr line copied to the log, and the most stderr copied in all.
STDERR_LINE_BYTES = 2000
STDERR_LOG_BYTES = 1024 * 1024
#: Last stderr lines an exit message quotes, and the characters kept of each.
STDERR_TAIL_LINES = 3
STDERR_TAIL_CHARS = 200

# at most 18 digits: an id is a command number, and int() of a huge one is slow
_ANSWER = re.compile(r"^([=?])(\d{0,18})(?:\s(.*))?$")


class EngineError(RuntimeError):
    """The engine cannot go on: it exited, or cannot be started."""

    #: Its message is the whole story (the engine's exit, its stderr): the bot kit logs
    #: it without the bridge's traceback, which would point at no bug of the engine's.
    plain_failure = True


@dataclass(frozen=True, slots=True)
class Answer:
    ok: bool
    id: int | None
    text: str


class EngineProcess:
    """One engine process speaking the text protocol on stdin/stdout.

    Start it from a thread that lives as long as the engine should (the bridge's main
    thread): the parent-death signal follows the thread that started it."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        on_violation: Callable[[str, str], None] | None = None,
        env: dict[str, str] | None = None,
        limits: EngineLimits = DEFAULT_LIMITS,
    ) -> None:
        if not argv:
            raise EngineError("no engine command given (cirulla bot text -- CMD ARGS...)")

        self.argv = list(argv)
        self.violations = Violations(on_violation)
        self.transcript: collections.deque[str] = collections.deque(maxlen=TRANSCRIPT_LINES)
        self._answers: queue.Queue[Answer | None] = queue.Queue()
        self._next_id = 1
        self._lock = threading.Lock()  # writing to the engine
        self._state = threading.Lock()  # _awaited and _abandoned, shared with the reader
        self._awaited: int | None = None  # the command whose answer is waited for
        self._abandoned: set[int] = set()  # commands no longer waited for (late answers)
        self._closed = False
        self._heard = False  # any line on stdout yet
        self._open_answer: str | None = None  # an answer begun, its empty line not yet read
        #: its last non-blank stderr lines, raw (read on after the log's budget, so the
        #: exit message quotes how it really ended; decoded only then)
        self._stderr_tail: collections.deque[bytes] = collections.deque(maxlen=STDERR_TAIL_LINES)
        become_subreaper()
        foreign = children_of(os.getpid())
        tie = die_with_parent()

        def preexec() -> None:
            tie()
            limits.apply()

        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env=env,
                bufsize=0,
                preexec_fn=preexec,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            hint = start_hint(self.argv[0], exc)
            raise EngineError(
                f"cannot start the engine {shlex.join(self.argv)}: {exc}{hint}"
            ) from None
        self.tree = EngineTree(self.proc.pid, foreign)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._reader = threading.Thread(target=self._read, name="engine-stdout", daemon=True)
        self._reader.start()
        self._stderr_reader = threading.Thread(
            target=self._copy_stderr, name="engine-stderr", daemon=True
        )
        self._stderr_reader.start()

    # ------------------------------------------------------------------ reading

    def _note(self, line: str) -> None:
        if len(line) > TRANSCRIPT_LINE_CHARS:
            line = line[:TRANSCRIPT_LINE_CHARS] + f"... ({len(line)} characters)"
        self.transcript.append(printable(line))

    def exchange(self) -> str:
        return "\n".join(self.transcript)

    def _violation(self, problem: str) -> None:
        if not self._closed:  # what a stopped engine does is no longer its seat's play
            self.violations.add(problem, self.exchange())

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        current: Answer | None = None
        lines: list[str] = []
        size = 0
        for raw, cut in read_lines(stream.fileno(), MAX_LINE_BYTES):
            line = raw.decode("utf-8", "replace").rstrip("\r")
            self._heard = True
            self._note(f"<< {line}")
            if cut:
                self._violation(
                    f"a line longer than {MAX_LINE_BYTES} bytes (the rest of it was "
                    f"discarded): {quote(line)}"
                )
            if current is None:
                if cut or not line.strip():
                    continue  # blank lines between answers are tolerated
                m = _ANSWER.match(line)
                if m is None:
                    self._violation(
                        f"expected an answer starting with '=' or '?', got {quote(line)}"
                    )
                    continue
                ident = int(m.group(2)) if m.group(2) else None
                current = Answer(m.group(1) == "=", ident, "")
                self._open_answer = line
                lines = [m.group(3) or ""]
                size = len(lines[0])
            elif line == "":
                self._open_answer = None
                self._deliver(Answer(current.ok, current.id, "\n".join(lines).strip()))
                current = None
            elif size <= MAX_ANSWER_CHARS:
                size += len(line) + 1
                if size > MAX_ANSWER_CHARS:
                    self._violation(
                        f"an answer longer than {MAX_ANSWER_CHARS} characters (the rest "
                        "of it was discarded)"
                    )
                else:
                    lines.append(line)
        if current is not None:
            self._violation("the engine's output ended inside an answer (no empty line after it)")
            self._deliver(Answer(current.ok, current.id, "\n".join(lines).strip()))
        self._answers.put(None)  # end of output

    def _deliver(self, answer: Answer) -> None:
        """Hand on the answer waited for; drop late answers and stray ones (so the queue
        never holds more than one answer, whatever the engine writes)."""
        with self._state:
            awaited = self._awaited
            if answer.id is not None and answer.id in self._abandoned:
                self._abandoned.discard(answer.id)
                late = True
            else:
                late = False
                if awaited is not None and answer.id in (awaited, None):
                    self._awaited = None
                    self._answers.put(answer)
                    return
        if self._closed:
            return
        if late:
            log.info("dropped the engine's late answer to command %d", answer.id)
        elif answer.id is None:
            self._violation("an answer without an id, when no command waited for one")
        elif answer.id < self._next_id:
            self._violation(f"a second answer to command {answer.id}")
        else:
            expected = "no command" if awaited is None else f"command {awaited}"
            self._violation(f"answer with id {answer.id} to {expected}")

    def _copy_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        copied = 0
        for raw, cut in read_lines(stream.fileno(), STDERR_LINE_BYTES):
            if raw.strip():
                self._stderr_tail.append(raw[: 4 * STDERR_TAIL_CHARS])
            if copied > STDERR_LOG_BYTES:
                continue  # drained, not logged
            copied += len(raw)
            line = printable(raw.decode("utf-8", "replace").rstrip())
            log.info("engine: %s%s", line, " [line cut]" if cut else "")
            if copied > STDERR_LOG_BYTES:
                log.warning(
                    "engine: more than %d bytes on stderr; the rest is not logged",
                    STDERR_LOG_BYTES,
                )

    # ------------------------------------------------------------------ commands

    def send(self, command: str, lock_timeout: float = -1) -> int:
        """Write ``ID command``; returns the id to wait for (``wait``)."""
        if not self._lock.acquire(timeout=lock_timeout):
            raise EngineError(self._exit_text("the engine does not read its input"))
        try:
            ident = self._next_id
            self._next_id += 1
            line = f"{ident} {command}"
            self._note(f">> {line}")
            log.debug("engine << %s", line)
            with self._state:
                self._awaited = ident
            try:
                assert self.proc.stdin is not None
                data = memoryview(line.encode() + b"\n")
                while data:
                    data = data[self.proc.stdin.write(data) or 0 :]
            except (BrokenPipeError, OSError, ValueError):
                raise EngineError(self._exit_text("cannot write to the engine")) from None
        finally:
            self._lock.release()
        return ident

    def _abandon(self, ident: int) -> None:
        with self._state:
            if self._awaited == ident:
                self._awaited = None
                self._abandoned.add(ident)

    def wait(
        self,
        ident: int,
        timeout: float | None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Answer | None:
        """The answer to command ``ident``; None on timeout or when ``cancelled()``
        (then a later answer to it is dropped as late)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if cancelled():
                self._abandon(ident)
                return None
            step = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
            if step <= 0:
                self._abandon(ident)
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
            # handed on just before its command was abandoned: a late answer
            log.info("dropped the engine's late answer to command %d", answer.id)

    def call(self, command: str, timeout: float | None = COMMAND_TIMEOUT) -> Answer:
        """Send and wait; a missing answer is an ``EngineError``."""
        ident = self.send(command)
        answer = self.wait(ident, timeout)
        if answer is None:
            name, why = command.split()[0], self._silence()
            self._violation(f"no answer to {name!r} within {timeout:g}s{why}")
            raise EngineError(f"the engine did not answer {name!r} in time{why}")
        return answer

    def _silence(self) -> str:
        """Why an answer did not come, when the engine's output shows it: the two
        mistakes of a new engine (docs/text-protocol.md, "Framing")."""
        if self._open_answer is not None:
            return (
                f": its answer {quote(self._open_answer)} never ended (an answer ends with "
                "one empty line; docs/text-protocol.md, 'Framing')"
            )
        if not self._heard:
            return (
                ": nothing came on its stdout (an engine must flush its output after each "
                "answer; docs/text-protocol.md, 'Framing')"
            )
        return ""

    # ------------------------------------------------------------------ the end

    def _exit_text(self, what: str) -> str:
        code = self.proc.poll()
        if code is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(0.5)
        if code is None:
            status = "is still running"
        elif code < 0:
            status = f"was killed by {_signal_name(-code)}"
        else:
            status = f"exited with code {code}"
        if code is not None:  # its last words, once the copying thread has read them
            self._stderr_reader.join(0.5)
            if self._stderr_tail:
                tail = (printable(r.decode("utf-8", "replace").strip()) for r in self._stderr_tail)
                status += f"; its stderr ended: {' | '.join(t[:STDERR_TAIL_CHARS] for t in tail)}"
        return f"{what}: the engine {shlex.join(self.argv)} {status}"

    def close(self, quit_first: bool = True, grace: float = STOP_GRACE) -> int | None:
        """``quit`` (unless not ``quit_first``), then stop the engine and everything it
        started (SIGTERM, SIGKILL ``grace`` seconds later); returns its exit code."""
        first = not self._closed
        self._closed = True
        self.violations.closed = True
        if self.proc.poll() is None and quit_first and first:
            with contextlib.suppress(EngineError):
                self.send("quit", lock_timeout=0.5)
            with contextlib.suppress(OSError, ValueError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)
        running = self.proc.poll() is None
        self.tree.stop(grace if running else LEFTOVER_GRACE, group=running)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(grace)
        if first:
            self.violations.summary()
        return self.proc.returncode


def _signal_name(number: int) -> str:
    """``SIGXCPU (its CPU-time limit)`` for signal 24, ``signal 99`` for an unknown one."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    return f"{name} (its CPU-time limit)" if number == signal.SIGXCPU else name
