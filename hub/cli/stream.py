"""How the CLI follows a stream of task events (`send --stream`, `call --stream`,
`tasks subscribe`): as text for people, as one line per event with `--raw`, or as JSON."""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from typing import Literal

from hub.cli.outcome import NEEDS_INPUT, Running, status_of
from hub.cli.render import TERMINAL_OR_WAITING, answer_hint, describe_event
from hub.protocol import Artifact, StreamResponse, TaskState, parts_text

__all__ = ["StreamStyle", "print_events", "stream_style"]

StreamStyle = Literal["text", "raw", "json"]
"""`text`: status lines, and the artifacts' text written as it comes (chunks appended);
`raw`: one line per event; `json`: one StreamResponse per line."""


def stream_style(args: argparse.Namespace) -> StreamStyle:
    """The style the command's `--json` / `--raw` options ask for."""
    if getattr(args, "json", False):
        return "json"
    return "raw" if getattr(args, "raw", False) else "text"


class _TextOut:
    """Writes artifact text as it streams, and status lines each on a line of their own."""

    def __init__(self) -> None:
        self.mid_line = False
        self.artifact: str | None = None
        self.shown = ""
        """The text of `artifact` written so far."""

    def line(self, text: str) -> None:
        if self.mid_line:
            sys.stdout.write("\n")
            self.mid_line = False
        print(text, flush=True)

    def event(self, event: StreamResponse) -> None:
        update = event.artifact_update
        if update is None:
            self.artifact = None
            self.line(describe_event(event))
            # A task followed after it started (`tasks subscribe`): the text it has produced
            # so far, which later chunks continue.
            produced = (event.task.artifacts if event.task is not None else None) or []
            for artifact in produced:
                self.write(artifact, append=False)
            return
        self.write(update.artifact, append=bool(update.append))

    def write(self, artifact: Artifact, *, append: bool) -> None:
        text = parts_text(artifact.parts)
        same = artifact.artifact_id == self.artifact
        if same and append:
            new, self.shown = text, self.shown + text
        elif same and text.startswith(self.shown):
            # The artifact sent again whole (a last chunk that repeats the text, a resumed
            # stream's snapshot): only what it adds is new.
            new, self.shown = text[len(self.shown) :], text
        else:
            if self.mid_line:
                sys.stdout.write("\n")
                self.mid_line = False
            new, self.shown = text, text
        self.artifact = artifact.artifact_id
        sys.stdout.write(new)
        sys.stdout.flush()
        if new:
            self.mid_line = not new.endswith("\n")


async def print_events(
    events: AsyncIterator[StreamResponse], running: Running, *, style: StreamStyle, answer_with: str
) -> int:
    """Print a stream's events as they come, noting the task in `running` (for Ctrl-C);
    returns the exit status of the last state seen. A task left waiting for input gets the
    line that tells how to answer it (`answer_with` is the command to repeat)."""
    state: TaskState | None = None
    for_task: str | None = None
    text = _TextOut()
    async for event in events:
        if event.task is not None:
            for_task, state = event.task.id, event.task.status.state
        elif event.status_update is not None:
            for_task, state = event.status_update.task_id, event.status_update.status.state
        elif event.artifact_update is not None:
            for_task = event.artifact_update.task_id
        running.task_id = for_task
        if style == "json":
            print(event.to_json().decode(), flush=True)
        elif style == "raw":
            print(describe_event(event), flush=True)
        else:
            text.event(event)
    status = status_of(state)
    if status == NEEDS_INPUT and style != "json":
        text.line(answer_hint(answer_with, for_task))
    if state in TERMINAL_OR_WAITING:
        running.task_id = None  # nothing is left running on the agent
    return status
