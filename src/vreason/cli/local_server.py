"""The local web servers of ``vreason annotate`` and ``vreason view``: 127.0.0.1 only, the port bound *before*
the URL is printed. Binding first turns a port in use into a clear error (uvicorn would log it after the URL
was already shown, and exit), and ``--port 0`` serves on any free port, printed as bound — a script or test that
starts a server never races another process for a port it picked in advance."""

from __future__ import annotations

import socket
from typing import Any

from vreason.core.errors import ConfigError

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A TCP socket bound to 127.0.0.1:``port`` (0: a free port; read it with ``getsockname()[1]``); uvicorn
    starts listening on it. A port in use (or not allowed) is a :class:`ConfigError` naming ``--port 0``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a previous server's TIME_WAIT does not block
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot serve on {HOST}:{port}: {exc.strerror or exc} (another server may hold it; "
                          "--port 0 picks a free port)") from None
    return sock


def serve(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` on the bound ``sock`` until Ctrl-C (uvicorn, warnings only)."""
    import uvicorn

    with sock:
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
