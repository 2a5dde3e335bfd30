"""A task's partner calls as they run: the live tree a page watches.

While a skill runs, each partner call it makes is a branch: the partner, the task the partner
named, the state the partner's last event gave (`working` as soon as it says so, not the
`submitted` of its first line), how much it has streamed, the last thing it said, when the
call started and how long it took, its answer or its error; a swarm names its strategy from
the start and, for a race, marks its winner once known.

The tree lives in memory beside the delegation ledger's live children, for as long as the
ledger keeps the parent (until its task ends and is settled): a partner's events change it,
never the store, which gets the ledger's lines as before (a child first seen, stopped on a
question, ended). Every change counts in `version`, so whoever shows the tree knows when to
look again without comparing it whole.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from hub.protocol import Message, TaskState, state_name

__all__ = ["DELEGATE", "LiveBranch", "LiveTree"]

DELEGATE = "delegate"
"""The strategy of a tree no swarm has planned: its calls go to partners one by one."""

_SAID_MAX = 500
"""Characters of a partner's status text kept per branch."""
_TEXT_MAX = 2000
"""Characters of a partner's streamed text kept per branch (its answer so far)."""
_WAITING = frozenset({"input-required", "auth-required"})


class LiveBranch:
    """One partner call of a running task, as its events arrive.

    `state` is a partner task state's name (`working`, `input-required`, `completed`, ...),
    `pending` before the partner named its task, or a swarm's own outcome (`timeout`,
    `error`, `skipped`, `canceled`).
    """

    __slots__ = (
        "_heard",
        "_tree",
        "agent",
        "answer",
        "characters",
        "chunks",
        "error",
        "index",
        "said",
        "seconds",
        "started",
        "state",
        "task_id",
        "text",
        "winner",
    )

    def __init__(self, tree: LiveTree, agent: str, index: int | None) -> None:
        self._tree = tree
        self.agent = agent
        self.index = index
        """The branch's place in its swarm; None for a call made alone."""
        self.task_id: str | None = None
        self.state = "pending"
        self.started: float | None = None
        """When the call started (epoch seconds); None while it waits for its turn."""
        self.seconds: float | None = None
        """How long the call took, once it ended."""
        self.chunks = 0
        """Artifact chunks the partner streamed."""
        self.characters = 0
        """Characters of text in those chunks."""
        self.said = ""
        """The partner's last status text."""
        self.text = ""
        """The start of the text the partner streamed (its answer so far)."""
        self._heard: Message | None = None
        self.answer = ""
        self.error = ""
        self.winner = False

    @property
    def ended(self) -> bool:
        return self.seconds is not None

    def start(self) -> None:
        """The call starts now."""
        if self.started is None:
            self.started = time.time()
            self._tree.version += 1

    def saw(self, task_id: str, state: TaskState, message: Message | None = None) -> None:
        """The partner's task `task_id` is in `state`, its status message `message`."""
        if self.ended:
            return  # a late event of a call already accounted for (a loser's cancel)
        name = state_name(state)
        said, fresh = self.said, ""
        if message is not None and message is not self._heard:
            # A stream repeats one status message across its events: read once. A poll
            # gives a new one each time: compared by its text.
            self._heard = message
            fresh = message.text()[:_SAID_MAX]
            said = fresh or said
        if task_id == self.task_id and name == self.state and said == self.said:
            return
        self.task_id = task_id
        self.state = name
        self.said = said
        if state in _FAULTS and fresh and not self.error:
            self.error = fresh
        if self.started is None:
            self.started = time.time()
        if state.is_terminal and self.started is not None:
            self.seconds = time.time() - self.started
        self._tree.version += 1

    def streamed(self, text: str) -> None:
        """The partner streamed one more artifact chunk, with `text`."""
        self.chunks += 1
        self.characters += len(text)
        if len(self.text) < _TEXT_MAX:
            self.text = (self.text + text)[:_TEXT_MAX]
        self._tree.version += 1

    def win(self) -> None:
        """The branch won its race."""
        self.winner = True
        self._tree.version += 1

    def again(self) -> None:
        """A new turn of the same partner task (the answer to its question) starts now."""
        self.seconds = None
        self._tree.version += 1

    def settle(
        self, state: str, *, answer: str | None, error: str | None, seconds: float | None
    ) -> None:
        """The call's outcome, as its caller words it (a swarm's `timeout`, `skipped`, ...);
        a call stopped on a question has not ended."""
        if seconds is None and self.started is not None and state not in _WAITING:
            seconds = time.time() - self.started
        self.state = state
        self.answer = answer or ""
        self.error = error or self.error
        self.seconds = seconds if seconds is not None else self.seconds
        self._tree.version += 1


_FAULTS = frozenset({TaskState.FAILED, TaskState.REJECTED})


class LiveTree:
    """The branches of one running task, in the order they were planned or started."""

    __slots__ = ("_by_task", "branches", "strategy", "version")

    def __init__(self) -> None:
        self.strategy = DELEGATE
        self.branches: list[LiveBranch] = []
        self.version = 0
        self._by_task: dict[tuple[str, str], LiveBranch] = {}

    def plan(self, strategy: str, agents: Iterable[tuple[str, int]]) -> list[LiveBranch]:
        """A swarm's branches, (agent, index) each, all pending; the tree takes its strategy."""
        self.strategy = strategy
        planned = [LiveBranch(self, agent, index) for agent, index in agents]
        self.branches.extend(planned)
        self.version += 1
        return planned

    def call(self, agent: str, task_id: str | None = None) -> LiveBranch:
        """A call to `agent` made alone (not a planned branch), starting now; a call that
        answers the partner's task `task_id` goes on in that task's branch."""
        if task_id is not None:
            for known in self.branches:
                if known.agent == agent and known.task_id == task_id:
                    known.again()
                    return known
        branch = LiveBranch(self, agent, None)
        self.branches.append(branch)
        branch.start()
        return branch

    def child(self, agent: str, task_id: str) -> LiveBranch:
        """The branch of partner `agent`'s task `task_id`: the one that saw it, or a new one
        (a task reported outside a call's branch: a follow after a restart, a cancel)."""
        found = self._by_task.get((agent, task_id))
        if found is None:
            for branch in self.branches:
                if branch.agent == agent and branch.task_id == task_id:
                    found = branch
                    break
            else:
                found = self.call(agent)
            self._by_task[agent, task_id] = found
        return found
