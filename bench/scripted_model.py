"""The model of `bench.orchestrator`: the scripted model server, as a process of its own.

An OpenAI-compatible server (`hub.testing.model_server`'s, under uvicorn with the flags every
benchmarked server runs with) whose turns follow the plan the user's message names:
`plan <N> <shape> <delay>`. `sequential`: one tool call a turn until N have answered, then
the answer (N + 1 turns); `parallel`: N calls in the first turn, then the answer (2 turns).
Each turn is sent after `delay` seconds. The tool called is the first one offered, with its
first required argument (the hub's partner tool takes `message`, Agent Framework's agent tool
`task`), so the two sides of the benchmark get the same turns.

    python -m bench.scripted_model --port 8090     # then: plan 4 sequential 0.2
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from typing import Any

import uvicorn

from bench.reference_agent import UVICORN_FLAGS
from hub.testing.model_server import ModelError, ModelRequest, ModelServer, ToolCall, Turn

__all__ = ["PLAN", "main", "script"]

PLAN = re.compile(r"plan (\d+) (sequential|parallel) ([0-9.]+)")
"""How a message names its plan: calls, shape, seconds per turn."""


def script(request: ModelRequest) -> Turn:
    """The next turn of the plan the user's message names."""
    match = PLAN.search(request.last_user_text)
    if match is None or not request.tools:
        return Turn(error=ModelError(400, "the message names no plan, or no tool is offered"))
    calls, shape, delay = int(match[1]), match[2], float(match[3])
    done = request.tool_results
    # Sequential: one call a turn until N have answered; parallel: N calls in the first turn.
    wanted = int(done < calls) if shape == "sequential" else calls * (done == 0)
    if not wanted:
        return Turn(text=f"done: {done} partner answers", delay=delay)
    tool = request.tools[0]
    argument = _first_argument(request.body, tool)
    return Turn(
        tool_calls=[ToolCall(tool, {argument: f"step {done + i + 1}"}) for i in range(wanted)],
        delay=delay,
    )


def _first_argument(body: Mapping[str, Any], tool: str) -> str:
    for offered in body.get("tools") or []:
        function = offered.get("function") or {}
        if function.get("name") == tool:
            parameters = function.get("parameters") or {}
            required = parameters.get("required") or list(parameters.get("properties") or {})
            if required:
                return str(required[0])
    return "message"


def main(argv: list[str] | None = None) -> None:
    """Serve the script until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    args = parser.parse_args(argv)
    uvicorn.run(ModelServer(script), host=args.host, port=args.port, **UVICORN_FLAGS)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
