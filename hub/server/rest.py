"""The HTTP+JSON binding (§11): the 1.0 REST routes, `google.rpc.Status` errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from litestar import Request, delete, get, post
from litestar.response import Response

from hub.errors import MethodNotFoundError
from hub.protocol import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from hub.protocol.trace import CallScope, use_scope
from hub.server.body import read_json_body
from hub.server.errors import JSON_MEDIA_TYPE, as_protocol_error, rest_error_response
from hub.server.extensions import answer_headers, extension_scope
from hub.server.gate import StreamSlot
from hub.server.operations import A2AOperations
from hub.server.sse import SSE_HEADERS, EventStream, sse_frames
from hub.server.state import HubState
from hub.server.version import check_version, requested_version
from hub.tasks import TaskStream, Update
from hub.telemetry.access import note_call, note_error

__all__ = ["REST_ROUTES"]

AnyRequest = Request[Any, Any, Any]
Work = Callable[[A2AOperations, str], Awaitable[bytes | TaskStream]]


async def _serve(
    request: AnyRequest, work: Work, *, method: str, opens_stream: bool = False
) -> Response[Any]:
    hub: HubState = request.app.state.hub
    note_call(method, binding="http+json", version="1.0")
    slot: StreamSlot | None = None
    scope: CallScope | None = None
    try:
        client = request.client
        caller = await hub.gate.admit(request.headers, address=client.host if client else "")
        check_version(
            "1.0",
            requested_version(request.headers, request.query_params),
            accept_missing=hub.settings.server.accept_missing_version,
        )
        server = hub.settings.server
        agent_name = request.path_params.get("agent_name")
        scope = extension_scope(
            CallScope.from_headers(
                request.headers, here=server.base_url(), max_hops=server.max_hops
            ),
            request.scope["headers"],
            # The hub's own operations: its extensions apply; the gateway forwards the list.
            policy=hub.extensions if agent_name is None else None,
        )
        if opens_stream:
            slot = hub.gate.open_stream(caller)
        # Under /agents/{agent_name} (the gateway) the partner's operations serve the route.
        service = hub.service_for(agent_name)
        with use_scope(caller.scope(scope)):
            result = await work(service, caller.name)
    except Exception as exc:  # every failure becomes a google.rpc.Status, never a bare 500
        if slot is not None:
            slot.release()
        error = as_protocol_error(exc, where="REST")
        note_error(error)
        return rest_error_response(error, headers=answer_headers(scope))
    # Known by now for a stream too: the partner's first event came after its answer's head.
    echo = answer_headers(scope)
    if isinstance(result, bytes):
        if slot is not None:
            slot.release()
        return Response(content=result, status_code=200, media_type=JSON_MEDIA_TYPE, headers=echo)
    return EventStream(
        sse_frames(result, Update.json, keepalive=hub.settings.server.keepalive),
        headers={**SSE_HEADERS, **echo},
        ended=lambda: result.ended,
        on_exit=slot.release if slot is not None else None,
    )


def _subscribes(task_ref: str) -> bool:
    return task_ref.partition(":")[2] == "subscribe"


async def _send_request(request: AnyRequest) -> SendMessageRequest:
    hub: HubState = request.app.state.hub
    body = await read_json_body(request, hub.settings.limits.max_body)
    return SendMessageRequest.model_validate_json(body)


def _query(request: AnyRequest) -> dict[str, str]:
    return {key: value for key, value in request.query_params.items() if key != "A2A-Version"}


@post("/message:send", status_code=200)
async def send_message(request: AnyRequest) -> Response[Any]:
    async def work(service: A2AOperations, caller: str) -> bytes:
        return (await service.send_message(await _send_request(request), caller)).to_json()

    return await _serve(request, work, method="SendMessage")


@post("/message:stream", status_code=200)
async def stream_message(request: AnyRequest) -> Response[Any]:
    async def work(service: A2AOperations, caller: str) -> TaskStream:
        return await service.stream_message(await _send_request(request), caller)

    return await _serve(request, work, method="SendStreamingMessage", opens_stream=True)


@get("/tasks")
async def list_tasks(request: AnyRequest) -> Response[Any]:
    async def work(service: A2AOperations, caller: str) -> bytes:
        query = ListTasksRequest.model_validate(_query(request))
        return (await service.list_tasks(query, caller)).to_json()

    return await _serve(request, work, method="ListTasks")


def _split(task_ref: str, allowed: tuple[str, ...]) -> tuple[str, str]:
    """`abc:cancel` → ("abc", "cancel"); a verb not in `allowed` is an unknown route."""
    task_id, _, verb = task_ref.partition(":")
    if verb not in allowed:
        raise MethodNotFoundError(
            f"no route for ':{verb}' on a task; use :cancel or :subscribe",
            metadata={"taskId": task_id},
        )
    return task_id, verb


@get("/tasks/{task_ref:str}")
async def get_task(request: AnyRequest) -> Response[Any]:
    task_ref: str = request.path_params["task_ref"]

    async def work(service: A2AOperations, caller: str) -> bytes | TaskStream:
        task_id, verb = _split(task_ref, ("", "subscribe"))
        if verb == "subscribe":
            return await service.subscribe(SubscribeToTaskRequest(id=task_id), caller)
        query = GetTaskRequest.model_validate({**_query(request), "id": task_id})
        return (await service.get_task(query, caller)).to_json()

    subscribes = _subscribes(task_ref)
    method = "SubscribeToTask" if subscribes else "GetTask"
    return await _serve(request, work, method=method, opens_stream=subscribes)


@post("/tasks/{task_ref:str}", status_code=200)
async def task_action(request: AnyRequest) -> Response[Any]:
    task_ref: str = request.path_params["task_ref"]

    async def work(service: A2AOperations, caller: str) -> bytes | TaskStream:
        task_id, verb = _split(task_ref, ("cancel", "subscribe"))
        if verb == "subscribe":
            return await service.subscribe(SubscribeToTaskRequest(id=task_id), caller)
        return (await service.cancel_task(CancelTaskRequest(id=task_id), caller)).to_json()

    subscribes = _subscribes(task_ref)
    method = "SubscribeToTask" if subscribes else "CancelTask"
    return await _serve(request, work, method=method, opens_stream=subscribes)


@post("/tasks/{task_id:str}/pushNotificationConfigs", status_code=200)
async def create_push_config(request: AnyRequest) -> Response[Any]:
    task_id: str = request.path_params["task_id"]

    async def work(service: A2AOperations, caller: str) -> bytes:
        hub: HubState = request.app.state.hub
        body = await read_json_body(request, hub.settings.limits.max_body)
        config = TaskPushNotificationConfig.model_validate_json(body)
        # The task comes from the path (§11.3), whatever the body says.
        config = config.model_copy(update={"task_id": task_id})
        return (await service.create_push_config(config, caller)).to_json()

    return await _serve(request, work, method="CreateTaskPushNotificationConfig")


@get("/tasks/{task_id:str}/pushNotificationConfigs")
async def list_push_configs(request: AnyRequest) -> Response[Any]:
    task_id: str = request.path_params["task_id"]

    async def work(service: A2AOperations, caller: str) -> bytes:
        query = ListTaskPushNotificationConfigsRequest.model_validate(
            {**_query(request), "taskId": task_id}
        )
        return (await service.list_push_configs(query, caller)).to_json()

    return await _serve(request, work, method="ListTaskPushNotificationConfigs")


@get("/tasks/{task_id:str}/pushNotificationConfigs/{config_id:str}")
async def get_push_config(request: AnyRequest) -> Response[Any]:
    task_id: str = request.path_params["task_id"]
    config_id: str = request.path_params["config_id"]

    async def work(service: A2AOperations, caller: str) -> bytes:
        query = GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        return (await service.get_push_config(query, caller)).to_json()

    return await _serve(request, work, method="GetTaskPushNotificationConfig")


@delete("/tasks/{task_id:str}/pushNotificationConfigs/{config_id:str}", status_code=200)
async def delete_push_config(request: AnyRequest) -> Response[Any]:
    task_id: str = request.path_params["task_id"]
    config_id: str = request.path_params["config_id"]

    async def work(service: A2AOperations, caller: str) -> bytes:
        target = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        await service.delete_push_config(target, caller)
        return b"{}"  # google.protobuf.Empty

    return await _serve(request, work, method="DeleteTaskPushNotificationConfig")


@get("/extendedAgentCard")
async def extended_card(request: AnyRequest) -> Response[Any]:
    async def work(service: A2AOperations, caller: str) -> bytes:
        return (await service.extended_card(caller)).to_json()

    return await _serve(request, work, method="GetExtendedAgentCard")


REST_ROUTES = [
    send_message,
    stream_message,
    list_tasks,
    get_task,
    task_action,
    create_push_config,
    list_push_configs,
    get_push_config,
    delete_push_config,
    extended_card,
]
