"""Running skills: each task's executor on a reused worker, in its request's call scope,
with the end of its run applied to its task (completed, failed, its children settled)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

import anyio
from anyio.abc import TaskGroup

from hub.errors import BudgetExhaustedError, ClientError, InvalidTransitionError, SkillError
from hub.protocol import JsonObject, TaskState
from hub.protocol.trace import CallScope, current_scope, use_scope
from hub.tasks.ledger import DelegationLedger
from hub.tasks.live import LiveTask
from hub.tasks.opening import Opening
from hub.tasks.run import TaskExecutor, TaskRun
from hub.tasks.workers import WorkerPool
from hub.telemetry import current_telemetry, span

__all__ = ["Execution"]

log = logging.getLogger("hub.tasks")

_SKILL_FAILED = "skill '{skill}' failed with an internal error; the hub log has the details"


class Execution:
    """Starts skills for live tasks; a running skill changes its task through its `TaskRun`.

    Args:
        executors: the local skills by id.
        ledger: records the partner tasks a skill starts; a task that ends with some of
            them still live has them canceled.
    """

    def __init__(self, executors: Mapping[str, TaskExecutor], *, ledger: DelegationLedger) -> None:
        self.executors = dict(executors)
        self._ledger = ledger
        self._workers: WorkerPool | None = None

    def bind(self, group: TaskGroup | None) -> None:
        """Run skills in `group` from now on (None: stop starting them)."""
        self._workers = WorkerPool(group) if group is not None else None

    def resumable(self, skill: str) -> bool:
        """`skill` is served here and can pick up a task its stopped hub was running."""
        executor = self.executors.get(skill)
        return executor is not None and executor.resumable

    def start(
        self,
        live: LiveTask | Opening,
        metadata: JsonObject | None,
        *,
        call_scope: CallScope | None = None,
        resumed: bool = False,
    ) -> None:
        """Run the skill of a task, or of an opening (a new message whose skill may answer
        with a direct Message); a task's run is canceled through the task (`LiveTask.cancel`).

        The skill runs in the call scope (trace and deadline) of the request that started it,
        or in `call_scope` when given (a resumed task has no request: its caller's scope);
        `resumed` is the run's `TaskRun.resumed`.
        """
        if self._workers is None:
            raise RuntimeError("TaskManager used outside 'async with'")
        run = TaskRun(live, metadata, resumed=resumed)
        call_scope = call_scope if call_scope is not None else current_scope()
        self._workers.submit(lambda: self._execute(run, call_scope))

    async def _execute(self, run: TaskRun, call_scope: CallScope | None) -> None:
        executor = self.executors[run.skill]
        opening = run.opening
        if opening is not None and opening.abandoned:
            return  # the request went away before the skill started: nothing to run for
        started = time.perf_counter()
        with (
            anyio.CancelScope() as scope,
            use_scope(call_scope),
            span(f"invoke_agent {run.skill}", attributes=_run_attributes(run)) as run_span,
            self._ledger.parent(None) as parent,
        ):

            def attach(live: LiveTask) -> None:
                live.run_in(scope)
                parent.task_id = live.task_id

            run.when_open(attach)
            if opening is not None:
                opening.run_in(scope)
            try:
                # The executor moves the task to WORKING when it really starts (one that
                # waits for a free slot leaves it SUBMITTED meanwhile).
                await executor.run(run)
                live = run.task()
                if live is not None and not (live.state.is_terminal or live.state.is_interrupted):
                    live.update_status(TaskState.COMPLETED)
            except (SkillError, ClientError, BudgetExhaustedError) as exc:
                # A partner the skill called failed: its message names the partner and the
                # kind of fault; where it is and what it said go to the log only. A budget
                # spent stops the run with the refusal's own words (which budget, how much).
                if isinstance(exc, ClientError):
                    log.warning("task %s: skill %s: %s", run.task_id, run.skill, exc.for_log())
                self._fail_run(run, str(exc))
            except InvalidTransitionError as exc:
                log.info("task %s: skill %s: %s", run.task_id, run.skill, exc)
            except Exception:
                log.exception("task %s: skill %s raised", run.task_id, run.skill)
                self._fail_run(run, _SKILL_FAILED.format(skill=run.skill))
            finally:
                if opening is not None:
                    opening.end()
                live = run.task()  # no longer creates one: the opening is decided
                if live is not None:
                    live.run_ended()
                    if run_span is not None:
                        run_span.set_attribute("a2a.task.id", live.task_id)
                        run_span.set_attribute("a2a.task.state", live.state.value)
        if live is not None:
            metrics = current_telemetry().metrics
            if metrics is not None:
                state = live.state.value.removeprefix("TASK_STATE_").lower()
                metrics.task(run.skill, state=state, seconds=time.perf_counter() - started)
            if live.state.is_terminal:
                await self._ledger.settle(live.task_id)

    def _fail_run(self, run: TaskRun, reason: str) -> None:
        """Fail the run's task (created now if the skill had not decided); a skill that
        answered with a Message has no task, and its failure goes only to the log."""
        live = run.task()
        if live is None:
            log.warning(
                "skill %s: %s (it answered without a task, so none fails)", run.skill, reason
            )
            return
        live.fail(reason)


def _run_attributes(run: TaskRun) -> dict[str, str]:
    """The skill run's span attributes (GenAI agent conventions)."""
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": run.skill}
