"""The live tree of a running task: each branch follows its partner's events as they arrive
(working, streamed chunks, failed with its error, canceled), in memory only; the ledger's
store lines change as before, on a child's phase. First the tree and the ledger alone, then a
hub whose skills call paced partner hubs over loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

import anyio
import httpx
import pytest

from hub.config import Settings, StoreSettings
from hub.protocol import TaskState, agent_message
from hub.registry import AgentEntry
from hub.server.state import HubState
from hub.skills import LocalSkill, SkillContext, skill
from hub.skills.delegate import delegate
from hub.skills.swarm import swarm
from hub.store import MemoryTaskStore
from hub.tasks.ledger import DelegationLedger, calling, note_child, note_streamed
from hub.tasks.live_tree import LiveBranch, LiveTree
from hub.testing import serve_hub

pytestmark = pytest.mark.anyio

WAIT = 20.0


def test_a_branch_follows_its_partners_states_and_counts_what_it_streamed() -> None:
    tree = LiveTree()
    branch = tree.call("writer")
    assert (branch.state, branch.started is not None, tree.strategy) == (
        "pending",
        True,
        "delegate",
    )
    before = tree.version
    branch.saw("t-1", TaskState.SUBMITTED)
    branch.saw("t-1", TaskState.WORKING, agent_message("drafting"))
    assert (branch.task_id, branch.state, branch.said) == ("t-1", "working", "drafting")
    assert tree.version == before + 2
    branch.saw("t-1", TaskState.WORKING)  # nothing new: no change to look at
    branch.saw("t-1", TaskState.WORKING, agent_message("drafting"))  # a poll, said again
    assert tree.version == before + 2
    branch.streamed("Once upon ")
    branch.streamed("a time")
    assert (branch.chunks, branch.characters, branch.text) == (2, 16, "Once upon a time")
    assert not branch.ended
    branch.saw("t-1", TaskState.FAILED, agent_message("out of ink"))
    assert (branch.state, branch.error, branch.ended) == ("failed", "out of ink", True)
    branch.saw("t-1", TaskState.CANCELED)  # a late event of a call already accounted for
    assert branch.state == "failed"


def test_a_swarm_plans_its_branches_and_names_its_strategy_at_once() -> None:
    tree = LiveTree()
    first, second = tree.plan("race", [("a", 0), ("b", 1)])
    assert tree.strategy == "race"
    assert [(b.agent, b.index, b.state) for b in tree.branches] == [
        ("a", 0, "pending"),
        ("b", 1, "pending"),
    ]
    first.start()
    first.saw("t-a", TaskState.COMPLETED)
    first.win()
    second.settle("canceled", answer=None, error="another partner answered first", seconds=None)
    assert (first.winner, second.state, second.error) == (
        True,
        "canceled",
        "another partner answered first",
    )
    # An answer to a partner's question goes on in the branch of that task.
    asked = tree.call("c")
    asked.saw("t-c", TaskState.INPUT_REQUIRED, agent_message("which one?"))
    asked.settle("input-required", answer=None, error=None, seconds=None)
    assert not asked.ended
    assert tree.call("c", "t-c") is asked


async def test_the_ledger_keeps_the_tree_in_memory_and_writes_lines_on_a_phase_only() -> None:
    store = MemoryTaskStore()
    await store.open()
    ledger = DelegationLedger(store)
    with ledger.parent("parent-1"):
        with calling("writer") as branch:
            assert isinstance(branch, LiveBranch)
            note_child("writer", "child-1", TaskState.SUBMITTED)
            note_child("writer", "child-1", TaskState.WORKING, agent_message("drafting"))
            for _ in range(3):
                note_streamed("writer", "abc")
            tree = ledger.live_tree("parent-1")
            assert tree is not None
            assert tree.branches == [branch]
            assert (branch.state, branch.chunks, branch.said) == ("working", 3, "drafting")
            await ledger.flush()
            # The store has the line of the child first seen: working is the same phase.
            [line] = await store.list_children("parent-1")
            assert line.state is TaskState.SUBMITTED
            note_child("writer", "child-1", TaskState.COMPLETED)
        # A partner task reported outside a call (a follow after a restart) has a branch too.
        note_child("reader", "child-2", TaskState.WORKING)
    assert [(b.agent, b.state) for b in tree.branches] == [
        ("writer", "completed"),
        ("reader", "working"),
    ]
    await ledger.flush()
    states = {line.child_id: line.state for line in await store.list_children("parent-1")}
    assert states == {"child-1": TaskState.COMPLETED, "child-2": TaskState.WORKING}
    await ledger.settle("parent-1")
    assert ledger.live_tree("parent-1") is None


def test_a_failure_without_a_message_is_not_worded_with_an_earlier_one() -> None:
    branch = LiveTree().call("writer")
    branch.saw("t-1", TaskState.WORKING, agent_message("drafting"))
    branch.saw("t-1", TaskState.FAILED)
    assert (branch.state, branch.said, branch.error) == ("failed", "drafting", "")


async def test_a_call_that_raises_settles_its_branch_with_the_error() -> None:
    ledger = DelegationLedger(MemoryTaskStore())
    with ledger.parent("parent-2"):

        def call() -> None:
            with calling("writer"):
                note_child("writer", "child-1", TaskState.WORKING)
                raise RuntimeError("the partner hung up")

        with pytest.raises(RuntimeError):
            call()
    tree = ledger.live_tree("parent-2")
    assert tree is not None
    [branch] = tree.branches
    assert (branch.state, branch.error, branch.ended) == ("error", "the partner hung up", True)


async def test_outside_a_running_skill_nothing_is_kept() -> None:
    with calling("writer") as branch:
        note_child("writer", "child-1", TaskState.WORKING)
        note_streamed("writer", "abc")
    assert branch is None


# -- with a hub and partner hubs on loopback ------------------------------------------------


@dataclass
class Pace:
    streamer: anyio.Event = field(default_factory=anyio.Event)
    failer: anyio.Event = field(default_factory=anyio.Event)


def _partners(pace: Pace) -> dict[str, LocalSkill]:
    @skill(id="stream", description="streams a chunk, the rest when released")
    async def streamer(ctx: SkillContext) -> None:
        await ctx.progress("reading")
        chunk = await ctx.artifact("first ", name="answer", last_chunk=False)
        await pace.streamer.wait()
        await ctx.artifact("second", artifact_id=chunk, append=True, last_chunk=True)

    @skill(id="fail", description="fails when released")
    async def failer(ctx: SkillContext) -> str:
        await ctx.progress("checking")
        await pace.failer.wait()
        raise ctx.fail("the disk is full")

    return {"streamer": streamer, "failer": failer}


@dataclass
class Hubs:
    url: str
    state: HubState
    pace: Pace

    def tree(self, task_id: str) -> LiveTree | None:
        return self.state.service.manager.ledger.live_tree(task_id)

    async def until(self, ready: Callable[[], bool]) -> None:
        """Return once `ready()` says so (looked at as the hub runs)."""
        with anyio.fail_after(WAIT):
            while True:
                if ready():
                    return
                await anyio.sleep(0.01)

    async def tree_once(self, task_id: str, ready: Callable[[LiveTree], bool]) -> LiveTree:
        """The task's live tree once `ready` says so."""

        def check() -> bool:
            tree = self.tree(task_id)
            return tree is not None and ready(tree)

        await self.until(check)
        tree = self.tree(task_id)
        assert tree is not None
        return tree

    async def start(self, **metadata: object) -> str:
        body = {
            "message": {
                "messageId": "m-" + str(id(metadata)),
                "role": "ROLE_USER",
                "parts": [{"text": "go"}],
            },
            "configuration": {"returnImmediately": True},
            "metadata": metadata,
        }
        async with httpx.AsyncClient(timeout=WAIT) as http:
            sent = await http.post(
                f"{self.url}/message:send", json=body, headers={"A2A-Version": "1.0"}
            )
        assert sent.status_code == 200, sent.text
        task_id: str = sent.json()["task"]["id"]
        return task_id


@asynccontextmanager
async def hubs() -> AsyncIterator[Hubs]:
    pace = Pace()
    async with AsyncExitStack() as stack:
        entries = []
        for name, partner_skill in _partners(pace).items():
            partner = await stack.enter_async_context(serve_hub(skills=[partner_skill]))
            entries.append(AgentEntry(name=name, url=partner.url))
        hub = await stack.enter_async_context(
            serve_hub(
                skills=[swarm, delegate],
                partners=entries,
                settings=Settings(store=StoreSettings(kind="memory")),
            )
        )
        yield Hubs(url=hub.url, state=hub.app.state["hub"], pace=pace)


def _branch(tree: LiveTree, agent: str) -> LiveBranch:
    return next(branch for branch in tree.branches if branch.agent == agent)


async def test_a_swarms_branches_follow_their_partners_while_it_runs() -> None:
    async with hubs() as running:
        task_id = await running.start(
            skill="swarm", strategy="broadcast", agents=["streamer", "failer"]
        )

        def both_working(tree: LiveTree) -> bool:
            return (
                all(b.state == "working" for b in tree.branches)
                and _branch(tree, "streamer").chunks == 1
            )

        tree = await running.tree_once(task_id, both_working)
        assert tree.strategy == "broadcast"
        assert _branch(tree, "streamer").text == "first "
        assert _branch(tree, "failer").said == "checking"
        running.pace.failer.set()
        tree = await running.tree_once(task_id, lambda t: _branch(t, "failer").state == "failed")
        failed = _branch(tree, "failer")
        assert "the disk is full" in failed.error
        assert failed.seconds is not None
        assert _branch(tree, "streamer").state == "working"
        running.pace.streamer.set()
        await running.until(lambda: running.tree(task_id) is None)  # settled when it ended


async def test_a_delegate_branch_follows_its_partner_while_it_runs() -> None:
    async with hubs() as running:
        task_id = await running.start(skill="delegate", agent="streamer")
        tree = await running.tree_once(
            task_id, lambda t: bool(t.branches) and t.branches[0].chunks == 1
        )
        [branch] = tree.branches
        assert (tree.strategy, branch.agent, branch.state) == ("delegate", "streamer", "working")
        assert branch.task_id
        running.pace.streamer.set()
        await running.until(lambda: branch.state == "completed")
        assert (branch.text, branch.chunks, branch.ended) == ("first second", 2, True)
