"""The delegation ledger: every task the hub starts on a partner for one of its own tasks.

While a skill runs, its task is the current parent (a context variable, so the swarm branches
and tool calls the skill starts inherit it). The partner tools report each partner task they
see through `note_child`; the ledger keeps the children that are still live in memory and
writes a line to the store when a child is first seen, when it stops on a question and when it
ends. Writes are batched: whatever piles up while one batch is written goes in the next, in
one transaction.

The ledger is how the hub cleans up after its tasks:
- when a parent ends (completed, failed or canceled) with children still live on partners,
  those are canceled (`settle`);
- after a restart, the children the last run left live are looked up on their partners,
  canceled when their parent can no longer use them, and the parent's record says what
  happened (`reconcile`).

Reaching a partner is not this layer's business: a `ChildControl` given by the composition
root does it.

Beside the lines it writes, the ledger keeps each running parent's live tree in memory
(`hub.tasks.live_tree`): every partner event a call sees (`note_child`, `note_streamed`)
changes the branch of the call it belongs to (`calling`, or a swarm's planned branch), so a
page shows a branch working, streaming or failed as it happens, at the cost of a few
attribute writes per event and no store write. The tree is dropped when the parent is
settled.

The ledger also owns the partner calls of a running skill whose caller has stopped waiting
(`in_background`): a race's losers, a call past its deadline. They run in the ledger's task
group, so the caller goes on at once while the call still waits for the partner to name its
task and cancels it there; the hub's shutdown cancels whatever is left.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Protocol

import anyio
from anyio.abc import TaskGroup, TaskStatus

from hub.errors import AgentTimeoutError, HubError, StoreOutageError
from hub.protocol import TERMINAL_STATES, Message, TaskState
from hub.store import ChildRecord, LedgerStore
from hub.tasks.child_notes import (
    AFTER_RESTART,
    AFTER_TAKEOVER,
    CANCELED_AFTER_RESTART,
    ENDED_BEFORE_RESTART,
    LEFT_AFTER_RESTART,
    UNREACHABLE_AFTER_RESTART,
    WITH_CANCELED_PARENT,
    ReconcileNotes,
)
from hub.tasks.commit import retry_pause
from hub.tasks.live_tree import LiveBranch, LiveTree

__all__ = [
    "AFTER_RESTART",
    "AFTER_TAKEOVER",
    "CANCELED_AFTER_RESTART",
    "CHILDREN_METADATA_KEY",
    "ENDED_BEFORE_RESTART",
    "LEFT_AFTER_RESTART",
    "UNREACHABLE_AFTER_RESTART",
    "WITH_CANCELED_PARENT",
    "ChildControl",
    "ChildWatcher",
    "DelegationLedger",
    "ReconcileNotes",
    "calling",
    "current_tree",
    "following_child",
    "in_background",
    "in_branch",
    "note_child",
    "note_streamed",
    "watching_children",
]

log = logging.getLogger("hub.tasks")

CHILDREN_METADATA_KEY = "a2a-hub/children"
"""Key, in a parent task's metadata, of the children that restart reconciliation dealt with."""


class ChildControl(Protocol):
    """Reaches a child on its partner (implemented over the partner clients)."""

    async def child_state(self, agent: str, task_id: str) -> TaskState:
        """The child's current state (GetTask)."""
        ...

    async def cancel_child(self, agent: str, task_id: str) -> TaskState:
        """Cancel the child; its state afterwards (looked up when it had already ended)."""
        ...


@dataclass(slots=True)
class _Parent:
    ledger: DelegationLedger
    task_id: str | None
    """None while the task does not exist yet (a skill that may still answer with a direct
    Message): children are recorded from the moment it is set."""
    tree: LiveTree | None = None
    kept: bool = False
    """True once the ledger keeps `tree` under `task_id`."""

    def live_tree(self) -> LiveTree:
        """The task's live tree: made on the first partner call (a skill that calls none
        costs nothing), kept by the ledger once the task exists (a task that runs again
        after a question goes on with the tree it had)."""
        if not self.kept:
            if self.task_id is not None:
                self.tree = self.ledger.tree_of(self.task_id, self.tree)
                self.kept = True
            elif self.tree is None:
                self.tree = LiveTree()
        assert self.tree is not None
        return self.tree


ChildWatcher = Callable[[str, str, TaskState], None]
"""Called with (agent, partner task id, state) for each partner task state a call sees."""

_current: ContextVar[_Parent | None] = ContextVar("hub_ledger_parent", default=None)
_watcher: ContextVar[ChildWatcher | None] = ContextVar("hub_ledger_watcher", default=None)
_branch: ContextVar[LiveBranch | None] = ContextVar("hub_ledger_branch", default=None)


def note_child(agent: str, task_id: str, state: TaskState, message: Message | None = None) -> None:
    """Record that partner `agent` has task `task_id` in `state` (its status message
    `message`), for the current parent task (nothing is recorded outside a running skill):
    in its live tree at once, in the store when the ledger writes a line. Tells the current
    watcher."""
    watcher = _watcher.get()
    if watcher is not None:
        watcher(agent, task_id, state)
    branch = _branch.get()
    parent = _current.get()
    if branch is not None and branch.agent == agent:
        branch.saw(task_id, state, message)
    elif parent is not None:
        parent.live_tree().child(agent, task_id).saw(task_id, state, message)
    if parent is not None and parent.task_id is not None:
        parent.ledger.note(parent.task_id, agent, task_id, state)


def note_streamed(agent: str, text: str) -> None:
    """Partner `agent` streamed an artifact chunk with `text`, to the call running here."""
    branch = _branch.get()
    if branch is not None and branch.agent == agent:
        branch.streamed(text)


def current_tree() -> LiveTree | None:
    """The live tree of the current parent task; None outside a running skill."""
    parent = _current.get()
    return parent.live_tree() if parent is not None else None


@contextmanager
def in_branch(branch: LiveBranch | None) -> Iterator[None]:
    """Inside the block, the partner calls made are `branch` (a swarm's planned branch):
    their events change it, and they open none of their own."""
    token = _branch.set(branch)
    try:
        yield
    finally:
        _branch.reset(token)


@contextmanager
def calling(agent: str, task_id: str | None = None) -> Iterator[LiveBranch | None]:
    """A partner call to `agent` (answering its task `task_id`, if given) runs inside the
    block: its branch of the current parent's live tree, which the partner's events change.

    Yields the branch when the call owns it, for the caller to settle with its outcome; None
    when the call is a swarm's branch (the swarm settles it) or runs outside a skill. A call
    that raises is settled here: `timeout` or `error`, with the error's text.
    """
    current = _branch.get()
    parent = _current.get()
    if (current is not None and current.agent == agent) or parent is None:
        yield None
        return
    branch = parent.live_tree().call(agent, task_id)
    token = _branch.set(branch)
    try:
        yield branch
    except Exception as exc:
        if not branch.ended:
            state = "timeout" if isinstance(exc, AgentTimeoutError) else "error"
            branch.settle(state, answer=None, error=str(exc), seconds=None)
        raise
    finally:
        _branch.reset(token)


def following_child(agent: str, task_id: str) -> Callable[[], None]:
    """Note that a partner call of the current parent task follows partner `agent`'s task
    `task_id`: the parent's end (`settle`) leaves that child to the call, which cancels it
    when its caller gave up. Returns what ends the note, called when the call ends."""
    parent = _current.get()
    if parent is None or parent.task_id is None:  # no task yet: its children are not kept
        return _nothing
    return parent.ledger.follow(parent.task_id, agent, task_id)


def _nothing() -> None:
    pass


def in_background(work: Callable[[], Awaitable[None]]) -> bool:
    """Start `work` in the task group of the current parent task's ledger, where it may
    outlive its caller (it keeps the caller's context: parent task, call scope, watcher).

    Returns:
        False, starting nothing, outside a running skill or when the ledger is not running.
    """
    parent = _current.get()
    return parent is not None and parent.ledger.start_soon(work)


@contextmanager
def watching_children(watcher: ChildWatcher) -> Iterator[None]:
    """Inside the block, `watcher` sees every partner task the calls made there see — also
    those of a call that is then given up on, whose result never says."""
    token = _watcher.set(watcher)
    try:
        yield
    finally:
        _watcher.reset(token)


def _phase(state: TaskState) -> int:
    """What a ledger line changes on: live (0), stopped on a question (1), ended (2)."""
    if state in TERMINAL_STATES:
        return 2
    return 1 if state.is_interrupted else 0


class DelegationLedger:
    """The children of the hub's tasks.

    Args:
        store: where ledger lines are written.
        control: reaches children on their partners; None leaves them be (they are still
            recorded).
    """

    def __init__(self, store: LedgerStore, control: ChildControl | None = None) -> None:
        self._store = store
        self.control = control
        self._live: dict[str, dict[tuple[str, str], TaskState]] = {}
        self._pending: dict[tuple[str, str, str], ChildRecord] = {}
        self._wake = anyio.Event()
        self._group: TaskGroup | None = None
        self._followed: Counter[tuple[str, str, str]] = Counter()
        """(parent, agent, child) followed by partner calls still running."""
        self._trees: dict[str, LiveTree] = {}
        self._refused = False

    @contextmanager
    def parent(self, task_id: str | None) -> Iterator[_Parent]:
        """Make `task_id` the parent of every child noted inside the block.

        None stands for a task not created yet: setting `task_id` on what the block gets
        makes it the parent from then on, also for the calls the block has already started
        (they share the object, not a copy).
        """
        current = _Parent(self, task_id)
        token = _current.set(current)
        try:
            yield current
        finally:
            _current.reset(token)

    def note(self, parent_id: str, agent: str, child_id: str, state: TaskState) -> None:
        """Record a child's state; written when it is new or its phase changed."""
        children = self._live.get(parent_id)
        key = (agent, child_id)
        known = children.get(key) if children is not None else None
        if known is not None and _phase(known) == _phase(state):
            return
        if state in TERMINAL_STATES:
            if children is not None:
                children.pop(key, None)
                if not children:
                    del self._live[parent_id]
        else:
            self._live.setdefault(parent_id, {})[key] = state
        self._queue(ChildRecord(parent_id=parent_id, agent=agent, child_id=child_id, state=state))

    def follow(self, parent_id: str, agent: str, child_id: str) -> Callable[[], None]:
        """Note that a partner call follows the child (see `following_child`); returns what
        ends the note."""
        key = (parent_id, agent, child_id)
        self._followed[key] += 1

        def done() -> None:
            self._followed[key] -= 1
            if self._followed[key] <= 0:
                del self._followed[key]

        return done

    async def adopt(self, parent_id: str) -> None:
        """Take back the children the store lists live for `parent_id`, a task whose skill
        runs again after its hub or replica stopped: they are its own again, settled when it
        ends like those it starts from now on."""
        try:
            lines = await self._store.list_children(parent_id)
        except HubError as exc:
            log.warning("task %s: could not read its partner tasks: %s", parent_id, exc)
            return
        for line in lines:
            if line.state not in TERMINAL_STATES:
                children = self._live.setdefault(parent_id, {})
                children.setdefault((line.agent, line.child_id), line.state)

    def tree_of(self, parent_id: str, tree: LiveTree | None = None) -> LiveTree:
        """The live tree kept for `parent_id`; `tree` (or a new one) when none is."""
        kept = self._trees.get(parent_id)
        if kept is None:
            kept = self._trees[parent_id] = tree if tree is not None else LiveTree()
        return kept

    def live_tree(self, parent_id: str) -> LiveTree | None:
        """The live tree of `parent_id`, while its skill runs or waits for an answer; None
        when it made no partner call here, or has ended (its tree is then in the store)."""
        return self._trees.get(parent_id)

    def live_children(self, parent_id: str) -> list[tuple[str, str]]:
        """The (agent, child id) pairs of `parent_id` still live, as far as the hub knows."""
        return list(self._live.get(parent_id, ()))

    def _queue(self, record: ChildRecord) -> None:
        self._pending[record.parent_id, record.agent, record.child_id] = record
        self._wake.set()

    # -- writing ---------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Write queued lines as they come, and run the work handed to the ledger
        (`start_soon`), until canceled (the task manager's group)."""
        async with anyio.create_task_group() as group:
            self._group = group
            task_status.started()
            pause: float | None = None
            try:
                while True:
                    if pause is None:
                        await self._wake.wait()
                    else:
                        await anyio.sleep(pause)  # lines the store refused: again, later
                    self._wake = anyio.Event()
                    pause = None if await self.flush() else retry_pause(pause)
            finally:
                self._group = None

    def start_soon(self, work: Callable[[], Awaitable[None]]) -> bool:
        """Run `work` in the ledger's task group (see `in_background`); False when the ledger
        is not running."""
        if self._group is None:
            return False
        self._group.start_soon(self._guarded, work)
        return True

    @staticmethod
    async def _guarded(work: Callable[[], Awaitable[None]]) -> None:
        # One failed piece of work must not stop the ledger, nor the others.
        try:
            await work()
        except Exception:
            log.exception("background work of the delegation ledger failed")

    async def flush(self) -> bool:
        """Write every queued line now, in one transaction; False when the store refused
        them (they stay queued, behind any newer line of the same child)."""
        if not self._pending:
            return True
        batch, self._pending = self._pending, {}
        try:
            with anyio.CancelScope(shield=True):  # taken from the queue: written, or put back
                await self._store.put_children(list(batch.values()))
        except HubError as exc:
            for key, record in batch.items():
                self._pending.setdefault(key, record)
            if not self._refused and not isinstance(exc, StoreOutageError):
                # Once until a write works again (an outage the store logs itself).
                log.error("could not write %d delegation ledger line(s): %s", len(batch), exc)
            self._refused = True
            return False
        self._refused = False
        return True

    # -- cleaning up -----------------------------------------------------------------------

    async def settle(self, parent_id: str) -> None:
        """Cancel the children `parent_id` left live on partners (its task has ended), and
        forget the parent. A child a partner call still follows is left to that call: the
        parent's skill has ended, so its caller gave up, and the call cancels it itself (see
        `following_child`)."""
        children = [
            (agent, child_id)
            for agent, child_id in self.live_children(parent_id)
            if (parent_id, agent, child_id) not in self._followed
        ]
        control = self.control
        if children and control is not None:
            with anyio.CancelScope(shield=True):
                async with anyio.create_task_group() as group:
                    for agent, child_id in children:
                        group.start_soon(self._cancel_one, control, parent_id, agent, child_id)
        # Whatever could not be stopped stays live in the store, for the next start to try
        # again; in memory the ended parent is done with.
        self._live.pop(parent_id, None)
        self._trees.pop(parent_id, None)

    async def _cancel_one(
        self, control: ChildControl, parent_id: str, agent: str, child_id: str
    ) -> None:
        try:
            state = await control.cancel_child(agent, child_id)
        except HubError as exc:
            log.warning("could not cancel task %s on partner '%s': %s", child_id, agent, exc)
            return
        self.note(parent_id, agent, child_id, state)

    async def reconcile(
        self,
        *,
        parent_id: str | None = None,
        ended_only: bool = False,
        leave: Collection[str] = (),
        notes: ReconcileNotes = AFTER_RESTART,
    ) -> int:
        """Deal with the children a previous run left live: a child whose parent has ended is
        canceled, one that ended meanwhile is recorded as such, one whose parent waits for
        input is left to it. Each ended parent's metadata lists what happened to its children
        (`CHILDREN_METADATA_KEY`). Returns how many children were looked at.

        Args:
            parent_id: only this task's children (a task taken over from another replica);
                None: every live child in the store.
            ended_only: leave the children of parents that have not ended alone (with
                replicas, those parents run elsewhere).
            leave: parents whose children are left alone, whatever their state: tasks
                resumed after the restart, whose skills own them again (`adopt`).
            notes: the words noted beside each child: why the ledger looked (a restart of
                this hub, a takeover from a stopped replica, a cancel made elsewhere).
        """
        try:
            if parent_id is None:
                stale = await self._store.find_live_children()
            else:
                lines = await self._store.list_children(parent_id)
                stale = [line for line in lines if line.state not in TERMINAL_STATES]
        except HubError:
            log.exception("could not read the delegation ledger; partner tasks not reconciled")
            return 0
        stale = [record for record in stale if record.parent_id not in leave]
        by_parent: dict[str, list[ChildRecord]] = {}
        for record in stale:
            by_parent.setdefault(record.parent_id, []).append(record)
        for parent, children in by_parent.items():
            try:
                await self._reconcile_parent(parent, children, ended_only=ended_only, notes=notes)
            except HubError:
                log.exception("could not reconcile the partner tasks of task %s", parent)
        if stale:
            log.info("reconciled %d partner task(s) left live by the last run", len(stale))
        return len(stale)

    async def _reconcile_parent(
        self,
        parent_id: str,
        children: list[ChildRecord],
        *,
        ended_only: bool,
        notes: ReconcileNotes,
    ) -> None:
        parent = await self._store.get(parent_id)
        parent_ended = parent is None or parent.task.status.state in TERMINAL_STATES
        if ended_only and not parent_ended:
            return
        outcomes: list[ChildRecord] = []
        for child in children:
            outcome = await self._reconcile_child(child, cancel=parent_ended, notes=notes)
            outcomes.append(outcome)
            self._queue(outcome)
            if outcome.state not in TERMINAL_STATES:
                self._live.setdefault(parent_id, {})[outcome.agent, outcome.child_id] = (
                    outcome.state
                )
        await self.flush()
        if parent is not None and parent_ended:
            metadata = dict(parent.task.metadata or {})
            metadata[CHILDREN_METADATA_KEY] = [_describe(child) for child in outcomes]
            task = parent.task.model_copy(update={"metadata": metadata})
            await self._store.put(replace(parent, task=task))

    async def _reconcile_child(
        self, child: ChildRecord, *, cancel: bool, notes: ReconcileNotes
    ) -> ChildRecord:
        if self.control is None:
            return child
        try:
            state = await self.control.child_state(child.agent, child.child_id)
            if state in TERMINAL_STATES:
                return replace(child, state=state, note=notes.ended)
            if not cancel:
                return replace(child, state=state, note=notes.left)
            after = await self.control.cancel_child(child.agent, child.child_id)
        except HubError as exc:
            return replace(child, note=notes.unreachable.format(error=exc))
        return replace(child, state=after, note=notes.canceled)


def _describe(child: ChildRecord) -> dict[str, str]:
    return {
        "agent": child.agent,
        "taskId": child.child_id,
        "state": child.state.value,
        "note": child.note,
    }
