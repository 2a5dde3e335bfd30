"""What the CLI's exit status means, the same for every command, and what an interrupted
command tells the user.

| status | meaning                                                                  |
|--------|--------------------------------------------------------------------------|
| 0      | the task completed, or the command succeeded                             |
| 1      | the task failed, was canceled or rejected, or an agent or partner failed |
| 2      | a usage or configuration error, or an unknown partner name (nothing sent)|
| 3      | the task waits for input (input-required or auth-required)               |
| 130    | interrupted by Ctrl-C                                                    |
| 141    | the output was closed early (`... | head`)                               |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the protocol's models are loaded by the commands that read a task
    from hub.protocol import TaskState

__all__ = [
    "CLOSED_PIPE",
    "FAILED",
    "INTERRUPTED",
    "NEEDS_INPUT",
    "OK",
    "USAGE",
    "Running",
    "UsageError",
    "status_of",
]

OK = 0
FAILED = 1
USAGE = 2
NEEDS_INPUT = 3
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
CLOSED_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command whose reader went away


def status_of(state: TaskState | None) -> int:
    """The exit status for a task that ended (or paused) in `state`; None is a message reply."""
    from hub.protocol import TaskState  # here: whoever has a state has loaded the protocol

    if state is None or state is TaskState.COMPLETED:
        return OK
    if state.is_interrupted:
        return NEEDS_INPUT
    return FAILED if state.is_terminal else OK


class UsageError(Exception):
    """A value the parser could not check on its own: shown against the command's usage, exit 2."""


@dataclass
class Running:
    """What a command has under way, so that Ctrl-C can say what is left behind and how to
    reach it again."""

    task_id: str | None = None
    url: str | None = None
    agent: str | None = None
    """The partner's name in agents.yaml, when the command reached it by name."""
    registry_options: str = ""
    """The `--config` / `--agents` options the partner's name was read with, if any."""
    url_from_settings: bool = False
    """The URL was not given but read from the settings (the hub they describe)."""
    what: str = "the command"

    def task_options(self) -> str | None:
        """How a `tasks` command names the agent that has the task: a partner by its name
        (with its credentials from agents.yaml, its address never shown), any other agent by
        its URL; None when the command reached no agent."""
        if self.agent is not None:
            return f"--agent {self.agent}{self.registry_options}"
        return f"--url {self.url}" if self.url is not None else None

    def interrupted(self) -> str:
        """One line for stderr after Ctrl-C."""
        where = self.task_options()
        if self.task_id is None or where is None:
            return f"a2a-hub: interrupted; {self.what} was stopped"
        return (
            f"a2a-hub: interrupted; task {self.task_id} may still run on the agent: "
            f"cancel it with `a2a-hub tasks cancel {self.task_id} {where}` or follow it "
            f"with `a2a-hub tasks subscribe {self.task_id} {where}`"
        )
