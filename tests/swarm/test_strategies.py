"""Every swarm strategy against real partners on loopback: answers, partial results, deadlines,
and losers canceled on the partner side."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest

from hub.client import A2AClient
from hub.partners import Partners
from hub.protocol import TaskState
from hub.swarm import SwarmSpec, run_swarm
from tests.swarm.partners import partner_registry, scripted

pytestmark = pytest.mark.anyio


async def test_broadcast_gathers_every_answer_and_reports_a_failed_branch(tmp_path: Path) -> None:
    script = {
        "a": (scripted("alpha"), ()),
        "b": (scripted(None), ()),
        "c": (scripted("gamma"), ()),
    }
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        with anyio.fail_after(15):
            result = await run_swarm(
                p, "go", SwarmSpec(strategy="broadcast", agents=("a", "b", "c"))
            )

    assert result.ok
    assert result.answers == ["alpha", "gamma"]
    assert [b.state for b in result.branches] == ["completed", "failed", "completed"]
    assert result.branches[1].error == "scripted failure"


async def test_race_returns_the_first_answer_and_cancels_the_losers_at_the_partner(
    tmp_path: Path,
) -> None:
    script = {
        "fast": (scripted("quick", delay=0.05), ()),
        "slow1": (scripted("late", delay=5), ()),
        "slow2": (scripted("late", delay=5), ()),
    }
    async with partner_registry(tmp_path, script) as (registry, urls), Partners(registry) as p:
        started = anyio.current_time()
        with anyio.fail_after(10):
            result = await run_swarm(p, "go", SwarmSpec(strategy="race", agents=tuple(script)))
        elapsed = anyio.current_time() - started
        async with httpx.AsyncClient() as http:
            states = []
            for name in ("slow1", "slow2"):
                client = await A2AClient.from_url(urls[name], http=http)
                states += [t.status.state for t in (await client.list_tasks()).tasks]

    assert result.ok
    assert result.answer == "quick"
    assert elapsed < 3
    assert {b.agent: b.state for b in result.branches} == {
        "fast": "completed",
        "slow1": "canceled",
        "slow2": "canceled",
    }
    assert states == [TaskState.CANCELED, TaskState.CANCELED]


async def test_vote_takes_the_majority_over_a_dissenter(tmp_path: Path) -> None:
    script = {
        "a": (scripted("Paris."), ()),
        "b": (scripted("paris"), ()),
        "c": (scripted("Lyon"), ()),
    }
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        result = await run_swarm(
            p, "capital?", SwarmSpec(strategy="vote", agents=tuple(script), quorum=2)
        )

    assert result.ok
    assert result.answer in ("Paris.", "paris")
    assert "2 of 3 agree" in result.reason


async def test_vote_without_a_quorum_has_no_answer(tmp_path: Path) -> None:
    script = {"a": (scripted("x"), ()), "b": (scripted("y"), ()), "c": (scripted(None), ())}
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        result = await run_swarm(p, "?", SwarmSpec(strategy="vote", agents=tuple(script), quorum=2))

    assert not result.ok
    assert result.answer is None
    assert result.reason.startswith("no quorum")


async def test_best_of_asks_the_judge_and_takes_its_choice(tmp_path: Path) -> None:
    script = {
        "a": (scripted("draft one"), ()),
        "b": (scripted("draft two"), ()),
        "judge": (scripted("I pick 2"), ()),
    }
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        result = await run_swarm(
            p, "write", SwarmSpec(strategy="best_of", agents=("a", "b")), judge=p["judge"]
        )

    assert result.ok
    assert result.answer == "draft two"
    assert "chose 'b'" in result.reason


async def test_map_splits_fifty_items_and_keeps_their_order(tmp_path: Path) -> None:
    script = {"a": (scripted("A:{text}"), ()), "b": (scripted("B:{text}"), ())}
    items = list(range(50))
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        with anyio.fail_after(30):
            result = await run_swarm(
                p, "", SwarmSpec(strategy="map", agents=("a", "b"), items=items, concurrency=10)
            )

    assert result.ok
    assert result.answers == [f"{'AB'[i % 2]}:{i}" for i in items]


async def test_chain_feeds_each_answer_to_the_next(tmp_path: Path) -> None:
    script = {"a": (scripted("[{text}]"), ()), "b": (scripted("<{text}>"), ())}
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        result = await run_swarm(p, "x", SwarmSpec(strategy="chain", agents=("a", "b", "a")))

    assert result.ok
    assert result.answer == "[<[x]>]"


async def test_a_broken_chain_stops_and_skips_the_rest(tmp_path: Path) -> None:
    script = {"a": (scripted("{text}!"), ()), "bad": (scripted(None), ())}
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        result = await run_swarm(p, "x", SwarmSpec(strategy="chain", agents=("a", "bad", "a")))

    assert not result.ok
    assert [b.state for b in result.branches] == ["completed", "failed", "skipped"]


async def test_branch_and_overall_deadlines_end_slow_branches(tmp_path: Path) -> None:
    script = {"fast": (scripted("ok"), ()), "slow": (scripted("late", delay=5), ())}
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        # Room for the fast answer on a busy machine, none for the slow one.
        per_branch = await run_swarm(p, "go", SwarmSpec(agents=tuple(script), branch_deadline=2))
        overall = await run_swarm(p, "go", SwarmSpec(agents=("slow",), deadline=0.5))

    assert per_branch.ok
    assert [b.state for b in per_branch.branches] == ["completed", "timeout"]
    assert not overall.ok
    assert "0.5 s" in overall.reason
    assert overall.branches[0].state == "timeout"


async def test_an_unreachable_partner_is_one_failed_branch(tmp_path: Path) -> None:
    script = {"a": (scripted("fine"), ())}
    async with partner_registry(tmp_path, script) as (_registry, _):
        text = (
            tmp_path / "agents.yaml"
        ).read_text() + "  - name: gone\n    url: http://127.0.0.1:9\n"
        (tmp_path / "agents.yaml").write_text(text)
        from hub.registry import load_registry

        async with Partners(load_registry(tmp_path / "agents.yaml")) as p:
            result = await run_swarm(p, "go", SwarmSpec(strategy="broadcast", agents=("a", "gone")))

    assert result.ok
    assert result.branches[1].state == "error"
    assert "gone" in (result.branches[1].error or "")
