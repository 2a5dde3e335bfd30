"""The exported names: sorted, complete, and every one importable."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "hub",
    "hub.errors",
    "hub.protocol",
    "hub.protocol.v03",
    "hub.store",
    "hub.tasks",
    "hub.push",
    "hub.skills",
    "hub.server",
    "hub.client",
    "hub.registry",
    "hub.tools",
    "hub.runtime",
    "hub.protocol.trace",
    "hub.config",
    "hub.testing",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_every_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=lambda item: (not item.isupper(), item))
    assert len(exported) == len(set(exported))
    for attribute in exported:
        assert hasattr(module, attribute), f"{name}.{attribute}"


def test_the_skill_author_api_is_at_the_top() -> None:
    import hub

    assert {"skill", "SkillContext", "SkillError", "load_settings"} <= set(hub.__all__)
