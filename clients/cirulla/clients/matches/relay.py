"""The relay that lets a sandbox without network reach the match server, and nothing
else, without letting one bot exhaust the process it runs in.

Each sandboxed process gets an ``Endpoint`` of its own: a unix socket in the relay's 0700
folder, bound into that sandbox only (as ``/run/cirulla/server.sock``), forwarded byte
for byte to the match server's bot socket (``server_socket``, in the same folder: the
runner gives it to the match server it starts, ``cirulla server --bot-socket``), where
the server serves ``MatchService/Play`` and refuses every other rpc
(``cirulla.server.bot_socket``). Forwarded to a TCP port instead (``point_at("host:port")``:
a tournament's ``--server`` that the runner did not start), every rpc of that port is
reachable and TLS passes through untouched. The endpoint closes when its process exits
(the relay watches a pidfd of it).

Why bounded this way (finding 1 of issue 37: one thread per connection and no limit took
a ladder to 1,024 open files and ~264 threads, so other bots' sandboxes failed to start,
and the accept loop returned for good on its first error):

* one thread serves every endpoint and connection (non-blocking sockets and a selector):
  a flood adds no thread to the ladder's, whose threads count against its RLIMIT_NPROC;
* an endpoint holds at most ``per_endpoint`` connections; at the bound it stops
  accepting (the kernel keeps at most a small backlog, the bot's own connect waits), so
  a flood costs the relay nothing more than that bot's bound;
* all endpoints together hold at most ``total`` connections, derived from the process's
  open-file limit; near it only endpoints below their guaranteed share
  (``GUARANTEED``) still accept, so a bot with one connection is never shut out by
  others' floods;
* every connection buffers at most ``BUFFER`` bytes each way and stops reading a side
  whose peer does not drain (a bot that never reads costs no memory);
* the loop survives every error: EMFILE and its kin pause accepting with a growing back
  off (never a busy loop, never an exit); anything unexpected closes the one connection
  it happened on and is logged.

The alternative the issue offered, a socket per sandbox served by the match server
itself, was weighed and not taken: grpcio cannot add a listening port to a started
server, the tournament's match server is another process that starts after the first
bots, and gRPC's server has no bound of connections per socket either. What was taken
instead: one bot socket per match server, whose path the runner chooses before the
server starts (in this relay's folder, which exists from the relay's creation), with the
relay's endpoints, bounds and pidfds in front of it as before; the first bots, started
before the match server, retry until it listens.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import itertools
import logging
import os
import resource
import selectors
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

#: Connections one endpoint (one sandboxed process) may hold at once. A bot needs one
#: (one gRPC channel per match); a few more cover a channel closing while the next opens.
PER_ENDPOINT = 16
#: Connections every endpoint may open even when the relay's total is reached.
GUARANTEED = 2
#: Connections the kernel queues on an endpoint the relay does not accept from (at its
#: bound, or paused): they cost the relay's process nothing until accepted.
BACKLOG = 4
#: Bytes buffered per direction of a connection before the relay stops reading that side.
BUFFER = 256 * 1024
#: Bytes read at once.
CHUNK = 64 * 1024
#: A connection whose match server has not answered the connect in this time is closed.
CONNECT_TIMEOUT = 10.0
#: The accept back off after EMFILE/ENFILE/ENOBUFS/ENOMEM, doubling up to the maximum.
BACKOFF_FIRST, BACKOFF_MAX = 0.05, 1.0
#: Errors that say the process (or the machine) is out of something: back off.
EXHAUSTED = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
#: What a non-blocking TCP connect says while it goes on.
IN_PROGRESS = (errno.EINPROGRESS, errno.EAGAIN, errno.EWOULDBLOCK)
#: Open files of the process the relay leaves to everything else it does.
RESERVED_FILES = 256


def default_total() -> int:
    """Connections all endpoints may hold together: each costs the process up to three
    open files (the bot's side, the relay's connection to the match server and, when the
    match server is in the same process, its side of that), within the soft open-file
    limit less a reserve for the rest of the process."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(4 * GUARANTEED, (soft - RESERVED_FILES) // 3)


class Endpoint:
    """One sandbox's socket: ``path`` is bound into that sandbox and nowhere else."""

    def __init__(self, relay: ServerRelay, number: int, path: Path, listener: socket.socket):
        self.relay = relay
        self.number = number
        self.path = path
        self.listener = listener
        self.pipes: set[_Pipe] = set()
        self.accepting = False  # registered for accepts in the selector
        self.closed = False
        self.pidfd: int | None = None
        self.pid: int | None = None
        #: How many connections it accepted in all, and how often it hit its bound.
        self.accepted = 0
        self.at_bound = 0

    def watch(self, pid: int) -> None:
        """Close this endpoint when process ``pid`` (the sandbox) exits."""
        self.relay._command(lambda: self.relay._watch(self, pid))

    def close(self) -> None:
        """Stop accepting, close its connections and remove its socket (thread-safe)."""
        self.relay._command(lambda: self.relay._close_endpoint(self))


@dataclass(eq=False)
class _Side:
    """One socket of a relayed connection and the bytes waiting to be written to it."""

    sock: socket.socket
    pending: bytearray = field(default_factory=bytearray)
    read_closed: bool = False  # it sent EOF
    write_shut: bool = False  # we sent it EOF
    events: int = 0  # what it is registered for in the selector (0: not registered)


@dataclass(eq=False)
class _Pipe:
    """A relayed connection: the bot's side and the match server's."""

    endpoint: Endpoint
    client: _Side
    upstream: _Side
    connecting: bool = True
    started: float = field(default_factory=time.monotonic)

    def peer(self, side: _Side) -> _Side:
        return self.upstream if side is self.client else self.client


@dataclass(frozen=True)
class RelayStats:
    """A snapshot of the relay, for tests and logs."""

    endpoints: int
    connections: int
    per_endpoint: dict[int, int]
    accepted: int
    exhausted: int  # times accepting paused on EMFILE and its kin
    errors: int  # unexpected errors the loop survived
    alive: bool  # the relay's thread runs


class ServerRelay:
    """Forwards the connections of every sandbox's endpoint to the match server's TCP
    address, in one thread, within the bounds the module docstring gives."""

    def __init__(
        self,
        target: str | None = None,
        *,
        per_endpoint: int = PER_ENDPOINT,
        total: int | None = None,
    ) -> None:
        """``target`` ("host:port") may come later (``point_at``): a runner binds the
        socket into its first bots' sandboxes while its match server is still starting."""
        self.per_endpoint = per_endpoint
        self.total = total if total is not None else default_total()
        self._target: tuple[int, str | tuple[object, ...]] | None = None
        if target is not None:
            self.point_at(target)
        self._folder = Path(tempfile.mkdtemp(prefix="cirulla-relay-"))
        os.chmod(self._folder, 0o700)
        self._numbers = itertools.count(1)
        self._endpoints: set[Endpoint] = set()
        self._connections = 0
        self._commands: collections.deque[Callable[[], None]] = collections.deque()
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        for sock in (self._wake_r, self._wake_w):
            sock.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._paused_until = 0.0
        self._backoff = BACKOFF_FIRST
        self._accepted = 0
        self._exhausted = 0
        self._errors = 0
        self._last_log = 0.0

    # -- the caller's side (any thread) ------------------------------------------------

    @property
    def server_socket(self) -> Path:
        """Where a match server started by the relay's owner puts its bot socket
        (``cirulla server --bot-socket``): in the relay's own 0700 folder, beside the
        endpoints (each sandbox sees its own endpoint only, never this folder)."""
        return self._folder / "match-server.sock"

    def point_at(self, target: str) -> None:
        """Forward to ``target``: "unix:PATH" (a match server's bot socket, which serves
        Play only), or "host:port", "[v6]:port", resolved here, once."""
        if target.startswith("unix:"):
            self._target = (socket.AF_UNIX, target.removeprefix("unix:"))
            return
        host, _, port = target.rpartition(":")
        info = socket.getaddrinfo(
            host.strip("[]") or "127.0.0.1", int(port), type=socket.SOCK_STREAM
        )[0]
        self._target = (info[0], info[4])

    def endpoint(self) -> Endpoint:
        """A new socket for one sandbox (its path is bound into that sandbox only)."""
        number = next(self._numbers)
        path = self._folder / f"{number}.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(path))
            # the sandbox's user (a mapped uid, or root) must be able to connect
            os.chmod(path, 0o666)
            listener.listen(BACKLOG)
            listener.setblocking(False)
        except OSError:
            listener.close()
            raise
        endpoint = Endpoint(self, number, path, listener)
        self._command(lambda: self._open_endpoint(endpoint))
        return endpoint

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="server-relay", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(5.0)
        if self._thread is None or not self._thread.is_alive():
            for endpoint in list(self._endpoints):
                self._close_endpoint(endpoint)
            self._selector.close()
            self._wake_r.close()
            self._wake_w.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def stats(self) -> RelayStats:
        """Read without locking: numbers of a moment, good enough for tests and logs."""
        endpoints = list(self._endpoints)
        return RelayStats(
            endpoints=len(endpoints),
            connections=self._connections,
            per_endpoint={e.number: len(e.pipes) for e in endpoints},
            accepted=self._accepted,
            exhausted=self._exhausted,
            errors=self._errors,
            alive=self._thread is not None and self._thread.is_alive(),
        )

    def __enter__(self) -> ServerRelay:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _command(self, command: Callable[[], None]) -> None:
        self._commands.append(command)
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: it is awake already; closed: stopped
            self._wake_w.send(b"x")

    # -- the relay's thread -------------------------------------------------------------

    def _run(self) -> None:
        last_sweep = time.monotonic()
        while not self._stop.is_set():
            try:
                self._step()
                now = time.monotonic()
                if now - last_sweep >= 1.0:
                    last_sweep = now
                    self._sweep(now)
            except Exception:  # never die: log, breathe, go on
                self._errors += 1
                log.exception("relay_error")
                time.sleep(0.05)

    def _step(self) -> None:
        timeout = 1.0
        if self._paused_until:
            timeout = max(0.0, min(timeout, self._paused_until - time.monotonic()))
        for key, mask in self._selector.select(timeout):
            kind, obj = key.data
            try:
                if kind == "wake":
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                elif kind == "listen":
                    self._accept(obj)
                elif kind == "pidfd":
                    self._close_endpoint(obj)
                else:
                    pipe, side = obj
                    self._serve(pipe, side, mask)
            except Exception:
                self._errors += 1
                log.exception("relay_error kind=%s", kind)
                if kind == "side":
                    self._close_pipe(obj[0])
        while self._commands:
            self._commands.popleft()()
        if self._paused_until and time.monotonic() >= self._paused_until:
            self._paused_until = 0.0
        self._update_listeners()

    def _sweep(self, now: float) -> None:
        """Close connections whose match server never answered the connect, and the
        endpoints of exited processes where the kernel gives no pidfd."""
        for endpoint in list(self._endpoints):
            if endpoint.pid is not None and endpoint.pidfd is None and _exited(endpoint.pid):
                self._close_endpoint(endpoint)
                continue
            for pipe in list(endpoint.pipes):
                if pipe.connecting and now - pipe.started > CONNECT_TIMEOUT:
                    self._close_pipe(pipe)

    def _open_endpoint(self, endpoint: Endpoint) -> None:
        if self._stop.is_set():
            endpoint.listener.close()
            return
        self._endpoints.add(endpoint)

    def _watch(self, endpoint: Endpoint, pid: int) -> None:
        if endpoint.closed:
            return
        endpoint.pid = pid
        try:
            endpoint.pidfd = os.pidfd_open(pid)
        except OSError:  # gone already, or no pidfd on this kernel: the sweep looks
            if _exited(pid):
                self._close_endpoint(endpoint)
            return
        self._selector.register(endpoint.pidfd, selectors.EVENT_READ, ("pidfd", endpoint))

    def _close_endpoint(self, endpoint: Endpoint) -> None:
        if endpoint.closed:
            return
        endpoint.closed = True
        for pipe in list(endpoint.pipes):
            self._close_pipe(pipe)
        if endpoint.accepting:
            self._selector.unregister(endpoint.listener)
            endpoint.accepting = False
        endpoint.listener.close()
        if endpoint.pidfd is not None:
            self._selector.unregister(endpoint.pidfd)
            os.close(endpoint.pidfd)
            endpoint.pidfd = None
        # Forgotten before its file goes: whoever sees the socket file gone (a test, an
        # operator) then reads counts that no longer hold it.
        self._endpoints.discard(endpoint)
        endpoint.path.unlink(missing_ok=True)

    def _may_accept(self, endpoint: Endpoint) -> bool:
        held = len(endpoint.pipes)
        if endpoint.closed or held >= self.per_endpoint:
            return False
        return held < GUARANTEED or self._connections < self.total

    def _update_listeners(self) -> None:
        """Listen where the bounds allow it, and nowhere while paused (a listener with a
        waiting connection it may not take would wake the selector at once, forever)."""
        paused = bool(self._paused_until)
        for endpoint in self._endpoints:
            want = not paused and self._may_accept(endpoint)
            if want and not endpoint.accepting:
                data = ("listen", endpoint)
                self._selector.register(endpoint.listener, selectors.EVENT_READ, data)
            elif endpoint.accepting and not want:
                self._selector.unregister(endpoint.listener)
                if not paused:
                    endpoint.at_bound += 1
            endpoint.accepting = want

    def _pause(self, exc: OSError) -> None:
        """Out of files (or memory): stop accepting for a while, longer each time."""
        self._exhausted += 1
        self._paused_until = time.monotonic() + self._backoff
        now = time.monotonic()
        if now - self._last_log > 10.0:
            self._last_log = now
            log.warning("relay_accept_paused seconds=%.2f error=%s", self._backoff, exc)
        self._backoff = min(BACKOFF_MAX, self._backoff * 2)

    def _accept(self, endpoint: Endpoint) -> None:
        for _ in range(GUARANTEED):  # a few at a time: every endpoint gets its turn
            if not self._may_accept(endpoint) or self._paused_until:
                return
            try:
                client, _ = endpoint.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in EXHAUSTED:
                    self._pause(exc)
                # ECONNABORTED and its kin: that one connection is gone, go on
                return
            self._backoff = BACKOFF_FIRST
            self._accepted += 1
            endpoint.accepted += 1
            self._connect(endpoint, client)

    def _connect(self, endpoint: Endpoint, client: socket.socket) -> None:
        target = self._target
        if target is None:  # no match server yet: the bot retries, as on a refused dial
            client.close()
            return
        try:
            upstream = socket.socket(target[0], socket.SOCK_STREAM)
        except OSError as exc:
            client.close()
            if exc.errno in EXHAUSTED:
                self._pause(exc)
            return
        client.setblocking(False)
        upstream.setblocking(False)
        if target[0] != socket.AF_UNIX:
            with contextlib.suppress(OSError):
                upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pipe = _Pipe(endpoint, _Side(client), _Side(upstream))
        endpoint.pipes.add(pipe)
        self._connections += 1
        code = upstream.connect_ex(target[1])
        # a unix socket connects at once or not at all (EAGAIN: its backlog is full)
        waiting = (errno.EINPROGRESS,) if target[0] == socket.AF_UNIX else IN_PROGRESS
        if code == 0:
            pipe.connecting = False
        elif code not in waiting:
            self._close_pipe(pipe)
            return
        self._interest(pipe)

    def _serve(self, pipe: _Pipe, side: _Side, mask: int) -> None:
        if pipe not in pipe.endpoint.pipes:
            return  # closed by an earlier event of this round
        if side is pipe.upstream and pipe.connecting:
            if mask & selectors.EVENT_WRITE:
                if side.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                    self._close_pipe(pipe)
                    return
                pipe.connecting = False
                self._flush(pipe, side)
        else:
            if mask & selectors.EVENT_WRITE:
                self._flush(pipe, side)
            if mask & selectors.EVENT_READ and pipe in pipe.endpoint.pipes:
                self._read(pipe, side)
        if pipe in pipe.endpoint.pipes:
            if pipe.client.write_shut and pipe.upstream.write_shut:
                self._close_pipe(pipe)  # both sides said all they had to say
            else:
                self._interest(pipe)

    def _read(self, pipe: _Pipe, side: _Side) -> None:
        peer = pipe.peer(side)
        try:
            data = side.sock.recv(CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close_pipe(pipe)
            return
        if not data:
            side.read_closed = True
        else:
            peer.pending += data
        self._flush(pipe, peer)

    def _flush(self, pipe: _Pipe, side: _Side) -> None:
        """Write what waits for ``side``; once its peer said EOF and all is written,
        pass the EOF on."""
        if side is pipe.upstream and pipe.connecting:
            return
        if side.pending:
            try:
                sent = side.sock.send(side.pending)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._close_pipe(pipe)
                return
            del side.pending[:sent]
        if not side.pending and pipe.peer(side).read_closed and not side.write_shut:
            side.write_shut = True
            with contextlib.suppress(OSError):
                side.sock.shutdown(socket.SHUT_WR)

    def _interest(self, pipe: _Pipe) -> None:
        for side in (pipe.client, pipe.upstream):
            peer = pipe.peer(side)
            events = 0
            if side is pipe.upstream and pipe.connecting:
                events = selectors.EVENT_WRITE
            else:
                if not side.read_closed and len(peer.pending) < BUFFER:
                    events |= selectors.EVENT_READ
                if side.pending:
                    events |= selectors.EVENT_WRITE
            if events == side.events:
                continue
            if side.events and events:
                self._selector.modify(side.sock, events, ("side", (pipe, side)))
            elif events:
                self._selector.register(side.sock, events, ("side", (pipe, side)))
            else:
                self._selector.unregister(side.sock)
            side.events = events

    def _close_pipe(self, pipe: _Pipe) -> None:
        if pipe not in pipe.endpoint.pipes:
            return
        pipe.endpoint.pipes.discard(pipe)
        self._connections -= 1
        for side in (pipe.client, pipe.upstream):
            if side.events:
                with contextlib.suppress(KeyError, ValueError):
                    self._selector.unregister(side.sock)
                side.events = 0
            side.sock.close()


def _exited(pid: int) -> bool:
    """Whether process ``pid`` (a child of this process) has exited: gone, or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True
