"""`JsonRpcTransport`: the JSON-RPC binding, at A2A 1.0 or (through the 0.3 translation) 0.3.

1.0 calls use the PascalCase methods and carry `A2A-Version: 1.0`; 0.3 calls use the
slash-named methods and `A2A-Version: 0.3`, and every object crosses
`hub.protocol.v03.translate` so callers only ever see 1.0 objects.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

import httpx
from pydantic import ValidationError

from hub.client.http_client import RequestTemplate, send_request
from hub.client.http_errors import (
    check_status,
    invalid_response,
    read_json,
    remote_error,
    translate_http_errors,
)
from hub.client.transport import EventStream, TransportOptions, open_event_stream
from hub.errors import InvalidAgentResponseError, RemoteRpcError, UnsupportedOperationError
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
    WireModel,
    v03,
)
from hub.protocol.v03 import translate
from hub.protocol.v03.errors import code_to_v1

__all__ = ["JsonRpcTransport"]

T = TypeVar("T")

_V1_METHODS = {
    "send": "SendMessage",
    "stream": "SendStreamingMessage",
    "get": "GetTask",
    "list": "ListTasks",
    "cancel": "CancelTask",
    "subscribe": "SubscribeToTask",
    "push_create": "CreateTaskPushNotificationConfig",
    "push_get": "GetTaskPushNotificationConfig",
    "push_list": "ListTaskPushNotificationConfigs",
    "push_delete": "DeleteTaskPushNotificationConfig",
    "card": "GetExtendedAgentCard",
}
_V03_METHODS = {
    "send": "message/send",
    "stream": "message/stream",
    "get": "tasks/get",
    "cancel": "tasks/cancel",
    "subscribe": "tasks/resubscribe",
    "push_create": "tasks/pushNotificationConfig/set",
    "push_get": "tasks/pushNotificationConfig/get",
    "push_list": "tasks/pushNotificationConfig/list",
    "push_delete": "tasks/pushNotificationConfig/delete",
    "card": "agent/getAuthenticatedExtendedCard",
}


class JsonRpcTransport:
    """A2A over JSON-RPC 2.0 to one endpoint.

    Args:
        http: the client to send with (its owner closes it).
        url: the interface URL from the card.
        options: agent name, headers, timeouts and tenant.
        version: `"1.0"` or `"0.3"`.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        *,
        options: TransportOptions,
        version: str = "1.0",
    ) -> None:
        if version not in ("1.0", "0.3"):
            raise ValueError(f"JSON-RPC transport speaks 1.0 or 0.3, not {version!r}")
        self._http = http
        self._options = options
        self._agent = options.agent_name
        self._v03 = version == "0.3"
        self._methods = _V03_METHODS if self._v03 else _V1_METHODS
        self._post = RequestTemplate(
            http,
            "POST",
            url,
            headers={
                **options.headers,
                "A2A-Version": version,
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            },
            timeout=options.timeout,
        )
        self._ids = itertools.count(1)

    async def send(self, request: SendMessageRequest) -> SendMessageResponse:
        if self._v03:
            params = translate.send_request_to_v03(request).to_wire()
            result = await self._call("send", params)
            return self._parse(lambda: translate.send_result_to_v1(v03.parse_send_result(result)))
        result = await self._call("send", self._v1_params(request))
        return self._parse(lambda: SendMessageResponse.model_validate(result))

    def stream(self, request: SendMessageRequest) -> EventStream:
        if self._v03:
            return self._stream("stream", translate.send_request_to_v03(request).to_wire())
        return self._stream("stream", self._v1_params(request))

    async def get_task(self, request: GetTaskRequest) -> Task:
        if self._v03:
            params = translate.get_task_request_to_v03(request).to_wire()
            result = await self._call("get", params)
            return self._parse(lambda: translate.task_to_v1(v03.Task.model_validate(result)))
        result = await self._call("get", self._v1_params(request))
        return self._parse(lambda: Task.model_validate(result))

    async def list_tasks(self, request: ListTasksRequest) -> ListTasksResponse:
        if self._v03:
            raise UnsupportedOperationError(
                f"agent '{self._agent}' speaks A2A 0.3, which has no ListTasks"
            )
        result = await self._call("list", self._v1_params(request))
        return self._parse(lambda: ListTasksResponse.model_validate(result))

    async def cancel(self, request: CancelTaskRequest) -> Task:
        if self._v03:
            params = translate.cancel_request_to_v03(request).to_wire()
            result = await self._call("cancel", params)
            return self._parse(lambda: translate.task_to_v1(v03.Task.model_validate(result)))
        result = await self._call("cancel", self._v1_params(request))
        return self._parse(lambda: Task.model_validate(result))

    def subscribe(self, request: SubscribeToTaskRequest) -> EventStream:
        if self._v03:
            return self._stream("subscribe", translate.subscribe_request_to_v03(request).to_wire())
        return self._stream("subscribe", self._v1_params(request))

    async def create_push_config(
        self, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        if self._v03:
            result = await self._call(
                "push_create", translate.task_push_config_to_v03(config).to_wire()
            )
            return self._parse(lambda: self._v03_push_config(result))
        result = await self._call("push_create", self._v1_params(config))
        return self._parse(lambda: TaskPushNotificationConfig.model_validate(result))

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        if self._v03:
            params = translate.get_push_config_request_to_v03(request).to_wire()
            result = await self._call("push_get", params)
            return self._parse(lambda: self._v03_push_config(result))
        result = await self._call("push_get", self._v1_params(request))
        return self._parse(lambda: TaskPushNotificationConfig.model_validate(result))

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        if self._v03:
            params = translate.list_push_configs_request_to_v03(request).to_wire()
            result = await self._call("push_list", params)
            return self._parse(
                lambda: translate.list_push_configs_result_to_v1(
                    [v03.TaskPushNotificationConfig.model_validate(item) for item in result]
                )
            )
        result = await self._call("push_list", self._v1_params(request))
        return self._parse(lambda: ListTaskPushNotificationConfigsResponse.model_validate(result))

    async def delete_push_config(self, request: DeleteTaskPushNotificationConfigRequest) -> None:
        if self._v03:
            params = translate.delete_push_config_request_to_v03(request).to_wire()
            await self._call("push_delete", params)
            return
        await self._call("push_delete", self._v1_params(request))

    async def extended_card(self) -> AgentCard:
        result = await self._call("card", {} if self._v03 else self._tenant_params())
        if not isinstance(result, dict):
            raise invalid_response(self._agent, "an extended card that is not a JSON object")
        return self._parse(lambda: translate.card_to_v1(result))

    # -- plumbing ----------------------------------------------------------------------------

    def _v1_params(self, request: WireModel) -> dict[str, Any]:
        params = request.to_wire()
        if self._options.tenant and "tenant" in type(request).model_fields:
            params.setdefault("tenant", self._options.tenant)
        return params

    def _tenant_params(self) -> dict[str, Any]:
        return {"tenant": self._options.tenant} if self._options.tenant else {}

    def _v03_push_config(self, result: Any) -> TaskPushNotificationConfig:
        return translate.task_push_config_to_v1(
            v03.TaskPushNotificationConfig.model_validate(result)
        )

    def _envelope(self, operation: str, params: dict[str, Any]) -> bytes:
        method = self._methods.get(operation)
        if method is None:  # pragma: no cover - every operation without a 0.3 form is guarded
            raise UnsupportedOperationError(f"agent '{self._agent}' cannot do {operation}")
        document = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        return json.dumps(document, separators=(",", ":")).encode()

    def _request(self, operation: str, params: dict[str, Any]) -> httpx.Request:
        return self._post.build(self._envelope(operation, params))

    async def _call(self, operation: str, params: dict[str, Any]) -> Any:
        request = self._request(operation, params)
        with translate_http_errors(self._agent):
            response = await send_request(self._http, request, auth=self._options.auth)
        return self._result(response, self._methods[operation])

    def _result(self, response: httpx.Response, method: str) -> Any:
        # A JSON-RPC error may come with any status; only when the body holds none does the
        # status itself say what failed. 429 and 503 mean "come back later" whatever the body
        # says: the retry policy needs their Retry-After.
        if response.status_code in (429, 503):
            check_status(response, self._agent)
        try:
            document = read_json(response, self._agent)
        except InvalidAgentResponseError:
            check_status(response, self._agent)
            raise
        return self._unwrap(document, method, response)

    def _unwrap(self, document: Any, method: str, response: httpx.Response | None) -> Any:
        if isinstance(document, dict) and isinstance(document.get("error"), dict):
            raise self._remote_error(method, document["error"], response)
        if response is not None:
            check_status(response, self._agent)
        if not isinstance(document, dict) or "result" not in document:
            status = f"HTTP {response.status_code}, " if response is not None else ""
            raise invalid_response(
                self._agent, f"{status}not a JSON-RPC response to {method}", response=response
            )
        return document["result"]

    def _remote_error(
        self, method: str, error: Any, response: httpx.Response | None
    ) -> RemoteRpcError:
        if not isinstance(error, dict):
            error = {}
        code = error.get("code")
        code = code if isinstance(code, int) else 0
        message = str(error.get("message") or "no message")
        if self._v03:
            # Read in its 1.0 meaning, so every caller of the client sees one set of codes.
            code = code_to_v1(code, message, method=method)
        return remote_error(
            self._agent,
            code=code,
            message=message,
            label=f"code {code}",
            operation=method,
            data=error.get("data"),
            response=response,
        )

    def _reject(self, method: str, response: httpx.Response) -> None:
        if response.status_code in (429, 503):
            check_status(response, self._agent)
        document = _json_or_none(response)
        if document is not None:
            self._unwrap(document, method, response)
        check_status(response, self._agent)

    @asynccontextmanager
    async def _stream(
        self, operation: str, params: dict[str, Any]
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        method = self._methods[operation]
        request = self._request(operation, params)
        async with open_event_stream(
            self._http,
            request,
            agent_name=self._agent,
            auth=self._options.auth,
            reject=partial(self._reject, method),
        ) as source:

            async def events() -> AsyncIterator[StreamResponse]:
                async for sse in source:
                    try:
                        document = json.loads(sse.data)
                    except ValueError:
                        raise invalid_response(
                            self._agent,
                            "a stream event that is not JSON",
                            detail=f"event {sse.data[:160]!r}",
                        ) from None
                    if sse.event == "error" and isinstance(document, dict):
                        # The SDK sends a failure mid-stream as `event: error` holding the bare
                        # JSON-RPC error object.
                        error = document.get("error", document)
                        raise self._remote_error(method, error, None)
                    result = self._unwrap(document, method, None)
                    yield self._parse(partial(self._event, result))

            yield events()

    def _event(self, result: Any) -> StreamResponse:
        if self._v03:
            return translate.stream_event_to_v1(v03.parse_stream_event(result))
        return StreamResponse.model_validate(result)

    def _parse(self, build: Callable[[], T]) -> T:
        try:
            return build()
        except (ValidationError, ValueError, TypeError) as exc:
            count = exc.error_count() if isinstance(exc, ValidationError) else 1
            raise invalid_response(
                self._agent,
                f"a result that does not match the A2A schema: {count} problems",
                detail=str(exc)[:500],
            ) from exc


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        return None
