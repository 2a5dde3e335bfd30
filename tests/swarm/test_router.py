"""The router ranks partners (inline cards, so no network) and local skills, with reasons."""

from __future__ import annotations

from typing import Any

import pytest

from hub.client import BreakerConfig
from hub.partners import Partners, StatsBook
from hub.protocol import AgentSkill
from hub.protocol.v03.translate import card_to_v1
from hub.registry import AgentEntry, Registry
from hub.swarm import RouteRequest, ScoringRouter

pytestmark = pytest.mark.anyio


def _card(name: str, description: str, skills: list[tuple[str, str, list[str]]]) -> Any:
    return card_to_v1(
        {
            "name": name,
            "description": description,
            "version": "1",
            "supportedInterfaces": [
                {
                    "url": "http://127.0.0.1:9/",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ],
            "capabilities": {},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [
                {"id": sid, "name": sid, "description": text, "tags": tags}
                for sid, text, tags in skills
            ],
        }
    )


def _partners(**weights: float) -> Partners:
    entries = [
        AgentEntry(
            name="translator",
            card=_card(
                "Translator",
                "Translates text between languages",
                [("translate", "translate text into French or German", ["translate"])],
            ),
            weight=weights.get("translator", 1.0),
        ),
        AgentEntry(
            name="research",
            card=_card(
                "Research",
                "Finds and summarises papers",
                [("summarise", "summarise a paper", ["research", "summarise"])],
            ),
            tags=("research",),
            weight=weights.get("research", 1.0),
        ),
    ]
    return Partners(Registry(entries), breaker=BreakerConfig(failure_threshold=1))


async def test_words_of_the_request_rank_the_partner_whose_card_says_them() -> None:
    router = ScoringRouter(_partners())

    ranked = await router.rank(RouteRequest(text="Please summarise this paper"))

    assert ranked[0].name == "research"
    assert any(reason.startswith("words paper, summarise") for reason in ranked[0].reasons)


async def test_tags_keep_only_partners_that_have_one() -> None:
    ranked = await ScoringRouter(_partners()).rank(RouteRequest(text="x", tags=("translate",)))

    assert [c.name for c in ranked] == ["translator"]
    assert "tags translate +10" in ranked[0].reasons


async def test_a_skill_id_no_card_lists_matches_nothing() -> None:
    ranked = await ScoringRouter(_partners()).rank(RouteRequest(skill="paint"))

    assert ranked == []


async def test_an_explicit_agent_keeps_that_partner_only() -> None:
    ranked = await ScoringRouter(_partners()).rank(
        RouteRequest(text="summarise a paper", agent="translator")
    )

    assert [c.name for c in ranked] == ["translator"]
    assert ranked[0].score >= 100


async def test_weight_and_recent_errors_reorder_equal_partners() -> None:
    partners = _partners(research=2.0)
    stats = StatsBook()
    request = RouteRequest(skill="summarise")
    heavy = await ScoringRouter(partners, stats=stats).rank(request)
    stats.record("research", ok=False, seconds=0.1)
    hurt = await ScoringRouter(partners, stats=stats).rank(request)

    assert heavy[0].score == 100  # (skill +50) x2
    assert hurt[0].score < heavy[0].score
    assert any(reason.startswith("recent errors") for reason in hurt[0].reasons)


async def test_an_open_breaker_leaves_the_partner_out() -> None:
    partners = _partners()
    partners.breaker("research").record_failure()

    ranked = await ScoringRouter(partners).rank(RouteRequest(text="summarise a paper"))

    assert "research" not in [c.name for c in ranked]


async def test_local_skills_are_candidates_unless_excluded() -> None:
    skills = {
        "echo": AgentSkill(id="echo", name="Echo", description="echoes text", tags=["echo"]),
        "delegate": AgentSkill(id="delegate", name="d", description="echoes too", tags=[]),
    }
    router = ScoringRouter(_partners(), skills, exclude_skills=["delegate"])

    ranked = await router.rank(RouteRequest(text="echoes", tags=("echo",)))

    assert [(c.kind, c.name) for c in ranked] == [("skill", "echo")]
