"""The framework side of `bench.orchestrator`: the same plan run by Microsoft Agent Framework.

An `Agent` on Agent Framework's OpenAI Chat Completions client (pointed at the benchmark's
scripted model server) with one tool, the partner as an `A2AAgent` made a tool
(`A2AAgent.as_tool()`, the framework's way to use a remote A2A agent as a tool), served over
A2A by the framework's own `A2AExecutor` on the official SDK's request handler and in-memory
task store, under uvicorn with the flags every benchmarked server runs with. It is driven
exactly as the hub's orchestrator is: a SendMessage per plan.

It runs in the benchmark's own environment, never the project's (`bench/.venv-maf`, made by
`python -m bench.orchestrator --install` or by hand):

    python3 -m venv bench/.venv-maf
    bench/.venv-maf/bin/pip install agent-framework-a2a agent-framework-openai \
        'a2a-sdk[http-server]' 'uvicorn[standard]'
    bench/.venv-maf/bin/python -m bench.orchestrator_maf --port 8003 \
        --model-url http://127.0.0.1:8090/v1 --partner-url http://127.0.0.1:8002
"""

from __future__ import annotations

import argparse

import uvicorn
from a2a.types import AgentSkill
from agent_framework import Agent
from agent_framework.a2a import A2AAgent, A2AExecutor
from agent_framework.openai import OpenAIChatCompletionClient
from starlette.applications import Starlette

from bench.reference_agent import UVICORN_FLAGS, jsonrpc_card, sdk_app

__all__ = ["INSTRUCTIONS", "build_app", "main"]

INSTRUCTIONS = "You plan with the partner agent: call it as the plan needs, then answer."
"""The system prompt on both sides of the benchmark (the scripted model ignores it)."""


def build_app(base_url: str, model_url: str, partner_url: str) -> Starlette:
    """The planner agent served over A2A at `base_url`: its card and JSON-RPC at `/`."""
    partner = A2AAgent(
        name="partner", description="The partner agent: answers any message.", url=partner_url
    )
    client = OpenAIChatCompletionClient(model="scripted", base_url=model_url, api_key="bench")
    # A plan of 16 sequential calls is 17 model calls; the default stops sooner.
    client.function_invocation_configuration["max_iterations"] = 64
    agent = Agent(
        client=client,
        name="planner",
        instructions=INSTRUCTIONS,
        tools=[partner.as_tool()],
    )
    card = jsonrpc_card(
        base_url,
        name="planner",
        description="Plans with the partner agent (Agent Framework).",
        skill=AgentSkill(
            id="planner",
            name="Planner",
            description="Plans with the partner agent.",
            tags=["benchmark"],
        ),
    )
    return sdk_app(card, A2AExecutor(agent))


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8003)
    parser.add_argument("--model-url", required=True, help="the OpenAI-compatible base URL")
    parser.add_argument("--partner-url", required=True, help="the partner agent's A2A URL")
    args = parser.parse_args(argv)
    app = build_app(f"http://{args.host}:{args.port}/", args.model_url, args.partner_url)
    uvicorn.run(app, host=args.host, port=args.port, **UVICORN_FLAGS)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
