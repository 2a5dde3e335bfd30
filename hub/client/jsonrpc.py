"""A small A2A 1.0 JSON-RPC client: discovery from the card, unary calls and SSE streams."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import httpx
from httpx_sse import aconnect_sse
from pydantic import ValidationError

from hub.errors import (
    AgentTimeoutError,
    AgentUnreachableError,
    InvalidAgentResponseError,
    RemoteRpcError,
)
from hub.protocol import (
    AgentCard,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageResponse,
    StreamResponse,
    Task,
    WireModel,
)
from hub.protocol.card import BINDING_JSONRPC

__all__ = ["JsonRpcClient", "user_message"]

M = TypeVar("M", bound=WireModel)

CARD_PATH = "/.well-known/agent-card.json"


def user_message(
    text: str, *, context_id: str | None = None, task_id: str | None = None
) -> Message:
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.USER,
        parts=[Part(text=text)],
        context_id=context_id,
        task_id=task_id,
    )


class JsonRpcClient:
    """Talks A2A 1.0 JSON-RPC to one agent.

    Args:
        url: the agent's base URL (its card is read from there) or its JSON-RPC endpoint.
        http: the httpx client to use (its owner closes it).
    """

    def __init__(self, url: str, *, http: httpx.AsyncClient) -> None:
        self._base = url.rstrip("/")
        self._http = http
        self._endpoint: str | None = None
        self._ids = 0

    async def card(self) -> AgentCard:
        response = await self._request("GET", self._base + CARD_PATH)
        try:
            return AgentCard.model_validate_json(response.content)
        except ValidationError as exc:
            raise InvalidAgentResponseError(
                f"{self._base}{CARD_PATH} is not a valid agent card ({exc.error_count()} problems)"
            ) from None

    async def endpoint(self) -> str:
        """The JSON-RPC 1.0 URL from the card, or the base URL when there is no card."""
        if self._endpoint is None:
            try:
                card = await self.card()
            except RemoteRpcError:
                self._endpoint = self._base
            else:
                self._endpoint = next(
                    (
                        i.url
                        for i in card.supported_interfaces
                        if i.protocol_binding == BINDING_JSONRPC and i.protocol_version == "1.0"
                    ),
                    self._base,
                )
        return self._endpoint

    async def send(
        self, message: Message, *, metadata: dict[str, Any] | None = None
    ) -> Task | Message:
        result = await self.call(
            "SendMessage", {"message": message.to_wire(), "metadata": metadata}
        )
        response = _parse(SendMessageResponse, result)
        return response.task if response.task is not None else response.message  # type: ignore[return-value]

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        params: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return _parse(Task, await self.call("GetTask", params))

    async def list_tasks(self, **query: Any) -> ListTasksResponse:
        return _parse(ListTasksResponse, await self.call("ListTasks", query))

    async def cancel(self, task_id: str) -> Task:
        return _parse(Task, await self.call("CancelTask", {"id": task_id}))

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """One unary JSON-RPC call; returns the `result` member."""
        response = await self._request(
            "POST", await self.endpoint(), json=self._envelope(method, params)
        )
        try:
            document = response.json()
        except ValueError:
            raise InvalidAgentResponseError(f"{method}: the agent's answer is not JSON") from None
        return _result(document, method)

    @asynccontextmanager
    async def stream(
        self, message: Message, *, metadata: dict[str, Any] | None = None
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        """`async with client.stream(msg) as events:` — events until the agent closes."""
        envelope = self._envelope(
            "SendStreamingMessage", {"message": message.to_wire(), "metadata": metadata}
        )
        endpoint = await self.endpoint()
        try:
            async with aconnect_sse(
                self._http, "POST", endpoint, json=envelope, headers={"A2A-Version": "1.0"}
            ) as source:
                content_type = source.response.headers.get("content-type", "")
                if not content_type.startswith("text/event-stream"):
                    await source.response.aread()
                    _result(source.response.json(), "SendStreamingMessage")
                    raise InvalidAgentResponseError("the agent did not answer with a stream")

                async def events() -> AsyncIterator[StreamResponse]:
                    async for sse in source.aiter_sse():
                        if not sse.data:
                            continue
                        yield _parse(
                            StreamResponse, _result(json.loads(sse.data), "SendStreamingMessage")
                        )

                yield events()
        except httpx.TimeoutException:
            raise AgentTimeoutError(f"{endpoint} did not answer in time") from None
        except httpx.TransportError as exc:
            raise AgentUnreachableError(f"cannot reach {endpoint} ({exc})") from None

    def _envelope(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        clean = {key: value for key, value in params.items() if value is not None}
        return {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": clean}

    async def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self._http.request(
                method, url, headers={"A2A-Version": "1.0"}, **kwargs
            )
        except httpx.TimeoutException:
            raise AgentTimeoutError(f"{url} did not answer in time") from None
        except httpx.TransportError as exc:
            raise AgentUnreachableError(f"cannot reach {url} ({exc})") from None
        if response.status_code >= 400 and method == "GET":
            raise RemoteRpcError(
                f"GET {url} answered HTTP {response.status_code}", code=response.status_code
            )
        return response


def _result(document: Any, method: str) -> Any:
    if not isinstance(document, dict):
        raise InvalidAgentResponseError(f"{method}: the answer is not a JSON-RPC response")
    if "error" in document:
        error = document["error"] or {}
        raise RemoteRpcError(
            f"{method} failed: {error.get('message', 'no message')} (code {error.get('code')})",
            code=int(error.get("code", 0)),
            data=error.get("data"),
        )
    if "result" not in document:
        raise InvalidAgentResponseError(f"{method}: the answer has neither result nor error")
    return document["result"]


def _parse(model: type[M], value: Any) -> M:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise InvalidAgentResponseError(
            f"the agent's {model.__name__} is not valid A2A ({exc.error_count()} problems)"
        ) from None
