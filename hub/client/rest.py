"""`RestTransport`: the HTTP+JSON binding of A2A 1.0 (§11; routes in the digest's §2.2).

Requests carry `A2A-Version: 1.0` and `application/a2a+json`; an error body is a
`google.rpc.Status`, turned into `RemoteRpcError` with the A2A code its `ErrorInfo.reason`
names (or the HTTP status when the reason is not an A2A one).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from hub.client.http_client import send_request
from hub.client.http_errors import (
    check_status,
    code_of_reason,
    invalid_response,
    read_json,
    remote_error,
    translate_http_errors,
)
from hub.client.transport import EventStream, TransportOptions, open_event_stream
from hub.errors import RemoteRpcError
from hub.protocol import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from hub.protocol.v03.translate import card_to_v1

__all__ = ["RestTransport", "status_error"]

T = TypeVar("T")

_CONTENT_TYPE = "application/a2a+json"


class RestTransport:
    """A2A 1.0 over HTTP+JSON to one interface URL.

    Args:
        http: the client to send with (its owner closes it).
        url: the interface URL from the card; routes are relative to it.
        options: agent name, headers, timeouts and tenant.
    """

    def __init__(self, http: httpx.AsyncClient, url: str, *, options: TransportOptions) -> None:
        self._http = http
        base = url.rstrip("/")
        if options.tenant:
            base = f"{base}/{quote(options.tenant, safe='')}"
        self._base = base
        self._options = options
        self._agent = options.agent_name
        self._headers = {
            **options.headers,
            "A2A-Version": "1.0",
            "Accept": f"{_CONTENT_TYPE}, application/json, text/event-stream",
        }

    async def send(self, request: SendMessageRequest) -> SendMessageResponse:
        result = await self._call("POST", "/message:send", body=_body(request.to_wire()))
        return self._parse(lambda: SendMessageResponse.model_validate(result))

    def stream(self, request: SendMessageRequest) -> EventStream:
        return self._stream("POST", "/message:stream", body=_body(request.to_wire()))

    async def get_task(self, request: GetTaskRequest) -> Task:
        query = {"historyLength": request.history_length}
        result = await self._call("GET", f"/tasks/{_seg(request.id)}", query=query)
        return self._parse(lambda: Task.model_validate(result))

    async def list_tasks(self, request: ListTasksRequest) -> ListTasksResponse:
        query = request.to_wire()
        query.pop("tenant", None)
        result = await self._call("GET", "/tasks", query=query)
        return self._parse(lambda: ListTasksResponse.model_validate(result))

    async def cancel(self, request: CancelTaskRequest) -> Task:
        body = _body({"metadata": request.metadata} if request.metadata else {})
        result = await self._call("POST", f"/tasks/{_seg(request.id)}:cancel", body=body)
        return self._parse(lambda: Task.model_validate(result))

    def subscribe(self, request: SubscribeToTaskRequest) -> EventStream:
        return self._stream("POST", f"/tasks/{_seg(request.id)}:subscribe", body=None)

    async def create_push_config(
        self, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        if not config.task_id:
            raise ValueError("a push config needs the task_id it belongs to")
        path = f"/tasks/{_seg(config.task_id)}/pushNotificationConfigs"
        result = await self._call("POST", path, body=_body(config.to_wire()))
        return self._parse(lambda: TaskPushNotificationConfig.model_validate(result))

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        path = f"/tasks/{_seg(request.task_id)}/pushNotificationConfigs/{_seg(request.id)}"
        result = await self._call("GET", path)
        return self._parse(lambda: TaskPushNotificationConfig.model_validate(result))

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        query = {"pageSize": request.page_size, "pageToken": request.page_token}
        path = f"/tasks/{_seg(request.task_id)}/pushNotificationConfigs"
        result = await self._call("GET", path, query=query)
        return self._parse(lambda: ListTaskPushNotificationConfigsResponse.model_validate(result))

    async def delete_push_config(self, request: DeleteTaskPushNotificationConfigRequest) -> None:
        path = f"/tasks/{_seg(request.task_id)}/pushNotificationConfigs/{_seg(request.id)}"
        await self._call("DELETE", path)

    async def extended_card(self) -> AgentCard:
        result = await self._call("GET", "/extendedAgentCard")
        if not isinstance(result, dict):
            raise invalid_response(self._agent, "an extended card that is not a JSON object")
        return self._parse(lambda: card_to_v1(result))

    # -- plumbing ----------------------------------------------------------------------------

    def _request(
        self, method: str, path: str, *, body: bytes | None, query: dict[str, Any] | None
    ) -> httpx.Request:
        headers = dict(self._headers)
        if body is not None:
            headers["Content-Type"] = _CONTENT_TYPE
        params = {
            key: _query_value(value) for key, value in (query or {}).items() if value is not None
        }
        return self._http.build_request(
            method,
            self._base + path,
            content=body,
            params=params or None,
            headers=headers,
            timeout=self._options.timeout,
        )

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        query: dict[str, Any] | None = None,
    ) -> Any:
        request = self._request(method, path, body=body, query=query)
        with translate_http_errors(self._agent):
            response = await send_request(self._http, request, auth=self._options.auth)
        self._raise_for_error(response)
        return read_json(response, self._agent)

    def _raise_for_error(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        # 429 and 503 mean "come back later" whatever the body says; the retry policy needs
        # their Retry-After.
        if status not in (429, 503):
            try:
                document = json.loads(response.content)
            except ValueError:
                document = None
            error = document.get("error") if isinstance(document, dict) else None
            if isinstance(error, dict):
                raise status_error(self._agent, status, error, response)
        check_status(response, self._agent)

    @asynccontextmanager
    async def _stream(
        self, method: str, path: str, *, body: bytes | None
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        request = self._request(method, path, body=body, query=None)
        async with open_event_stream(
            self._http,
            request,
            agent_name=self._agent,
            auth=self._options.auth,
            reject=self._raise_for_error,
        ) as source:

            async def events() -> AsyncIterator[StreamResponse]:
                async for sse in source:
                    if sse.event == "error":
                        try:
                            error = json.loads(sse.data)
                        except ValueError:
                            error = {}
                        inner = error.get("error", error) if isinstance(error, dict) else {}
                        raise status_error(self._agent, 500, inner, None)
                    yield self._parse(partial(StreamResponse.model_validate_json, sse.data))

            yield events()

    def _parse(self, build: Callable[[], T]) -> T:
        try:
            return build()
        except (ValidationError, ValueError, TypeError) as exc:
            count = exc.error_count() if isinstance(exc, ValidationError) else 1
            raise invalid_response(
                self._agent,
                f"an answer that does not match the A2A schema: {count} problems",
                detail=str(exc)[:500],
            ) from exc


def status_error(
    agent_name: str, http_status: int, error: dict[str, Any], response: httpx.Response | None
) -> RemoteRpcError:
    """The error for a `google.rpc.Status` body (`error`) answered with `http_status`: its
    code from the A2A reason its `ErrorInfo` names, its message passed on as
    `remote_error` says."""
    reason = next(
        (
            detail.get("reason")
            for detail in error.get("details") or []
            if isinstance(detail, dict) and detail.get("reason")
        ),
        None,
    )
    code = code_of_reason(reason) if isinstance(reason, str) else None
    code = http_status if code is None else code
    message = error.get("message") or error.get("status") or f"HTTP {http_status}"
    return remote_error(
        agent_name,
        code=code,
        message=str(message),
        label=str(reason or error.get("status") or f"HTTP {http_status}"),
        data=error,
        response=response,
    )


def _body(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()


def _seg(value: str) -> str:
    return quote(value, safe="")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
