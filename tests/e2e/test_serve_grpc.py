"""A real `a2a-hub serve` process with its gRPC door on: the official a2a-sdk's gRPC client
answered, `a2a-hub send --binding grpc` choosing the door from the hub's card (a JSON-RPC
interface listed first), and SIGTERM stopping the process cleanly with the door on."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from a2a.types import a2a_pb2

from hub.testing.loopback import reserved_port
from tests.interop.grpc_clients import grpc_client
from tests.interop.test_sdk_client import collect, final_task_state, user

from .hubproc import hub_process
from .test_cli_agents import ok

pytestmark = pytest.mark.anyio

STOP_WITHIN = 30.0


@dataclass(frozen=True)
class Served:
    process: subprocess.Popen[bytes]
    url: str
    grpc_address: str


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """`a2a-hub serve` with `server.grpc.enabled` on a free loopback port."""
    with reserved_port() as port:
        config = tmp_path / "hub.yaml"
        config.write_text(
            f"server: {{host: 127.0.0.1, grpc: {{enabled: true, port: {port}}}}}\n"
            "store: {kind: memory}\n"
            "skills:\n  - builtin: echo\n",
            encoding="utf-8",
        )
        with hub_process(config) as (process, url):
            yield Served(process, url, f"127.0.0.1:{port}")


def _grpc_requests(exposition: str) -> float:
    """How many A2A requests the hub counted over its gRPC door."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in exposition.splitlines()
        if line.startswith("a2a_hub_requests_total{") and 'binding="grpc"' in line
    )


async def test_the_card_names_the_door_and_a_grpc_client_is_answered(served: Served) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        card = (await http.get(f"{served.url}/.well-known/agent-card.json")).json()
    async with grpc_client(served.url) as client:
        events = await collect(client.send_message(user("hello over grpc")))

    bindings = [i["protocolBinding"] for i in card["supportedInterfaces"]]
    assert bindings[0] == "JSONRPC"
    assert {"url": served.grpc_address, "protocolBinding": "GRPC", "protocolVersion": "1.0"} in (
        card["supportedInterfaces"]
    )
    artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert [[part.text for part in a.parts] for a in artifacts] == [["hello over grpc"]]
    assert final_task_state(events) == a2a_pb2.TASK_STATE_COMPLETED


async def test_send_with_binding_grpc_reaches_the_door(tmp_path: Path, served: Served) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        before = _grpc_requests((await http.get(f"{served.url}/metrics")).text)
        sent = await ok("send", "--binding", "grpc", served.url, "hi door", cwd=tmp_path)
        streamed = await ok(
            "send", "--binding", "grpc", "--stream", served.url, "streamed", cwd=tmp_path
        )
        over_jsonrpc = await ok("send", "--stream", served.url, "streamed", cwd=tmp_path)
        task_id = sent.split()[1].rstrip(":")
        fetched = await ok(
            "tasks", "get", task_id, "--binding", "grpc", "--url", served.url, cwd=tmp_path
        )
        after = _grpc_requests((await http.get(f"{served.url}/metrics")).text)

    assert sent.splitlines()[1:] == ["  artifact response: hi door"]
    # The stream reads the same over either binding.
    assert "streamed" in streamed.splitlines()
    assert streamed.splitlines()[1:] == over_jsonrpc.splitlines()[1:]
    assert task_id in fetched
    # The card lists JSON-RPC first; the three calls went to the gRPC door all the same.
    assert after - before == 3


async def test_sigterm_stops_the_hub_cleanly_with_the_door_on(served: Served) -> None:
    async with grpc_client(served.url) as client:
        await collect(client.send_message(user("before the stop")))
        served.process.send_signal(signal.SIGTERM)
        # The channel stays open meanwhile: the door must not hold the process up.
        await anyio.to_thread.run_sync(lambda: served.process.wait(STOP_WITHIN))
    assert served.process.stderr is not None
    said = served.process.stderr.read().decode()

    # uvicorn shuts the app down, then ends the process by the signal it caught, as a
    # process stopped by SIGTERM does.
    assert served.process.returncode == -signal.SIGTERM, said
    assert "Application shutdown complete" in said
    assert "Traceback" not in said
