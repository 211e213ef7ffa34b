"""Serve an ASGI app from a test: uvicorn in a thread on a socket bound to a free port of 127.0.0.1 (stopped at
the end)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn


@contextlib.contextmanager
def serve(app) -> Iterator[str]:
    """Yields the base URL; the server is stopped (and its thread joined) when the block ends. Its socket is
    bound here, to a free port, and handed to uvicorn (a port picked in advance can be taken by another process
    before the server binds it)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
    assert not thread.is_alive()
