"""Delegation and federation end to end: three real `a2a-hub serve` processes that list each
other in their agents.yaml, and real a2a-sdk partner processes speaking A2A 1.0 and 0.3.

    hub A (hub-alpha)   partners: echo-10 (1.0), echo-03 (0.3), hub-b, hub-c
    hub B (hub-bravo)   partners: hub-a                        (so A -> B -> A is a loop)
    hub C (hub-charlie) partners: shout (1.0); server.max_hops: 2

Ports are only known once a process runs, so B's and C's agents.yaml are written after A has
started; the hubs follow their agents.yaml, and the fixture waits (bounded) until they have.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest

from . import rpc
from .partnerproc import (
    AgentEntry,
    Child,
    PartnerSpec,
    agents_for,
    hub_processes,
    partner_processes,
    write_agents,
    write_hub_config,
)

ECHO_10 = PartnerSpec(name="echo-10", behaviour="echo", tags=("echo", "v1"))
ECHO_03 = PartnerSpec(name="echo-03", behaviour="echo", protocol="0.3", tags=("echo", "v03"))
SHOUT = PartnerSpec(name="shout", behaviour="upper", suffix="!", tags=("loud",))
INVALID_REQUEST = -32600


@dataclass(frozen=True, slots=True)
class Federation:
    a: Child
    b: Child
    c: Child
    partners: dict[str, Child]


def _partner_names(hub: Child) -> list[str] | None:
    task = rpc.send(hub.url, "which partners?", {"swarmKind": "sync_state"})
    partners = task["artifacts"][0]["parts"][0]["data"]["partners"]
    return [partner["name"] for partner in partners] or None


@pytest.fixture(scope="module")
def hubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    root = tmp_path_factory.mktemp("federation")
    with partner_processes([ECHO_10, ECHO_03, SHOUT]) as partners:
        b_config = write_hub_config(root / "b", card_name="hub-bravo")
        c_config = write_hub_config(root / "c", card_name="hub-charlie", max_hops=2)
        with hub_processes([b_config, c_config]) as [b, c]:
            a_entries = [
                *agents_for(partners, [ECHO_10, ECHO_03]),
                AgentEntry(name="hub-b", url=b.url, tags=("hub",)),
                AgentEntry(name="hub-c", url=c.url, tags=("hub",)),
            ]
            a_config = write_hub_config(root / "a", card_name="hub-alpha", entries=a_entries)
            with hub_processes([a_config]) as [a]:
                write_agents(root / "b" / "agents.yaml", [AgentEntry(name="hub-a", url=a.url)])
                write_agents(root / "c" / "agents.yaml", agents_for(partners, [SHOUT]))
                for hub in (b, c):
                    rpc.wait_for(partial(_partner_names, hub), what=f"{hub.url} reload")
                yield Federation(a=a, b=b, c=c, partners=partners)


def delegate(hub: Child, text: str, **metadata: Any) -> dict[str, Any]:
    return rpc.send(hub.url, text, {"skill": "delegate", **metadata})


def only_task_about(url: str, text: str) -> dict[str, Any]:
    """The one task the agent at `url` holds for a message whose text is `text`, in full."""
    [listed] = [task for task in rpc.list_tasks(url) if rpc.history_text(task) == text]
    return rpc.get_task(url, listed["id"])


def unique(text: str) -> str:
    return f"{text} {uuid.uuid4().hex[:8]}"


# --- delegate to SDK partners of both protocol versions ----------------------------------------


def test_delegate_hands_the_message_to_an_sdk_partner_speaking_a2a_1_0(
    hubs: Federation,
) -> None:
    text = unique("hello 1.0")
    task = delegate(hubs.a, text, agent="echo-10")

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    partner_task = only_task_about(hubs.partners["echo-10"].url, text)
    assert rpc.state(partner_task) == "TASK_STATE_COMPLETED"
    [partner_artifact] = partner_task["artifacts"]
    assert task["artifacts"] == [
        {
            "artifactId": f"echo-10-{partner_artifact['artifactId']}",
            "name": "answer",
            "parts": [{"text": text}],
            "metadata": {"agent": "echo-10"},
        }
    ]


def test_delegate_hands_the_message_to_an_sdk_partner_speaking_a2a_0_3(
    hubs: Federation,
) -> None:
    text = unique("hello 0.3")
    task = delegate(hubs.a, text, agent="echo-03")

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    url = hubs.partners["echo-03"].url
    listed = only_task_about(url, text)
    # The partner's own 0.3 view of the task the hub started there.
    reply = rpc.post(url, "tasks/get", {"id": listed["id"]}, headers={"A2A-Version": "0.3"})
    partner_task = reply.json()["result"]
    assert partner_task["kind"] == "task"
    assert partner_task["status"]["state"] == "completed"
    [partner_artifact] = partner_task["artifacts"]
    assert partner_artifact["parts"] == [{"kind": "text", "text": text}]
    assert task["artifacts"] == [
        {
            "artifactId": f"echo-03-{partner_artifact['artifactId']}",
            "name": "answer",
            "parts": [{"text": text}],
            "metadata": {"agent": "echo-03"},
        }
    ]


def test_delegate_to_an_unknown_partner_fails_naming_the_known_ones(hubs: Federation) -> None:
    task = delegate(hubs.a, "hello", agent="echo-11")

    assert rpc.state(task) == "TASK_STATE_FAILED"
    assert "'echo-11'" in rpc.status_text(task)
    assert "(known: echo-10, echo-03, hub-b, hub-c)" in rpc.status_text(task)


# --- work across hubs --------------------------------------------------------------------------


def test_hub_a_delegates_to_a_skill_of_hub_b(hubs: Federation) -> None:
    text = unique("across")
    task = delegate(hubs.a, text, agent="hub-b", agentSkill="echo")

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    b_task = only_task_about(hubs.b.url, text)
    assert rpc.state(b_task) == "TASK_STATE_COMPLETED"
    [b_artifact] = b_task["artifacts"]
    assert b_artifact["parts"] == [{"text": text}]
    assert task["artifacts"] == [
        {
            "artifactId": f"hub-b-{b_artifact['artifactId']}",
            "name": "response",
            "parts": [{"text": text}],
            "metadata": {"agent": "hub-b"},
        }
    ]


def test_hub_a_reaches_a_partner_of_hub_c_through_c_own_delegate(hubs: Federation) -> None:
    text = unique("make it loud")
    task = delegate(hubs.a, text, agent="hub-c", agentSkill="delegate")

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    shout_task = only_task_about(hubs.partners["shout"].url, text)
    assert rpc.state(shout_task) == "TASK_STATE_COMPLETED"
    [shout_artifact] = shout_task["artifacts"]
    assert task["artifacts"] == [
        {
            "artifactId": f"hub-c-shout-{shout_artifact['artifactId']}",
            "name": "answer",
            "parts": [{"text": f"{text.upper()}!"}],
            "metadata": {"agent": "hub-c"},
        }
    ]
    # C ran it as its own delegate task, relaying its partner's answer.
    c_task = only_task_about(hubs.c.url, text)
    assert rpc.state(c_task) == "TASK_STATE_COMPLETED"
    assert c_task["artifacts"][0]["metadata"] == {"agent": "shout"}


def test_a_swarm_on_hub_a_spans_both_protocol_versions_and_the_other_hubs(
    hubs: Federation,
) -> None:
    text = unique("all together")
    task = rpc.send(
        hubs.a.url,
        text,
        {
            "skill": "swarm",
            "strategy": "broadcast",
            "agents": ["echo-10", "echo-03", "hub-b", "hub-c"],
            "agentSkill": "echo",
        },
    )

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    report = task["artifacts"][0]["parts"][1]["data"]
    assert report["answers"] == [text] * 4
    assert [(b["agent"], b["state"]) for b in report["branches"]] == [
        ("echo-10", "completed"),
        ("echo-03", "completed"),
        ("hub-b", "completed"),
        ("hub-c", "completed"),
    ]


def test_query_resources_and_sync_state_show_what_the_other_hubs_offer(
    hubs: Federation,
) -> None:
    delegate(hubs.a, unique("count me"), agent="hub-c", agentSkill="delegate")

    a_report = rpc.send(hubs.a.url, "what do you offer?", {"swarmKind": "query_resources"})
    c_report = rpc.send(hubs.c.url, "what do you offer?", {"swarmKind": "query_resources"})
    a_sync = rpc.send(hubs.a.url, "who do you know?", {"swarmKind": "sync_state"})
    b_sync = rpc.send(hubs.b.url, "who do you know?", {"swarmKind": "sync_state"})

    a_offer = a_report["artifacts"][0]["parts"][0]["data"]
    assert a_offer["skills"] == ["delegate", "echo", "federation", "swarm"]
    assert [(p["name"], p["tags"]) for p in a_offer["partners"]] == [
        ("echo-10", ["echo", "v1"]),
        ("echo-03", ["echo", "v03"]),
        ("hub-b", ["hub"]),
        ("hub-c", ["hub"]),
    ]
    [a_to_c] = [p for p in a_offer["partners"] if p["name"] == "hub-c"]
    assert (a_to_c["breaker"], a_to_c["errorRate"]) == ("closed", 0.0)
    assert a_to_c["calls"] >= 1
    assert a_to_c["latency"] > 0
    # C, asked directly, reports the partner A's work went on to.
    [c_to_shout] = c_report["artifacts"][0]["parts"][0]["data"]["partners"]
    assert (c_to_shout["name"], c_to_shout["tags"], c_to_shout["breaker"]) == (
        "shout",
        ["loud"],
        "closed",
    )
    assert c_to_shout["calls"] >= 1
    # A and B know each other by their real addresses.
    assert a_sync["artifacts"][0]["parts"][0]["data"]["partners"] == [
        {"name": "echo-10", "url": hubs.partners["echo-10"].url, "tags": ["echo", "v1"]},
        {"name": "echo-03", "url": hubs.partners["echo-03"].url, "tags": ["echo", "v03"]},
        {"name": "hub-b", "url": hubs.b.url, "tags": ["hub"]},
        {"name": "hub-c", "url": hubs.c.url, "tags": ["hub"]},
    ]
    assert b_sync["artifacts"][0]["parts"][0]["data"]["partners"] == [
        {"name": "hub-a", "url": hubs.a.url, "tags": []}
    ]


# --- loops and the hop limit -------------------------------------------------------------------


@pytest.mark.parametrize(
    "metadata",
    [
        {"swarmKind": "forward_message", "agent": "hub-b", "agentSkill": "delegate"},
        {"skill": "delegate", "agent": "hub-b", "agentSkill": "delegate"},
    ],
    ids=["forward_message", "delegate"],
)
def test_work_that_would_go_from_a_to_b_and_back_to_a_is_refused_as_a_loop(
    hubs: Federation, metadata: dict[str, Any]
) -> None:
    text = unique("round and round")
    task = rpc.send(hubs.a.url, text, metadata)

    # A refuses B's request (B's only partner is A); B's task fails, and so A's.
    refusal = (
        f"forwarding loop: this hub ({hubs.a.url}) is already on the request's trail "
        f"({hubs.a.url} -> {hubs.b.url}); check the agents.yaml files of these hubs "
        f"(code {INVALID_REQUEST})"
    )
    b_task = only_task_about(hubs.b.url, text)
    assert rpc.state(b_task) == "TASK_STATE_FAILED"
    assert rpc.status_text(b_task) == f"agent 'hub-a': SendStreamingMessage failed: {refusal}"
    assert rpc.state(task) == "TASK_STATE_FAILED"
    assert rpc.status_text(task) == (
        f"partner 'hub-b' ended the task failed: "
        f"agent 'hub-a': SendStreamingMessage failed: {refusal}"
    )
    # The looped request was refused before it became a task: A holds only the caller's.
    assert [t["id"] for t in rpc.list_tasks(hubs.a.url) if rpc.history_text(t) == text] == [
        task["id"]
    ]


def test_a_request_whose_trail_already_holds_the_hub_is_refused_as_invalid(
    hubs: Federation,
) -> None:
    trail = f"{hubs.b.url}, {hubs.a.url}"
    reply = rpc.post(
        hubs.a.url,
        "SendMessage",
        {"message": rpc.message("hello")},
        headers={"X-A2A-Hub-Trail": trail},
    )

    error = reply.json()["error"]
    assert error["code"] == INVALID_REQUEST
    assert error["message"].startswith(f"forwarding loop: this hub ({hubs.a.url})")
    assert error["data"][0]["reason"] == "INVALID_REQUEST"


def test_a_request_that_has_been_through_max_hops_hubs_is_refused_as_invalid(
    hubs: Federation,
) -> None:
    reply = rpc.post(
        hubs.c.url,
        "SendMessage",
        {"message": rpc.message("hello")},
        headers={"X-A2A-Hub-Trail": "http://h1.example, http://h2.example"},
    )

    error = reply.json()["error"]
    assert error["code"] == INVALID_REQUEST
    assert error["message"] == (
        "the request has gone through 2 hubs, the hop limit (server.max_hops) is 2: "
        "http://h1.example -> http://h2.example"
    )


def test_a_chain_of_real_hubs_longer_than_the_hop_limit_is_refused(hubs: Federation) -> None:
    # B hands it to its only partner, A; A's router picks hub-c by the word "charlie" (C's
    # card name); C, allowing 2 hops, refuses a request that went through B and A.
    text = unique("charlie please")
    task = delegate(hubs.b, text, agentSkill="delegate")

    refusal = (
        "the request has gone through 2 hubs, the hop limit (server.max_hops) is 2: "
        f"{hubs.b.url} -> {hubs.a.url} (code {INVALID_REQUEST})"
    )
    a_task = only_task_about(hubs.a.url, text)
    assert rpc.state(a_task) == "TASK_STATE_FAILED"
    assert rpc.status_text(a_task) == f"agent 'hub-c': SendStreamingMessage failed: {refusal}"
    assert rpc.state(task) == "TASK_STATE_FAILED"
    assert rpc.status_text(task) == (
        f"partner 'hub-a' ended the task failed: "
        f"agent 'hub-c': SendStreamingMessage failed: {refusal}"
    )
    assert [t for t in rpc.list_tasks(hubs.c.url) if rpc.history_text(t) == text] == []
