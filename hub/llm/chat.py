"""`ChatModel`: one entry of `models:`, asked for one step of a plan at a time.

A step sends the instructions, the transcript and the tools, and returns the model's text (its
deltas handed to `on_text` as they stream), the tool calls it asked for and the tokens it
spent. With `tool_calling: native` the provider's own tool calls are used; with `json`, the
model is asked for one JSON object per step, constrained by a schema through the server's
structured output (`hub.llm.json_mode`), for small local models that cannot call tools.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hub.config import ModelSettings
from hub.errors import ConfigError, SkillError
from hub.llm import json_mode
from hub.llm.transcript import Entry, ToolCall, ToolSpec
from hub.protocol.urls import shown_url

__all__ = ["ChatModel", "ModelError", "Step", "require_llm_extra"]

LLM_EXTRA = "pip install 'a2a-hub[llm]'"

TextSink = Callable[[str], Awaitable[None]]


def require_llm_extra(what: str) -> None:
    """Stop with the pip command when the `llm` extra (pydantic-ai) is not installed.

    Raises:
        ConfigError: it is not; the message names `what` needs it.
    """
    if importlib.util.find_spec("pydantic_ai") is None:
        raise ConfigError(f"{what} needs a language model library: run {LLM_EXTRA}")


class ModelError(SkillError):
    """A model could not be asked: unreachable, refused the key, too slow, or answered
    something unreadable. The message names the model's entry, never its key."""


@dataclass(frozen=True, slots=True)
class Step:
    """What the model answered in one step."""

    text: str
    calls: tuple[ToolCall, ...]
    input_tokens: int
    output_tokens: int


class ChatModel:
    """A model of `models:`, by its entry name (which every error names)."""

    def __init__(self, name: str, settings: ModelSettings) -> None:
        self.name = name
        self.settings = settings
        self._model: Any = None
        self._client: Any = None

    @property
    def json_mode(self) -> bool:
        return self.settings.tool_calling == "json"

    def describe(self) -> str:
        where = f" at {shown_url(self.settings.base_url)}" if self.settings.base_url else ""
        return f"model '{self.name}' ({self.settings.provider} {self.settings.model}{where})"

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return self.settings.price.cost(input_tokens, output_tokens)

    async def step(
        self,
        instructions: str,
        transcript: Sequence[Entry],
        tools: Sequence[ToolSpec],
        on_text: TextSink,
        *,
        call_required: bool = False,
    ) -> Step:
        """Ask the model for its next step; with `call_required`, one that calls a tool.

        Raises:
            ModelError: the model could not be asked, or its answer could not be read.
        """
        from pydantic_ai import exceptions

        try:
            required = call_required and bool(tools)
            if self.json_mode:
                return await self._json_step(instructions, transcript, tools, required)
            return await self._native_step(instructions, transcript, tools, on_text, required)
        except exceptions.ModelAuthenticationError as exc:
            raise ModelError(
                f"{self.describe()} refused the API key "
                f"(HTTP {getattr(exc, 'status_code', 401)}); check the variable its api_key names"
            ) from None
        except exceptions.ModelTimeoutError:
            raise ModelError(
                f"{self.describe()} did not answer within {self.settings.timeout:g} s"
            ) from None
        except exceptions.ModelConnectionError:
            raise ModelError(f"{self.describe()} cannot be reached") from None
        except exceptions.ModelHTTPError as exc:
            raise ModelError(
                f"{self.describe()} answered HTTP {exc.status_code}{_reason(exc.body)}"
            ) from None
        except exceptions.ModelAPIError as exc:
            raise ModelError(f"{self.describe()} failed: {type(exc).__name__}") from None
        except exceptions.UnexpectedModelBehavior as exc:
            raise ModelError(
                f"{self.describe()} answered something the hub cannot read: {exc.message[:200]}"
            ) from None

    async def _native_step(
        self,
        instructions: str,
        transcript: Sequence[Entry],
        tools: Sequence[ToolSpec],
        on_text: TextSink,
        call_required: bool,
    ) -> Step:
        from pydantic_ai.direct import model_request_stream
        from pydantic_ai.messages import PartDeltaEvent, PartStartEvent, TextPart, TextPartDelta
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.tools import ToolDefinition

        parameters = ModelRequestParameters(
            function_tools=[
                ToolDefinition(
                    name=tool.name,
                    description=tool.description,
                    parameters_json_schema=tool.input_schema,
                )
                for tool in tools
            ],
            allow_text_output=not call_required,
        )
        messages = _native_messages(instructions, transcript)
        async with model_request_stream(
            self._pydantic_model(),
            messages,
            model_settings=self._model_settings(),
            model_request_parameters=parameters,
            instrument=False,
        ) as stream:
            async for event in stream:
                delta = ""
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    delta = event.part.content
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    delta = event.delta.content_delta
                if delta:
                    await on_text(delta)
            response = stream.get()
        return _step_of(response)

    async def _json_step(
        self,
        instructions: str,
        transcript: Sequence[Entry],
        tools: Sequence[ToolSpec],
        call_required: bool,
    ) -> Step:
        from pydantic_ai.direct import model_request
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.output import OutputObjectDefinition

        parameters = ModelRequestParameters(
            output_mode="native",
            output_object=OutputObjectDefinition(
                json_schema=json_mode.step_schema(tools, answer=not call_required), name="step"
            ),
            allow_text_output=False,
        )
        messages = json_mode.messages(instructions, transcript, tools)
        response = await model_request(
            self._pydantic_model(),
            messages,
            model_settings=self._model_settings(),
            model_request_parameters=parameters,
            instrument=False,
        )
        text = "".join(getattr(part, "content", "") for part in response.parts)
        usage = response.usage
        text, calls = json_mode.read_step(text, tools)
        return Step(text, calls, usage.input_tokens, usage.output_tokens)

    def _model_settings(self) -> Any:
        settings: dict[str, Any] = {"timeout": self.settings.timeout}
        if self.settings.temperature is not None:
            settings["temperature"] = self.settings.temperature
        if self.settings.seed is not None:
            settings["seed"] = self.settings.seed
        if self.settings.max_tokens is not None:
            settings["max_tokens"] = self.settings.max_tokens
        return settings

    def _pydantic_model(self) -> Any:
        if self._model is None:
            self._model, self._client = _build_model(self.settings)
        return self._model

    async def aclose(self) -> None:
        """Close the model's HTTP client (the hub's shut-down does); the next step opens a
        new one."""
        client, self._model, self._client = self._client, None, None
        if client is not None:
            await client.close()


def _build_model(settings: ModelSettings) -> tuple[Any, Any]:
    """The pydantic-ai model of an entry and its SDK client, which retries once (the plan
    decides what a failed step means) and waits at most the entry's timeout."""
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    if settings.provider == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        anthropic = AsyncAnthropic(
            api_key=key or "none",
            base_url=settings.base_url,
            max_retries=1,
            timeout=settings.timeout,
        )
        provider = AnthropicProvider(anthropic_client=anthropic)
        return AnthropicModel(settings.model, provider=provider), anthropic
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    # A local server needs no key; the SDK insists on one.
    openai = AsyncOpenAI(
        api_key=key or "none", base_url=settings.base_url, max_retries=1, timeout=settings.timeout
    )
    return OpenAIChatModel(settings.model, provider=OpenAIProvider(openai_client=openai)), openai


def _native_messages(instructions: str, transcript: Sequence[Entry]) -> list[Any]:
    """The transcript as pydantic-ai messages: the caller's and the tools' turns as requests
    (consecutive tool results in one), the model's as responses with their tool calls."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    messages: list[Any] = []
    pending: list[Any] = [SystemPromptPart(instructions)] if instructions else []
    for entry in transcript:
        if entry.role == "assistant":
            if pending:
                messages.append(ModelRequest(parts=pending))
                pending = []
            parts: list[Any] = [TextPart(entry.text)] if entry.text else []
            parts += [
                ToolCallPart(call.tool, call.arguments, tool_call_id=call.id)
                for call in entry.calls
            ]
            messages.append(ModelResponse(parts=parts or [TextPart("")]))
        elif entry.role == "tool":
            pending.append(
                ToolReturnPart(entry.tool or "", entry.text, tool_call_id=entry.call_id or "")
            )
        else:
            pending.append(UserPromptPart(entry.text))
    if pending:
        messages.append(ModelRequest(parts=pending))
    return messages


def _step_of(response: Any) -> Step:
    from pydantic_ai.messages import TextPart, ToolCallPart

    text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
    calls = tuple(
        ToolCall(id=part.tool_call_id, tool=part.tool_name, arguments=_arguments(part))
        for part in response.parts
        if isinstance(part, ToolCallPart)
    )
    usage = response.usage
    return Step(text, calls, usage.input_tokens, usage.output_tokens)


def _arguments(part: Any) -> dict[str, Any]:
    """A tool call's arguments as a dict; arguments that are not a JSON object are kept
    under `_unreadable`, for the plan to answer the model with an error."""
    try:
        arguments = part.args_as_dict()
    except (ValueError, TypeError):
        return {"_unreadable": str(part.args)[:500]}
    return arguments if isinstance(arguments, dict) else {"_unreadable": json.dumps(arguments)}


def _reason(body: object) -> str:
    """A provider's short error message (its `error.message`), never the whole body."""
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str) and message:
            return f": {message[:200]}"
    return ""
