"""A raw-ASGI partner that misbehaves on cue: each route answers from a script the test sets.

Raw ASGI, not a framework, so a test can send a truncated body, reset a stream mid-way, hang
until the client gives up, or answer an HTML page where JSON belongs. Requests are counted per
JSON-RPC method (or `VERB /path` for anything else).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Handler = Callable[["Call", Receive, Send], Awaitable[None]]


class Call:
    """One request as the handler sees it."""

    def __init__(
        self, method: str, path: str, query: str, headers: dict[str, str], body: bytes
    ) -> None:
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.document: Any = None
        if body:
            try:
                self.document = json.loads(body)
            except ValueError:
                self.document = None

    @property
    def key(self) -> str:
        if isinstance(self.document, dict) and "method" in self.document:
            return str(self.document["method"])
        return f"{self.method} {self.path}"

    @property
    def rpc_id(self) -> Any:
        return self.document.get("id") if isinstance(self.document, dict) else None


class ScriptedAgent:
    """The ASGI app; `routes[key]` answers each call, `calls` counts them."""

    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.calls: Counter[str] = Counter()
        self.seen: list[Call] = []

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        query = scope.get("query_string", b"").decode()
        call = Call(scope["method"], scope["path"], query, headers, body)
        self.calls[call.key] += 1
        self.seen.append(call)
        handler = self.routes.get(call.key)
        if handler is None:
            await respond(404, b"not found", "text/plain")(call, receive, send)
            return
        await handler(call, receive, send)


def respond(
    status: int,
    body: bytes,
    content_type: str = "application/json",
    headers: Sequence[tuple[str, str]] = (),
) -> Handler:
    """A handler that sends one whole response."""

    async def handler(call: Call, receive: Receive, send: Send) -> None:
        raw = [(b"content-type", content_type.encode())]
        raw += [(k.encode(), v.encode()) for k, v in headers]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body})

    return handler


def rpc_result(result: Any) -> Handler:
    """A JSON-RPC success answering the call's id."""

    async def handler(call: Call, receive: Receive, send: Send) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": call.rpc_id, "result": result}).encode()
        await respond(200, body)(call, receive, send)

    return handler


def in_turn(*handlers: Handler) -> Handler:
    """Answer the first call with the first handler, the next with the next; the last repeats."""
    remaining = list(handlers)

    async def handler(call: Call, receive: Receive, send: Send) -> None:
        current = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        await current(call, receive, send)

    return handler


async def hang(call: Call, receive: Receive, send: Send) -> None:
    """Never answer; return once the client has gone (so the server can stop)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def truncated(body: bytes) -> Handler:
    """Promise more bytes than are sent, then fail, so the connection drops mid-body."""

    async def handler(call: Call, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": True})
        raise ConnectionResetError("the scripted partner drops the connection")

    return handler


def sse(results: Sequence[Any], *, then: str = "close") -> Handler:
    """A JSON-RPC event stream of `results`, then `close` (a clean end) or `reset` (a drop)."""

    async def handler(call: Call, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for result in results:
            document = {"jsonrpc": "2.0", "id": call.rpc_id, "result": result}
            chunk = b"data: " + json.dumps(document).encode() + b"\n\n"
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if then == "reset":
            raise ConnectionResetError("the scripted partner drops the stream")
        await send({"type": "http.response.body", "body": b""})

    return handler


ECHO_SKILL = {"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}


def card_document(
    url: str,
    *,
    name: str = "scripted",
    version: str = "1.0.0",
    description: str = "a partner that misbehaves on cue",
    skills: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A 1.0 card naming one JSON-RPC 1.0 interface at `url` and `skills` (echo unless
    given)."""
    return {
        "name": name,
        "description": description,
        "version": version,
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [ECHO_SKILL] if skills is None else skills,
    }
