"""What one run of a process skill executes: its argument list and its environment."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from hub.config import ProcessSkillSettings
from hub.errors import ConfigError, SkillError
from hub.protocol import Message

__all__ = ["build_argv", "build_env", "check_command"]

_PLACEHOLDER = re.compile(r"\{(" + "|".join(ProcessSkillSettings.PLACEHOLDERS) + r")\}")


def build_argv(
    settings: ProcessSkillSettings, message: Message, *, task_id: str, context_id: str
) -> list[str]:
    """The program and its arguments, with the placeholders filled in.

    Each argument is filled in one pass, so text that itself contains `{task_id}` is left as
    it is, and whatever a placeholder stands for stays inside the one argument it is in: a
    message can never add an argument, a flag or a shell command.

    Raises:
        SkillError: the message holds a NUL character, which no argument can carry.
    """
    values = {
        "text": message.text(),
        "task_id": task_id,
        "context_id": context_id,
        "data": json.dumps(
            [part.data for part in message.parts if part.data is not None], ensure_ascii=False
        ),
    }
    argv = [settings.command[0]]
    argv.extend(
        _PLACEHOLDER.sub(lambda match: values[match.group(1)], argument)
        for argument in settings.command[1:]
    )
    if any("\0" in argument for argument in argv):
        raise SkillError("the message holds a NUL character, which cannot be passed to a program")
    return argv


def build_env(
    settings: ProcessSkillSettings, *, task_id: str, context_id: str, base: Mapping[str, str]
) -> dict[str, str]:
    """The hub's environment (`base`), the skill's `env`, and the task's ids as
    `A2A_TASK_ID` and `A2A_CONTEXT_ID`."""
    return {**base, **settings.env, "A2A_TASK_ID": task_id, "A2A_CONTEXT_ID": context_id}


def check_command(settings: ProcessSkillSettings, *, base_env: Mapping[str, str]) -> None:
    """Refuse, at start-up, a skill whose working directory or program does not exist.

    Raises:
        ConfigError: naming the skill and what is missing.
    """
    where = f"process skill '{settings.id}'"
    cwd = Path(settings.cwd) if settings.cwd else Path.cwd()
    if not cwd.is_dir():
        raise ConfigError(f"{where}: cwd {settings.cwd!r} is not a directory")
    program = settings.command[0]
    if os.sep in program:
        # The program is found relative to the run's working directory, as exec does.
        path = cwd / program
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ConfigError(f"{where}: {program!r} is not an executable file (from {cwd})")
        return
    search = {**base_env, **settings.env}.get("PATH", os.defpath)
    if shutil.which(program, path=search) is None:
        raise ConfigError(f"{where}: program {program!r} was not found on PATH")
