"""The 0.3 JSON-RPC methods: params translated to 1.0 on the way in, results and stream
events translated back to 0.3 on the way out. Nothing else in the server knows 0.3."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from hub.protocol import WireModel
from hub.protocol.jsonrpc import RawCall, invalid_params
from hub.protocol.v03 import models as v03
from hub.protocol.v03.translate import (
    cancel_params_to_v1,
    delete_push_config_params_to_v1,
    get_push_config_params_to_v1,
    get_task_params_to_v1,
    list_push_configs_params_to_v1,
    list_push_configs_result_to_v03,
    send_params_to_v1,
    send_result_to_v03,
    stream_response_to_v03,
    subscribe_params_to_v1,
    task_push_config_to_v03,
    task_push_config_to_v1,
    task_to_v03,
)
from hub.server.card import CardDocument
from hub.server.operations import A2AOperations
from hub.tasks import TaskStream, Update

__all__ = ["V03_METHODS", "dispatch_v03"]

V03_METHODS = frozenset(
    {
        "message/send",
        "message/stream",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
        "agent/getAuthenticatedExtendedCard",
    }
)

Render = Callable[[Update], bytes]


def render_v03(update: Update) -> bytes:
    """A 1.0 stream item as the 0.3 event, `final` set on the event that ends the stream."""
    return stream_response_to_v03(update.event, final=update.closes_stream).to_json()


def _params(call: RawCall, model: type[WireModel]) -> Any:
    try:
        return model.model_validate(call.params or {}, context=v03.REQUEST)
    except ValidationError as exc:
        raise invalid_params(exc, call.method) from None


async def dispatch_v03(
    service: A2AOperations, call: RawCall, caller: str
) -> tuple[bytes | TaskStream, Render | None]:
    """Run a 0.3 call; returns the 0.3 result bytes, or a stream and its 0.3 renderer."""
    method = call.method
    if method in ("message/send", "message/stream"):
        request = send_params_to_v1(_params(call, v03.MessageSendParams))
        if method == "message/stream":
            return await service.stream_message(request, caller, protocol="0.3"), render_v03
        response = await service.send_message(request, caller, protocol="0.3")
        return send_result_to_v03(response).to_json(), None
    if method == "tasks/get":
        query = get_task_params_to_v1(_params(call, v03.TaskQueryParams))
        task = await service.get_task(query, caller, protocol="0.3")
        return task_to_v03(task).to_json(), None
    if method == "tasks/cancel":
        target = cancel_params_to_v1(_params(call, v03.TaskIdParams))
        task = await service.cancel_task(target, caller)
        return task_to_v03(task).to_json(), None
    if method == "tasks/resubscribe":
        subscription = subscribe_params_to_v1(_params(call, v03.TaskIdParams))
        stream = await service.subscribe(subscription, caller)
        return stream, render_v03
    if method == "agent/getAuthenticatedExtendedCard":
        card = await service.extended_card(caller)
        # The hybrid document carries the 0.3 card's fields (and 1.0's, which 0.3 ignores).
        return CardDocument.render(card).hybrid.body, None
    return await _push_config_v03(service, call, caller), None


async def _push_config_v03(service: A2AOperations, call: RawCall, caller: str) -> bytes:
    """The four `tasks/pushNotificationConfig/*` methods; configs set here get 0.3 bodies."""
    method = call.method
    if method == "tasks/pushNotificationConfig/set":
        config = task_push_config_to_v1(_params(call, v03.TaskPushNotificationConfig))
        created = await service.create_push_config(config, caller, protocol="0.3")
        return task_push_config_to_v03(created).to_json()
    if method == "tasks/pushNotificationConfig/get":
        query = get_push_config_params_to_v1(_params(call, v03.GetTaskPushNotificationConfigParams))
        found = await service.get_push_config(query, caller)
        return task_push_config_to_v03(found, task_id=query.task_id).to_json()
    if method == "tasks/pushNotificationConfig/list":
        listing = list_push_configs_params_to_v1(
            _params(call, v03.ListTaskPushNotificationConfigParams)
        )
        response = await service.list_push_configs(listing, caller)
        configs = list_push_configs_result_to_v03(response, task_id=listing.task_id)
        return b"[" + b",".join(config.to_json() for config in configs) + b"]"
    if method == "tasks/pushNotificationConfig/delete":
        target = delete_push_config_params_to_v1(
            _params(call, v03.DeleteTaskPushNotificationConfigParams)
        )
        await service.delete_push_config(target, caller)
        return b"null"
    raise AssertionError(f"{method} is in V03_METHODS but not dispatched")
