"""A plan survives the replica running it: two real `a2a-hub serve` replicas on one
PostgreSQL database serve an orchestrator skill whose scripted model calls three partners,
one per step. The replica running the plan is killed with SIGKILL while the second partner
works; once its lease expires, the other replica takes the task over and the plan goes on
from its journal: the finished call is not made again, the running partner task is followed
(not sent again), the third partner is called, and a client subscribed on the survivor sees
the task complete with the model's answer.

The model server and the partners (`ScriptedAgent`s) are served on loopback by a thread of
the test, so the test counts what each was sent."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from hub.tasks.resumption import RESUMED_AFTER_TAKEOVER, RESUMED_METADATA_KEY
from hub.testing import ScriptedAgent, answer
from hub.testing.model_server import ModelRequest, ModelServer, ToolCall, Turn, serve_model
from tests.postgres import PostgresCluster, fresh_database_for_processes

from . import rpc
from .partnerproc import AgentEntry, hub_processes, write_agents
from .test_replicas import LEASE, Subscriber, states

pytest.importorskip("pydantic_ai", reason="the orchestrator needs the llm extra")

NO_AUTH: dict[str, str] = {}

PLAN = ("a", "b", "c")
"""The partners the model calls, one per step, in this order."""

ANSWER = "all done"

B_WORKS = 15.0
"""Seconds partner `b` works on its message: long enough that it is still working when the
survivor takes the plan over (a lease, and a third of one, after the kill at most)."""


def plan_script(request: ModelRequest) -> Turn:
    """The model: with n tool results in the conversation, call the (n+1)th partner of
    `PLAN`; with all of them, answer."""
    done = request.tool_results
    if done < len(PLAN):
        partner = PLAN[done]
        return Turn(tool_calls=[ToolCall(f"a2a_{partner}", {"message": f"step {done + 1}"})])
    return Turn(text=ANSWER)


@dataclass(frozen=True, slots=True)
class Served:
    """The scripted model and the partners, served by the test's thread."""

    model: ModelServer
    partners: dict[str, ScriptedAgent]
    urls: dict[str, str]


@pytest.fixture
def served() -> Iterator[Served]:
    partners = {
        "a": ScriptedAgent("a", reply=answer("a done")),
        "b": ScriptedAgent("b", reply=answer("b done", delay=B_WORKS)),
        "c": ScriptedAgent("c", reply=answer("c done")),
    }
    with start_blocking_portal() as portal, ExitStack() as stack:
        model = stack.enter_context(portal.wrap_async_context_manager(serve_model(plan_script)))
        urls = {
            name: stack.enter_context(portal.wrap_async_context_manager(agent.serve()))
            for name, agent in partners.items()
        }
        yield Served(model, partners, urls)


def replica_config(path: Path, dsn: str, agents: Path, model: ModelServer) -> Path:
    """A replica's hub.yaml: the shared database with the short lease of the replica tests,
    the partners, the scripted model and the planner."""
    path.write_text(
        f"""server: {{log_level: warning}}
store: {{kind: postgres, dsn: '{dsn}', pool_size: 4, lease: {LEASE}s}}
agents: {agents}
models:
  scripted:
    provider: openai
    model: scripted
    base_url: {model.openai_base_url}
    timeout: 30s
skills:
  - orchestrator:
      id: planner
      description: Plans with the partners a, b and c
      model: scripted
      tools: {{agents: [{", ".join(PLAN)}]}}
      limits: {{steps: 8, tool_calls: 8, wall_time: 2m}}
"""
    )
    return path


def journal(dsn: str, task_id: str) -> dict[str, Any] | None:
    """The plan's journal of `task_id` as the store holds it (None when there is none)."""

    async def load() -> bytes | None:
        import asyncpg

        db = await asyncpg.connect(dsn)
        try:
            value: bytes | None = await db.fetchval(
                "SELECT value FROM skill_state WHERE key = $1", f"plan/{task_id}"
            )
            return value
        finally:
            await db.close()

    raw = asyncio.run(load())
    return None if raw is None else dict(json.loads(raw))


def running_call_of(dsn: str, task_id: str, partner: str) -> dict[str, Any] | None:
    """The journal's record of the call of `partner`, once it names the partner's task."""
    found = journal(dsn, task_id)
    for record in (found or {}).get("calls", []):
        if record["partner"] == partner and record["partner_task"] and record["state"] == "running":
            return dict(record)
    return None


def stamp(holder: dict[str, Any]) -> datetime:
    """When a task's (or a status update's) status was set."""
    return datetime.fromisoformat(holder["status"]["timestamp"])


def artifact_text(events: list[dict[str, Any]]) -> str:
    return "".join(
        part.get("text", "")
        for event in events
        if "artifactUpdate" in event
        for part in event["artifactUpdate"]["artifact"]["parts"]
    )


def test_a_plan_survives_kill_9_of_its_replica_and_finishes_on_the_other(
    postgres_cluster: PostgresCluster, served: Served, tmp_path: Path
) -> None:
    agents = write_agents(
        tmp_path / "agents.yaml",
        [AgentEntry(name=name, url=url) for name, url in served.urls.items()],
    )
    with fresh_database_for_processes(postgres_cluster) as dsn:
        configs = [
            replica_config(tmp_path / f"hub{n}.yaml", dsn, agents, served.model) for n in range(2)
        ]
        with hub_processes(configs) as (victim, survivor):
            task = rpc.send(
                victim.url, "ask a, b and c", {"skill": "planner"}, return_immediately=True
            )
            follower = Subscriber(survivor.url, task["id"], headers=NO_AUTH).start()
            b = served.partners["b"]
            rpc.wait_for(
                lambda: len(b.messages) == 1 or None, what="partner b to receive its message"
            )
            # The journal names b's task before the kill: else a new run could only send again.
            running = rpc.wait_for(
                lambda: running_call_of(dsn, task["id"], "b"),
                what="the plan's journal to name partner b's task",
            )
            at_kill = journal(dsn, task["id"])
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait(timeout=60)

            events = follower.ended()
            done = rpc.settled(survivor.url, task["id"], timeout=120)
            b_task = rpc.get_task(served.urls["b"], running["partner_task"])
            after = journal(dsn, task["id"])

    assert at_kill is not None
    assert [call["call"]["tool"] for call in at_kill["calls"]] == ["a2a_b"]
    assert [entry["text"] for entry in at_kill["transcript"] if entry["role"] == "tool"] == [
        "a done"
    ]
    # Each partner was sent one message: a's result came from the journal, b's running task
    # was followed by the survivor, c was called once, after it.
    sent = {name: [m.text() for m in agent.messages] for name, agent in served.partners.items()}
    assert sent == {"a": ["step 1"], "b": ["step 2"], "c": ["step 3"]}
    # Four model steps in all: none was in flight at the kill, so none was asked again.
    assert len(served.model.requests) == 4
    # The survivor's subscriber saw the takeover, then the plan go on to its answer.
    resumed = [
        e["statusUpdate"]
        for e in events
        if "statusUpdate" in e and RESUMED_METADATA_KEY in (e["statusUpdate"].get("metadata") or {})
    ]
    assert [update["metadata"] for update in resumed] == [{RESUMED_METADATA_KEY: "takeover"}]
    assert rpc.status_text(resumed[0]) == RESUMED_AFTER_TAKEOVER
    assert states(events)[-1] == "TASK_STATE_COMPLETED"
    assert artifact_text(events) == ANSWER
    since = next(i for i, e in enumerate(events) if e.get("statusUpdate") is resumed[0])
    after_takeover = [
        e["statusUpdate"]["metadata"]["plan"]
        for e in events[since:]
        if "statusUpdate" in e and "plan" in (e["statusUpdate"].get("metadata") or {})
    ]
    [b_result] = [
        plan for plan in after_takeover if plan["event"] == "tool_result" and plan["partner"] == "b"
    ]
    assert b_result["partnerTaskId"] == running["partner_task"]
    assert b_result["result"] == "b done"
    # It was taken over while b still worked on it: followed mid-call, not found finished.
    assert stamp(resumed[0]) < stamp(b_task)
    assert rpc.state(done) == "TASK_STATE_COMPLETED"
    assert "".join(part.get("text", "") for part in done["artifacts"][0]["parts"]) == ANSWER
    # The turn has answered: its journal is dropped.
    assert after is None
