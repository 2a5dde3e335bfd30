"""CPU of the `openai` SDK's request transform for a plan's transcript, as it grows.

Each Chat Completions call through the SDK (pydantic-ai's OpenAI model makes its calls so)
first walks the whole request against the SDK's typed parameters
(`openai._utils._transform.async_maybe_transform`). An orchestrator's plan sends the whole
transcript on every model call, so this cost grows with the tool results so far; this
measures it alone, on the request a sequential plan sends after k partner calls (the
instructions, the user's message, k assistant turns of one call each and their results, one
tool offered), in CPU time per transform.

    python -m bench.openai_transform [--results 0,1,4,8,16] [--repeat 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from bench.target import pin_self

__all__ = ["main", "request"]


def request(results: int) -> dict[str, Any]:
    """The Chat Completions parameters of a plan's model call after `results` tool results."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You plan with the partner agent."},
        {"role": "user", "content": "plan 16 sequential 0"},
    ]
    for i in range(results):
        arguments = json.dumps({"message": f"step {i + 1}"})
        call = {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "a2a_partner", "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": "hello"})
    tool = {
        "name": "a2a_partner",
        "description": "The partner agent.",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    }
    return {
        "model": "scripted",
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": tool}],
    }


async def _measure(results: list[int], repeat: int) -> None:
    from openai._utils._transform import async_maybe_transform
    from openai.types.chat import completion_create_params

    params = completion_create_params.CompletionCreateParamsStreaming
    for count in results:
        body = request(count)
        await async_maybe_transform(body, params)
        started = time.process_time()
        for _ in range(repeat):
            await async_maybe_transform(body, params)
        spent = (time.process_time() - started) / repeat
        print(f"| {count} | {len(body['messages'])} | {spent * 1e3:.3f} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    """Print a Markdown table: tool results, messages, CPU ms per transform."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="0,1,4,8,16")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    pin_self(1)
    print("| tool results | messages | CPU ms per transform |")
    print("| ---: | ---: | ---: |")
    asyncio.run(_measure([int(r) for r in args.results.split(",")], args.repeat))


if __name__ == "__main__":
    main()
