"""Loading the local skills named in the settings."""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from hub.config import Settings, SkillRef, locate
from hub.errors import ConfigError
from hub.orchestrator import Orchestrator
from hub.orchestrator import from_settings as build_orchestrator
from hub.skills.api import LocalSkill, Skill
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.federation import federation
from hub.skills.process import build_process_skill
from hub.skills.swarm import swarm

__all__ = ["BUILTIN_SKILLS", "configured_skills", "load_skills"]

BUILTIN_SKILLS: dict[str, Skill] = {
    "echo": echo,
    "delegate": delegate,
    "swarm": swarm,
    "federation": federation,
}


def _import(reference: str) -> Skill | Orchestrator:
    module_name, _, attribute = reference.partition(":")
    # Module skills live in the user's project: make the working directory importable, as
    # `python -m` would.
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except (ImportError, TypeError, ValueError) as exc:  # also ":f", ".relative:f"
        raise ConfigError(
            f"skill '{reference}': cannot import module {module_name} ({exc})"
        ) from None
    target = getattr(module, attribute, None)
    if target is None:
        raise ConfigError(f"skill '{reference}': module {module_name} has no {attribute}")
    if not isinstance(target, Skill | Orchestrator):
        raise ConfigError(
            f"skill '{reference}' is not a skill; decorate the async function with "
            "@hub.skill(id=..., description=...), or declare hub.orchestrator(...)"
        )
    return target


def load_skills(refs: Sequence[SkillRef]) -> dict[str, LocalSkill]:
    """The skills named in `skills:`, by id.

    Raises:
        ConfigError: an unknown built-in, an import failure, a process skill whose program
            or working directory is missing, or two skills with one id.
    """
    skills: dict[str, LocalSkill] = {}
    for ref in refs:
        if ref.builtin is not None:
            found: LocalSkill | None = BUILTIN_SKILLS.get(ref.builtin)
            if found is None:
                known = sorted(BUILTIN_SKILLS)
                close = difflib.get_close_matches(ref.builtin, known, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise ConfigError(
                    f"unknown built-in skill '{ref.builtin}'{hint} (known: {', '.join(known)})"
                )
        elif ref.process is not None:
            found = build_process_skill(ref.process)
        elif ref.orchestrator is not None:
            found = build_orchestrator(ref.orchestrator)
        else:
            assert ref.module is not None
            found = _import(ref.module)
        if found.skill_id in skills:
            raise ConfigError(
                f"two skills have the id '{found.skill_id}'; skill ids must be unique"
            )
        skills[found.skill_id] = found
    return skills


def configured_skills(settings: Settings) -> dict[str, LocalSkill]:
    """The skills the settings' `skills:` names, by id; a skill that cannot be loaded (an
    unknown built-in, a module that fails to import, a missing program) is reported at its
    entry's file and line.

    Raises:
        ConfigError: an entry cannot be loaded, or two entries have one id.
    """
    skills: dict[str, LocalSkill] = {}
    for index, ref in enumerate(settings.skills):
        try:
            [(skill_id, found)] = load_skills([ref]).items()
        except ConfigError as exc:
            raise ConfigError(f"{locate(settings, 'skills', index)}: {exc}") from None
        if skill_id in skills:
            raise ConfigError(
                f"{locate(settings, 'skills', index)}: two skills have the id '{skill_id}'; "
                "skill ids must be unique"
            )
        plan = ref.orchestrator
        if plan is not None and plan.model not in settings.models:
            known = ", ".join(sorted(settings.models)) or "none"
            raise ConfigError(
                f"{locate(settings, 'skills', index)}: orchestrator '{plan.id}' uses model "
                f"'{plan.model}', which models: does not declare (declared: {known})"
            )
        skills[skill_id] = found
    return skills
