"""Hubs that call each other: the trail of hubs travels with every forwarded request, and a
loop or a trail over the hop limit is refused with a clear error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.protocol import Task, TaskState
from hub.protocol.trace import TRAIL_HEADER
from hub.registry import load_registry
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback

pytestmark = pytest.mark.anyio


def _hub(
    agents: Path, partners: dict[str, str], *, max_hops: int = 8, default: str = "delegate"
) -> Callable[[str], Litestar]:
    """A hub whose agents.yaml (written now) lists `partners`; its default skill delegates
    (or echoes, with `default="echo"`)."""
    lines = ["version: 1", "agents:"]
    for name, url in partners.items():
        lines += [f"  - name: {name}", f"    url: {url}"]
    agents.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url, max_hops=max_hops),
            store=StoreSettings(kind="memory"),
            default_skill=default,
        )
        return create_app(
            settings,
            store=MemoryTaskStore(),
            skills={"delegate": delegate, "echo": echo},
            partners=Partners(load_registry(agents)),
        )

    return build


async def _ask(url: str, text: str, **metadata: object) -> Task:
    async with httpx.AsyncClient() as http:
        client = await A2AClient.from_url(url, http=http)
        with anyio.fail_after(20):
            reply = await client.send(user_message(text), metadata=dict(metadata))
    assert isinstance(reply, Task)
    return reply


async def _until_listed(url: str, name: str) -> None:
    """Until the hub at `url` lists partner `name` (its watcher polls agents.yaml every
    second; it offers no event to wait on)."""
    async with httpx.AsyncClient() as http:
        with anyio.fail_after(30):
            while True:
                listed = (await http.get(f"{url}/agents")).json()["agents"]
                if name in [entry["name"] for entry in listed]:
                    return
                await anyio.sleep(0.1)


def _why(task: Task) -> str:
    assert task.status.message is not None
    return task.status.message.text()


async def test_a_chain_of_hubs_works_and_the_last_sees_the_whole_trail(tmp_path: Path) -> None:
    seen: list[str] = []

    def recording(url: str) -> Litestar:
        app = _hub(tmp_path / "c.yaml", {}, default="echo")(url)

        async def wrapped(scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
            if scope["type"] == "http":
                headers = dict(scope["headers"])
                trail = headers.get(TRAIL_HEADER.lower().encode())
                if trail:
                    seen.append(trail.decode())
            await app(scope, receive, send)  # type: ignore[arg-type]

        return wrapped  # type: ignore[return-value]

    async with (
        serve_on_loopback(recording) as c,
        serve_on_loopback(_hub(tmp_path / "b.yaml", {"c": c})) as b,
        serve_on_loopback(_hub(tmp_path / "a.yaml", {"b": b})) as a,
    ):
        task = await _ask(a, "hello", agent="b")

    # a delegates to b by name; b's delegate routes to its only partner, c, which echoes.
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    assert task.artifacts[0].parts[0].text == "hello"
    assert seen
    assert all(trail == f"{a}, {b}" for trail in seen)


async def test_a_hub_that_lists_itself_refuses_the_loop(tmp_path: Path) -> None:
    agents = tmp_path / "agents.yaml"

    def self_listing(url: str) -> Litestar:
        return _hub(agents, {"me": url})(url)

    async with serve_on_loopback(self_listing) as url:
        task = await _ask(url, "hello", agent="me")

    assert task.status.state is TaskState.FAILED
    assert "forwarding loop" in _why(task)
    assert url in _why(task)


async def test_two_hubs_that_list_each_other_refuse_the_loop(tmp_path: Path) -> None:
    b_file = tmp_path / "b.yaml"
    async with (
        serve_on_loopback(_hub(b_file, {})) as b,
        serve_on_loopback(_hub(tmp_path / "a.yaml", {"b": b})) as a,
    ):
        b_file.write_text(f"version: 1\nagents:\n  - name: a\n    url: {a}\n")
        await _until_listed(b, "a")
        task = await _ask(a, "hello", agent="b")

    assert task.status.state is TaskState.FAILED
    assert "forwarding loop" in _why(task)
    assert f"{a} -> {b}" in _why(task)


async def test_a_trail_at_the_hop_limit_is_refused(tmp_path: Path) -> None:
    async with (
        serve_on_loopback(_hub(tmp_path / "c.yaml", {}, max_hops=2)) as c,
        serve_on_loopback(_hub(tmp_path / "b.yaml", {"c": c})) as b,
        serve_on_loopback(_hub(tmp_path / "a.yaml", {"b": b})) as a,
    ):
        task = await _ask(a, "hello", agent="b")

    assert task.status.state is TaskState.FAILED
    assert "hop limit (server.max_hops) is 2" in _why(task)
