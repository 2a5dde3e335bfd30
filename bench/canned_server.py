"""A server that answers every POST with a fixed A2A reply, to calibrate the load generator.

It does no A2A work at all, so a run against it shows the ceiling of the harness and what the
load generator itself costs per request. The reply is chosen from the method in the request:
a `SendMessage` result as JSON, or a three-event SSE stream for `SendStreamingMessage`; a GET
answers with a card naming the server, so it also serves as the fastest possible partner
(`bench.delegation`).

    python -m bench.canned_server --port 8002 [--delay 0.008]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
from collections import Counter
from typing import cast

import httptools
import uvloop

__all__ = ["main"]

_ARTIFACT = {"artifactId": "a-1", "parts": [{"text": "hello"}]}
_TASK: dict[str, object] = {
    "id": "t-1",
    "contextId": "c-1",
    "status": {"state": "TASK_STATE_COMPLETED"},
    "artifacts": [_ARTIFACT],
}
_SEND = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": _TASK}}).encode()
_EVENTS = [
    {"task": {**_TASK, "status": {"state": "TASK_STATE_SUBMITTED"}, "artifacts": []}},
    {"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "artifact": _ARTIFACT}},
    {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": _TASK["status"]}},
]


def _response(content_type: bytes, body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n%s" % (
        content_type,
        len(body),
        body,
    )


_STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def _chunk(event: dict[str, object]) -> bytes:
    # Chunked, like a real SSE server, so the client's chunked path is exercised.
    frame = b"data: %s\r\n\r\n" % json.dumps({"jsonrpc": "2.0", "id": 1, "result": event}).encode()
    return b"%x\r\n%s\r\n" % (len(frame), frame)


def _stream_response() -> bytes:
    return _STREAM_HEAD + b"".join(_chunk(event) for event in _EVENTS) + b"0\r\n\r\n"


def _stream_parts() -> tuple[bytes, bytes]:
    """The stream split in two: the headers and the task event, then the rest."""
    first, *rest = _EVENTS
    return _STREAM_HEAD + _chunk(first), b"".join(_chunk(e) for e in rest) + b"0\r\n\r\n"


def _card(host: str, port: int, streaming: bool) -> bytes:
    """A card naming this server's JSON-RPC 1.0 endpoint, so a hub can call it as a partner.
    Without `streaming`, a partner's tool sends one SendMessage per call."""
    return json.dumps(
        {
            "name": "canned",
            "description": "answers every message with the same completed task",
            "version": "1.0.0",
            "supportedInterfaces": [
                {
                    "url": f"http://{host}:{port}/",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ],
            "capabilities": {"streaming": streaming},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "canned", "name": "canned", "description": "canned", "tags": []}],
        }
    ).encode()


_METHOD = re.compile(rb'"method"\s*:\s*"([A-Za-z/]+)"')

_REPLIES = {
    "send": _response(b"application/json", _SEND),
    "task": _response(
        b"application/json", json.dumps({"jsonrpc": "2.0", "id": 1, "result": _TASK}).encode()
    ),
    "canceled": _response(
        b"application/json",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {**_TASK, "status": {"state": "TASK_STATE_CANCELED"}, "artifacts": []},
            }
        ).encode(),
    ),
    "stream": _stream_response(),
}
_STREAM_PARTS = _stream_parts()


class _CannedProtocol(asyncio.Protocol):
    def __init__(self, delay: float, card: bytes, counts: Counter[str] | None) -> None:
        self._delay = delay
        self._card = card
        self._counts = counts
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._body: list[bytes] = []
        self._url = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            if self._transport is not None:
                self._transport.close()

    def on_url(self, url: bytes) -> None:
        self._url = url

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        body = b"".join(self._body)
        self._body = []
        assert self._transport is not None
        if self._parser.get_method() == b"GET":
            if self._counts is not None and self._url == b"/_counts":
                counts = json.dumps(self._counts).encode()
                self._transport.write(_response(b"application/json", counts))
                return
            self._transport.write(self._card)
            return
        if self._counts is not None:
            match = _METHOD.search(body)
            self._counts[match.group(1).decode() if match else "?"] += 1
        if b"SendStreamingMessage" in body:
            if self._delay > 0:
                # The task event at once, the rest when the work is done: as a real agent.
                head, rest = _STREAM_PARTS
                self._transport.write(head)
                asyncio.get_running_loop().call_later(self._delay, self._transport.write, rest)
                return
            reply = _REPLIES["stream"]
        elif b"SendMessage" not in body:
            # Only work takes time: a cancel or a read is answered at once, with the task.
            canceled = b"CancelTask" in body
            self._transport.write(_REPLIES["canceled" if canceled else "task"])
            return
        else:
            reply = _REPLIES["send"]
        if self._delay > 0:
            asyncio.get_running_loop().call_later(self._delay, self._transport.write, reply)
        else:
            self._transport.write(reply)


async def _serve(host: str, port: int, delay: float, streaming: bool, count: bool) -> None:
    loop = asyncio.get_running_loop()
    card = _response(b"application/json", _card(host, port, streaming))
    counts: Counter[str] | None = Counter() if count else None
    server = await loop.create_server(lambda: _CannedProtocol(delay, card, counts), host, port)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    """Serve canned replies until interrupted."""
    parser = argparse.ArgumentParser(description="Canned A2A replies, for calibration")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8002)
    parser.add_argument(
        "--delay",
        type=float,
        default=0.0,
        help="seconds to hold each reply, to set the request rate a given concurrency reaches",
    )
    parser.add_argument("--streaming", action="store_true", help="advertise streaming in the card")
    parser.add_argument(
        "--count", action="store_true", help="count JSON-RPC methods; GET /_counts shows them"
    )
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        uvloop.run(_serve(args.host, args.port, args.delay, args.streaming, args.count))


if __name__ == "__main__":
    main()
