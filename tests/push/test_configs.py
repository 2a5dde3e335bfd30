"""Push config create / get / list / delete on both bindings and both protocol versions."""

from __future__ import annotations

from typing import Any

import pytest

from hub.config import AuthSettings, CredentialSettings
from hub.errors import TaskNotFoundError
from hub.protocol import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from hub.skills import SkillContext, skill

from .conftest import FAST, V1, Hub, running_hub, user_message
from .receiver import WebhookReceiver

pytestmark = pytest.mark.anyio

HOOK = "http://127.0.0.1:9/hook"


def error_of(document: dict[str, Any]) -> tuple[int, str]:
    error = document["error"]
    return error["code"], error["data"][0]["reason"]


async def test_crud_over_jsonrpc_10_with_both_token_shapes() -> None:
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        bearer = {
            "id": "c1",
            "url": HOOK,
            "token": "tok",
            "authentication": {"scheme": "Bearer", "credentials": "secret"},
        }
        created = await hub.add_config(task_id, **bearer)
        assert created == {"taskId": task_id, **bearer}
        plain = await hub.add_config(task_id, HOOK)  # no id: kept under the task's id
        assert plain == {"id": task_id, "taskId": task_id, "url": HOOK}
        got = await hub.result("GetTaskPushNotificationConfig", {"taskId": task_id, "id": "c1"})
        assert got == created
        listed = await hub.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert listed == {"configs": [created, plain], "nextPageToken": ""}
        page = await hub.result(
            "ListTaskPushNotificationConfigs", {"taskId": task_id, "pageSize": 1}
        )
        assert page == {"configs": [created], "nextPageToken": "1"}
        rest = await hub.result(
            "ListTaskPushNotificationConfigs", {"taskId": task_id, "pageToken": "1"}
        )
        assert rest == {"configs": [plain], "nextPageToken": ""}
        replaced = await hub.add_config(task_id, "http://127.0.0.1:9/other", id="c1")
        assert replaced["url"] == "http://127.0.0.1:9/other"
        deleted = await hub.call(
            "DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "c1"}
        )
        assert deleted["result"] is None
        again = await hub.call("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "c1"})
        assert again["result"] is None  # delete is idempotent
        missing = await hub.call("GetTaskPushNotificationConfig", {"taskId": task_id, "id": "c1"})
        assert error_of(missing) == (-32001, "TASK_NOT_FOUND")
        listed = await hub.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert listed["configs"] == [plain]


async def test_crud_over_rest() -> None:
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        base = f"{hub.url}/tasks/{task_id}/pushNotificationConfigs"
        body = {"id": "r1", "url": HOOK, "taskId": "ignored-the-path-wins", "token": "t"}
        created = await hub.http.post(base, json=body, headers=V1)
        assert created.status_code == 200
        assert created.json() == {"id": "r1", "taskId": task_id, "url": HOOK, "token": "t"}
        got = await hub.http.get(f"{base}/r1", headers=V1)
        assert got.json() == created.json()
        listed = await hub.http.get(base, params={"pageSize": 10}, headers=V1)
        assert listed.json() == {"configs": [created.json()], "nextPageToken": ""}
        deleted = await hub.http.delete(f"{base}/r1", headers=V1)
        assert (deleted.status_code, deleted.json()) == (200, {})
        missing = await hub.http.get(f"{base}/r1", headers=V1)
        assert missing.status_code == 404
        unknown = await hub.http.post(
            f"{hub.url}/tasks/nope/pushNotificationConfigs", json={"url": HOOK}, headers=V1
        )
        assert unknown.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"


async def test_crud_over_jsonrpc_03() -> None:
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        config = {
            "url": HOOK,
            "token": "t03",
            "authentication": {"schemes": ["Basic", "Bearer"], "credentials": "dXNlcjpwdw=="},
        }
        created = await hub.result(
            "tasks/pushNotificationConfig/set",
            {"taskId": task_id, "pushNotificationConfig": config},
            v03=True,
        )
        # 1.0 keeps one scheme, the first: the one the caller prefers.
        kept = {**config, "id": task_id, "authentication": {**config["authentication"]}}
        kept["authentication"]["schemes"] = ["Basic"]
        assert created == {"taskId": task_id, "pushNotificationConfig": kept}
        got = await hub.result("tasks/pushNotificationConfig/get", {"id": task_id}, v03=True)
        assert got == created
        listed = await hub.result("tasks/pushNotificationConfig/list", {"id": task_id}, v03=True)
        assert listed == [created]
        deleted = await hub.result(
            "tasks/pushNotificationConfig/delete",
            {"id": task_id, "pushNotificationConfigId": task_id},
            v03=True,
        )
        assert deleted is None
        missing = await hub.call("tasks/pushNotificationConfig/get", {"id": task_id}, v03=True)
        assert missing["error"]["code"] == -32001


async def test_configs_of_another_callers_task_are_not_found() -> None:
    async with running_hub() as hub:
        service = hub.service
        message = Message(message_id="m1", role=Role.USER, parts=[Part(text="hi")])
        request = SendMessageRequest(message=message, metadata={"skill": "interview"})
        task = (await service.send_message(request, "alice")).task
        assert task is not None
        config = TaskPushNotificationConfig(task_id=task.id, id="c1", url=HOOK)
        await service.create_push_config(config, "alice")
        for attempt in (
            service.create_push_config(config, "bob"),
            service.get_push_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id="c1"), "bob"
            ),
            service.list_push_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id), "bob"
            ),
            service.delete_push_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="c1"), "bob"
            ),
        ):
            with pytest.raises(TaskNotFoundError):
                await attempt
        found = await service.get_push_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id="c1"), "alice"
        )
        assert found == config


async def test_bad_configs_are_refused_with_the_field_that_is_wrong() -> None:
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        cases = {
            "token": {"url": HOOK, "token": "line\r\nX-Injected: 1"},
            "id": {"url": HOOK, "id": "a/b"},
            "authentication.scheme": {"url": HOOK, "authentication": {"scheme": "Bear er"}},
            "url": {"url": "ftp://127.0.0.1/x"},
        }
        for field, config in cases.items():
            document = await hub.call(
                "CreateTaskPushNotificationConfig", {"taskId": task_id, **config}
            )
            assert document["error"]["code"] == -32602, field
            fields = [v["field"] for v in document["error"]["data"][1]["fieldViolations"]]
            assert fields == [field]
        unknown = await hub.call(
            "CreateTaskPushNotificationConfig", {"taskId": "nope", "url": "ftp://x"}
        )
        assert error_of(unknown) == (-32001, "TASK_NOT_FOUND")  # before the URL is looked at


async def test_a_finished_task_keeps_the_configs_it_had() -> None:
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        await hub.add_config(task_id, HOOK, id="kept")
        await hub.result("CancelTask", {"id": task_id})
        listed = await hub.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert [config["id"] for config in listed["configs"]] == ["kept"]


@skill(id="fails", description="fails every task")
async def fails(ctx: SkillContext) -> str:
    raise ctx.fail("nothing to do")


@skill(id="rejects", description="rejects every task")
async def rejects(ctx: SkillContext) -> None:
    await ctx.finish(TaskState.REJECTED, "not for me")


FINISHING = (fails, rejects)
TERMINAL = [
    "TASK_STATE_CANCELED",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_REJECTED",
]


async def finished_tasks(hub: Hub) -> dict[str, str]:
    """One task in each terminal state, by state."""
    finished: dict[str, str] = {}
    for skill_id in (None, "fails", "rejects"):
        task = await hub.send("hi", skill=skill_id)
        finished[task["status"]["state"]] = task["id"]
    parked = await hub.parked_task()
    await hub.result("CancelTask", {"id": parked})
    finished["TASK_STATE_CANCELED"] = parked
    assert sorted(finished) == TERMINAL
    return finished


async def test_a_finished_task_takes_a_config_over_jsonrpc_10_and_nothing_is_sent_to_it(
    receiver: tuple[WebhookReceiver, str],
) -> None:
    webhook, url = receiver
    async with running_hub(skills=FINISHING) as hub:
        for state, task_id in (await finished_tasks(hub)).items():
            fields = {"id": "late", "url": f"{url}/late", "token": "t"}
            created = await hub.add_config(task_id, **fields)
            assert created == {"taskId": task_id, **fields}, state
            ids = {"taskId": task_id, "id": "late"}
            assert await hub.result("GetTaskPushNotificationConfig", ids) == created
            listed = await hub.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
            assert listed == {"configs": [created], "nextPageToken": ""}
            assert (await hub.call("DeleteTaskPushNotificationConfig", ids))["result"] is None
            gone = await hub.call("GetTaskPushNotificationConfig", ids)
            assert error_of(gone) == (-32001, "TASK_NOT_FOUND")
            kept = await hub.add_config(task_id, f"{url}/kept")
            assert kept == {"id": task_id, "taskId": task_id, "url": f"{url}/kept"}
        await hub.push.wait_idle()
    assert webhook.received == []


async def test_a_finished_task_takes_a_config_over_jsonrpc_03(
    receiver: tuple[WebhookReceiver, str],
) -> None:
    webhook, url = receiver
    async with running_hub(skills=FINISHING) as hub:
        for state, task_id in (await finished_tasks(hub)).items():
            config = {"id": "late", "url": f"{url}/late", "token": "t03"}
            created = await hub.result(
                "tasks/pushNotificationConfig/set",
                {"taskId": task_id, "pushNotificationConfig": config},
                v03=True,
            )
            assert created == {"taskId": task_id, "pushNotificationConfig": config}, state
            ids = {"id": task_id, "pushNotificationConfigId": "late"}
            got = await hub.result("tasks/pushNotificationConfig/get", ids, v03=True)
            assert got == created
            listed = await hub.result(
                "tasks/pushNotificationConfig/list", {"id": task_id}, v03=True
            )
            assert listed == [created]
            deleted = await hub.result("tasks/pushNotificationConfig/delete", ids, v03=True)
            assert deleted is None
            empty = await hub.result("tasks/pushNotificationConfig/list", {"id": task_id}, v03=True)
            assert empty == []
        await hub.push.wait_idle()
    assert webhook.received == []


async def test_a_finished_task_takes_a_config_over_rest(
    receiver: tuple[WebhookReceiver, str],
) -> None:
    webhook, url = receiver
    async with running_hub(skills=FINISHING) as hub:
        for state, task_id in (await finished_tasks(hub)).items():
            base = f"{hub.url}/tasks/{task_id}/pushNotificationConfigs"
            created = await hub.http.post(
                base, json={"id": "late", "url": f"{url}/late"}, headers=V1
            )
            assert created.status_code == 200, state
            assert created.json() == {"id": "late", "taskId": task_id, "url": f"{url}/late"}
            got = await hub.http.get(f"{base}/late", headers=V1)
            assert got.json() == created.json()
            listed = await hub.http.get(base, headers=V1)
            assert listed.json() == {"configs": [created.json()], "nextPageToken": ""}
            deleted = await hub.http.delete(f"{base}/late", headers=V1)
            assert (deleted.status_code, deleted.json()) == (200, {})
            missing = await hub.http.get(f"{base}/late", headers=V1)
            assert missing.status_code == 404
        await hub.push.wait_idle()
    assert webhook.received == []


ALICE_KEY = "alice-key-0123456789"
BOB_KEY = "bob-key-0123456789ab"


async def test_a_finished_task_takes_configs_only_from_its_own_caller() -> None:
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="alice", api_key=ALICE_KEY),
            CredentialSettings(name="bob", api_key=BOB_KEY),
        ),
    )
    alice, bob = {"X-API-Key": ALICE_KEY}, {"X-API-Key": BOB_KEY}
    async with running_hub(auth=auth) as hub:
        sent = await hub.call("SendMessage", {"message": user_message("hi")}, headers=alice)
        task_id = sent["result"]["task"]["id"]
        assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        config = {"taskId": task_id, "id": "c1", "url": HOOK}
        refused = await hub.call("CreateTaskPushNotificationConfig", config, headers=bob)
        assert error_of(refused) == (-32001, "TASK_NOT_FOUND")
        refused_03 = await hub.call(
            "tasks/pushNotificationConfig/set",
            {"taskId": task_id, "pushNotificationConfig": {"id": "c1", "url": HOOK}},
            v03=True,
            headers=bob,
        )
        assert refused_03["error"]["code"] == -32001
        refused_rest = await hub.http.post(
            f"{hub.url}/tasks/{task_id}/pushNotificationConfigs",
            json={"id": "c1", "url": HOOK},
            headers={**V1, **bob},
        )
        assert refused_rest.status_code == 404
        assert refused_rest.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
        listed = await hub.call(
            "ListTaskPushNotificationConfigs", {"taskId": task_id}, headers=alice
        )
        assert listed["result"] == {"configs": [], "nextPageToken": ""}
        created = await hub.call("CreateTaskPushNotificationConfig", config, headers=alice)
        assert created["result"] == config
        hidden = await hub.call("ListTaskPushNotificationConfigs", {"taskId": task_id}, headers=bob)
        assert error_of(hidden) == (-32001, "TASK_NOT_FOUND")


async def test_a_finished_task_takes_no_more_configs_than_the_limit() -> None:
    settings = FAST.model_copy(update={"max_configs_per_task": 2})
    async with running_hub(push=settings) as hub:
        task_id = (await hub.send("done"))["id"]
        await hub.add_config(task_id, HOOK, id="a")
        await hub.add_config(task_id, HOOK, id="b")
        await hub.add_config(task_id, HOOK, id="b")  # replacing one is no new config
        third = await hub.call(
            "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": HOOK, "id": "c"}
        )
        assert error_of(third) == (-32602, "LIMIT_EXCEEDED")


async def test_the_number_of_configs_per_task_is_limited() -> None:
    settings = FAST.model_copy(update={"max_configs_per_task": 2})
    async with running_hub(push=settings) as hub:
        task_id = await hub.parked_task()
        await hub.add_config(task_id, HOOK, id="a")
        await hub.add_config(task_id, HOOK, id="b")
        await hub.add_config(task_id, HOOK, id="b")  # replacing one is no new config
        third = await hub.call(
            "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": HOOK, "id": "c"}
        )
        assert error_of(third) == (-32602, "LIMIT_EXCEEDED")
        rest = await hub.http.post(
            f"{hub.url}/tasks/{task_id}/pushNotificationConfigs",
            json={"url": HOOK, "id": "c"},
            headers=V1,
        )
        assert rest.status_code == 429
