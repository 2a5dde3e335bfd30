"""`GET /metrics` after a scripted workload, parsed with prometheus_client's own text
parser: every family is there, with the counts the workload makes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from litestar import Litestar
from prometheus_client.parser import text_string_to_metric_families

from hub.app import create_app
from hub.config import Settings
from hub.partners import Partners
from hub.registry import load_registry
from hub.skills import SkillContext, skill
from hub.skills.echo import echo
from hub.skills.swarm import swarm
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.push.receiver import WebhookReceiver
from tests.telemetry.hubs import message, rpc, write_agents

pytestmark = pytest.mark.anyio

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@skill(id="asks", description="asks a question and waits for the answer")
async def asks(ctx: SkillContext) -> str:
    answer = await ctx.ask("which one?")
    return answer.text()


def _hub(agents: Path) -> Any:
    def build(url: str) -> Litestar:
        settings = Settings.model_validate(
            {
                "server": {"public_url": url},
                "store": {"kind": "memory"},
                "default_skill": "echo",
                "limits": {"per_address": True, "requests_per_second": 0.001, "burst": 30},
                "push": {"allow_hosts": ["127.0.0.1"], "throttle": 0.05, "retry_delays": []},
            }
        )
        return create_app(
            settings,
            store=MemoryTaskStore(),
            skills={"echo": echo, "swarm": swarm, "asks": asks},
            partners=Partners(load_registry(agents)),
        )

    return build


def _samples(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def _at(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def _families(text: str) -> set[str]:
    return {family.name for family in text_string_to_metric_families(text)}


@asynccontextmanager
async def _open_stream(http: httpx.AsyncClient, url: str, task_id: str) -> AsyncIterator[None]:
    """A SubscribeToTask stream, held open (its first event read) inside the block."""
    body = {"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask", "params": {"id": task_id}}
    headers = {"A2A-Version": "1.0"}
    async with http.stream("POST", url, json=body, headers=headers) as stream:
        lines = stream.aiter_lines()
        async for line in lines:
            if line.startswith("data:"):
                break
        yield


async def test_every_family_counts_what_a_scripted_workload_did(
    tmp_path: Path, echoer: str, refusing_port: int
) -> None:
    down = f"http://127.0.0.1:{refusing_port}"
    agents = write_agents(tmp_path / "agents.yaml", {"a": echoer, "b": echoer, "down": down})
    webhook = WebhookReceiver()
    async with (
        serve_on_loopback(webhook) as hooks,
        serve_on_loopback(_hub(agents)) as url,
        httpx.AsyncClient(timeout=30) as http,
    ):
        with anyio.fail_after(30):
            for _ in range(3):
                done = await rpc(http, url, "SendMessage", {"message": message("hi")})
                assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            old = {
                "kind": "message",
                "messageId": "m03",
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
            }
            assert "result" in await rpc(http, url, "message/send", {"message": old}, version="0.3")
            rest = await http.post(
                f"{url}/message:send",
                json={"message": message("hi")},
                headers={"A2A-Version": "1.0"},
            )
            assert rest.status_code == 200
            missing = await rpc(http, url, "GetTask", {"id": "nope"})
            assert missing["error"]["code"] == -32001
            swarmed = await rpc(
                http,
                url,
                "SendMessage",
                {"message": message("hi", skill="swarm", agents=["a", "b", "down"])},
            )
            assert swarmed["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            push = {"url": f"{hooks}/hook", "token": "t"}
            pushed = await rpc(
                http,
                url,
                "SendMessage",
                {"message": message("hi"), "configuration": {"taskPushNotificationConfig": push}},
            )
            assert pushed["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            await webhook.wait_for_state("/hook", "TASK_STATE_COMPLETED")
            parked = await rpc(http, url, "SendMessage", {"message": message("?", skill="asks")})
            parked_task = parked["result"]["task"]
            assert parked_task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

            async with _open_stream(http, url, parked_task["id"]):
                # Wait for the push sender to count the deliveries the webhook has seen.
                while True:
                    text = (await http.get(f"{url}/metrics")).text
                    delivered = _samples(text).get(
                        ("a2a_hub_push_deliveries_total", frozenset({("outcome", "delivered")}))
                    )
                    if delivered == len(webhook.at("/hook")):
                        break
                    await anyio.sleep(0.02)
            refused = 0
            while refused == 0:
                answer = await http.get(f"{url}/tasks", headers={"A2A-Version": "1.0"})
                refused += answer.status_code == 429
            after = (await http.get(f"{url}/metrics")).text

    samples = _samples(text)
    send = {"method": "SendMessage", "binding": "jsonrpc", "version": "1.0"}
    assert _at(samples, "a2a_hub_requests_total", **send, outcome="ok") == 6
    assert _at(samples, "a2a_hub_request_duration_seconds_count", **send) == 6
    assert _at(samples, "a2a_hub_requests_total", **send | {"version": "0.3"}, outcome="ok") == 1
    assert (
        _at(samples, "a2a_hub_requests_total", **send | {"binding": "http+json"}, outcome="ok") == 1
    )
    get = {"method": "GetTask", "binding": "jsonrpc", "version": "1.0"}
    assert _at(samples, "a2a_hub_requests_total", **get, outcome="TaskNotFoundError") == 1
    # The stream was still open when scraped: not counted yet.
    assert (
        "a2a_hub_requests_total",
        frozenset({**send, "method": "SubscribeToTask", "outcome": "ok"}.items()),
    ) not in samples

    assert _at(samples, "a2a_hub_tasks_total", skill="echo", state="completed") == 6
    assert _at(samples, "a2a_hub_task_duration_seconds_count", skill="echo") == 6
    assert _at(samples, "a2a_hub_tasks_total", skill="swarm", state="completed") == 1
    assert _at(samples, "a2a_hub_live_tasks") == 1
    assert _at(samples, "a2a_hub_parked_tasks") == 1
    assert _at(samples, "a2a_hub_open_streams") == 1

    for partner in ("a", "b"):
        call = {"partner": partner, "method": "SendStreamingMessage"}
        assert _at(samples, "a2a_hub_partner_calls_total", **call, outcome="ok") == 1
        assert _at(samples, "a2a_hub_partner_call_duration_seconds_count", **call) == 1
    for partner in ("a", "b", "down"):
        assert _at(samples, "a2a_hub_partner_breaker_state", partner=partner) == 0
    assert _at(samples, "a2a_hub_swarm_runs_total", strategy="broadcast", outcome="ok") == 1
    assert (
        _at(samples, "a2a_hub_swarm_branches_total", strategy="broadcast", outcome="completed") == 2
    )
    assert _at(samples, "a2a_hub_swarm_branches_total", strategy="broadcast", outcome="error") == 1
    assert _at(samples, "a2a_hub_push_deliveries_total", outcome="delivered") >= 1
    assert _at(samples, "a2a_hub_store_commit_duration_seconds_count") >= 1
    assert _at(samples, "a2a_hub_rate_limited_requests_total") == 0
    assert _at(_samples(after), "a2a_hub_rate_limited_requests_total") == refused

    assert {
        "a2a_hub_requests",
        "a2a_hub_request_duration_seconds",
        "a2a_hub_tasks",
        "a2a_hub_task_duration_seconds",
        "a2a_hub_live_tasks",
        "a2a_hub_parked_tasks",
        "a2a_hub_open_streams",
        "a2a_hub_partner_calls",
        "a2a_hub_partner_call_duration_seconds",
        "a2a_hub_partner_breaker_state",
        "a2a_hub_swarm_runs",
        "a2a_hub_swarm_branches",
        "a2a_hub_push_deliveries",
        "a2a_hub_store_commit_duration_seconds",
        "a2a_hub_rate_limited_requests",
        "a2a_hub_start_time_seconds",
    } <= _families(text)
    # Bounded labels: no task id, message id or context id is ever a label value.
    values = {value for (_, labels) in samples for (_, value) in labels}
    assert parked_task["id"] not in values
    assert parked_task["contextId"] not in values


async def test_metrics_can_be_switched_off(tmp_path: Path) -> None:
    agents = write_agents(tmp_path / "agents.yaml", {})
    settings = Settings.model_validate(
        {"store": {"kind": "memory"}, "telemetry": {"metrics": {"enabled": False}}}
    )
    app = create_app(
        settings,
        store=MemoryTaskStore(),
        skills={"echo": echo},
        partners=Partners(load_registry(agents)),
    )
    async with serve_on_loopback(app) as url, httpx.AsyncClient() as http:
        answer = await http.get(f"{url}/metrics")
    assert answer.status_code == 404
    assert answer.json()["error"]["status"] == "NOT_FOUND"
