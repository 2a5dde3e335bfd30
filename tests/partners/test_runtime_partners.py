"""Partners added while the hub runs (`Partners.add`), over real sockets: served like the
file's, checked by the SSRF guard before and on every request, kept across agents.yaml
reloads unless the file comes to use their name, and never given a name already in use."""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from hub.client import CARD_PATH, UrlGuard
from hub.client.guard import Resolver
from hub.errors import (
    AgentCardError,
    AgentNameTakenError,
    AgentUnreachableError,
    InvalidParamsError,
    LimitExceededError,
    UnknownAgentError,
    UnsafeUrlError,
)
from hub.partners import FederationPolicy, Partners, RuntimePartner
from hub.registry import AgentEntry, Registry, load_registry
from hub.skills.toolbox import Toolbox
from hub.swarm import RouteRequest, ScoringRouter
from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc
from tests.client.scripted import ScriptedAgent, card_document, respond
from tests.tools.agents import registry_file

pytestmark = pytest.mark.anyio

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


def _policy(
    *, max_agents: int = 32, resolver: Resolver | None = None, allow: bool = True
) -> FederationPolicy:
    guard = UrlGuard(
        allow_cidrs=LOOPBACK if allow else (),
        resolver=resolver,
        purpose="partner",
        setting="federation",
    )
    return FederationPolicy(guard=guard, max_agents=max_agents)


def _entry(name: str, url: str, **extra: object) -> AgentEntry:
    return AgentEntry.model_validate({"name": name, "url": url, **extra})


async def test_a_partner_added_at_run_time_is_served_like_the_files_and_records_its_origin(
    echoer: str, tmp_path: Path
) -> None:
    registry = registry_file(tmp_path / "agents.yaml", {"filed": echoer})
    async with Partners(registry, federation=_policy()) as partners:
        card = await partners.add(
            _entry("newbie", echoer, tags=["fresh"]), origin="spawn_agent by ops", description="d"
        )
        with anyio.fail_after(10):
            result = await Toolbox(partners)["a2a_newbie"].call(message="hello newbie")

        assert card.name == "sdk-jsonrpc-1.0"
        assert list(partners) == ["filed", "newbie"]
        assert partners.names() == ("filed", "newbie")
        assert partners.entry("newbie") == _entry("newbie", echoer, tags=["fresh"])
        assert partners.origin("newbie") == "spawn_agent by ops"
        assert partners.origin("filed") is None
        assert partners.runtime_partners() == (
            RuntimePartner(
                entry=_entry("newbie", echoer, tags=["fresh"]),
                origin="spawn_agent by ops",
                description="d",
            ),
        )
        assert partners.registry.names() == ("filed",)
        assert list(Toolbox(partners)) == ["a2a_filed", "a2a_newbie"]
        ranked = await ScoringRouter(partners).rank(RouteRequest(tags=("fresh",)))
        assert [(c.kind, c.name) for c in ranked] == [("partner", "newbie")]
        assert (result.state, result.text) == ("completed", "hello newbie")


async def test_a_name_in_use_is_refused_lookalikes_and_disabled_entries_included(
    echoer: str, tmp_path: Path
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        f"version: 1\nagents:\n  - name: my-tool\n    url: {echoer}\n"
        f"  - name: dormant\n    url: {echoer}\n    enabled: false\n"
    )
    async with Partners(load_registry(path), federation=_policy()) as partners:
        await partners.add(_entry("run-ner", echoer), origin="spawn_agent by ops")
        refused = {}
        for name in ("my-tool", "my_tool", "dormant", "run-ner", "run_ner"):
            with pytest.raises(AgentNameTakenError) as caught:
                await partners.add(_entry(name, echoer), origin="spawn_agent by ops")
            refused[name] = (caught.value.code, caught.value.reason, caught.value.violations)

        assert list(partners) == ["my-tool", "run-ner"]
    taken = (-32602, "AGENT_NAME_TAKEN")
    assert refused == {
        "my-tool": (*taken, [("name", "taken by 'my-tool'")]),
        "my_tool": (*taken, [("name", "taken by 'my-tool'")]),
        "dormant": (*taken, [("name", "taken by 'dormant'")]),
        "run-ner": (*taken, [("name", "taken by 'run-ner'")]),
        "run_ner": (*taken, [("name", "taken by 'run-ner'")]),
    }


@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("http://169.254.169.254/latest", True),
        ("http://10.1.2.3:8080", True),
        ("http://[::ffff:10.0.0.1]/", True),
        ("http://127.0.0.1:9", False),
        ("http://[::1]:9/card.json", False),
    ],
)
async def test_a_card_url_the_guard_refuses_is_never_fetched(url: str, allow: bool) -> None:
    async with Partners(Registry(), federation=_policy(allow=allow)) as partners:
        with pytest.raises(UnsafeUrlError) as caught:
            await partners.add(_entry("inside", url), origin="o")

        assert list(partners) == []
    assert (caught.value.code, caught.value.reason) == (-32602, "UNSAFE_URL")
    assert [field for field, _ in caught.value.violations] == ["url"]


async def test_a_partner_with_an_inline_card_is_refused(echoer: str) -> None:
    card = card_document(echoer + "/")
    async with Partners(Registry(), federation=_policy()) as partners:
        with pytest.raises(InvalidParamsError) as caught:
            await partners.add(_entry("inline", echoer, card=card), origin="o")

    assert (caught.value.reason, caught.value.violations[0][0]) == ("INVALID_PARAMS", "url")


async def test_an_unreachable_card_is_refused_naming_the_problem(refusing_port: int) -> None:
    async with Partners(Registry(), federation=_policy()) as partners:
        with pytest.raises(AgentCardError) as caught:
            await partners.add(_entry("ghost", f"http://127.0.0.1:{refusing_port}"), origin="o")

        assert list(partners) == []
    assert (caught.value.code, caught.value.reason) == (-32602, "AGENT_CARD_UNUSABLE")
    assert "ghost" in caught.value.message


async def test_a_card_whose_interface_points_inside_is_refused() -> None:
    agent = ScriptedAgent()
    agent.routes[f"GET {CARD_PATH}"] = respond(
        200, json.dumps(card_document("http://10.9.8.7/rpc")).encode()
    )
    async with (
        serve_on_loopback(agent) as url,
        Partners(Registry(), federation=_policy()) as partners,
    ):
        with pytest.raises(UnsafeUrlError) as caught:
            await partners.add(_entry("sneaky", url), origin="o")

        assert list(partners) == []
    assert caught.value.reason == "UNSAFE_URL"
    assert caught.value.violations[0][0] == "card.supportedInterfaces"


async def test_every_request_passes_the_guard_so_a_name_that_moves_inside_is_refused(
    tmp_path: Path,
) -> None:
    answers: dict[str, Sequence[str]] = {"partner.test": ["127.0.0.1"]}

    async def resolve(host: str, port: int) -> Sequence[str]:
        return answers[host]

    async with (
        serve_on_loopback(lambda url: sdk_jsonrpc(url.replace("127.0.0.1", "partner.test"))) as url,
        Partners(Registry(), federation=_policy(resolver=resolve)) as partners,
    ):
        named = url.replace("127.0.0.1", "partner.test")
        await partners.add(_entry("mover", named), origin="o")
        with anyio.fail_after(10):
            first = await partners["mover"].call(message="one")
        answers["partner.test"] = ["10.0.0.7"]  # DNS rebinding: the name now points inside
        with anyio.fail_after(10), pytest.raises(AgentUnreachableError) as caught:
            await partners["mover"].call(message="two")

    assert (first.state, first.text) == ("completed", "one")
    assert "private address" in str(caught.value)


async def test_an_agents_yaml_reload_keeps_runtime_partners_unless_it_takes_their_name(
    echoer: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "agents.yaml"
    registry = registry_file(path, {"filed": echoer})
    async with Partners(registry, federation=_policy()) as partners:
        await partners.add(_entry("kept", echoer), origin="spawn_agent by ops")
        await partners.add(_entry("taken_soon", echoer), origin="learned from http://peer")
        async with partners.watching(interval=60) as watcher:
            assert watcher is not None
            registry_file(path, {"filed": echoer, "other": echoer})
            await watcher.reload()
            after_first = list(partners)
            with caplog.at_level(logging.WARNING, logger="hub.partners"):
                registry_file(path, {"filed": echoer, "taken-soon": echoer})
                await watcher.reload()
            after_second = list(partners)
            with anyio.fail_after(10):
                kept = await partners["kept"].call(message="still here")

    assert after_first == ["filed", "other", "kept", "taken_soon"]
    assert after_second == ["filed", "taken-soon", "kept"]
    assert partners.origin("taken-soon") is None
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "agents.yaml now lists 'taken-soon': the partner 'taken_soon' added at run time "
        "(learned from http://peer) is dropped"
    ]
    assert (kept.state, kept.text) == ("completed", "still here")


async def test_remove_forgets_a_runtime_partner_but_not_one_of_agents_yaml(
    echoer: str, tmp_path: Path
) -> None:
    registry = registry_file(tmp_path / "agents.yaml", {"filed": echoer})
    async with Partners(registry, federation=_policy()) as partners:
        await partners.add(_entry("brief", echoer), origin="o")
        removed = partners.remove("brief")
        with pytest.raises(UnknownAgentError):
            partners.remove("filed")
        with pytest.raises(UnknownAgentError) as lookup:
            partners["brief"]

        assert removed.entry.name == "brief"
        assert list(partners) == ["filed"]
    assert "agent 'brief' is not in agents.yaml (known: filed)" in str(lookup.value)


async def test_an_unknown_name_lists_the_runtime_partners_too(echoer: str) -> None:
    async with Partners(Registry(), federation=_policy()) as partners:
        await partners.add(_entry("newbie", echoer), origin="o")
        with pytest.raises(UnknownAgentError) as caught:
            partners["newbe"]

    assert str(caught.value) == (
        "agent 'newbe' is neither in agents.yaml nor added at run time (known: newbie); "
        "did you mean 'newbie'?"
    )


async def test_at_most_max_agents_are_added(echoer: str) -> None:
    async with Partners(Registry(), federation=_policy(max_agents=1)) as partners:
        await partners.add(_entry("one", echoer), origin="o")
        with pytest.raises(LimitExceededError) as caught:
            await partners.add(_entry("two", echoer), origin="o")

        assert list(partners) == ["one"]
    assert (caught.value.code, caught.value.reason) == (-32602, "LIMIT_EXCEEDED")


async def test_the_default_policy_refuses_loopback_partners(echoer: str) -> None:
    async with Partners(Registry()) as partners:
        with pytest.raises(UnsafeUrlError):
            await partners.add(_entry("local", echoer), origin="o")
