"""A local OTLP/HTTP traces receiver for the telemetry benchmark: accepts
`POST /v1/traces` (protobuf), counts the spans, and answers `GET /stats` with
`{"requests": N, "spans": M}` so the report can show that the traces really arrived.

    python -m bench.otlp_sink --port 4318
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import uvicorn
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_EMPTY = ExportTraceServiceResponse().SerializeToString()


class Sink:
    def __init__(self) -> None:
        self.requests = 0
        self.spans = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        if scope["method"] == "POST" and scope["path"] == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            self.requests += 1
            self.spans += sum(
                len(scope_spans.spans)
                for resource_spans in request.resource_spans
                for scope_spans in resource_spans.scope_spans
            )
            await _answer(send, _EMPTY, b"application/x-protobuf")
        else:
            stats = json.dumps({"requests": self.requests, "spans": self.spans}).encode()
            await _answer(send, stats, b"application/json")


async def _answer(send: Any, body: bytes, media_type: bytes) -> None:
    headers = [(b"content-type", media_type)]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(Sink(), host="127.0.0.1", port=args.port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()
