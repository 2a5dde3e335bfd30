"""The @a2a-js/sdk side of the interop tests: its agent that serves only gRPC
(tests/interop/js/server.mjs) and its client that speaks only gRPC (tests/interop/js/client.mjs),
each a node child process on loopback.

Node and its packages are not the hub's dependencies. `make js-sdk` installs the pinned
packages (tests/interop/js/package.json and its lock file) into tests/interop/js/node_modules,
which git ignores, when npm is on the machine; without node 20+ or without the packages, the
tests marked `needs_js` skip and `JS_MISSING` says why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["JS_MISSING", "JsAgent", "JsClient", "JsError", "js_client", "js_grpc_agent", "needs_js"]

JS_DIR = Path(__file__).parent / "js"
START_TIMEOUT = 60.0
LINE_LIMIT = 16 * 1024 * 1024


def _missing() -> str | None:
    """Why the node pieces cannot run here, or None when they can."""
    node = shutil.which("node")
    if node is None:
        return "node is not installed: the @a2a-js/sdk interop tests need node 20+ and npm"
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.strip()
    if int(version.lstrip("v").split(".")[0] or 0) < 20:
        return f"node {version} is too old: @a2a-js/sdk 1.3 needs node 20+"
    if not (JS_DIR / "node_modules" / "@a2a-js" / "sdk").is_dir():
        return "@a2a-js/sdk is not installed: run `make js-sdk` (npm ci in tests/interop/js)"
    return None


JS_MISSING = _missing()
needs_js = pytest.mark.skipif(JS_MISSING is not None, reason=JS_MISSING or "")


class JsError(Exception):
    """An error the JS SDK raised for a request: its class name, the A2A reason (the gRPC
    ErrorInfo's), the gRPC status code and the message."""

    def __init__(self, name: str, reason: str, status: int | None, message: str) -> None:
        super().__init__(f"{name} ({reason or 'no reason'}, gRPC status {status}): {message}")
        self.name = name
        self.reason = reason
        self.status = status
        self.message = message


@dataclass
class _Node:
    """A node child process: JSON lines on its stdout, its stderr kept for failure reports."""

    process: Process
    stdout: BufferedByteReceiveStream
    said: deque[str] = field(default_factory=lambda: deque(maxlen=200))

    async def line(self) -> dict[str, Any]:
        """The next JSON line it prints; raises with its stderr if it exits first."""
        try:
            raw = await self.stdout.receive_until(b"\n", LINE_LIMIT)
        except (anyio.EndOfStream, anyio.IncompleteRead) as exc:
            raise RuntimeError(f"node exited; it said:\n{self.output()}") from exc
        line: dict[str, Any] = json.loads(raw)
        return line

    async def write(self, line: Mapping[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(line).encode() + b"\n")

    def output(self) -> str:
        return "\n".join(self.said)


@asynccontextmanager
async def _node(script: str, *args: str) -> AsyncIterator[_Node]:
    """`node script args` in tests/interop/js; on exit its stdin is closed (both scripts stop
    then) and it is waited for, killed if it lingers."""
    process = await anyio.open_process(
        ["node", script, *args],
        cwd=JS_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    node = _Node(process, BufferedByteReceiveStream(process.stdout))

    async def keep_stderr() -> None:
        assert process.stderr is not None
        async for chunk in process.stderr:
            node.said.extend(chunk.decode(errors="replace").splitlines())

    async with anyio.create_task_group() as group:
        group.start_soon(keep_stderr)
        try:
            yield node
        finally:
            with anyio.CancelScope(shield=True):
                await process.stdin.aclose()
                with anyio.move_on_after(30):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                group.cancel_scope.cancel()


@dataclass(frozen=True)
class JsAgent:
    """The running JS agent: its gRPC address (`127.0.0.1:PORT`) and its card (JSON form)."""

    address: str
    card: dict[str, Any]


@asynccontextmanager
async def js_grpc_agent() -> AsyncIterator[JsAgent]:
    """The @a2a-js/sdk agent of tests/interop/js/server.mjs, serving only gRPC on a free
    loopback port: "wait…" works until canceled, "fail…" fails, anything else is echoed a
    word per artifact chunk."""
    async with _node("server.mjs") as node:
        with anyio.fail_after(START_TIMEOUT):
            first = await node.line()
        yield JsAgent(address=first["address"], card=first["card"])


class JsClient:
    """The @a2a-js/sdk gRPC client of tests/interop/js/client.mjs. Requests and answers are
    in the A2A JSON form; `headers` go out as gRPC metadata. Requests run concurrently in the
    client, so a cancel can be sent while a stream is open."""

    def __init__(self, node: _Node, transport: str) -> None:
        self._node = node
        self.transport = transport
        """The class name of the SDK transport the client chose from the card."""
        self._ids = count(1)
        self._answers: dict[str, MemoryObjectSendStream[dict[str, Any]]] = {}

    async def dispatch(self) -> None:
        """Hands each answer line to the request it is for, until the client exits."""
        try:
            while True:
                line = await self._node.line()
                await self._answers[line["id"]].send(line)
        except RuntimeError:
            for answers in self._answers.values():
                answers.close()

    async def _ask(
        self, op: str, params: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> MemoryObjectReceiveStream[dict[str, Any]]:
        request_id = str(next(self._ids))
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](1000)
        self._answers[request_id] = send
        await self._node.write(
            {"id": request_id, "op": op, "params": dict(params), "headers": dict(headers or {})}
        )
        return receive

    @staticmethod
    def _raise(line: dict[str, Any]) -> None:
        if "error" in line:
            error = line["error"]
            raise JsError(error["name"], error["reason"], error["status"], error["message"])

    async def call(
        self, op: str, params: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> Any:
        """The answer to a unary request (`send`, `get`, `list`, `cancel`, `card`); raises
        `JsError` with what the SDK raised."""
        answers = await self._ask(op, params, headers)
        try:
            line = await answers.receive()
        except anyio.EndOfStream as exc:
            raise RuntimeError(f"the JS client exited; it said:\n{self._node.output()}") from exc
        self._raise(line)
        return line["result"]

    async def stream(
        self, op: str, params: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """The events of a streaming request (`stream`, `subscribe`), each a StreamResponse
        in the JSON form, as they arrive; raises `JsError` if the SDK raised."""
        answers = await self._ask(op, params, headers)
        async for line in answers:
            self._raise(line)
            if "event" not in line:
                return
            yield line["event"]
        raise RuntimeError(f"the JS client exited; it said:\n{self._node.output()}")


@asynccontextmanager
async def js_client(target: str) -> AsyncIterator[JsClient]:
    """The JS gRPC client for `target`: an http(s) URL whose agent card offers a GRPC
    interface, or a gRPC address `host:port`."""
    async with _node("client.mjs", target) as node:
        with anyio.fail_after(START_TIMEOUT):
            first = await node.line()
        if "error" in first:
            error = first["error"]
            raise JsError(error["name"], error["reason"], error["status"], error["message"])
        client = JsClient(node, first["transport"])
        async with anyio.create_task_group() as group:
            group.start_soon(client.dispatch)
            yield client
            group.cancel_scope.cancel()
