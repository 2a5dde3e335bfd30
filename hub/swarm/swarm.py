"""Swarms: one request sent to several partners at once, combined by a strategy.

- `broadcast`: every candidate gets the message; the answer is every completed answer, in
  candidate order.
- `race`: every candidate gets it; the first to complete wins, and the others are canceled
  (on the partner side too; inside a hub task the answer does not wait for those cancels).
- `vote`: every candidate gets it; the answer is the one a majority gave (compared
  normalised: case, spaces and end punctuation ignored), if at least `quorum` agree.
- `best_of`: every candidate gets it; a judge (a partner's or a local skill's tool) is shown
  the completed answers and names the best.
- `map`: `items` are split across the candidates, one item per call; the answers come back
  in the items' order.
- `chain`: the candidates one after another, each given the previous answer; the answer is
  the last one.

A swarm's options are one `SwarmSpec` (`hub.swarm.spec`); each strategy is one function,
found by its name in `_STRATEGIES`. Each branch (one call to one partner) has its own
deadline (`branch_deadline`), the whole swarm an overall one (`deadline`, by default
`swarm.deadline`), and at most `concurrency` branches run at once. A swarm past the caps of
`swarm:` in hub.yaml (items, partners, branches at once, deadline) is refused before any
partner is called. A failed branch is reported, not raised: the swarm fails only when its
strategy cannot give an answer (no branch completed, no quorum, a chain link broke, an item
of a map failed).

Inside a running skill the swarm is published as it runs, in its task's live tree
(`hub.tasks.live_tree`): the strategy and every planned branch from the start, each branch's
partner events as they arrive, its outcome when it ends, a race's winner once known.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from hub.config import SwarmSettings
from hub.errors import ClientError, HubError, ProtocolError
from hub.partners import Partners, PartnerView, StatsBook
from hub.protocol import TaskState
from hub.swarm.limits import check_limits
from hub.swarm.spec import SwarmSpec
from hub.swarm.strategy import STRATEGIES, Strategy
from hub.tasks.ledger import current_tree, in_branch, watching_children
from hub.tasks.live_tree import LiveBranch
from hub.telemetry import current_telemetry, span
from hub.tools import Tool, ToolResult

__all__ = ["STRATEGIES", "Branch", "Strategy", "SwarmResult", "run_swarm"]


log = logging.getLogger("hub.swarm")

_CONCURRENCY = 8
"""Branches at once of a swarm that sets no `concurrency`."""
_END_PUNCTUATION = re.compile(r"[\s.!?;:,'\"]+$")
_NUMBER = re.compile(r"\d+")


@dataclass(slots=True, kw_only=True)
class Branch:
    """One call of the swarm: which partner, what it was asked, how it ended."""

    agent: str
    index: int
    state: str = "pending"
    """`completed`, `failed`, `canceled`, `rejected`, `input-required`, `auth-required`,
    `timeout`, `error` (could not be called) or `skipped` (never started)."""
    answer: str | None = None
    error: str | None = None
    task_id: str | None = None
    seconds: float | None = None
    item: Any = None

    @property
    def ok(self) -> bool:
        return self.state == "completed"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"agent": self.agent, "index": self.index, "state": self.state}
        for key in ("answer", "error", "task_id", "seconds", "item"):
            value = getattr(self, key)
            if value is not None:
                out[key] = round(value, 3) if key == "seconds" else value
        return out


@dataclass(slots=True, kw_only=True)
class SwarmResult:
    """What the swarm gives back: its answer (if the strategy reached one) and every branch."""

    strategy: str
    ok: bool
    answer: str | None
    branches: list[Branch]
    reason: str = ""
    """Why the strategy reached its answer, or why it could not."""
    answers: list[str] = field(default_factory=list)
    """broadcast and map: every answer, in order."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "ok": self.ok,
            "answer": self.answer,
            "answers": self.answers,
            "reason": self.reason,
            "branches": [branch.to_dict() for branch in self.branches],
        }


def normalise(answer: str) -> str:
    """An answer as votes compare it: lowercase, single spaces, no trailing punctuation."""
    return _END_PUNCTUATION.sub("", " ".join(answer.lower().split()))


async def run_swarm(
    partners: Partners | PartnerView,
    message: str,
    spec: SwarmSpec,
    *,
    judge: Tool | None = None,
    on_branch: Callable[[Branch], Awaitable[None]] | None = None,
    limits: SwarmSettings | None = None,
    stats: StatsBook | None = None,
) -> SwarmResult:
    """Run `message` across `spec.agents` with `spec.strategy` (see the module docstring).

    Args:
        partners: the partner agents.
        message: the request's text.
        spec: the swarm's options. Its `agents` are the partners to use, in order (the
            chain's order; map's round robin): a caller that routes by `tags` and `limit`
            picks them first (`choose_partners`). `skill` is the skill each branch asks for;
            `concurrency` defaults to 8 (or `limits.max_concurrency` if lower), `deadline`
            to `limits.deadline`, `quorum` to a majority of the branches.
        judge: `best_of`: the tool that picks the best answer (`spec.judge` names it; the
            caller finds the tool).
        on_branch: awaited with each branch as it ends (for progress reports).
        limits: the caps the swarm is held to (None: the defaults of `SwarmSettings`).
        stats: where each branch's outcome and time are recorded (the hub's call
            statistics, which the router weighs; None: nowhere).

    Raises:
        ValueError: no agents, `map` without items, `best_of` without a judge.
        InvalidParamsError: the swarm is past one of `limits` (nothing was called).
    """
    strategy = spec.strategy
    if not spec.agents:
        raise ValueError("a swarm needs at least one partner")
    if strategy == "map" and spec.items is None:
        raise ValueError("the map strategy needs items")
    if strategy == "best_of" and judge is None:
        raise ValueError("the best_of strategy needs a judge")
    limits = limits or SwarmSettings()
    concurrency = spec.concurrency or min(_CONCURRENCY, limits.max_concurrency)
    deadline = check_limits(limits, spec, concurrency=concurrency)
    runner = _Runner(partners, message, spec, judge, max(1, concurrency), on_branch, stats)
    attributes: dict[str, str | int] = {
        "a2a_hub.swarm.strategy": strategy,
        "a2a_hub.swarm.agents": len(spec.agents),
    }
    with span(f"swarm {strategy}", attributes=attributes), anyio.move_on_after(deadline) as overall:
        result = await _STRATEGIES[strategy](runner)
    if overall.cancelled_caught:
        for branch in runner.branches:
            if branch.state in ("pending", "canceled"):
                branch.state = "timeout" if branch.state == "canceled" else "skipped"
                branch.error = "the swarm's overall deadline passed"
        result = runner.no_answer(f"the swarm did not finish within {deadline:g} s")
    runner.publish(runner.branches)
    metrics = current_telemetry().metrics
    if metrics is not None:
        metrics.swarm(strategy, ok=result.ok, branches=[branch.state for branch in result.branches])
    return result


class _Runner:
    """One swarm's run: calls partners for branches, within the concurrency cap and the
    branch deadline, and words the strategy's result."""

    def __init__(
        self,
        partners: Partners | PartnerView,
        message: str,
        spec: SwarmSpec,
        judge: Tool | None,
        cap: int,
        on_branch: Callable[[Branch], Awaitable[None]] | None,
        stats: StatsBook | None,
    ) -> None:
        self.partners = partners
        self.message = message
        self.spec = spec
        self.judge = judge
        self.on_branch = on_branch
        self.stats = stats
        self.limiter = anyio.CapacityLimiter(cap)
        self.branches: list[Branch] = []
        """Every branch the strategy plans, started or not (reported if the swarm times out)."""
        self.live: list[LiveBranch] = []
        """The branches as the task's live tree shows them, by index (none outside a skill)."""

    def plan(self, branches: list[Branch] | None = None) -> list[Branch]:
        """`branches`, or one per partner in the spec's order: the swarm's plan, shown in the
        task's live tree at once."""
        if branches is None:
            branches = [Branch(agent=name, index=i) for i, name in enumerate(self.spec.agents)]
        self.branches = branches
        tree = current_tree()
        if tree is not None:
            agents = [(branch.agent, branch.index) for branch in branches]
            self.live = tree.plan(self.spec.strategy, agents)
        return branches

    def live_branch(self, branch: Branch) -> LiveBranch | None:
        return self.live[branch.index] if self.live else None

    def publish(self, branches: list[Branch]) -> None:
        """The branches' outcomes, as the strategy worded them, into the live tree."""
        for branch in branches:
            live = self.live_branch(branch)
            if live is not None and branch.state != "pending":
                live.settle(
                    branch.state, answer=branch.answer, error=branch.error, seconds=branch.seconds
                )

    def answer(
        self, answer: str | None, reason: str, *, answers: list[str] | None = None, ok: bool = True
    ) -> SwarmResult:
        """The swarm's result: `answer`, reached for `reason` (`ok=False`: none, and why)."""
        return SwarmResult(
            strategy=self.spec.strategy,
            ok=ok,
            answer=answer if ok else None,
            branches=self.branches,
            reason=reason,
            answers=answers or [],
        )

    def no_answer(self, reason: str, *, answers: list[str] | None = None) -> SwarmResult:
        return self.answer(None, reason, answers=answers, ok=False)

    async def call(self, branch: Branch, message: str) -> None:
        arguments: dict[str, Any] = {"message": message}
        if self.spec.skill:
            arguments["skill"] = self.spec.skill

        def seen(agent: str, task_id: str, state: TaskState) -> None:
            branch.task_id = task_id  # known even if the call is then given up on

        live = self.live_branch(branch)
        async with self.limiter:
            started = time.monotonic()
            if live is not None:
                live.start()
            limit = self.spec.branch_deadline
            try:
                with (
                    span(f"swarm.branch {branch.agent}", attributes=_branch(branch)),
                    anyio.fail_after(limit) if limit is not None else contextlib.nullcontext(),
                    watching_children(seen),
                    in_branch(live),
                ):
                    result = await self.partners[branch.agent].call(**arguments)
            except TimeoutError:
                branch.state = "timeout"
                branch.error = f"no answer within {limit:g} s"
            except (ClientError, ProtocolError, HubError) as exc:
                # The branch tells the partner and the kind of fault; the log, the details.
                if isinstance(exc, ClientError):
                    log.warning("swarm branch '%s': %s", branch.agent, exc.for_log())
                branch.state, branch.error = "error", str(exc)
            except anyio.get_cancelled_exc_class():
                # The swarm stopped this branch (a race was won, the deadline passed); the
                # tool cancels the partner's task (inside a hub task, in the background:
                # the delegation ledger's group, so the swarm does not wait for it).
                branch.state = "canceled"
                branch.seconds = time.monotonic() - started
                raise
            else:
                _settle(branch, result)
            branch.seconds = time.monotonic() - started
            if self.stats is not None:
                self.stats.record(branch.agent, ok=branch.ok, seconds=branch.seconds)
            self.publish([branch])
        if self.on_branch is not None:
            await self.on_branch(branch)

    async def completed(self) -> list[Branch]:
        """Every partner's branch, run at once; the ones that completed with an answer."""
        async with anyio.create_task_group() as group:
            for branch in self.plan():
                group.start_soon(self.call, branch, self.message)
        return [branch for branch in self.branches if branch.ok and branch.answer is not None]


def _branch(branch: Branch) -> dict[str, str | int]:
    return {"a2a_hub.partner.name": branch.agent, "a2a_hub.swarm.branch": branch.index}


def _settle(branch: Branch, result: ToolResult) -> None:
    branch.state = result.state
    branch.task_id = result.task_id
    if result.ok:
        branch.answer = result.text
    else:
        branch.error = result.message or f"the partner ended the task {result.state}"


async def _broadcast(run: _Runner) -> SwarmResult:
    done = await run.completed()
    if not done:
        return run.no_answer("no partner completed")
    answers = [branch.answer or "" for branch in done]
    reason = f"{len(done)} of {len(run.branches)} partners completed"
    return run.answer("\n\n".join(answers), reason, answers=answers)


async def _race(run: _Runner) -> SwarmResult:
    winner: Branch | None = None
    branches = run.plan()
    async with anyio.create_task_group() as group:

        async def one(branch: Branch) -> None:
            nonlocal winner
            await run.call(branch, run.message)
            if branch.ok and winner is None:
                winner = branch
                live = run.live_branch(branch)
                if live is not None:
                    live.win()
                group.cancel_scope.cancel()

        for branch in branches:
            group.start_soon(one, branch)
    for branch in branches:
        if branch.state == "pending" or (
            branch is not winner
            and branch.state == "timeout"
            and winner is not None
            and branch.error is None
        ):
            branch.state, branch.error = "canceled", "another partner answered first"
    if winner is None:
        return run.no_answer("no partner completed")
    return run.answer(winner.answer, f"'{winner.agent}' answered first")


async def _vote(run: _Runner) -> SwarmResult:
    done = await run.completed()
    if not done:
        return run.no_answer("no partner completed")
    quorum = run.spec.quorum or (len(run.branches) // 2 + 1)
    counts = Counter(normalise(branch.answer or "") for branch in done)
    top, votes = counts.most_common(1)[0]
    tied = [answer for answer, n in counts.items() if n == votes]
    tally = ", ".join(f"{n} x '{answer}'" for answer, n in counts.most_common())
    if votes < quorum or len(tied) > 1:
        why = "a tie" if len(tied) > 1 else f"{votes} agree, {quorum} needed"
        return run.no_answer(f"no quorum: {why} ({tally})")
    answer = next(b.answer for b in done if normalise(b.answer or "") == top)
    return run.answer(answer, f"{votes} of {len(run.branches)} agree (quorum {quorum}; {tally})")


async def _best_of(run: _Runner) -> SwarmResult:
    done = await run.completed()
    if not done:
        return run.no_answer("no partner completed")
    judge = run.judge
    assert judge is not None  # run_swarm refuses best_of without one
    listing = "\n\n".join(f"Answer {i}:\n{b.answer}" for i, b in enumerate(done, 1))
    prompt = (
        f"Which answer to this request is best?\n\nRequest:\n{run.message}\n\n{listing}\n\n"
        "Reply with the number of the best answer only."
    )
    try:
        verdict = await judge.call(message=prompt)
    except (ClientError, ProtocolError) as exc:
        if isinstance(exc, ClientError):
            log.warning("swarm judge '%s': %s", judge.name, exc.for_log())
        return run.no_answer(f"the judge '{judge.name}' failed: {exc}")
    match = _NUMBER.search(verdict.text or "")
    choice = int(match.group()) if match else 0
    if not verdict.ok or not 1 <= choice <= len(done):
        return run.no_answer(
            f"the judge '{judge.name}' named no answer (it said {verdict.text[:100]!r})"
        )
    best = done[choice - 1]
    return run.answer(
        best.answer, f"the judge '{judge.name}' chose '{best.agent}' (answer {choice})"
    )


async def _map(run: _Runner) -> SwarmResult:
    agents, items = run.spec.agents, run.spec.items or []
    run.plan(
        [Branch(agent=agents[i % len(agents)], index=i, item=item) for i, item in enumerate(items)]
    )
    async with anyio.create_task_group() as group:
        for branch in run.branches:
            text = f"{run.message}\n\n{branch.item}" if run.message else str(branch.item)
            group.start_soon(run.call, branch, text)
    failed = [branch for branch in run.branches if not branch.ok]
    answers = [branch.answer or "" for branch in run.branches]
    if failed:
        return run.no_answer(f"{len(failed)} of {len(items)} items failed", answers=answers)
    reason = f"{len(items)} items across {len(set(agents))} partners"
    return run.answer("\n".join(answers), reason, answers=answers)


async def _chain(run: _Runner) -> SwarmResult:
    current = run.message
    branches = run.plan()
    for branch in branches:
        await run.call(branch, current)
        if not branch.ok:
            for later in branches[branch.index + 1 :]:
                later.state = "skipped"
            return run.no_answer(f"'{branch.agent}' broke the chain")
        current = branch.answer or ""
    return run.answer(current, f"{len(branches)} partners in turn")


_STRATEGIES: dict[Strategy, Callable[[_Runner], Awaitable[SwarmResult]]] = {
    "broadcast": _broadcast,
    "race": _race,
    "vote": _vote,
    "best_of": _best_of,
    "map": _map,
    "chain": _chain,
}
"""How each strategy runs, by name (its names are `STRATEGIES`, in this order)."""
