"""One task's run of its program: output lines become task events, approvals park the task,
timeouts and the exit code decide how it ends."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from hub.config import ProcessSkillSettings
from hub.protocol import Artifact, Part, TaskState, agent_message, new_id
from hub.skills.process.events import (
    Approval,
    Done,
    Failure,
    ProcessEvent,
    Progress,
    ResponseText,
    parse_jsonl_line,
    parse_text_line,
)
from hub.skills.process.runner import RunningProcess
from hub.tasks import TaskRun

__all__ = ["RESPONSE_ARTIFACT", "SUMMARY_ARTIFACT", "Outcome", "ProcessSession"]

log = logging.getLogger("hub.skills.process")

RESPONSE_ARTIFACT = "assistant-response"
SUMMARY_ARTIFACT = "summary"
_QUIET = 0.02
_MAX_DELAY = 0.1
_MAX_CHUNK = 64 * 1024
_ANSWERS = {"auto-approve": "yes", "deny": "no"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """How the task ends: its terminal state and the status message."""

    state: TaskState
    message: str | None = None


class _Text:
    """Response text as it arrives, joined into one part."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.size = 0

    def add(self, text: ResponseText) -> None:
        self.texts.append(text.text)
        self.size += len(text.text)

    def parts(self) -> list[Part]:
        return [Part(text="".join(self.texts))]


class _Response:
    """The `assistant-response` artifact: streamed in chunks as text arrives, then sent whole
    once more as the last chunk, in one part.

    Text is held for a moment so that a burst of lines makes one chunk: a chunk goes out when
    the program has been quiet for `_QUIET` seconds, when its oldest text is `_MAX_DELAY`
    seconds old, when it reaches `_MAX_CHUNK` characters, or before any other event.
    """

    def __init__(self, run: TaskRun) -> None:
        self._run = run
        self._artifact_id = new_id()
        self._whole = _Text()
        self._pending = _Text()
        self._first_pending = 0.0
        self._last_added = 0.0
        self._sent = False

    def add(self, text: ResponseText) -> None:
        if not text.text:
            return
        now = anyio.current_time()
        if not self._pending.texts:
            self._first_pending = now
        self._last_added = now
        self._pending.add(text)
        self._whole.add(text)

    def flush_due(self) -> float | None:
        """Seconds until the held text must go out (None: nothing is held)."""
        if not self._pending.texts:
            return None
        if self._pending.size >= _MAX_CHUNK:
            return 0.0
        due = min(self._first_pending + _MAX_DELAY, self._last_added + _QUIET)
        return due - anyio.current_time()

    async def flush(self) -> None:
        """Send the held text as one chunk."""
        if not self._pending.texts:
            return
        parts, self._pending = self._pending.parts(), _Text()
        chunk = Artifact(artifact_id=self._artifact_id, name=RESPONSE_ARTIFACT, parts=parts)
        append, self._sent = self._sent, True
        await self._run.artifact(chunk, append=append, last_chunk=False)

    async def close(self) -> None:
        """Send the whole response as the last chunk (if there was any)."""
        self._pending = _Text()
        if self._whole.texts:
            whole = Artifact(
                artifact_id=self._artifact_id, name=RESPONSE_ARTIFACT, parts=self._whole.parts()
            )
            await self._run.artifact(whole, append=False, last_chunk=True)


class ProcessSession:
    """Reads a running program's output and reports it on the task until the program ends.

    Args:
        run: the task.
        process: the started program.
        settings: the skill's settings (output format, timeouts, approval mode).
    """

    def __init__(
        self, run: TaskRun, process: RunningProcess, settings: ProcessSkillSettings
    ) -> None:
        self._run = run
        self._process = process
        self._settings = settings
        self._parse: Callable[[str], ProcessEvent] = (
            parse_jsonl_line if settings.output == "jsonl" else parse_text_line
        )
        self._response = _Response(run)
        self._done = False
        self._deadline = anyio.current_time() + settings.timeout
        self._last_line = anyio.current_time()

    async def follow(self) -> Outcome:
        """Handle output until the program ends, fails, or runs out of time."""
        try:
            outcome = await self._read_until_end()
        finally:
            # The response is closed even when the run is cut short, except by a cancel
            # (a canceled task takes no more artifacts).
            if not self._run.state.is_terminal:
                with anyio.CancelScope(shield=True):
                    await self._response.flush()
                    await self._response.close()
        return outcome

    async def _read_until_end(self) -> Outcome:
        lines = self._process.lines
        while True:
            wait, expired = self._next_wait()
            if wait <= 0:
                return Outcome(state=TaskState.FAILED, message=expired)
            flush_in = self._response.flush_due()
            flushing = flush_in is not None and flush_in < wait
            ended = False
            with anyio.move_on_after(max(flush_in or 0.0, 0.0) if flushing else wait) as waiting:
                try:
                    line = await lines.receive()
                except anyio.EndOfStream:
                    ended = True
            if waiting.cancelled_caught:
                if flushing:
                    await self._response.flush()
                    continue
                return Outcome(state=TaskState.FAILED, message=expired)
            if ended:
                return await self._exit_outcome()
            self._last_line = anyio.current_time()
            outcome = await self._handle(self._parse(line))
            if outcome is not None:
                return outcome

    def _next_wait(self) -> tuple[float, str]:
        """How long to wait for the next line, and what to say if none comes by then."""
        now = anyio.current_time()
        left = self._deadline - now
        idle = self._settings.idle_timeout
        if idle is not None and self._last_line + idle - now < left:
            silent = f"no output for {idle:g}s (idle_timeout); the program was stopped"
            return self._last_line + idle - now, silent
        return left, self._timed_out()

    def _timed_out(self) -> str:
        return f"timed out after {self._settings.timeout:g}s (timeout); the program was stopped"

    async def _handle(self, event: ProcessEvent) -> Outcome | None:
        if isinstance(event, ResponseText):
            self._response.add(event)
            return None
        await self._response.flush()
        if isinstance(event, Progress):
            await self._run.status(TaskState.WORKING, event.message)
        elif isinstance(event, Done):
            self._done = True
            await self._summary(event)
        elif isinstance(event, Failure):
            return Outcome(state=TaskState.FAILED, message=event.message)
        else:
            return await self._approve(event)
        return None

    async def _summary(self, done: Done) -> None:
        data = {
            key: value
            for key, value in (("summary", done.summary), ("stats", done.stats))
            if value is not None
        }
        if data:
            # One id per run, so a second `done` replaces the first.
            artifact_id = f"{self._run.task_id}-{SUMMARY_ARTIFACT}"
            await self._run.artifact(
                Artifact(artifact_id=artifact_id, name=SUMMARY_ARTIFACT, parts=[Part(data=data)])
            )

    async def _approve(self, approval: Approval) -> Outcome | None:
        metadata = {"processEvent": "approval_required"}
        answer = _ANSWERS.get(self._settings.approval)
        if answer is not None:
            note = "auto-approved" if answer == "yes" else "denied"
            message = agent_message(f"{note}: {approval.prompt}")
            await self._run.status(
                TaskState.WORKING,
                message.model_copy(update={"metadata": {**metadata, "answer": answer}}),
            )
        else:
            question = agent_message(approval.prompt).model_copy(update={"metadata": metadata})
            parked_at = anyio.current_time()
            with self._process.until_exit() as scope:
                reply = await self._run.ask(question)
            if scope.cancelled_caught:
                return await self._exit_outcome(while_parked=True)
            # Time spent waiting for a person does not count against the timeouts.
            self._deadline += anyio.current_time() - parked_at
            self._last_line = anyio.current_time()
            answer = " ".join(reply.text().splitlines())
        if not await self._process.write_line(answer):
            log.info("task %s: the program no longer reads stdin", self._run.task_id)
        return None

    async def _exit_outcome(self, *, while_parked: bool = False) -> Outcome:
        """The final state once stdout has closed (or the program exited while parked)."""
        left = self._deadline - anyio.current_time()
        with anyio.move_on_after(max(left, 0)):
            code = await self._process.wait()
            program = os.path.basename(self._settings.command[0])
            if code != 0:
                how = f"code {code}" if code > 0 else f"signal {-code}"
                # The last stderr lines may still be in the pipe when the exit is seen.
                with anyio.move_on_after(self._settings.grace):
                    await self._process.stderr_closed.wait()
                tail = self._process.stderr_tail()
                return Outcome(
                    state=TaskState.FAILED,
                    message=f"{program} exited with {how}" + (f": {tail}" if tail else ""),
                )
            if while_parked:
                return Outcome(
                    state=TaskState.FAILED,
                    message=f"{program} exited while waiting for an answer",
                )
            if self._settings.output == "jsonl" and not self._done:
                return Outcome(
                    state=TaskState.FAILED,
                    message=f"{program} exited without a done event (output: jsonl expects "
                    "one; use output: text for a program that prints plain text)",
                )
            return Outcome(state=TaskState.COMPLETED)
        return Outcome(state=TaskState.FAILED, message=self._timed_out())
