"""Push notifications with the official a2a-sdk client: config calls on every binding the
hub serves, and webhook bodies the SDK's own types parse."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from a2a.compat.v0_3 import types as types_v03
from a2a.types import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    SendMessageConfiguration,
    StreamResponse,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf import json_format
from litestar import Litestar

from hub.app import create_app
from hub.config import PushSettings, ServerSettings, Settings, StoreSettings
from hub.skills import Skill
from hub.skills.echo import echo
from hub.store import SqliteTaskStore
from hub.testing import serve_on_loopback
from tests.push.receiver import WebhookReceiver

from .conftest import interview
from .test_sdk_client import BINDINGS, collect, final_task_state, sdk_client, user

pytestmark = pytest.mark.anyio


@pytest.fixture
async def push_hub_url(tmp_path: Path) -> AsyncIterator[str]:
    """A hub on loopback that may post to webhooks on loopback, with short delays."""
    skills: dict[str, Skill] = {s.skill_id: s for s in (echo, interview)}
    push = PushSettings(allow_hosts=("127.0.0.1",), throttle=0.2, retry_delays=(0.05,))

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(path=str(tmp_path / "hub.db")),
            push=push,
        )
        return create_app(settings, store=SqliteTaskStore(tmp_path / "hub.db"), skills=skills)

    async with serve_on_loopback(build) as url:
        yield url


@pytest.fixture
async def webhook() -> AsyncIterator[tuple[WebhookReceiver, str]]:
    receiver = WebhookReceiver()
    async with serve_on_loopback(receiver) as url:
        yield receiver, url


@pytest.mark.parametrize("binding", list(BINDINGS))
async def test_the_sdk_manages_configs_and_its_types_read_the_deliveries(
    push_hub_url: str, webhook: tuple[WebhookReceiver, str], binding: str
) -> None:
    receiver, url = webhook
    path = f"/{binding}"
    inline = TaskPushNotificationConfig(
        url=f"{url}{path}",
        token="sdk-token",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="sdk-secret"),
    )
    async with sdk_client(push_hub_url, binding) as client:
        request = user("hi", skill="interview")
        request.configuration.CopyFrom(
            SendMessageConfiguration(task_push_notification_config=inline)
        )
        events = await collect(client.send_message(request))
        assert final_task_state(events) == TaskState.TASK_STATE_INPUT_REQUIRED
        task_id = events[0].task.id

        extra = TaskPushNotificationConfig(task_id=task_id, id="extra", url=f"{url}/extra")
        created = await client.create_task_push_notification_config(extra)
        assert (created.task_id, created.id, created.url) == (task_id, "extra", extra.url)
        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id="extra")
        )
        assert got.url == extra.url
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        assert sorted(config.id for config in listed.configs) == sorted([task_id, "extra"])
        [kept] = [config for config in listed.configs if config.id == task_id]
        assert (kept.token, kept.authentication.scheme) == ("sdk-token", "Bearer")
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="extra")
        )
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        assert [config.id for config in listed.configs] == [task_id]

        answer = await collect(client.send_message(user("Ada", task_id=task_id)))
        assert final_task_state(answer) == TaskState.TASK_STATE_COMPLETED

    delivered = await receiver.wait_for(1, path)
    assert receiver.at("/extra") == []
    assert all(d.headers["authorization"] == "Bearer sdk-secret" for d in delivered)
    assert all(d.headers["x-a2a-notification-token"] == "sdk-token" for d in delivered)
    if binding == "jsonrpc-0.3":
        # A config created through 0.3 gets the bare 0.3 Task a 0.3 server sent.
        with_state = await _wait_for_v03_state(receiver, path, "completed")
        assert with_state.id == task_id
        assert with_state.artifacts is not None
        text = with_state.artifacts[0].parts[0].root
        assert isinstance(text, types_v03.TextPart)
        assert text.text == "Hello, Ada!"
        return
    last = await receiver.wait_for_state(path, "TASK_STATE_COMPLETED")
    parsed = json_format.Parse(last.body, StreamResponse())
    assert parsed.task.id == task_id
    assert parsed.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert parsed.task.artifacts[0].parts[0].text == "Hello, Ada!"


async def _wait_for_v03_state(receiver: WebhookReceiver, path: str, state: str) -> types_v03.Task:
    seen = 0
    with anyio.fail_after(5):
        while True:
            delivered = await receiver.wait_for(seen + 1, path)
            for delivery in delivered[seen:]:
                task = types_v03.Task.model_validate_json(delivery.body)
                if task.status.state.value == state:
                    return task
            seen = len(delivered)
