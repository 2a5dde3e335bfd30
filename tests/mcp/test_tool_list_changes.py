"""The MCP tool list follows the partners: `Partners` tells its subscribers when a partner
comes or goes (an agents.yaml reload, a partner added or removed at run time) and when a card
changes what a tool says, and the MCP catalog lists what is there now."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from hub.client import UrlGuard
from hub.mcp import Catalog
from hub.partners import FederationPolicy, Partners, RuntimePartner
from hub.protocol.trace import EVERY, CallScope, use_scope
from hub.registry import AgentEntry, load_registry
from hub.skills.toolbox import Toolbox
from tests.tools.agents import registry_file

pytestmark = pytest.mark.anyio


def _tool_names(catalog: Catalog) -> list[str]:
    """The tools a caller that may reach every partner is listed."""
    with use_scope(CallScope.new(agents=EVERY)):
        return [d.name for d in catalog.definitions()]


def _loopback_policy() -> FederationPolicy:
    guard = UrlGuard(
        allow_cidrs=(ipaddress.ip_network("127.0.0.0/8"),), purpose="partner", setting="federation"
    )
    return FederationPolicy(guard=guard)


async def test_reloads_runtime_partners_and_first_cards_are_announced(
    echoer: str, tmp_path: Path
) -> None:
    path = tmp_path / "agents.yaml"
    async with Partners(
        registry_file(path, {"filed": echoer}), federation=_loopback_policy()
    ) as partners:
        changes: list[tuple[str, ...]] = []
        unsubscribe = partners.subscribe(lambda: changes.append(tuple(partners)))
        catalog = Catalog(Toolbox(partners), ["delegate"])

        await partners.card("filed")  # the first card: the tool's description changes
        await partners.card("filed")  # the same card again: nothing to announce
        registry_file(path, {"filed": echoer, "second": echoer})
        partners.update(load_registry(path))
        await partners.add(AgentEntry(name="spawned", url=echoer), origin="spawn_agent by ops")
        assert _tool_names(catalog)[:3] == [
            "a2a_filed",
            "a2a_second",
            "a2a_spawned",
        ]
        partners.remove("spawned")
        unsubscribe()
        registry_file(path, {"filed": echoer})
        partners.update(load_registry(path))

    assert changes == [
        ("filed",),
        ("filed", "second"),
        ("filed", "second", "spawned"),
        ("filed", "second"),
    ]


async def test_partners_another_replica_added_or_forgot_are_announced_once(
    echoer: str, tmp_path: Path
) -> None:
    async with Partners(
        registry_file(tmp_path / "agents.yaml", {"filed": echoer}), federation=_loopback_policy()
    ) as partners:
        changes: list[tuple[str, ...]] = []
        partners.subscribe(lambda: changes.append(tuple(partners)))
        catalog = Catalog(Toolbox(partners), ["delegate"])
        elsewhere = RuntimePartner(
            entry=AgentEntry(name="elsewhere", url=echoer), origin="spawn_agent by ops"
        )

        partners.adopt([elsewhere])
        listed = _tool_names(catalog)[:2]
        partners.adopt([elsewhere])  # the same set again: nothing to announce
        partners.adopt([])

    assert listed == ["a2a_filed", "a2a_elsewhere"]
    assert changes == [("filed", "elsewhere"), ("filed",)]
