"""The guard of vreason's local web servers (the run viewer and the annotation app): loopback ``Host`` names
only and an access token."""

from __future__ import annotations

import secrets
from typing import Any

COOKIE = "vreason_view"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def host_name(host: str) -> str:
    """The host name of a ``Host`` header (``[::1]:8765`` → ``::1``, ``localhost:80`` → ``localhost``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def guard(app: Any, token: str, command: str, cookie: str = COOKIE) -> None:
    """The local-server guard: a ``Host`` of this machine's loopback names only (DNS rebinding), and the
    access token (query on the first visit, then an HttpOnly SameSite=Strict cookie) on every request."""
    from fastapi import Request
    from fastapi.responses import PlainTextResponse

    app.state.token = token

    @app.middleware("http")
    async def require_token(request: Request, call_next):  # noqa: ANN001, ANN202
        if host_name(request.headers.get("host", "")) not in LOCAL_HOSTS:
            return PlainTextResponse("forbidden: wrong Host (this server answers 127.0.0.1 / localhost only)",
                                     status_code=403)
        given = request.query_params.get("token")
        ok_query = given is not None and secrets.compare_digest(given, token)
        ok_cookie = secrets.compare_digest(request.cookies.get(cookie, ""), token)
        if not (ok_query or ok_cookie):
            return PlainTextResponse(f"forbidden: open the URL printed by `{command}` (it carries the token)",
                                     status_code=403)
        response = await call_next(request)
        if ok_query and not ok_cookie:
            response.set_cookie(cookie, token, httponly=True, samesite="strict", path="/")
        response.headers["Cache-Control"] = response.headers.get("Cache-Control", "no-store")
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response
