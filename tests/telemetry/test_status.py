"""`/status`, `/readyz` and the breaker as the operator sees it: a partner that fails opens
its breaker, and `/status`, `/metrics`, the client spans and `agents check --hub` say so."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import anyio
import httpx
import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from hub.cli.outcome import Running
from hub.cli.status import check_running_hub
from hub.config import Settings
from hub.console.partner_board import PartnerBoard
from hub.partners import PartnerView
from hub.store import MemoryTaskStore, SqliteTaskStore
from hub.telemetry import Telemetry
from hub.telemetry.health import check_readiness
from hub.telemetry.setup import build_telemetry
from tests.client.faulty import faulty_partner
from tests.telemetry.hubs import message, observed_hub, rpc, write_agents

pytestmark = pytest.mark.anyio


async def test_readiness_names_a_store_that_does_not_answer(tmp_path: Path) -> None:
    closed = MemoryTaskStore()
    sqlite = SqliteTaskStore(tmp_path / "hub.db")
    await sqlite.open()
    try:
        ready = await check_readiness(sqlite, started=True, partners=2)
    finally:
        await sqlite.close()
    not_ready = await check_readiness(closed, started=True, partners=2)
    starting = await check_readiness(closed, started=False, partners=0)

    assert ready.to_wire() == {
        "ready": True,
        "checks": {"store": "ok", "registry": "ok (2 partners)"},
    }
    assert not not_ready.ready
    assert "closed" in not_ready.checks["store"]
    assert not starting.ready
    assert starting.checks == {"store": "the hub is starting", "registry": "the hub is starting"}


async def test_a_failing_partner_opens_its_breaker_and_every_view_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exporter = InMemorySpanExporter()

    def traced(settings: Settings) -> Telemetry:
        return build_telemetry(settings.telemetry, span_processor=SimpleSpanProcessor(exporter))

    async with faulty_partner("http-500", streaming=False) as partner:
        agents = write_agents(tmp_path / "agents.yaml", {"flaky": partner.url})
        async with (
            observed_hub(agents, telemetry=traced) as running,
            httpx.AsyncClient(timeout=30) as http,
        ):
            url = running.url
            for _ in range(5):  # five failures open the breaker
                sent = message("hi", skill="delegate", agent="flaky")
                reply = await rpc(http, url, "SendMessage", {"message": sent})
                assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_FAILED"
            # The router leaves an open partner out; through the gateway, the call is held back.
            held = await rpc(
                http, f"{url}/agents/flaky/", "SendMessage", {"message": message("hi")}
            )
            assert held["error"]["code"] == -32603
            status = (await http.get(f"{url}/status")).json()
            metrics = (await http.get(f"{url}/metrics")).text
            args = argparse.Namespace(hub=url, names=[], json=False, api_key=None, token=None)
            checked = await check_running_hub(args, Running())

    (flaky,) = status["partners"]
    assert flaky["name"] == "flaky"
    assert flaky["origin"] == "registry"
    assert flaky["breaker"]["state"] == "open"
    assert flaky["breaker"]["consecutiveFailures"] == 5
    assert flaky["breaker"]["retryIn"] > 0
    assert status["liveTasks"] == 0
    assert 'a2a_hub_partner_breaker_state{partner="flaky"} 2.0' in metrics
    assert (
        'a2a_hub_partner_calls_total{method="SendMessage",outcome="RemoteRpcError",'
        'partner="flaky"} 5.0'
    ) in metrics
    assert (
        'a2a_hub_partner_calls_total{method="SendMessage",outcome="CircuitOpenError",'
        'partner="flaky"} 1.0'
    ) in metrics

    clients = [span for span in exporter.get_finished_spans() if span.kind is SpanKind.CLIENT]
    events = [[event.name for event in span.events] for span in clients]
    assert events == [[], [], [], [], ["breaker.opened"], ["breaker.refused"]]
    assert all(span.attributes and "error.type" in span.attributes for span in clients)

    assert checked == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("FAIL flaky  breaker open  latency -  errors ")
    assert printed[1].startswith("     5 failures in a row; next trial in ")
    assert json.dumps(status).count(partner.url.removeprefix("http://")) == 0


async def test_a_partner_whose_card_cannot_be_read_is_down_in_status_metrics_and_console(
    tmp_path: Path, refusing_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = write_agents(tmp_path / "agents.yaml", {"gone": f"http://127.0.0.1:{refusing_port}"})
    with anyio.fail_after(60):
        async with (
            observed_hub(agents) as running,
            httpx.AsyncClient(timeout=30) as http,
        ):
            url = running.url
            # Opening the hub read the card once: one failed call already.
            first = (await http.get(f"{url}/status")).json()
            first_metrics = (await http.get(f"{url}/metrics")).text
            states = []
            for _ in range(3):
                sent = message("hi", skill="delegate", agent="gone")
                reply = await rpc(http, url, "SendMessage", {"message": sent})
                states.append(reply["result"]["task"]["status"]["state"])
            status = (await http.get(f"{url}/status")).json()
            metrics = (await http.get(f"{url}/metrics")).text
            args = argparse.Namespace(hub=url, names=[], json=False, api_key=None, token=None)
            checked = await check_running_hub(args, Running())
            observability = running.app.state.hub.observability
            partners = PartnerView.whole(observability.partners)
            (row,) = await PartnerBoard().rows(partners, observability.stats)

    unreadable = "agent 'gone': its agent card could not be read (unreachable)"
    (opened,) = first["partners"]
    assert opened == {
        "name": "gone",
        "origin": "registry",
        "breaker": {"state": "closed", "consecutiveFailures": 1, "retryIn": 0.0},
        "cardError": unreadable,
        "calls": 0,
        "errorRate": 0.0,
    }
    assert (
        'a2a_hub_partner_calls_total{method="GetAgentCard",outcome="CardFetchError",'
        'partner="gone"} 1.0'
    ) in first_metrics
    assert states == ["TASK_STATE_FAILED"] * 3
    (gone,) = status["partners"]
    # Each delegation read the card twice (the router, then the call) until the breaker
    # opened: the third is held back without knocking again.
    assert gone["breaker"]["state"] == "open"
    assert gone["breaker"]["consecutiveFailures"] == 5
    assert gone["cardError"] == unreadable
    assert gone["calls"] == 2
    assert gone["errorRate"] == 0.36  # two failed calls, weighted
    assert 'a2a_hub_partner_breaker_state{partner="gone"} 2.0' in metrics
    assert (
        'a2a_hub_partner_calls_total{method="GetAgentCard",outcome="CardFetchError",'
        'partner="gone"} 5.0'
    ) in metrics
    assert checked == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("FAIL gone  breaker open  latency -  errors ")
    assert printed[1] == f"     {unreadable}"
    assert printed[2].startswith("     5 failures in a row; next trial in ")
    assert not row.up
    assert row.breaker.state.value == "open"
    assert row.card is None


async def test_status_and_metrics_show_a_scoped_credential_only_its_partners(
    tmp_path: Path, refusing_port: int
) -> None:
    dead = f"http://127.0.0.1:{refusing_port}"
    agents = write_agents(tmp_path / "agents.yaml", {"research": dead, "billing": dead})
    auth = {
        "enabled": True,
        "credentials": [
            {"name": "ops", "api_key": "ops-key-4c1d9e7a2b"},
            {"name": "scoped", "api_key": "scoped-key-8f2e6b0d4a", "agents": ["research"]},
        ],
    }
    ops = {"X-API-Key": "ops-key-4c1d9e7a2b"}
    scoped = {"X-API-Key": "scoped-key-8f2e6b0d4a"}

    with anyio.fail_after(60):
        async with (
            observed_hub(agents, settings={"auth": auth}) as running,
            httpx.AsyncClient(timeout=30) as http,
        ):
            url = running.url
            seen = {}
            for who, headers in (("ops", ops), ("scoped", scoped), ("nobody", {})):
                status = await http.get(f"{url}/status", headers=headers)
                metrics = await http.get(f"{url}/metrics", headers=headers)
                seen[who] = (status, metrics)

    ops_status, ops_metrics = seen["ops"]
    assert [p["name"] for p in ops_status.json()["partners"]] == ["research", "billing"]
    for name in ("research", "billing"):
        assert f'a2a_hub_partner_breaker_state{{partner="{name}"}} 0.0' in ops_metrics.text
        assert (
            f'a2a_hub_partner_calls_total{{method="GetAgentCard",outcome="CardFetchError",'
            f'partner="{name}"}} 1.0'
        ) in ops_metrics.text
    scoped_status, scoped_metrics = seen["scoped"]
    assert [p["name"] for p in scoped_status.json()["partners"]] == ["research"]
    assert 'a2a_hub_partner_breaker_state{partner="research"} 0.0' in scoped_metrics.text
    assert "billing" not in scoped_status.text
    assert "billing" not in scoped_metrics.text
    # The rest of the exposition is the same.
    assert "a2a_hub_start_time_seconds" in scoped_metrics.text
    assert [response.status_code for response in seen["nobody"]] == [401, 401]
