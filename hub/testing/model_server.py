"""A scripted model server: an OpenAI- and Anthropic-compatible HTTP server on loopback that
answers each request from a script, so a flow that calls a language model is deterministic
over real HTTP.

It speaks the providers' wire formats itself (Chat Completions and `GET /v1/models` under
`/v1`, Messages at `/v1/messages`), streamed or not, with tool calls, usage and errors in
their shapes, and records what it was sent, so that a test asserts on the messages, the
tools offered and the response format the client chose.
"""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from hub.testing import model_wire as wire
from hub.testing.loopback import serve_on_loopback
from hub.testing.model_wire import Provider

__all__ = ["ModelError", "ModelRequest", "ModelServer", "ToolCall", "Turn", "serve_model"]

_Receive = Callable[[], Awaitable[dict[str, Any]]]
_Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ModelError:
    """An error answer: `status` (400-599) and `message`, in the provider's error JSON.

    `retry` is sent as the `x-should-retry` header both SDKs obey; None leaves the choice to
    the client, which retries 408, 409, 429 and 5xx as it would a real provider's.
    """

    status: int
    message: str
    retry: bool | None = None

    def __post_init__(self) -> None:
        if not 400 <= self.status <= 599:
            raise ValueError(f"ModelError.status must be 400-599, not {self.status}")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call of tool `name` with `arguments`; its `id` is made up (unique) when None."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted answer.

    Args:
        text: the assistant's text (may be empty when it calls tools).
        tool_calls: the tools it calls, in parallel.
        chunks: into how many deltas the text, and each call's arguments, are cut when the
            request streams.
        delay: seconds before the first byte of the answer.
        chunk_delay: seconds between streamed deltas.
        usage: (input, output) tokens; by default about four characters a token of the
            messages received and of the answer.
        error: answer this error instead.
        hang: send the head and the first delta (nothing when not streamed), then wait
            until the client disconnects, which the server counts in `disconnects`.
    """

    text: str = ""
    tool_calls: Sequence[ToolCall] = ()
    chunks: int = 1
    delay: float = 0.0
    chunk_delay: float = 0.0
    usage: tuple[int, int] | None = None
    error: ModelError | None = None
    hang: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        if self.chunks < 1:
            raise ValueError(f"Turn.chunks must be at least 1, not {self.chunks}")
        if self.delay < 0 or self.chunk_delay < 0:
            raise ValueError("Turn.delay and Turn.chunk_delay must not be negative")


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """A parsed view of one request, for a script that is a function of what it was sent.

    `messages` are the body's, raw; `tools` the names of the tools offered; `tool_results`
    the count of tool results in the conversation; `last_user_text` the text of the last
    user message that has any; `json_schema` the schema the answer must follow, when the
    client asked for one (`response_format`, `output_config.format`); `body` all of it.
    """

    provider: Provider
    body: Mapping[str, Any]
    messages: Sequence[Any]
    tools: tuple[str, ...]
    tool_results: int
    last_user_text: str
    stream: bool
    json_schema: Mapping[str, Any] | None

    @classmethod
    def parse(cls, provider: Provider, body: Mapping[str, Any]) -> ModelRequest:
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        if provider == "openai":
            names = tuple(tool.get("function", {}).get("name", "") for tool in tools)
            results = sum(1 for message in messages if message.get("role") == "tool")
            schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        else:
            names = tuple(tool.get("name", "") for tool in tools)
            sent = [block for message in messages for block in wire.blocks(message)]
            results = sum(1 for block in sent if block.get("type") == "tool_result")
            format_ = (body.get("output_config") or {}).get("format") or body.get("output_format")
            schema = (format_ or {}).get("schema")
        said = [wire.text(message) for message in messages if message.get("role") == "user"]
        return cls(
            provider=provider,
            body=body,
            messages=messages,
            tools=names,
            tool_results=results,
            last_user_text=next((each for each in reversed(said) if each), ""),
            stream=bool(body.get("stream")),
            json_schema=schema,
        )


Script = Sequence[Turn] | Callable[[ModelRequest], Turn]
"""The turns to answer in order, or a function from each request to its turn."""


class ModelServer:
    """A served script and what it was sent; `serve_model` makes one and serves it.

    `requests` holds the JSON body of each request the key admitted, in order; `disconnects`
    counts the answers the client cut before their end.
    """

    def __init__(self, script: Script, *, api_key: str | None = None) -> None:
        self._function = script if callable(script) else None
        self._turns = None if callable(script) else list(script)
        for index, turn in enumerate(self._turns or ()):
            if not isinstance(turn, Turn):
                raise TypeError(f"script[{index}] is a {type(turn).__name__}, not a Turn")
        self._api_key = api_key
        self._ids = itertools.count(1)
        self._changed = anyio.Event()
        self._answering: set[anyio.CancelScope] = set()
        self.url = ""
        self.requests: list[dict[str, Any]] = []
        self.disconnects = 0

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    @property
    def remaining(self) -> int | None:
        """The turns not yet played; None when the script is a function."""
        return None if self._turns is None else len(self._turns)

    async def wait_for_requests(self, count: int) -> None:
        """Return once `count` requests have come in (bound it with `anyio.fail_after`)."""
        while len(self.requests) < count:
            await self._changed.wait()

    async def wait_for_disconnects(self, count: int) -> None:
        """Return once the client has cut `count` answers (bound it with `anyio.fail_after`)."""
        while self.disconnects < count:
            await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def close(self) -> None:
        """Cut the answers still being given (a hang, a delay), so that the server can stop."""
        for scope in self._answering:
            scope.cancel()

    async def __call__(self, scope: dict[str, Any], receive: _Receive, send: _Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        route = f"{scope['method']} {scope['path'].rstrip('/')}"
        anthropic = route == "POST /v1/messages" or "anthropic-version" in headers
        provider: Provider = "anthropic" if anthropic else "openai"
        if not self._admitted(headers, bearer_only=route == "POST /v1/chat/completions"):
            await _error(send, provider, ModelError(401, "missing or wrong API key", False))
        elif route == "GET /v1/models":
            model = {"id": "scripted", "object": "model", "type": "model", "created": 0}
            listing = {"object": "list", "data": [model], "has_more": False}
            await _json(send, 200, listing | {"first_id": "scripted", "last_id": "scripted"})
        elif route not in ("POST /v1/chat/completions", "POST /v1/messages"):
            await _error(send, provider, ModelError(404, f"no route {route}", False))
        else:
            await self._serve(receive, send, provider)

    async def _serve(self, receive: _Receive, send: _Send, provider: Provider) -> None:
        data = bytearray()
        while True:
            message = await receive()
            data += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            body = json.loads(data)
            if not isinstance(body, dict):
                raise ValueError("it is not a JSON object")
        except ValueError as exc:
            await _error(send, provider, ModelError(400, f"invalid JSON body: {exc}", False))
            return
        self.requests.append(body)
        self._notify()
        request = ModelRequest.parse(provider, body)
        turn = self._next(request)
        tracked = _Tracked(send)
        with anyio.CancelScope() as cut:
            self._answering.add(cut)
            try:
                await self._answer(receive, tracked, request, turn)
            finally:
                self._answering.discard(cut)
        # Cut by `close` (after a disconnect, uvicorn drops what is sent): end it cleanly.
        if not tracked.started:
            await _error(send, provider, ModelError(503, "the model server has stopped", False))
        elif not tracked.finished:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _admitted(self, headers: Mapping[str, str], *, bearer_only: bool) -> bool:
        """Whether the request shows the key: `Authorization: Bearer <key>`, or `x-api-key`
        on the Anthropic and models routes (the Anthropic SDK sends one or the other, by its
        version)."""
        if self._api_key is None:
            return True
        shown = [headers.get("authorization", "").removeprefix("Bearer ")]
        shown += [] if bearer_only else [headers.get("x-api-key", "")]
        key = self._api_key.encode()
        return any(secrets.compare_digest(key, each.encode()) for each in shown)

    def _next(self, request: ModelRequest) -> Turn:
        if self._function is not None:
            try:
                turn = self._function(request)
            except Exception as exc:
                turn = Turn(error=ModelError(500, f"the script raised {exc!r}", False))
            if isinstance(turn, Turn):
                return turn
            message = f"the script returned a {type(turn).__name__}, not a Turn"
            return Turn(error=ModelError(500, message, False))
        if not self._turns:
            count = len(self.requests)
            return Turn(error=ModelError(500, f"script exhausted at request {count}", False))
        return self._turns.pop(0)

    async def _answer(
        self, receive: _Receive, send: _Tracked, req: ModelRequest, turn: Turn
    ) -> None:
        """Play `turn`, counting a disconnect when the client goes before the answer's end."""

        async def watch() -> None:
            # uvicorn answers http.disconnect once the answer is complete as well.
            while (await receive())["type"] != "http.disconnect":
                pass
            if not send.finished:
                self.disconnects += 1
                self._notify()
            group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await anyio.sleep(turn.delay)
            if turn.error is not None:
                await _error(send, req.provider, turn.error)
            elif turn.hang and not req.stream:
                await anyio.sleep_forever()
            else:
                await self._reply(send, req, turn)
            group.cancel_scope.cancel()

    async def _reply(self, send: _Send, req: ModelRequest, turn: Turn) -> None:
        prefix = "call_" if req.provider == "openai" else "toolu_"
        calls = [
            (call.id or f"{prefix}{next(self._ids)}", call.name, json.dumps(dict(call.arguments)))
            for call in turn.tool_calls
        ]
        said = turn.text + "".join(arguments for _, _, arguments in calls)
        usage = turn.usage or ((len(json.dumps(req.messages)) + 3) // 4, (len(said) + 3) // 4)
        model = str(req.body.get("model", "scripted"))
        ident = f"{'chatcmpl-' if req.provider == 'openai' else 'msg_'}{next(self._ids)}"
        answer = wire.Answer(ident, model, turn.text, calls, usage, turn.chunks)
        include_usage = bool((req.body.get("stream_options") or {}).get("include_usage"))
        encoded = wire.encode(req.provider, answer, include_usage=include_usage)
        if not req.stream:
            await _json(send, 200, encoded.body)
            return
        head = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        for index, frame in enumerate(encoded.frames):
            if index > encoded.first:
                await anyio.sleep(turn.chunk_delay)
            await send({"type": "http.response.body", "body": frame, "more_body": True})
            if turn.hang and index == encoded.first:
                await anyio.sleep_forever()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class _Tracked:
    """An ASGI `send` that remembers whether the answer has started and ended."""

    def __init__(self, send: _Send) -> None:
        self._send = send
        self.started = False
        self.finished = False

    async def __call__(self, message: dict[str, Any]) -> None:
        self.started = True
        self.finished = message["type"] == "http.response.body" and not message.get("more_body")
        await self._send(message)


async def _json(send: _Send, status: int, body: Any, *extra: tuple[bytes, bytes]) -> None:
    data = json.dumps(body).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    await send({"type": "http.response.start", "status": status, "headers": [*head, *extra]})
    await send({"type": "http.response.body", "body": data, "more_body": False})


async def _error(send: _Send, provider: Provider, error: ModelError) -> None:
    """`error` in the provider's error JSON, with `x-should-retry` when it says."""
    retry = [(b"x-should-retry", b"true" if error.retry else b"false")]
    headers = retry if error.retry is not None else []
    await _json(
        send, error.status, wire.error_body(provider, error.status, error.message), *headers
    )


@asynccontextmanager
async def serve_model(script: Script, *, api_key: str | None = None) -> AsyncIterator[ModelServer]:
    """Serve `script` on 127.0.0.1 (an ephemeral port) until the block exits.

    Args:
        script: the turns to answer, in order (a request past the last one gets a 500 that
            says the script is exhausted), or a function from each `ModelRequest` to its turn.
        api_key: when given, a request must present it (`Authorization: Bearer <key>` to
            the OpenAI routes, `x-api-key: <key>` to the Anthropic one) or is answered 401.
    """
    server = ModelServer(script, api_key=api_key)
    async with serve_on_loopback(server) as url:
        server.url = url
        try:
            yield server
        finally:
            server.close()
