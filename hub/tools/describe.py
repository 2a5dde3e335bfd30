"""Tool names and descriptions made safe to hand to a language model.

A partner writes its own card, so its name and description are untrusted text: they are
reduced to printable characters, stripped of markup that could pass as instructions, collapsed
to single spaces and capped in length before they reach a tool definition.
"""

from __future__ import annotations

import re
import unicodedata

from hub.protocol import AgentCard

__all__ = ["MAX_DESCRIPTION", "MAX_NAME", "describe_agent", "sanitize", "tool_name"]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
_MAX_SKILL_LINE = 160
_MAX_SKILLS = 12

_NOT_SLUG = re.compile(r"[^a-z0-9_]+")
_TAG = re.compile(r"<[^>]{0,200}>")
_SPACE = re.compile(r"\s+")


def tool_name(prefix: str, name: str) -> str:
    """`prefix` + `name` as a tool name: lowercase `[a-z0-9_]`, at most 64 characters.

    >>> tool_name("a2a_", "Legacy-Translator")
    'a2a_legacy_translator'
    """
    slug = _NOT_SLUG.sub("_", name.lower()).strip("_") or "agent"
    return (prefix + slug)[:MAX_NAME].rstrip("_")


def sanitize(text: str | None, *, limit: int = MAX_DESCRIPTION) -> str:
    """`text` with control and format characters removed, tags dropped, whitespace collapsed,
    and cut to `limit` characters (ending in `…` when cut)."""
    if not text:
        return ""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in _TAG.sub(" ", text)
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    flat = _SPACE.sub(" ", kept).strip()
    if len(flat) <= limit:
        return flat
    return flat[: limit - 1].rstrip() + "…"


def describe_agent(name: str, card: AgentCard | None, *, unreachable: str | None = None) -> str:
    """The description of partner `name`'s tool: what its card says it does, and its skills;
    without a card, why it could not be read (`unreachable`)."""
    if card is None:
        if unreachable:
            why = sanitize(unreachable, limit=300)
            return (
                f"Send a task to the partner agent '{name}'. It is unreachable at the moment "
                f"(when last tried: {why}); a call tries again."
            )
        return f"Send a task to the partner agent '{name}' (its card has not been read)."
    head = f"Send a task to the partner agent '{name}'"
    summary = sanitize(card.description, limit=400)
    lines = [f"{head}: {summary}" if summary else head + "."]
    skills = card.skills[:_MAX_SKILLS]
    if skills:
        lines.append("Skills:")
        for skill in skills:
            label = sanitize(skill.id, limit=64)
            what = sanitize(skill.description, limit=_MAX_SKILL_LINE)
            lines.append(f"- {label}: {what}" if what else f"- {label}")
        if len(card.skills) > _MAX_SKILLS:
            lines.append(f"- and {len(card.skills) - _MAX_SKILLS} more")
    text = "\n".join(lines)
    if len(text) <= MAX_DESCRIPTION:
        return text
    return text[: MAX_DESCRIPTION - 1].rstrip() + "…"
