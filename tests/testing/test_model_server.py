"""`hub.testing.serve_model` checked by the clients it stands in for: pydantic-ai's OpenAI
and Anthropic models (over the official SDKs) talk to it over real HTTP and read every
answer, streamed and not, as they would a provider's."""

from __future__ import annotations

import inspect
import subprocess
import sys
import time
import types
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import httpx
import pytest

# pydantic-ai comes with the optional `llm` extra; without it these tests are skipped.
pytest.importorskip("pydantic_ai")
pytest.importorskip("openai")
pytest.importorskip("anthropic")

from openai import AsyncOpenAI
from pydantic_ai import messages as pai
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.output import OutputObjectDefinition
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from hub.testing import ModelError, ModelRequest, ModelServer, ToolCall, Turn, serve_model
from hub.testing.model_server import Script
from tests.docs.test_examples import BLOCKS, ROOT

pytestmark = pytest.mark.anyio

KEY = "sk-scripted-test"
PROVIDERS = pytest.mark.parametrize("provider", ["openai", "anthropic"])
NO_RETRIES = ModelSettings(max_retries=0)
Provider = Literal["openai", "anthropic"]


def _model(server: ModelServer, provider: Provider, *, key: str = KEY) -> Model:
    """A pydantic-ai model of `provider` pointed at the server; enter it (`async with`) so
    that its HTTP client is closed in the test's own event loop."""
    if provider == "openai":
        return OpenAIChatModel(
            "gpt-test", provider=OpenAIProvider(base_url=server.openai_base_url, api_key=key)
        )
    return AnthropicModel(
        "claude-test", provider=AnthropicProvider(api_key=key, base_url=server.anthropic_base_url)
    )


@asynccontextmanager
async def _served(
    script: Script, provider: Provider, *, key: str = KEY
) -> AsyncIterator[tuple[ModelServer, Model]]:
    """The script served with the key `KEY`, and a model of `provider` showing `key`."""
    async with (
        serve_model(script, api_key=KEY) as server,
        _model(server, provider, key=key) as model,
    ):
        yield server, model


def _ask(text: str) -> list[pai.ModelMessage]:
    return [pai.ModelRequest.user_text_prompt(text)]


def _tools(*names: str) -> ModelRequestParameters:
    return ModelRequestParameters(function_tools=[ToolDefinition(name=name) for name in names])


async def _streamed(
    model: Model, messages: Sequence[pai.ModelMessage], params: ModelRequestParameters | None = None
) -> tuple[list[pai.ModelResponseStreamEvent], pai.ModelResponse]:
    with anyio.fail_after(30):
        async with model_request_stream(model, messages, model_request_parameters=params) as stream:
            events = [event async for event in stream]
            return events, stream.get()


@PROVIDERS
async def test_a_turn_of_text_is_the_answer_with_its_scripted_usage(provider: Provider) -> None:
    async with _served([Turn("Paris.", usage=(12, 3))], provider) as (server, model):
        with anyio.fail_after(30):
            response = await model_request(model, _ask("capital of France?"))

    assert response.parts == [pai.TextPart(content="Paris.")]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 3)
    assert response.finish_reason == "stop"
    assert server.remaining == 0
    [sent] = server.requests
    assert "capital of France?" in str(sent["messages"])
    assert not sent.get("stream")


@PROVIDERS
async def test_streamed_text_arrives_as_one_delta_per_chunk(provider: Provider) -> None:
    async with _served([Turn("one two three", chunks=3)], provider) as (server, model):
        events, response = await _streamed(model, _ask("count"))

    [start] = [event for event in events if isinstance(event, pai.PartStartEvent)]
    deltas = [event for event in events if isinstance(event, pai.PartDeltaEvent)]
    assert isinstance(start.part, pai.TextPart)
    pieces = [start.part.content] + [d.delta.content_delta for d in deltas]  # type: ignore[union-attr]
    assert len(pieces) == 3
    assert "".join(pieces) == "one two three"
    assert response.parts == [pai.TextPart(content="one two three")]
    assert server.requests[0]["stream"] is True


@PROVIDERS
async def test_the_default_usage_counts_what_was_sent_and_said(provider: Provider) -> None:
    async with _served([Turn("a" * 40), Turn("a" * 40)], provider) as (_, model):
        with anyio.fail_after(30):
            short = await model_request(model, _ask("hi"))
            long = await model_request(model, _ask("hi " * 200))

    assert short.usage.output_tokens == long.usage.output_tokens == 10
    assert 0 < short.usage.input_tokens < long.usage.input_tokens


@PROVIDERS
async def test_a_tool_call_is_parsed_with_its_arguments_and_id(provider: Provider) -> None:
    call = ToolCall("weather", {"city": "Oslo", "days": 2}, id="call-weather-1")
    async with _served([Turn(tool_calls=[call])], provider) as (server, model):
        with anyio.fail_after(30):
            response = await model_request(
                model,
                _ask("weather?"),
                model_request_parameters=_tools("weather"),
            )

    [part] = response.parts
    assert isinstance(part, pai.ToolCallPart)
    assert (part.tool_name, part.tool_call_id) == ("weather", "call-weather-1")
    assert part.args_as_dict() == {"city": "Oslo", "days": 2}
    assert response.finish_reason == "tool_call"
    assert ModelRequest.parse(provider, server.requests[0]).tools == ("weather",)


@PROVIDERS
async def test_two_parallel_tool_calls_stream_in_pieces(provider: Provider) -> None:
    calls = [ToolCall("weather", {"city": "Oslo"}), ToolCall("time", {"zone": "Europe/Oslo"})]
    turn = Turn("Looking.", tool_calls=calls, chunks=3)
    async with _served([turn], provider) as (_, model):
        events, response = await _streamed(
            model, _ask("weather and time?"), _tools("weather", "time")
        )

    text, *tools = response.parts
    assert text == pai.TextPart(content="Looking.")
    assert [(p.tool_name, p.args_as_dict()) for p in tools] == [  # type: ignore[union-attr]
        ("weather", {"city": "Oslo"}),
        ("time", {"zone": "Europe/Oslo"}),
    ]
    ids = [part.tool_call_id for part in tools]  # type: ignore[union-attr]
    assert len(set(ids)) == 2
    argument_deltas = [
        event
        for event in events
        if isinstance(event, pai.PartDeltaEvent) and isinstance(event.delta, pai.ToolCallPartDelta)
    ]
    assert len(argument_deltas) >= 4


@PROVIDERS
async def test_a_scripted_error_surfaces_with_its_status(provider: Provider) -> None:
    turn = Turn(error=ModelError(400, "the prompt is too long"))
    async with _served([turn], provider) as (_, model):
        with anyio.fail_after(30), pytest.raises(ModelHTTPError) as raised:
            await model_request(model, _ask("hi"))

    assert raised.value.status_code == 400
    assert "the prompt is too long" in str(raised.value.body)


@PROVIDERS
async def test_a_retryable_error_is_retried_by_the_client_as_a_providers_is(
    provider: Provider,
) -> None:
    script = [Turn(error=ModelError(503, "overloaded")), Turn("done")]
    async with _served(script, provider) as (server, model):
        with anyio.fail_after(60):
            response = await model_request(model, _ask("hi"))

    assert response.parts == [pai.TextPart(content="done")]
    assert len(server.requests) == 2


@PROVIDERS
async def test_an_error_that_forbids_retrying_is_not_retried(provider: Provider) -> None:
    script = [Turn(error=ModelError(503, "down for good", retry=False)), Turn("never")]
    async with _served(script, provider) as (server, model):
        with anyio.fail_after(30), pytest.raises(ModelHTTPError) as raised:
            await model_request(model, _ask("hi"))

    assert raised.value.status_code == 503
    assert server.remaining == 1


@PROVIDERS
async def test_a_wrong_key_is_refused_401_without_echoing_it(provider: Provider) -> None:
    async with _served([Turn("secret")], provider, key="sk-wrong-key") as (server, model):
        with anyio.fail_after(30), pytest.raises(ModelHTTPError) as raised:
            await model_request(model, _ask("hi"), model_settings=NO_RETRIES)

    assert raised.value.status_code == 401
    assert "sk-wrong-key" not in str(raised.value.body)
    assert server.requests == []
    assert server.remaining == 1


@pytest.mark.parametrize(
    ("path", "headers", "shape"),
    [
        ("/v1/chat/completions", {}, "openai"),
        ("/v1/chat/completions", {"x-api-key": KEY}, "openai"),  # Chat Completions: Bearer only
        ("/v1/messages", {"anthropic-version": "2023-06-01"}, "anthropic"),
    ],
)
async def test_a_missing_key_is_refused_in_the_providers_error_shape(
    path: str, headers: dict[str, str], shape: str
) -> None:
    async with serve_model([Turn("secret")], api_key=KEY) as server, httpx.AsyncClient() as http:
        with anyio.fail_after(30):
            answer = await http.post(server.url + path, json={"messages": []}, headers=headers)

    assert answer.status_code == 401
    error = answer.json()["error"]
    assert error["message"] == "missing or wrong API key"
    assert (answer.json().get("type") == "error") is (shape == "anthropic")


@PROVIDERS
async def test_a_hanging_stream_cut_by_the_client_is_counted(provider: Provider) -> None:
    turn = Turn("partial answer", chunks=2, hang=True)
    async with _served([turn], provider) as (server, model):
        started = anyio.Event()
        seen: list[pai.ModelResponseStreamEvent] = []

        async def consume() -> None:
            async with model_request_stream(model, _ask("go")) as stream:
                async for event in stream:
                    seen.append(event)
                    started.set()

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(consume)
                await started.wait()
                group.cancel_scope.cancel()
            await server.wait_for_disconnects(1)

    assert server.disconnects == 1
    assert isinstance(seen[0], pai.PartStartEvent)
    assert seen[0].part == pai.TextPart(content="partial")


async def test_a_complete_answer_is_no_disconnect() -> None:
    async with (
        serve_model([Turn("a", chunks=1), Turn("b")], api_key=KEY) as server,
        _model(server, "openai") as openai,
        _model(server, "anthropic") as anthropic,
    ):
        await _streamed(openai, _ask("one"))
        with anyio.fail_after(30):
            await model_request(anthropic, _ask("two"))
            await server.wait_for_requests(2)
    assert server.disconnects == 0


async def test_closing_the_server_ends_the_answers_that_hang() -> None:
    outcome: list[int] = []
    text: list[str] = []
    begun = anyio.Event()

    async def call(url: str, http: httpx.AsyncClient) -> None:
        outcome.append((await http.post(url + "/chat/completions", json={})).status_code)

    async def stream(url: str, http: httpx.AsyncClient) -> None:
        body = {"messages": [], "stream": True}
        async with http.stream("POST", url + "/chat/completions", json=body) as answer:
            async for line in answer.aiter_lines():
                text.extend([line] if line else [])
                begun.set()

    script = [Turn(hang=True), Turn("cut short", chunks=2, hang=True)]
    with anyio.fail_after(30):
        async with (
            httpx.AsyncClient(timeout=30) as http,
            anyio.create_task_group() as group,
            serve_model(script) as server,
        ):
            group.start_soon(call, server.openai_base_url, http)
            await server.wait_for_requests(1)
            group.start_soon(stream, server.openai_base_url, http)
            await begun.wait()
    assert outcome == [503]
    assert len(text) == 1  # the first delta, then the end without [DONE]
    assert '"cut "' in text[0]
    assert server.disconnects == 0


@PROVIDERS
async def test_a_function_script_answers_from_the_conversation(provider: Provider) -> None:
    seen: list[ModelRequest] = []

    def lookup_three_times(request: ModelRequest) -> Turn:
        seen.append(request)
        if request.tool_results < 3:
            return Turn(tool_calls=[ToolCall("lookup", {"page": request.tool_results})])
        return Turn(f"{request.tool_results} pages about {request.last_user_text}")

    messages: list[pai.ModelMessage] = _ask("owls")
    async with _served(lookup_three_times, provider) as (server, model):
        with anyio.fail_after(60):
            while True:
                response = await model_request(
                    model, messages, model_request_parameters=_tools("lookup")
                )
                messages.append(response)
                calls = [part for part in response.parts if isinstance(part, pai.ToolCallPart)]
                if not calls:
                    break
                returns = [
                    pai.ToolReturnPart(
                        call.tool_name, f"page {call.args_as_dict()['page']}", call.tool_call_id
                    )
                    for call in calls
                ]
                messages.append(pai.ModelRequest(parts=returns))

    assert response.parts == [pai.TextPart(content="3 pages about owls")]
    assert [request.tool_results for request in seen] == [0, 1, 2, 3]
    assert {(r.provider, r.tools, r.last_user_text, r.stream) for r in seen} == {
        (provider, ("lookup",), "owls", False)
    }
    assert server.remaining is None


@pytest.mark.parametrize(
    ("fault", "said"),
    [("raises", "LookupError('no turn for this')"), ("returns", "returned a str, not a Turn")],
)
async def test_a_function_script_gone_wrong_answers_500_saying_so(fault: str, said: str) -> None:
    def broken(request: ModelRequest) -> Turn:
        if fault == "raises":
            raise LookupError("no turn for this")
        return "plain text"  # type: ignore[return-value]

    async with _served(broken, "openai") as (server, model):
        with anyio.fail_after(30), pytest.raises(ModelHTTPError) as raised:
            await model_request(model, _ask("hi"))

    assert raised.value.status_code == 500
    assert said in str(raised.value.body)
    assert len(server.requests) == 1  # not retried


@PROVIDERS
async def test_an_exhausted_script_fails_clearly_and_at_once(provider: Provider) -> None:
    async with _served([Turn("only one")], provider) as (server, model):
        with anyio.fail_after(30):
            await model_request(model, _ask("first"))
            with pytest.raises(ModelHTTPError) as raised:
                await model_request(model, _ask("second"))

    assert raised.value.status_code == 500
    assert "script exhausted at request 2" in str(raised.value.body)
    assert len(server.requests) == 2


async def test_the_json_schema_asked_for_is_in_the_request() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    params = ModelRequestParameters(
        output_mode="native",
        output_object=OutputObjectDefinition(json_schema=schema, name="place"),
        allow_text_output=True,
    )
    seen: list[ModelRequest] = []

    def place(request: ModelRequest) -> Turn:
        seen.append(request)
        return Turn('{"city": "Oslo"}')

    async with _served(place, "openai") as (_, model):
        with anyio.fail_after(30):
            response = await model_request(model, _ask("where?"), model_request_parameters=params)

    assert response.parts == [pai.TextPart(content='{"city": "Oslo"}')]
    assert seen[0].json_schema is not None
    assert seen[0].json_schema["properties"] == schema["properties"]


async def test_the_models_are_listed_to_both_sdks() -> None:
    async with (
        serve_model([], api_key=KEY) as server,
        AsyncOpenAI(base_url=server.openai_base_url, api_key=KEY, max_retries=0) as client,
    ):
        with anyio.fail_after(30):
            listed = [model.id async for model in client.models.list()]
    assert listed == ["scripted"]


async def test_a_delay_holds_the_answer_back() -> None:
    async with _served([Turn("late", delay=0.3)], "openai") as (_, model):
        began = time.monotonic()
        with anyio.fail_after(30):
            response = await model_request(model, _ask("hi"))
    assert time.monotonic() - began >= 0.3
    assert response.parts == [pai.TextPart(content="late")]


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (lambda: Turn(chunks=0), "Turn.chunks"),
        (lambda: Turn(delay=-1), "Turn.delay"),
        (lambda: ModelError(200, "fine"), "ModelError.status"),
        (lambda: ModelServer([Turn("a"), "b"]), r"script\[1\] is a str, not a Turn"),  # type: ignore[list-item]
    ],
)
def test_a_bad_script_names_what_to_fix(make: Any, names: str) -> None:
    with pytest.raises((ValueError, TypeError), match=names):
        make()


def test_importing_the_model_server_loads_no_sdk_and_no_test_framework() -> None:
    loaded = {"pytest", "_pytest", "pydantic_ai", "openai", "anthropic"}
    probe = (
        "import sys, hub.testing.model_server; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(loaded)!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"


async def test_the_testing_pages_model_server_example_passes() -> None:
    [block] = [
        block
        for block in BLOCKS
        if block.path == ROOT / "docs" / "testing.md" and "serve_model(" in block.text
    ]
    module = types.ModuleType("model_server_example")
    exec(compile(block.text, block.name, "exec"), module.__dict__)  # runs as `import`
    tests = [value for name, value in vars(module).items() if name.startswith("test_")]
    assert len(tests) == 1
    assert inspect.iscoroutinefunction(tests[0])
    await tests[0]()
