"""The router: which partners (and local skills) should take a request, and why.

Deterministic, no model involved. Every candidate gets a score from what the request says
and what the candidate's card says, each step recorded as a reason:

- an explicit agent name keeps that partner only (+100);
- a skill id the candidate's card lists (+50); a request naming a skill no card lists
  matches nothing;
- each requested tag found in the agents.yaml entry or the card's skills (+10); a request
  with tags keeps only candidates that have at least one;
- words of the request found in the card's name, description, skill names, descriptions and
  examples (+2 each, at most +20);
- then the score is multiplied by the entry's weight, and lowered for a half-open breaker
  (-20), a recent error rate (up to -30) and a slow recent latency (up to -10); a partner
  whose breaker is open is left out.

`Router` is the interface (`rank(request)`), so a model-based router can take its place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from hub.client import BreakerState
from hub.errors import ClientError
from hub.partners import Partners, PartnerView, StatsBook
from hub.protocol import AgentCard, AgentSkill

__all__ = ["Candidate", "RouteRequest", "Router", "ScoringRouter", "choose_partners"]

_WORD = re.compile(r"[a-z0-9]{3,}")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "into",
        "what",
        "when",
        "your",
        "you",
        "are",
        "was",
        "were",
        "have",
        "has",
        "please",
        "can",
        "could",
        "would",
        "should",
        "about",
        "them",
        "they",
        "then",
        "than",
        "there",
        "their",
    ]
)
_TEXT_POINTS, _TEXT_CAP = 2.0, 20.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteRequest:
    """What the router matches on."""

    text: str = ""
    agent: str | None = None
    skill: str | None = None
    tags: tuple[str, ...] = ()
    include_skills: bool = True
    """Also rank the hub's own local skills."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One partner or local skill, with its score and the reasons for it."""

    kind: Literal["partner", "skill"]
    name: str
    score: float
    reasons: tuple[str, ...] = field(default=())
    skill: str | None = None
    """The skill of the candidate that matched the request's skill, if any."""


class Router(Protocol):
    """Ranks candidates for a request, best first."""

    async def rank(self, request: RouteRequest) -> list[Candidate]: ...


def words(text: str) -> set[str]:
    """The lowercase words of `text` that carry meaning (3+ letters, not a stop word)."""
    return {word for word in _WORD.findall(text.lower()) if word not in _STOP}


class ScoringRouter:
    """The deterministic router described in the module docstring.

    Args:
        partners: the partner agents (their cards are read as needed).
        skills: the hub's own skills by id (their card entries).
        stats: recent latency and error rate per partner (none known when not given).
        exclude_skills: local skills never offered (the routing skills themselves).
    """

    def __init__(
        self,
        partners: Partners | PartnerView,
        skills: Mapping[str, AgentSkill] | None = None,
        stats: StatsBook | None = None,
        exclude_skills: Sequence[str] = (),
    ) -> None:
        self.partners = partners
        self.skills = {k: v for k, v in (skills or {}).items() if k not in exclude_skills}
        self.stats = stats if stats is not None else StatsBook()

    async def rank(self, request: RouteRequest) -> list[Candidate]:
        """Candidates that may take the request, best first (ties by name)."""
        wanted = words(request.text)
        ranked: list[Candidate] = []
        for name in list(self.partners):
            if request.agent is not None and name != request.agent:
                continue
            candidate = await self._partner(name, request, wanted)
            if candidate is not None:
                ranked.append(candidate)
        if request.include_skills and request.agent is None:
            for skill in self.skills.values():
                candidate = _score_skills("skill", skill.id, [skill], (), request, wanted, base=[])
                if candidate is not None:
                    ranked.append(candidate)
        ranked.sort(key=lambda c: (-c.score, c.kind != "partner", c.name))
        return ranked

    async def _partner(
        self, name: str, request: RouteRequest, wanted: set[str]
    ) -> Candidate | None:
        entry = self.partners.entry(name)
        snapshot = self.partners.breaker(name).snapshot()
        if snapshot.state is BreakerState.OPEN:
            return None
        card: AgentCard | None
        base: list[tuple[str, float]] = []
        try:
            card = await self.partners.card(name)
        except ClientError:
            card = None
            base.append(("card unreadable", -40.0))
        if request.agent is not None:
            base.append((f"named '{name}'", 100.0))
        skills = list(card.skills) if card else []
        candidate = _score_skills(
            "partner", name, skills, entry.tags, request, wanted, base=base, card=card
        )
        if candidate is None:
            return None
        score, reasons = candidate.score, list(candidate.reasons)
        if entry.weight != 1.0:
            score *= entry.weight
            reasons.append(f"weight x{entry.weight:g}")
        if snapshot.state is BreakerState.HALF_OPEN:
            score -= 20
            reasons.append("breaker half-open -20")
        stats = self.stats.get(name)
        if stats is not None and stats.calls:
            if stats.error_rate > 0.01:
                penalty = round(30 * stats.error_rate, 1)
                score -= penalty
                reasons.append(f"recent errors {stats.error_rate:.0%} -{penalty:g}")
            if stats.latency is not None and stats.latency > 1.0:
                penalty = round(min(10.0, stats.latency), 1)
                score -= penalty
                reasons.append(f"recent latency {stats.latency:.1f}s -{penalty:g}")
        return Candidate(
            kind="partner", name=name, score=score, reasons=tuple(reasons), skill=candidate.skill
        )


def _score_skills(
    kind: Literal["partner", "skill"],
    name: str,
    skills: Sequence[AgentSkill],
    entry_tags: Sequence[str],
    request: RouteRequest,
    wanted: set[str],
    *,
    base: list[tuple[str, float]],
    card: AgentCard | None = None,
) -> Candidate | None:
    reasons = [f"{why} {points:+g}" for why, points in base]
    score = sum(points for _, points in base)
    matched_skill = None
    if request.skill is not None:
        matched_skill = next((s.id for s in skills if s.id == request.skill), None)
        if matched_skill is None:
            return None
        score += 50
        reasons.append(f"skill '{matched_skill}' +50")
    if request.tags:
        have = {tag.lower() for tag in entry_tags} | {
            tag.lower() for skill in skills for tag in skill.tags
        }
        hits = [tag for tag in request.tags if tag.lower() in have]
        if not hits:
            return None
        score += 10 * len(hits)
        reasons.append(f"tags {', '.join(hits)} +{10 * len(hits)}")
    if wanted:
        text = " ".join(
            [
                name,
                card.name if card else "",
                card.description if card else "",
                *(skill.name for skill in skills),
                *(skill.description for skill in skills),
                *(example for skill in skills for example in skill.examples or []),
            ]
        )
        hits_text = sorted(wanted & words(text))
        if hits_text:
            points = min(_TEXT_CAP, _TEXT_POINTS * len(hits_text))
            score += points
            reasons.append(f"words {', '.join(hits_text[:5])} +{points:g}")
    return Candidate(kind=kind, name=name, score=score, reasons=tuple(reasons), skill=matched_skill)


async def choose_partners(
    partners: Partners | PartnerView,
    *,
    text: str = "",
    agents: Sequence[str] | None = None,
    tags: Sequence[str] = (),
    skill: str | None = None,
    limit: int | None = None,
    stats: StatsBook | None = None,
) -> list[str]:
    """The partners a swarm should use: `agents` as given (each must be known), or the router's
    ranking by tags, skill and text (best first, at most `limit`), weighing `stats`.

    Raises:
        UnknownAgentError: a named agent is not in agents.yaml.
    """
    if agents:
        for name in agents:
            partners.entry(name)
        return list(agents)[:limit]
    request = RouteRequest(text=text, tags=tuple(tags), skill=skill, include_skills=False)
    ranked = await ScoringRouter(partners, stats=stats).rank(request)
    return [candidate.name for candidate in ranked][:limit]
