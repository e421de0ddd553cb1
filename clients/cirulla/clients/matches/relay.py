"""The relay that lets a sandbox without network reach the match server: a unix socket
bound into the sandbox, forwarded byte for byte to the server's TCP port."""

from __future__ import annotations

import os
import selectors
import shutil
import socket
import tempfile
import threading
from pathlib import Path


class ServerRelay:
    """Listens on a unix socket in a fresh 0700 folder and forwards each connection byte
    for byte to a TCP address (the match server; TLS passes through untouched). Lets a
    sandbox without network reach the match server and nothing else."""

    def __init__(self, target: str | None = None) -> None:
        """``target`` ("host:port") may come later (``point_at``): a runner binds the
        socket into its first bots' sandboxes while its match server is still starting."""
        self.target: tuple[str, int] | None = None
        if target is not None:
            self.point_at(target)
        self._folder = Path(tempfile.mkdtemp(prefix="cirulla-relay-"))
        os.chmod(self._folder, 0o700)
        self.socket_path = self._folder / "server.sock"
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def point_at(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self.target = (host.strip("[]") or "127.0.0.1", int(port))

    def start(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.socket_path))
        # bwrap binds the socket into the sandbox; the sandbox user must be able to connect
        os.chmod(self.socket_path, 0o666)
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        self._thread = threading.Thread(target=self._accept, name="server-relay", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(client,), daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        try:
            if self.target is None:
                raise OSError("no match server yet")
            upstream = socket.create_connection(self.target, timeout=10)
        except OSError:
            client.close()
            return
        client.setblocking(True)
        upstream.settimeout(None)
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ, upstream)
        sel.register(upstream, selectors.EVENT_READ, client)
        try:
            while not self._stop.is_set():
                for key, _ in sel.select(0.5):
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                    if not data:
                        return
                    key.data.sendall(data)
        except OSError:
            return
        finally:
            sel.close()
            client.close()
            upstream.close()

    def stop(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.close()
        if self._thread is not None:
            self._thread.join(2.0)
        shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> ServerRelay:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
