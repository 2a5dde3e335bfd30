"""Translation between A2A v0.3 JSON-RPC objects and the hub's canonical 1.0 model.

This is the one module the rest of the hub imports for 0.3: it holds the translation of
operation params and push configs, and re-exports the task objects' translation
(`task_translation`) and the Agent Card's (`card_translation`). Every function is named by its
direction: `*_to_v1` reads a 0.3 object, `*_to_v03` writes one. The field rules are those of
the 0.3 → 1.0 mapping; a 1.0 value with no 0.3 form (a media type on a text or data part, the
OAuth device-code flow, `pkceRequired`, `tenant`, list paging) is dropped on the way to 0.3.
"""

from __future__ import annotations

from hub import protocol as v1
from hub.protocol import v03
from hub.protocol.v03.card_translation import (
    card_to_v03,
    card_to_v1,
    card_v03_fields,
    hybrid_card,
)
from hub.protocol.v03.task_translation import (
    DATA_PART_COMPAT,
    ROLE_TO_V03,
    ROLE_TO_V1,
    STATE_TO_V03,
    STATE_TO_V1,
    artifact_to_v03,
    artifact_to_v1,
    is_final_v1,
    message_to_v03,
    message_to_v1,
    part_to_v03,
    part_to_v1,
    send_result_to_v03,
    send_result_to_v1,
    status_to_v03,
    status_to_v1,
    stream_event_to_v1,
    stream_response_to_v03,
    task_to_v03,
    task_to_v1,
)

__all__ = [
    "DATA_PART_COMPAT",
    "ROLE_TO_V03",
    "ROLE_TO_V1",
    "STATE_TO_V03",
    "STATE_TO_V1",
    "artifact_to_v03",
    "artifact_to_v1",
    "cancel_params_to_v1",
    "cancel_request_to_v03",
    "card_to_v03",
    "card_to_v1",
    "card_v03_fields",
    "delete_push_config_params_to_v1",
    "delete_push_config_request_to_v03",
    "error_code_to_v03",
    "get_push_config_params_to_v1",
    "get_push_config_request_to_v03",
    "get_task_params_to_v1",
    "get_task_request_to_v03",
    "hybrid_card",
    "is_final_v1",
    "list_push_configs_params_to_v1",
    "list_push_configs_request_to_v03",
    "list_push_configs_result_to_v03",
    "list_push_configs_result_to_v1",
    "message_to_v03",
    "message_to_v1",
    "part_to_v03",
    "part_to_v1",
    "push_config_to_v03",
    "push_config_to_v1",
    "send_params_to_v1",
    "send_request_to_v03",
    "send_result_to_v03",
    "send_result_to_v1",
    "status_to_v03",
    "status_to_v1",
    "stream_event_to_v1",
    "stream_response_to_v03",
    "subscribe_params_to_v1",
    "subscribe_request_to_v03",
    "task_push_config_to_v03",
    "task_push_config_to_v1",
    "task_to_v03",
    "task_to_v1",
]

# Error codes that 1.0 added (extension support required, version not supported).
_V03_UNKNOWN_ERRORS = frozenset({-32008, -32009})


def _history_length_to_v1(value: int | None) -> int | None:
    # 0.3 servers applied only a positive limit: 0 meant the whole history, which in 1.0 is
    # the unset value (1.0's 0 means no history at all). A negative length is refused when
    # the 0.3 params are read.
    return value if value is not None and value > 0 else None


def _authentication_to_v1(
    info: v03.PushNotificationAuthenticationInfo | None,
) -> v1.AuthenticationInfo | None:
    # 1.0 carries one scheme; the first is the one the caller prefers. Without any scheme the
    # credentials cannot be sent as an `Authorization` header, so there is nothing to keep.
    scheme = None if info is None else next((name for name in info.schemes if name), None)
    if info is None or scheme is None:
        return None
    return v1.AuthenticationInfo(scheme=scheme, credentials=info.credentials)


def push_config_to_v1(
    config: v03.PushNotificationConfig, *, task_id: str | None = None
) -> v1.TaskPushNotificationConfig:
    """A 0.3 push config (inline in a send, or inside a task push config) as the flat 1.0
    form; `task_id` is left empty for the inline case, as the 1.0 proto asks."""
    return v1.TaskPushNotificationConfig(
        id=config.id,
        task_id=task_id,
        url=config.url,
        token=config.token,
        authentication=_authentication_to_v1(config.authentication),
    )


def push_config_to_v03(config: v1.TaskPushNotificationConfig) -> v03.PushNotificationConfig:
    """The 0.3 `PushNotificationConfig` part of a flat 1.0 config (`scheme` → `schemes[]`)."""
    auth = config.authentication
    return v03.PushNotificationConfig(
        id=config.id,
        url=config.url,
        token=config.token,
        authentication=None
        if auth is None
        else v03.PushNotificationAuthenticationInfo(
            schemes=[auth.scheme], credentials=auth.credentials
        ),
    )


def task_push_config_to_v1(config: v03.TaskPushNotificationConfig) -> v1.TaskPushNotificationConfig:
    """A 0.3 `{taskId, pushNotificationConfig}` as the flat 1.0 config."""
    return push_config_to_v1(config.push_notification_config, task_id=config.task_id)


def task_push_config_to_v03(
    config: v1.TaskPushNotificationConfig, *, task_id: str | None = None
) -> v03.TaskPushNotificationConfig:
    """A flat 1.0 config as 0.3 `{taskId, pushNotificationConfig}`.

    Args:
        config: the 1.0 config.
        task_id: the task id to use when the config does not carry one.

    Raises:
        ValueError: neither the config nor the caller names the task.
    """
    owner = config.task_id or task_id
    if not owner:
        raise ValueError("a 0.3 task push config needs a task id; pass task_id=")
    return v03.TaskPushNotificationConfig(
        task_id=owner, push_notification_config=push_config_to_v03(config)
    )


def send_params_to_v1(params: v03.MessageSendParams) -> v1.SendMessageRequest:
    """0.3 `message/send` params as a 1.0 `SendMessageRequest` (`returnImmediately` is
    `not blocking`; the push config moves inline as `taskPushNotificationConfig`)."""
    config = params.configuration
    configuration = None
    if config is not None:
        push = config.push_notification_config
        configuration = v1.SendMessageConfiguration(
            accepted_output_modes=config.accepted_output_modes,
            task_push_notification_config=None if push is None else push_config_to_v1(push),
            history_length=_history_length_to_v1(config.history_length),
            # 0.3 blocks by default: only an explicit `false` returns at once.
            return_immediately=config.blocking is False,
        )
    return v1.SendMessageRequest(
        message=message_to_v1(params.message), configuration=configuration, metadata=params.metadata
    )


def send_request_to_v03(request: v1.SendMessageRequest) -> v03.MessageSendParams:
    """A 1.0 `SendMessageRequest` as 0.3 `message/send` params (`tenant` has no 0.3 form)."""
    config = request.configuration
    configuration = None
    if config is not None:
        push = config.task_push_notification_config
        configuration = v03.MessageSendConfiguration(
            accepted_output_modes=config.accepted_output_modes,
            blocking=not config.return_immediately,
            history_length=config.history_length,
            push_notification_config=None if push is None else push_config_to_v03(push),
        )
    return v03.MessageSendParams(
        message=message_to_v03(request.message),
        configuration=configuration,
        metadata=request.metadata,
    )


def get_task_params_to_v1(params: v03.TaskQueryParams) -> v1.GetTaskRequest:
    """0.3 `tasks/get` params as a 1.0 `GetTaskRequest` (1.0 has no metadata here)."""
    return v1.GetTaskRequest(
        id=params.id, history_length=_history_length_to_v1(params.history_length)
    )


def get_task_request_to_v03(request: v1.GetTaskRequest) -> v03.TaskQueryParams:
    """A 1.0 `GetTaskRequest` as 0.3 `tasks/get` params."""
    return v03.TaskQueryParams(id=request.id, history_length=request.history_length)


def cancel_params_to_v1(params: v03.TaskIdParams) -> v1.CancelTaskRequest:
    """0.3 `tasks/cancel` params as a 1.0 `CancelTaskRequest`."""
    return v1.CancelTaskRequest(id=params.id, metadata=params.metadata)


def cancel_request_to_v03(request: v1.CancelTaskRequest) -> v03.TaskIdParams:
    """A 1.0 `CancelTaskRequest` as 0.3 `tasks/cancel` params."""
    return v03.TaskIdParams(id=request.id, metadata=request.metadata)


def subscribe_params_to_v1(params: v03.TaskIdParams) -> v1.SubscribeToTaskRequest:
    """0.3 `tasks/resubscribe` params as a 1.0 `SubscribeToTaskRequest`."""
    return v1.SubscribeToTaskRequest(id=params.id)


def subscribe_request_to_v03(request: v1.SubscribeToTaskRequest) -> v03.TaskIdParams:
    """A 1.0 `SubscribeToTaskRequest` as 0.3 `tasks/resubscribe` params."""
    return v03.TaskIdParams(id=request.id)


def get_push_config_params_to_v1(
    params: v03.GetTaskPushNotificationConfigParams,
) -> v1.GetTaskPushNotificationConfigRequest:
    """0.3 get-config params as 1.0; without a config id the config stored under the task's
    own id is meant (where a config created without an id is kept)."""
    return v1.GetTaskPushNotificationConfigRequest(
        task_id=params.id, id=params.push_notification_config_id or params.id
    )


def get_push_config_request_to_v03(
    request: v1.GetTaskPushNotificationConfigRequest,
) -> v03.GetTaskPushNotificationConfigParams:
    """A 1.0 get-config request as 0.3 params (`id` is the task id in 0.3)."""
    return v03.GetTaskPushNotificationConfigParams(
        id=request.task_id, push_notification_config_id=request.id
    )


def delete_push_config_params_to_v1(
    params: v03.DeleteTaskPushNotificationConfigParams,
) -> v1.DeleteTaskPushNotificationConfigRequest:
    """0.3 delete-config params as 1.0 (both results are empty: `null` and `{}`)."""
    return v1.DeleteTaskPushNotificationConfigRequest(
        task_id=params.id, id=params.push_notification_config_id
    )


def delete_push_config_request_to_v03(
    request: v1.DeleteTaskPushNotificationConfigRequest,
) -> v03.DeleteTaskPushNotificationConfigParams:
    """A 1.0 delete-config request as 0.3 params."""
    return v03.DeleteTaskPushNotificationConfigParams(
        id=request.task_id, push_notification_config_id=request.id
    )


def list_push_configs_params_to_v1(
    params: v03.ListTaskPushNotificationConfigParams,
) -> v1.ListTaskPushNotificationConfigsRequest:
    """0.3 list-config params as 1.0 (0.3 has no pages)."""
    return v1.ListTaskPushNotificationConfigsRequest(task_id=params.id)


def list_push_configs_request_to_v03(
    request: v1.ListTaskPushNotificationConfigsRequest,
) -> v03.ListTaskPushNotificationConfigParams:
    """A 1.0 list-config request as 0.3 params (paging has no 0.3 form)."""
    return v03.ListTaskPushNotificationConfigParams(id=request.task_id)


def list_push_configs_result_to_v03(
    response: v1.ListTaskPushNotificationConfigsResponse, *, task_id: str
) -> list[v03.TaskPushNotificationConfig]:
    """A 1.0 `{configs, nextPageToken}` as the bare 0.3 array of task push configs."""
    return [task_push_config_to_v03(config, task_id=task_id) for config in response.configs]


def list_push_configs_result_to_v1(
    configs: list[v03.TaskPushNotificationConfig],
) -> v1.ListTaskPushNotificationConfigsResponse:
    """A 0.3 array of task push configs as a 1.0 response with no further page."""
    return v1.ListTaskPushNotificationConfigsResponse(
        configs=[task_push_config_to_v1(config) for config in configs], next_page_token=""
    )


def error_code_to_v03(code: int) -> int:
    """The JSON-RPC error code a 0.3 caller gets: codes new in 1.0 become -32603."""
    return -32603 if code in _V03_UNKNOWN_ERRORS else code
