"""Which local skill a new task runs: the one the message names, a directive's, or the
default; refused when the caller's credential may not use it. Also where the keys that route
a request are read from (`routing_metadata`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.errors import InvalidParamsError, SkillNotAllowedError
from hub.protocol import JsonObject, SendMessageRequest
from hub.protocol.trace import current_scope
from hub.tasks.run import TaskExecutor

__all__ = ["DIRECTIVE_KEY", "DIRECTIVE_SKILL", "choose_skill", "routing_metadata"]

DIRECTIVE_KEY = "swarmKind"
DIRECTIVE_SKILL = "federation"
"""A message carrying a hub-to-hub directive (`metadata.swarmKind`) and naming no skill goes
to the skill with this id, when the hub serves it."""


def routing_metadata(
    request_metadata: JsonObject | None, message_metadata: JsonObject | None
) -> Mapping[str, Any]:
    """The metadata that says where a request goes (`skill`, `agent`, `agents`, `tags`,
    `strategy`, ...), read from both places a caller may put it: the message's metadata,
    with the request's over it (a key in both: the request's wins).

    The one reading of those keys, for the task manager and for the routing skills alike.
    """
    if not message_metadata:
        return request_metadata or {}
    if not request_metadata:
        return message_metadata
    return {**message_metadata, **request_metadata}


def choose_skill(
    request: SendMessageRequest, executors: Mapping[str, TaskExecutor], default_skill: str
) -> str:
    """The skill `metadata.skill` names (in the request's or the message's metadata, see
    `routing_metadata`), or the default one, if the caller may use it: the caller's skill
    scope travels in the current call scope.

    Raises:
        InvalidParamsError: the named skill is not served here, or the message carries a
            directive (`metadata.swarmKind`) and the federation skill is off.
        SkillNotAllowedError: the caller's credential may not use it.
    """
    scope = current_scope()
    allowed = scope.skills if scope is not None else None
    metadata = routing_metadata(request.metadata, request.message.metadata)
    if "skill" not in metadata and DIRECTIVE_KEY in metadata:
        if DIRECTIVE_SKILL not in executors:
            raise InvalidParamsError(
                f"this hub does not take hub-to-hub directives (metadata.{DIRECTIVE_KEY}): "
                f"its '{DIRECTIVE_SKILL}' skill is off (skills: - builtin: {DIRECTIVE_SKILL} in "
                "hub.yaml turns it on)",
                violations=[(f"metadata.{DIRECTIVE_KEY}", "not served by this hub")],
            )
        metadata = {**metadata, "skill": DIRECTIVE_SKILL}
    if "skill" in metadata:
        skill = metadata["skill"]
        if not isinstance(skill, str) or skill not in executors:
            known = ", ".join(sorted(allowed if allowed is not None else executors))
            raise InvalidParamsError(
                f"skill {skill!r} is not served by this hub (known: {known})",
                violations=[("metadata.skill", f"must be one of: {known}")],
            )
        if allowed is not None and skill not in allowed:
            raise _not_allowed(f"skill {skill!r} is", allowed)
        return skill
    if allowed is not None and default_skill not in allowed:
        raise _not_allowed(f"the default skill '{default_skill}' is", allowed)
    return default_skill


def _not_allowed(what: str, allowed: frozenset[str]) -> SkillNotAllowedError:
    known = ", ".join(sorted(allowed))
    return SkillNotAllowedError(
        f"{what} not among the skills this caller may use ({known}); name one of them in "
        "metadata.skill",
        violations=[("metadata.skill", f"must be one of: {known}")],
    )
