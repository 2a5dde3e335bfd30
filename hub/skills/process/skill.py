"""`ProcessSkill`: a command-line program served as a local skill, one run per task."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from hub.config import ProcessSkillSettings
from hub.errors import SkillError
from hub.protocol import AgentSkill, TaskState, agent_message
from hub.skills.process.command import build_argv, build_env, check_command
from hub.skills.process.runner import run_process
from hub.skills.process.session import Outcome, ProcessSession
from hub.tasks import INTERRUPTED_BY_RESTART, ReplyMode, TaskRun

__all__ = ["ProcessSkill", "RunSlots", "build_process_skill"]


class _QueueFullError(Exception):
    pass


class RunSlots:
    """At most `max_concurrent` runs at once, and at most `max_queue` tasks waiting for one.

    Waiting tasks get a slot in the order they asked for one.
    """

    def __init__(self, *, max_concurrent: int, max_queue: int) -> None:
        self._semaphore = anyio.Semaphore(max_concurrent)
        self._max_queue = max_queue
        self._waiting = 0

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold a slot for the block; raises `_QueueFullError` when none is free and the
        queue is full."""
        try:
            self._semaphore.acquire_nowait()
        except anyio.WouldBlock:
            if self._waiting >= self._max_queue:
                raise _QueueFullError from None
            self._waiting += 1
            try:
                await self._semaphore.acquire()
            finally:
                self._waiting -= 1
        try:
            yield
        finally:
            self._semaphore.release()


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessSkill:
    """A local skill that runs a program per task (see docs/skills.md, "Process skills").

    A `LocalSkill`, so the app and the card take it like any other. Build it with
    `build_process_skill`.
    """

    card: AgentSkill
    settings: ProcessSkillSettings
    run_slots: RunSlots = field(repr=False)

    @property
    def skill_id(self) -> str:
        return self.card.id

    @property
    def reply_mode(self) -> ReplyMode:
        return "task"

    @property
    def resumable(self) -> bool:
        """False: the program stops with the hub, and running it again would redo its work."""
        return False

    async def run(self, run: TaskRun) -> None:
        if run.replaying:
            # Answers recorded before a restart were given to a program that no longer
            # exists; running it again would redo its work and ask again. The task ends.
            raise SkillError(
                f"{INTERRUPTED_BY_RESTART}; the program of process skill '{self.skill_id}' "
                "stopped with the hub and cannot resume: send a new message to run it again"
            )
        try:
            async with self.run_slots.hold():
                if run.state is TaskState.SUBMITTED:
                    await run.status(TaskState.WORKING)
                outcome = await self._run_program(run)
        except _QueueFullError:
            settings = self.settings
            await run.status(
                TaskState.REJECTED,
                agent_message(
                    f"process skill '{self.skill_id}' is busy: {settings.max_concurrent} "
                    f"run(s) going and {settings.max_queue} task(s) waiting, the most it takes "
                    "(max_concurrent, max_queue); send the message again later"
                ),
            )
            return
        except anyio.get_cancelled_exc_class():
            if run.state.is_interrupted:
                # The hub is stopping while the task waits for an answer: its program is
                # gone (stopped on the way out), so the task cannot be resumed.
                with anyio.CancelScope(shield=True):
                    await run.status(TaskState.FAILED, agent_message(INTERRUPTED_BY_RESTART))
            raise
        message = agent_message(outcome.message) if outcome.message else None
        await run.status(outcome.state, message)

    async def _run_program(self, run: TaskRun) -> Outcome:
        settings = self.settings
        task_id, context_id = run.task_id, run.context_id
        argv = build_argv(settings, run.message, task_id=task_id, context_id=context_id)
        env = build_env(settings, task_id=task_id, context_id=context_id, base=os.environ)
        async with run_process(argv, cwd=settings.cwd, env=env, grace=settings.grace) as process:
            return await ProcessSession(run, process, settings).follow()


def build_process_skill(settings: ProcessSkillSettings, *, check: bool = True) -> ProcessSkill:
    """The skill for one `process:` entry of `skills:`.

    Args:
        settings: the entry.
        check: refuse a missing working directory or program now, rather than at the
            first task.

    Raises:
        ConfigError: `check` is on and the working directory or the program is missing.
    """
    if check:
        check_command(settings, base_env=os.environ)
    card = settings.card()
    return ProcessSkill(
        card=card,
        settings=settings,
        run_slots=RunSlots(max_concurrent=settings.max_concurrent, max_queue=settings.max_queue),
    )
