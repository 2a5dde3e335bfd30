"""A bare Litestar JSON echo: the floor for what a JSON-RPC request costs on this stack.

A Litestar app with one POST handler at `/`: Litestar decodes the JSON body, the handler
answers with the JSON-RPC result of a completed task holding the message's text (for
`SendStreamingMessage`, the same result as the one event of an SSE body), and Litestar
encodes it. No task, no store, no validation beyond JSON: what is left of the hub's
SendMessage cost beside this one is the hub's own work. Served by uvicorn with the same
flags as the hub and the reference (`bench.reference_agent.UVICORN_FLAGS`).

    python -m bench.litestar_echo --port 8003
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import uvicorn
from litestar import Litestar, Response, get, post

from bench.reference_agent import UVICORN_FLAGS

__all__ = ["create_echo_app", "main"]

_CARD = {
    "name": "litestar-echo",
    "description": "answers every message with a completed task holding its text",
    "version": "1.0.0",
    "supportedInterfaces": [],
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [],
}


@get("/.well-known/agent-card.json", sync_to_thread=False)
def card() -> dict[str, Any]:
    """The card, so the harness can tell the server is up."""
    return _CARD


@post("/", status_code=200, sync_to_thread=False)
def echo(data: dict[str, Any]) -> Response[Any]:
    """The JSON-RPC result of a completed task holding the message's text."""
    message = data["params"]["message"]
    result = {
        "task": {
            "id": message["messageId"],
            "contextId": message["messageId"],
            "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a-1", "parts": message["parts"]}],
        }
    }
    reply = {"jsonrpc": "2.0", "id": data["id"], "result": result}
    if data["method"] == "SendStreamingMessage":
        body = b"data: %s\n\n" % json.dumps(reply).encode()
        return Response(body, media_type="text/event-stream")
    return Response(reply)


def create_echo_app() -> Litestar:
    """The app: the card and the echo handler, nothing else."""
    return Litestar(route_handlers=[card, echo], openapi_config=None)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8003)
    args = parser.parse_args(argv)
    uvicorn.run(create_echo_app(), host=args.host, port=args.port, **UVICORN_FLAGS)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
