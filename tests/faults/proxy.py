"""A TCP proxy on a loopback port in front of a real service (PostgreSQL, Redis), switchable between modes:

- "forward": passes bytes both ways (the service as it is);
- "hang": accepts connections and never answers, nor forwards (a tarpit: a hung server or a black-holed route);
- "refuse": nothing listens (the port is closed), as when the service is down.

`restart()` cuts every open connection and keeps forwarding new ones: a database restart as its clients see it,
without touching the machine's shared PostgreSQL.
"""

from __future__ import annotations

import socket
import threading


class FaultProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1"):
        self.target = (target_host, target_port)
        self.mode = "forward"
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._listener.listen(64)
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url_host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _keep(self, *sockets: socket.socket) -> None:
        with self._lock:
            self._open.extend(sockets)

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.mode == "refuse":
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                client.close()  # a reset, as from a closed port
                continue
            if self.mode == "hang":
                self._keep(client)  # held open, never read, never answered
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            self._keep(client, upstream)
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def restart(self) -> None:
        """Cut every open connection (the server went away) and keep forwarding new ones."""
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            except OSError:
                pass

    def close(self) -> None:
        self._stopped = True
        self._listener.close()
        self.restart()
