"""A local OTLP/HTTP traces receiver for the telemetry benchmark: accepts
`POST /v1/traces` (protobuf), counts the spans, and answers `GET /stats` with
`{"requests": N, "spans": M}` so the report can show that the traces really arrived.

    python -m bench.otlp_sink --port 4318
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_EMPTY = ExportTraceServiceResponse().SerializeToString()


class Sink:
    """The receiver as an ASGI app; `received()` is called with each export request (the
    tests' receiver keeps the spans)."""

    def __init__(self) -> None:
        self.exports = 0
        self.span_count = 0

    def received(self, request: ExportTraceServiceRequest, scope: dict[str, Any]) -> None:
        """Count the spans of one export."""
        self.exports += 1
        self.span_count += sum(
            len(scope_spans.spans)
            for resource_spans in request.resource_spans
            for scope_spans in resource_spans.scope_spans
        )

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        if scope["method"] == "POST" and scope["path"] == "/v1/traces":
            self.received(ExportTraceServiceRequest.FromString(body), scope)
            await _answer(send, _EMPTY, b"application/x-protobuf")
        else:
            stats = json.dumps({"requests": self.exports, "spans": self.span_count}).encode()
            await _answer(send, stats, b"application/json")


async def _answer(send: Any, body: bytes, media_type: bytes) -> None:
    headers = [(b"content-type", media_type)]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextlib.contextmanager
def running_sink(*, core: int | None = None) -> Iterator[str]:
    """A receiver in a child process (pinned to `core` when given) until the block ends;
    yields its URL once it answers.

    Raises:
        RuntimeError: it did not start within 20 s.
    """
    from bench.target import REPO, free_port

    port = free_port()
    command = [sys.executable, "-m", "bench.otlp_sink", "--port", str(port)]
    if core is not None:
        command = ["taskset", "-c", str(core), *command]
    process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"{url}/stats", timeout=1.0)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the OTLP receiver did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(Sink(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
