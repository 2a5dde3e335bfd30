"""A plan survives kill -9 of its hub: a real hub process on a SQLite file runs an
orchestrator whose scripted model calls three partners one after another; the hub is killed
in the middle and started again on the same file, and the plan goes on from its journal. A
partner call that had ended is not made again, a partner task still running is followed
again (not sent again), and only a model step in flight is asked again.

The model and the partners are served on loopback by a thread of the test, so they outlive
the hub process."""

from __future__ import annotations

import json
import signal
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from hub.testing import ScriptedAgent, answer
from hub.testing.model_server import ModelRequest, ModelServer, ToolCall, Turn, serve_model

from . import rpc
from .partnerproc import AgentEntry, Child, hub_child, stop_all, write_agents

PLAN = ("a", "b", "c")
"""The partners the scripted model calls, one per step, in this order."""


def three_calls(hang_on_step: int | None = None) -> Callable[[ModelRequest], Turn]:
    """The model: with N tool results in the conversation, call partner N, then answer.
    `hang_on_step`: the first request for that step hangs (the hub is killed meanwhile)."""
    hung: list[int] = []

    def script(request: ModelRequest) -> Turn:
        step = request.tool_results
        if step == hang_on_step and not hung:
            hung.append(step)
            return Turn(text="thinking", chunks=2, hang=True)
        if step < len(PLAN):
            name = PLAN[step]
            return Turn(tool_calls=[ToolCall(f"a2a_{name}", {"message": f"part {name}"})])
        return Turn(text="all done")

    return script


@dataclass
class World:
    """The model server and the partners, served by the test's thread."""

    model: ModelServer
    partners: dict[str, ScriptedAgent]
    urls: dict[str, str]


@pytest.fixture
def world_of() -> Iterator[Callable[..., World]]:
    with start_blocking_portal() as portal, ExitStack() as stack:

        def build(script: Callable[[ModelRequest], Turn], **replies: Any) -> World:
            model = stack.enter_context(portal.wrap_async_context_manager(serve_model(script)))
            partners = {
                name: ScriptedAgent(name, reply=replies.get(name, answer(f"{name} done")))
                for name in PLAN
            }
            urls = {
                name: stack.enter_context(portal.wrap_async_context_manager(agent.serve()))
                for name, agent in partners.items()
            }
            return World(model, partners, urls)

        yield build


def write_config(folder: Path, world: World) -> Path:
    agents = write_agents(
        folder / "agents.yaml", [AgentEntry(name=name, url=url) for name, url in world.urls.items()]
    )
    config = folder / "hub.yaml"
    config.write_text(
        f"""server: {{log_level: warning}}
store: {{kind: sqlite, path: {folder / "hub.db"}}}
agents: {agents}
models:
  scripted:
    provider: openai
    model: scripted
    base_url: "{world.model.openai_base_url}"
    timeout: 60s
skills:
  - orchestrator:
      id: planner
      description: Calls a, b and c in turn
      model: scripted
      tools: {{agents: [a, b, c]}}
"""
    )
    return config


def started(config: Path) -> Child:
    hub = hub_child(config)
    hub.wait_ready()
    return hub


def killed(hub: Child, how: signal.Signals = signal.SIGKILL) -> None:
    hub.process.send_signal(how)
    hub.process.wait(timeout=60)
    stop_all([hub])


def running_call(db: Path, task_id: str, partner: str) -> str | None:
    """The partner task of the plan's call to `partner`, once the journal holds it as
    running: a kill before the journal has it would leave the plan no way to know the
    partner's task (the partner would be sent the message again). A call to another
    partner running meanwhile does not count: a's call is running, briefly, before b's."""
    with sqlite3.connect(db) as connection:
        row = connection.execute(
            "SELECT value FROM skill_state WHERE key = ?", (f"plan/{task_id}",)
        ).fetchone()
    if row is None:
        return None
    journal = json.loads(row[0])
    running = [
        call["partner_task"]
        for call in journal["calls"]
        if call["partner"] == partner and call["state"] == "running" and call["partner_task"]
    ]
    return running[0] if running else None


def finished_after_restart(config: Path, task_id: str) -> dict[str, Any]:
    """Start the hub again on the same file and wait for the task to complete there."""
    restarted = started(config)
    try:
        done = rpc.settled(restarted.url, task_id, timeout=120)
    finally:
        stop_all([restarted])
    assert rpc.state(done) == "TASK_STATE_COMPLETED", rpc.status_text(done)
    return done


def messages(world: World) -> dict[str, list[str]]:
    return {name: [m.text() for m in agent.messages] for name, agent in world.partners.items()}


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "stop"])
def test_a_partner_task_running_at_the_crash_is_followed_not_sent_again(
    world_of: Callable[..., World], tmp_path: Path, how: signal.Signals
) -> None:
    world = world_of(three_calls(), b=answer("b done", delay=6))
    config = write_config(tmp_path, world)
    hub = started(config)
    try:
        task = rpc.send(hub.url, "plan it", {"skill": "planner"}, return_immediately=True)
        b = world.partners["b"]
        rpc.wait_for(lambda: b.messages or None, what="partner b to receive its message")
        rpc.wait_for(
            lambda: running_call(tmp_path / "hub.db", task["id"], "b"),
            what="the plan's journal to hold partner b's running task",
        )
    finally:
        killed(hub, how)
    assert messages(world) == {"a": ["part a"], "b": ["part b"], "c": []}

    done = finished_after_restart(config, task["id"])
    assert "all done" in [part.get("text") for a in done["artifacts"] for part in a["parts"]]
    # a's answer came from the journal; b's task was followed to its end; c came after.
    assert messages(world) == {"a": ["part a"], "b": ["part b"], "c": ["part c"]}
    # One model step for each partner and the answer: none was asked twice.
    assert len(world.model.requests) == 4
    # b's task went on to its answer (a stopping hub does not cancel it), which the model got.
    results = [m["content"] for m in world.model.requests[3]["messages"] if m["role"] == "tool"]
    assert results == ["a done", "b done", "c done"]


def test_only_the_model_step_in_flight_at_the_crash_is_asked_again(
    world_of: Callable[..., World], tmp_path: Path
) -> None:
    world = world_of(three_calls(hang_on_step=1))
    config = write_config(tmp_path, world)
    hub = started(config)
    try:
        task = rpc.send(hub.url, "plan it", {"skill": "planner"}, return_immediately=True)
        rpc.wait_for(
            lambda: len(world.model.requests) == 2 or None,
            what="the plan's second model step to be in flight",
        )
    finally:
        killed(hub)
    assert messages(world) == {"a": ["part a"], "b": [], "c": []}

    finished_after_restart(config, task["id"])
    assert messages(world) == {"a": ["part a"], "b": ["part b"], "c": ["part c"]}
    # Step 2 was asked twice (in flight at the crash, then again); the others once.
    steps = [request_step(body) for body in world.model.requests]
    assert steps == [0, 1, 1, 2, 3]


def request_step(body: dict[str, Any]) -> int:
    return sum(1 for message in body["messages"] if message.get("role") == "tool")
