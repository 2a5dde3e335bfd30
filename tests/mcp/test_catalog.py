"""Which MCP tools a call scope sees, and the hub request each tool call becomes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.errors import InvalidParamsError
from hub.mcp import Catalog, UnknownToolError
from hub.partners import Partners
from hub.protocol import AgentSkill
from hub.protocol.trace import EVERY, Allowed, CallScope, use_scope
from hub.skills.toolbox import Toolbox
from tests.tools.agents import registry_file

SKILLS = ("echo", "delegate", "swarm", "federation")


def catalog(tmp_path: Path) -> Catalog:
    registry = registry_file(
        tmp_path / "agents.yaml", {"research": "http://r", "billing": "http://b"}
    )
    cards = {
        sid: AgentSkill(id=sid, name=sid, description=f"{sid} skill", tags=[]) for sid in SKILLS
    }
    toolbox = Toolbox(Partners(registry), cards, manager=lambda: None)  # type: ignore[arg-type,return-value]
    return Catalog(toolbox, SKILLS)


def scope(**limits: frozenset[str] | Allowed) -> CallScope:
    return CallScope(trace_id="1" * 32, parent_id="2" * 16, **limits)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def operator() -> Iterator[None]:
    """Each test runs as a caller that may reach every partner, as the MCP door's callers do
    without a partner scope (a test narrows it where it checks scopes)."""
    with use_scope(scope(agents=EVERY)):
        yield


def names(found: Catalog) -> list[str]:
    return [definition.name for definition in found.definitions()]


def test_every_partner_and_skill_is_a_tool_but_the_routing_skills_are_delegate_and_swarm(
    tmp_path: Path,
) -> None:
    assert names(catalog(tmp_path)) == [
        "a2a_research",
        "a2a_billing",
        "skill_echo",
        "delegate",
        "swarm",
    ]


def test_a_scoped_caller_sees_only_its_partners_and_skills(tmp_path: Path) -> None:
    found = catalog(tmp_path)
    with use_scope(scope(agents=Allowed.of({"research"}), skills=frozenset({"delegate"}))):
        assert names(found) == ["a2a_research", "delegate"]
        with pytest.raises(UnknownToolError) as unknown:
            found.resolve("a2a_billing", {"message": "hi"})
    assert "billing" not in str(unknown.value).split("(known:")[1]
    with use_scope(scope(skills=frozenset({"echo"}))):
        assert names(found) == ["skill_echo"]  # partner tools run on the delegate skill


def test_a_partner_tool_call_is_a_delegate_task_naming_the_partner(tmp_path: Path) -> None:
    call = catalog(tmp_path).resolve("a2a_research", {"message": "hi", "context_id": "c-9"})
    assert call.agent == "research"
    assert call.request.metadata == {"skill": "delegate", "agent": "research"}
    assert call.request.message.context_id == "c-9"
    assert call.request.message.text() == "hi"


def test_the_swarm_tools_options_become_the_swarm_skills_metadata(tmp_path: Path) -> None:
    call = catalog(tmp_path).resolve(
        "swarm",
        {"message": "vote", "strategy": "vote", "tags": ["t"], "quorum": 2, "branch_deadline": 5},
    )
    assert call.request.metadata == {
        "skill": "swarm",
        "strategy": "vote",
        "tags": ["t"],
        "quorum": 2,
        "branchDeadline": 5.0,
    }


def test_arguments_outside_the_schema_are_refused_naming_each(tmp_path: Path) -> None:
    with pytest.raises(InvalidParamsError) as refused:
        catalog(tmp_path).resolve("swarm", {"message": "x", "strategy": "fastest", "colour": 1})
    fields = {field for field, _ in refused.value.violations}
    assert fields == {"strategy", "colour"}
