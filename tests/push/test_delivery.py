"""Delivery to a real webhook receiver: bodies, headers, throttling, the terminal flush,
retries, deletion, and a failing webhook that never holds the task up."""

from __future__ import annotations

import itertools
import logging
from datetime import datetime

import anyio
import pytest

from hub.skills import SkillContext, skill

from .conftest import FAST, Pacer, running_hub, user_message
from .receiver import Received, WebhookReceiver

pytestmark = pytest.mark.anyio

Receiver = tuple[WebhookReceiver, str]


async def test_a_delivery_carries_the_task_the_token_and_the_credentials(
    receiver: Receiver,
) -> None:
    webhook, url = receiver
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        await hub.add_config(
            task_id,
            f"{url}/hook",
            id="c1",
            token="notify-token",
            authentication={"scheme": "Bearer", "credentials": "webhook-secret"},
        )
        await hub.result("CancelTask", {"id": task_id})
        [delivery] = await webhook.wait_for(1, "/hook")
    assert delivery.headers["authorization"] == "Bearer webhook-secret"
    assert delivery.headers["x-a2a-notification-token"] == "notify-token"
    assert delivery.headers["content-type"] == "application/json"
    assert delivery.headers["host"] == url.removeprefix("http://")
    assert set(delivery.json()) == {"task"}
    assert delivery.task["id"] == task_id
    assert delivery.state == "TASK_STATE_CANCELED"
    assert delivery.task["history"][0]["parts"] == [{"text": "hi"}]


async def test_no_headers_are_sent_for_a_config_without_token_or_credentials(
    receiver: Receiver,
) -> None:
    webhook, url = receiver
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        await hub.add_config(task_id, f"{url}/plain", authentication={"scheme": "Bearer"})
        await hub.result("CancelTask", {"id": task_id})
        [delivery] = await webhook.wait_for(1, "/plain")
    assert "authorization" not in delivery.headers
    assert "x-a2a-notification-token" not in delivery.headers


async def test_the_first_working_update_goes_at_once_and_the_terminal_one_flushes_the_throttle(
    receiver: Receiver,
) -> None:
    webhook, url = receiver
    pacer = Pacer()
    # A throttle far longer than the test: only the first update and the terminal one can
    # arrive, and they must.
    slow = FAST.model_copy(update={"throttle": 60.0})
    async with running_hub(push=slow, skills=[pacer.skill]) as hub:
        config = {"url": f"{url}/hook"}
        task = await hub.send(
            "go", skill="paced", returnImmediately=True, taskPushNotificationConfig=config
        )
        [first] = await webhook.wait_for(1, "/hook")
        assert first.state == "TASK_STATE_WORKING"
        pacer.step("one", "two", "three")
        pacer.finish()
        [_, last] = await webhook.wait_for(2, "/hook")
        await hub.push.wait_idle()
    assert len(webhook.at("/hook")) == 2
    assert last.task["id"] == task["id"]
    assert last.state == "TASK_STATE_COMPLETED"
    assert last.task["artifacts"][0]["parts"] == [{"text": "all steps done"}]
    texts = [message["parts"][0]["text"] for message in last.task["history"][1:]]
    assert texts == ["one", "two", "three"]


def _stamped(delivery: Received) -> float:
    """The wall-clock moment the hub stamped on the delivered task's status."""
    stamp = str(delivery.task["status"]["timestamp"]).replace("Z", "+00:00")
    return datetime.fromisoformat(stamp).timestamp()


async def test_updates_within_the_throttle_collapse_into_the_latest_state(
    receiver: Receiver,
) -> None:
    webhook, url = receiver
    pacer = Pacer()
    # Long enough that the three steps surely fall within the window the first delivery
    # opened, however late this test hears of that delivery on a loaded machine.
    throttle = 1.0
    push = FAST.model_copy(update={"throttle": throttle})
    async with running_hub(skills=[pacer.skill], push=push) as hub:
        config = {"url": f"{url}/hook"}
        await hub.send(
            "go", skill="paced", returnImmediately=True, taskPushNotificationConfig=config
        )
        await webhook.wait_for(1, "/hook")
        pacer.step("one", "two", "three")
        [_, latest] = await webhook.wait_for(2, "/hook")
        pacer.finish()
        await webhook.wait_for(3, "/hook")
        await hub.push.wait_idle()
    deliveries = webhook.at("/hook")
    states = [delivery.state for delivery in deliveries]
    assert states == ["TASK_STATE_WORKING"] * (len(states) - 1) + ["TASK_STATE_COMPLETED"]
    assert latest.task["status"]["message"]["parts"] == [{"text": "three"}]
    # Non-final updates of one task are sent at least `throttle` apart. Each was sent after
    # the hub stamped the state it carries and arrived after it was sent, so a throttled hub
    # has each next one arrive at least `throttle` after the previous one's stamp, however
    # late either delivery travelled on a loaded machine (arrival gaps alone shrink when the
    # first one is the slower). A little slack for the stamp's millisecond precision.
    working = deliveries[:-1]
    assert all(
        later.wall - _stamped(earlier) >= throttle - 0.01
        for earlier, later in itertools.pairwise(working)
    ), [(_stamped(delivery), delivery.wall) for delivery in working]


async def test_a_config_sent_with_the_message_hears_how_a_quick_task_ended(
    receiver: Receiver,
) -> None:
    webhook, url = receiver
    async with running_hub() as hub:
        task = await hub.send("ping", taskPushNotificationConfig={"url": f"{url}/hook"})
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        deliveries = await webhook.wait_for(1, "/hook")
        await hub.push.wait_idle()
        configs = await hub.result("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    assert webhook.at("/hook")[-1].state == "TASK_STATE_COMPLETED"
    assert webhook.at("/hook")[-1].task["artifacts"][0]["parts"] == [{"text": "ping"}]
    assert deliveries[0].task["id"] == task["id"]
    assert configs == {
        "configs": [{"id": task["id"], "taskId": task["id"], "url": f"{url}/hook"}],
        "nextPageToken": "",
    }


async def test_a_config_set_over_03_gets_03_task_bodies(receiver: Receiver) -> None:
    webhook, url = receiver
    async with running_hub() as hub:
        params = {
            "message": {
                "kind": "message",
                "messageId": "m1",
                "role": "user",
                "parts": [{"kind": "text", "text": "hello"}],
            },
            "configuration": {
                "pushNotificationConfig": {
                    "url": f"{url}/v03",
                    "token": "t03",
                    "authentication": {"schemes": ["Bearer"], "credentials": "c03"},
                }
            },
        }
        task = await hub.result("message/send", params, v03=True)
        await webhook.wait_for(1, "/v03")
        await hub.push.wait_idle()
    last = webhook.at("/v03")[-1]
    body = last.json()
    assert body["kind"] == "task"
    assert body["id"] == task["id"]
    assert body["status"]["state"] == "completed"
    assert body["artifacts"][0]["parts"] == [{"kind": "text", "text": "hello"}]
    assert last.headers["authorization"] == "Bearer c03"
    assert last.headers["x-a2a-notification-token"] == "t03"


async def test_retries_follow_the_answers_503_is_retried_4xx_and_3xx_are_not(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    webhook, url = receiver
    webhook.answer("/recovers", 503, 503)
    webhook.answer("/down", 503, 503, 503, 503)
    webhook.answer("/refuses", 400)
    webhook.answer("/moved", 302)
    caplog.set_level(logging.WARNING, logger="hub.push")
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        for path in ("recovers", "down", "refuses", "moved"):
            await hub.add_config(task_id, f"{url}/{path}", id=path, token="tok-secret")
        await hub.result("CancelTask", {"id": task_id})
        await webhook.wait_for(3, "/recovers")
        await webhook.wait_for(4, "/down")
        await hub.push.wait_idle()
    counts = {
        path: len(webhook.at(f"/{path}")) for path in ("recovers", "down", "refuses", "moved")
    }
    assert counts == {"recovers": 3, "down": 4, "refuses": 1, "moved": 1}
    assert webhook.at("/elsewhere") == []
    assert len({delivery.body for delivery in webhook.at("/recovers")}) == 1
    warnings = [record.getMessage() for record in caplog.records if record.name == "hub.push"]
    assert len(warnings) == 3  # down, refuses and moved gave up; recovers got through
    assert not any("tok-secret" in text or "/down" in text for text in warnings)


async def test_a_deleted_config_gets_nothing_more(receiver: Receiver) -> None:
    webhook, url = receiver
    async with running_hub() as hub:
        task_id = await hub.parked_task()
        await hub.add_config(task_id, f"{url}/kept", id="kept")
        await hub.add_config(task_id, f"{url}/gone", id="gone")
        await hub.result("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "gone"})
        answer = {"message": user_message("Ada", taskId=task_id)}
        done = (await hub.result("SendMessage", answer))["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        await webhook.wait_for(1, "/kept")
        await hub.push.wait_idle()
    assert webhook.at("/kept")[-1].state == "TASK_STATE_COMPLETED"
    assert webhook.at("/gone") == []


async def test_a_hanging_or_failing_webhook_never_slows_or_fails_the_task(
    receiver: Receiver,
) -> None:
    webhook, url = receiver
    webhook.answer("/fails", *[500] * 10)
    settings = FAST.model_copy(update={"timeout": 30.0, "retry_delays": (30.0,)})
    async with running_hub(push=settings) as hub:
        configs = ({"url": f"{url}/hang"}, {"url": f"{url}/fails"})
        with anyio.fail_after(5):
            for config in configs:
                task = await hub.send("still works", taskPushNotificationConfig=config)
                assert task["status"]["state"] == "TASK_STATE_COMPLETED"
                assert task["artifacts"][0]["parts"] == [{"text": "still works"}]
        await webhook.wait_for(1, "/hang")
        await webhook.wait_for(1, "/fails")
        webhook.hang.set()


async def test_an_update_while_a_retry_waits_replaces_the_retried_state(
    receiver: Receiver,
) -> None:
    webhook, url = receiver
    pacer = Pacer()
    webhook.answer("/hook", 503)
    settings = FAST.model_copy(update={"retry_delays": (60.0,)})
    async with running_hub(push=settings, skills=[pacer.skill]) as hub:
        config = {"url": f"{url}/hook"}
        await hub.send(
            "go", skill="paced", returnImmediately=True, taskPushNotificationConfig=config
        )
        [refused] = await webhook.wait_for(1, "/hook")
        assert refused.state == "TASK_STATE_WORKING"
        pacer.finish()
        [_, final] = await webhook.wait_for(2, "/hook")
        await hub.push.wait_idle()
    assert final.state == "TASK_STATE_COMPLETED"
    assert len(webhook.at("/hook")) == 2


@skill(
    id="pinger", description="answers ping with a message, anything else as a task", reply="either"
)
async def pinger(ctx: SkillContext) -> str | None:
    if ctx.text == "ping":
        await ctx.reply("pong")
        return None
    return f"done: {ctx.text}"


async def test_a_config_sent_with_a_message_answered_directly_is_neither_kept_nor_used(
    receiver: Receiver,
) -> None:
    webhook, url = receiver
    async with running_hub(skills=[pinger]) as hub:
        params = {
            "message": user_message("ping"),
            "metadata": {"skill": "pinger"},
            "configuration": {"taskPushNotificationConfig": {"url": f"{url}/reply"}},
        }
        reply = await hub.result("SendMessage", params)
        assert reply["message"]["parts"] == [{"text": "pong"}]
        task = await hub.send(
            "hello", skill="pinger", taskPushNotificationConfig={"url": f"{url}/task"}
        )
        [delivered] = await webhook.wait_for(1, "/task")
        await hub.push.wait_idle()
        listed = await hub.result("ListTasks", {})
    assert delivered.state == "TASK_STATE_COMPLETED"
    assert delivered.task["id"] == task["id"]
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    assert webhook.at("/reply") == []
