"""ASGI middleware of the server: the API token and the request size limit, and typed JSON errors.

Both middlewares wrap the whole app, the mounted MCP endpoint included. Errors are
``{"error": "<type>", "message": "..."}`` with a 4xx status for what the caller can fix
(:data:`STATUS`), 503 for an unreachable Milvus or a missing chat model, 500 otherwise
(the message then names only the type: internals stay in the server log).
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from langchain_graphrag_milvus import errors

__all__ = ["TokenMiddleware", "BodyLimitMiddleware", "STATUS", "error_status", "error_body"]

logger = logging.getLogger(__name__)

#: Typed errors → HTTP status (the first matching class in this order wins).
STATUS: list[tuple[type[BaseException], int]] = [
    (errors.CollectionNotFoundError, 404),
    (errors.UnknownIdError, 404),
    (errors.ConcurrentWriteError, 409),
    (errors.StoreConnectionError, 503),
    (errors.StaleIndexError, 503),
    (errors.GraphRAGError, 400),
    (ValueError, 400),
    (TypeError, 400),
    (LookupError, 404),
]
#: Paths answered without the token (the page's HTML holds no data; it asks for the token).
OPEN_PATHS = frozenset({"/health", "/", "/docs", "/openapi.json", "/docs/oauth2-redirect", "/redoc"})


def error_status(exc: BaseException) -> int:
    """The HTTP status of an exception (see :data:`STATUS`); 500 for anything else."""
    status = getattr(exc, "http_status", None)
    if isinstance(status, int):
        return status
    for cls, code in STATUS:
        if isinstance(exc, cls):
            return code
    return 500


def error_body(exc: BaseException, status: int) -> dict[str, str]:
    """``{"error": type, "message": ...}``; a 500 does not echo internals."""
    if status >= 500 and not isinstance(exc, errors.GraphRAGError):
        return {"error": "InternalError", "message": f"internal error ({type(exc).__name__}); see the server log"}
    message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return {"error": type(exc).__name__, "message": message}


async def send_json(send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    """Send a complete JSON response on a raw ASGI channel."""
    data = json.dumps(body).encode("utf-8")
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": data})


class TokenMiddleware:
    """``Authorization: Bearer <token>`` on every path except :data:`OPEN_PATHS` (401 otherwise)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the token, then pass the request on."""
        if self.token is None or scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers") or []:
            if name == b"authorization" and value[:7].lower() == b"bearer ":
                given = value[7:].strip()
        if not hmac.compare_digest(given, self.token):
            body = {"error": "Unauthorized", "message": "missing or wrong API token (Authorization: Bearer <token>)"}
            await send_json(send, 401, body, [(b"www-authenticate", b"Bearer")])
            return
        await self.app(scope, receive, send)


class BodyTooLargeError(Exception):
    """The request body passed the limit while it was read."""


class BodyLimitMiddleware:
    """Refuse bodies over ``limit`` bytes with 413: by ``Content-Length`` at once, else while reading."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with its body counted."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers") or []:
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await self._drain(receive, int(value))
                await send_json(send, 413, self._body())
                return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLargeError
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLargeError:
            if not started:
                await send_json(send, 413, self._body())

    async def _drain(self, receive: Receive, length: int) -> None:
        """Read and discard a refused body of up to 8 x the limit, so the client reads the 413 (not a reset)."""
        if length > 8 * self.limit:
            return
        more = True
        while more:
            message = await receive()
            more = message["type"] == "http.request" and bool(message.get("more_body"))

    def _body(self) -> dict[str, str]:
        return {"error": "RequestTooLarge", "message": f"the request body is larger than {self.limit} bytes"}
