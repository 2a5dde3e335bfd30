"""The Registry: lookups and their errors, disabled entries, fingerprints and diffs."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from pydantic import SecretStr

from hub.errors import UnknownAgentError
from hub.registry import AgentEntry, AuthSettings, Registry, RegistryDiff


def agent(name: str, **fields: object) -> AgentEntry:
    return AgentEntry.model_validate({"name": name, "url": f"https://{name}.example.com", **fields})


def sample() -> Registry:
    return Registry(
        [
            agent("research", tags=["research", "summarise"]),
            agent("translate", tags=["language"]),
            agent("old", enabled=False),
            agent("summary", tags=["summarise"]),
        ],
        source=Path("/etc/hub/agents.yaml"),
    )


def test_iteration_length_and_membership_see_enabled_entries_in_file_order() -> None:
    registry = sample()
    assert [entry.name for entry in registry] == ["research", "translate", "summary"]
    assert len(registry) == 3
    assert "research" in registry
    assert "old" not in registry
    assert registry.names() == ("research", "translate", "summary")
    assert [entry.name for entry in registry.all()] == ["research", "translate", "old", "summary"]
    assert registry.source == Path("/etc/hub/agents.yaml")


def test_lookup_by_name_and_by_tag() -> None:
    registry = sample()
    assert registry["translate"].name == "translate"
    assert registry.get("translate") is registry["translate"]
    assert registry.get("nope") is None
    assert registry.get("old") is None
    assert [entry.name for entry in registry.with_tag("summarise")] == ["research", "summary"]
    assert registry.with_tag("nothing") == ()


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownAgentError) as caught:
        sample()["billing"]
    assert str(caught.value) == (
        "agent 'billing' is not in agents.yaml (known: research, translate, summary)"
    )
    assert isinstance(caught.value, KeyError)


def test_a_close_name_gets_a_suggestion() -> None:
    with pytest.raises(UnknownAgentError) as caught:
        sample()["reserch"]
    assert str(caught.value).endswith("; did you mean 'research'?")


def test_a_disabled_name_says_it_is_disabled() -> None:
    with pytest.raises(UnknownAgentError) as caught:
        sample()["old"]
    assert str(caught.value) == "agent 'old' is disabled in agents.yaml"


def test_an_empty_registry_says_it_has_no_agents() -> None:
    with pytest.raises(UnknownAgentError) as caught:
        Registry()["research"]
    assert (
        str(caught.value) == "agent 'research' is not in agents.yaml (it lists no enabled agents)"
    )


def test_the_registry_cannot_be_changed() -> None:
    registry = sample()
    assert not hasattr(registry, "__dict__")
    assert isinstance(registry.all(), tuple)
    with pytest.raises(AttributeError):
        registry.extra = 1  # type: ignore[attr-defined]


def test_two_entries_with_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="research"):
        Registry([agent("research"), agent("research")])


def test_str_names_the_agents_and_never_a_secret() -> None:
    registry = Registry(
        [agent("research", auth=AuthSettings(bearer=SecretStr("tok-9f8e7d"))), agent("x")],
        source="agents.yaml",
    )
    assert str(registry) == "Registry(agents.yaml: research, x)"
    assert "tok-9f8e7d" not in repr(registry)


def test_the_fingerprint_depends_on_content_only() -> None:
    assert sample().fingerprint == sample().fingerprint
    moved = Registry(sample().all(), source=Path("elsewhere.yaml"))
    assert moved.fingerprint == sample().fingerprint
    reweighted = Registry([agent("research", weight=2.0)])
    assert reweighted.fingerprint != Registry([agent("research")]).fingerprint


def test_a_rotated_secret_changes_the_fingerprint_without_showing_it() -> None:
    before = Registry([agent("a", auth=AuthSettings(bearer=SecretStr("one")))])
    after = Registry([agent("a", auth=AuthSettings(bearer=SecretStr("two")))])
    assert before.fingerprint != after.fingerprint
    assert before.diff(after) == RegistryDiff(changed=("a",))


def test_diff_names_added_removed_and_changed_partners() -> None:
    old = Registry([agent("a"), agent("b"), agent("c"), agent("d", enabled=False)])
    new = Registry([agent("b", weight=3.0), agent("c"), agent("d"), agent("e")])
    diff = old.diff(new)
    assert diff == RegistryDiff(added=("d", "e"), removed=("a",), changed=("b",))
    assert diff
    assert str(diff) == "added d, e; changed b; removed a"
    assert not old.diff(old)
    assert str(old.diff(old)) == "no changes"


def test_the_public_names_are_sorted_and_resolve() -> None:
    module = importlib.import_module("hub.registry")
    exported = list(module.__all__)
    assert exported == sorted(exported, key=lambda item: (not item.isupper(), item))
    for name in exported:
        assert hasattr(module, name)


def test_the_registry_imports_only_config_errors_protocol_and_trust_from_the_hub() -> None:
    allowed = ("hub.config", "hub.errors", "hub.protocol", "hub.registry", "hub.trust")
    package = Path(importlib.import_module("hub.registry").__file__ or "").parent
    for source in package.glob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith(("httpx", "litestar")), f"{source.name}: {name}"
                if name == "hub" or name.startswith("hub."):
                    assert name.startswith(allowed), f"{source.name}: {name}"
