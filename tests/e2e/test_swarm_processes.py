"""Every swarm strategy end to end: a real `a2a-hub serve` process in front of real a2a-sdk
partner processes (tests/e2e/sdk_partner.py), over HTTP. Each branch a swarm reports is
checked against the partner's own record of the task (its GetTask / ListTasks)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from . import rpc
from .partnerproc import (
    Child,
    PartnerSpec,
    agents_for,
    hub_processes,
    partner_processes,
    write_hub_config,
)

PARTNERS = [
    PartnerSpec(name="quick", behaviour="fast", answer="Paris", tags=("race", "vote")),
    PartnerSpec(name="agree", behaviour="fast", answer="Paris", tags=("vote",)),
    PartnerSpec(name="dissent", behaviour="dissent", answer="Lyon", tags=("vote",)),
    PartnerSpec(name="slow-1", behaviour="slow", delay=30, tags=("race",)),
    PartnerSpec(name="slow-2", behaviour="slow", delay=30, tags=("race",)),
    PartnerSpec(name="failing", behaviour="failing", tags=("flaky",)),
    PartnerSpec(name="upper-a", behaviour="upper", suffix="-a", tags=("upper",)),
    PartnerSpec(name="upper-b", behaviour="upper", suffix="-b", tags=("upper",)),
    PartnerSpec(name="judge", behaviour="fast", answer="I pick 2", tags=("judge",)),
    # Killed by one test, so used by no other.
    PartnerSpec(name="doomed", behaviour="slow", delay=60, tags=("doomed",)),
]


class Swarm:
    """The hub process and its partner processes, by name."""

    def __init__(self, hub: Child, partners: dict[str, Child]) -> None:
        self.url = hub.url
        self.hub = hub
        self.partners = partners

    def run(self, text: str, **metadata: Any) -> dict[str, Any]:
        """Send `text` to the hub's swarm skill; the settled task."""
        return rpc.send(self.url, text, {"skill": "swarm", **metadata})


@pytest.fixture(scope="module")
def swarm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Swarm]:
    folder = tmp_path_factory.mktemp("swarm-hub")
    with partner_processes(PARTNERS) as partners:
        config = write_hub_config(folder, entries=agents_for(partners, PARTNERS))
        with hub_processes([config]) as [hub]:
            yield Swarm(hub, partners)


def report_of(task: dict[str, Any]) -> dict[str, Any]:
    """The `swarm` artifact's report, after checking the artifact's whole shape."""
    [artifact] = task["artifacts"]
    report: dict[str, Any] = artifact["parts"][1]["data"]
    assert artifact["name"] == "swarm"
    assert artifact["parts"][0] == {"text": report["answer"] or report["reason"]}
    assert artifact["parts"][1]["mediaType"] == "application/json"
    assert artifact["metadata"] == {"strategy": report["strategy"], "reason": report["reason"]}
    return report


def confirmed(swarm: Swarm, report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's branches, each partner task id replaced by that task's state as the
    partner itself reports it (`partner_state`), and the branch's duration checked and
    dropped (it varies)."""
    branches = []
    for branch in report["branches"]:
        branch = dict(branch)
        seconds = branch.pop("seconds", None)
        if branch["state"] != "skipped":
            assert isinstance(seconds, float | int)
            assert seconds >= 0
        task_id = branch.pop("task_id", None)
        partner = swarm.partners[branch["agent"]]
        if task_id is not None and partner.process.poll() is None:
            task = rpc.get_task(partner.url, task_id)
            branch["partner_state"] = rpc.state(task)
        branches.append(branch)
    return branches


def by_agent(branches: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Branches by partner name, for swarms whose partners the router chose (its order among
    equals can move with recent latency); their indexes must still be 0, 1, 2, ..."""
    assert [branch["index"] for branch in branches] == list(range(len(branches)))
    return {
        b["agent"]: {k: v for k, v in b.items() if k not in ("agent", "index")} for b in branches
    }


def partner_tasks_about(swarm: Swarm, agent: str, text: str) -> list[dict[str, Any]]:
    """The tasks partner `agent` holds for messages whose text is `text`."""
    tasks = rpc.list_tasks(swarm.partners[agent].url)
    return [task for task in tasks if rpc.history_text(task) == text]


def partner_states(swarm: Swarm, agents: list[str], text: str) -> dict[str, list[str]]:
    """The states of the tasks each partner holds for `text`, once there is at least one
    and all have ended (bounded wait: the partners may still be processing a cancel)."""

    def check() -> dict[str, list[str]] | None:
        states = {
            agent: [rpc.state(task) for task in partner_tasks_about(swarm, agent, text)]
            for agent in agents
        }
        ended = all(s and all(state in rpc.TERMINAL for state in s) for s in states.values())
        return states if ended else None

    return rpc.wait_for(check, what=f"the tasks of {agents} to end", timeout=60)


def test_broadcast_gathers_every_answer_in_order_and_reports_the_failed_branch(
    swarm: Swarm,
) -> None:
    task = swarm.run("hello", strategy="broadcast", agents=["quick", "failing", "upper-a"])

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    report = report_of(task)
    assert report["answer"] == "Paris\n\nHELLO-a"
    assert report["answers"] == ["Paris", "HELLO-a"]
    assert report["reason"] == "2 of 3 partners completed"
    assert confirmed(swarm, report) == [
        {
            "agent": "quick",
            "index": 0,
            "state": "completed",
            "answer": "Paris",
            "partner_state": "TASK_STATE_COMPLETED",
        },
        {
            "agent": "failing",
            "index": 1,
            "state": "failed",
            "error": "scripted failure",
            "partner_state": "TASK_STATE_FAILED",
        },
        {
            "agent": "upper-a",
            "index": 2,
            "state": "completed",
            "answer": "HELLO-a",
            "partner_state": "TASK_STATE_COMPLETED",
        },
    ]


def test_race_picks_partners_by_tag_and_the_losers_end_canceled_on_the_partner_side(
    swarm: Swarm,
) -> None:
    text = f"race {uuid.uuid4().hex}"
    task = swarm.run(text, strategy="race", tags=["race"])

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    report = report_of(task)
    assert report["answer"] == "Paris"
    assert report["reason"] == "'quick' answered first"
    branches = by_agent(report["branches"])
    assert {agent: branch["state"] for agent, branch in branches.items()} == {
        "quick": "completed",
        "slow-1": "canceled",
        "slow-2": "canceled",
    }
    quick = branches["quick"]
    assert quick["answer"] == "Paris"
    assert rpc.state(rpc.get_task(swarm.partners["quick"].url, quick["task_id"])) == (
        "TASK_STATE_COMPLETED"
    )

    # The answer does not wait for the losers' cancels (they go on in the hub's background,
    # and a loser may not have named its task yet when the race is won). The slow partners
    # would work for 30 s: each must have been told to cancel its task, and no other task
    # of theirs is left for this message.
    assert partner_states(swarm, ["slow-1", "slow-2"], text) == {
        "slow-1": ["TASK_STATE_CANCELED"],
        "slow-2": ["TASK_STATE_CANCELED"],
    }


def test_vote_takes_the_majority_and_reports_the_dissenting_branch(swarm: Swarm) -> None:
    task = swarm.run("What is the capital of France?", strategy="vote", tags=["vote"])

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    report = report_of(task)
    assert report["answer"] == "Paris"
    assert report["reason"] == "2 of 3 agree (quorum 2; 2 x 'paris', 1 x 'lyon')"
    completed = {"state": "completed", "partner_state": "TASK_STATE_COMPLETED"}
    assert by_agent(confirmed(swarm, report)) == {
        "agree": {**completed, "answer": "Paris"},
        "dissent": {**completed, "answer": "Lyon"},
        "quick": {**completed, "answer": "Paris"},
    }


def test_a_vote_that_needs_more_agreement_than_it_gets_fails_and_shows_its_branches(
    swarm: Swarm,
) -> None:
    task = swarm.run("capital?", strategy="vote", tags=["vote"], quorum=3)

    assert rpc.state(task) == "TASK_STATE_FAILED"
    reason = "no quorum: 2 agree, 3 needed (2 x 'paris', 1 x 'lyon')"
    assert rpc.status_text(task) == f"swarm (vote) reached no answer: {reason}"
    report = report_of(task)
    assert (report["ok"], report["answer"], report["reason"]) == (False, None, reason)
    assert [branch["state"] for branch in report["branches"]] == ["completed"] * 3


def test_best_of_returns_the_answer_the_judge_partner_names(swarm: Swarm) -> None:
    task = swarm.run(
        "Name a French city", strategy="best_of", agents=["quick", "dissent"], judge="a2a_judge"
    )

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    report = report_of(task)
    assert report["answer"] == "Lyon"
    assert report["reason"] == "the judge 'a2a_judge' chose 'dissent' (answer 2)"
    assert [(b["agent"], b["state"], b["answer"]) for b in report["branches"]] == [
        ("quick", "completed", "Paris"),
        ("dissent", "completed", "Lyon"),
    ]
    # The judge was shown both answers, numbered.
    [judged] = [
        t
        for t in rpc.list_tasks(swarm.partners["judge"].url)
        if "Name a French city" in rpc.history_text(t)
    ]
    assert "Answer 1:\nParis\n\nAnswer 2:\nLyon" in rpc.history_text(judged)


def test_map_over_fifty_items_reassembles_the_answers_in_item_order(swarm: Swarm) -> None:
    items = [f"item {i}" for i in range(50)]
    task = swarm.run(
        "convert", strategy="map", agents=["upper-a", "upper-b"], items=items, concurrency=10
    )

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    report = report_of(task)
    expected = [f"CONVERT\n\nITEM {i}-{'ab'[i % 2]}" for i in range(50)]
    assert report["answers"] == expected
    assert report["answer"] == "\n".join(expected)
    assert report["reason"] == "50 items across 2 partners"
    assert confirmed(swarm, report) == [
        {
            "agent": f"upper-{'ab'[i % 2]}",
            "index": i,
            "state": "completed",
            "answer": expected[i],
            "item": f"item {i}",
            "partner_state": "TASK_STATE_COMPLETED",
        }
        for i in range(50)
    ]


def test_chain_passes_each_answer_to_the_next_partner_in_order(swarm: Swarm) -> None:
    task = swarm.run("go", strategy="chain", agents=["upper-a", "upper-b", "upper-a"])

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    report = report_of(task)
    assert report["answer"] == "GO-A-B-a"
    assert report["reason"] == "3 partners in turn"
    assert [(b["agent"], b["answer"]) for b in confirmed(swarm, report)] == [
        ("upper-a", "GO-a"),
        ("upper-b", "GO-A-b"),
        ("upper-a", "GO-A-B-a"),
    ]


def test_a_chain_stops_at_a_failing_link_and_skips_the_rest(swarm: Swarm) -> None:
    task = swarm.run("go", strategy="chain", agents=["upper-a", "failing", "upper-b"])

    assert rpc.state(task) == "TASK_STATE_FAILED"
    assert rpc.status_text(task) == "swarm (chain) reached no answer: 'failing' broke the chain"
    report = report_of(task)
    assert (report["ok"], report["answer"]) == (False, None)
    assert confirmed(swarm, report) == [
        {
            "agent": "upper-a",
            "index": 0,
            "state": "completed",
            "answer": "GO-a",
            "partner_state": "TASK_STATE_COMPLETED",
        },
        {
            "agent": "failing",
            "index": 1,
            "state": "failed",
            "error": "scripted failure",
            "partner_state": "TASK_STATE_FAILED",
        },
        {"agent": "upper-b", "index": 2, "state": "skipped"},
    ]


def test_a_partner_killed_mid_broadcast_is_one_failed_branch_and_the_others_still_answer(
    swarm: Swarm,
) -> None:
    text = f"broadcast {uuid.uuid4().hex}"
    started = rpc.send(
        swarm.url,
        text,
        {"skill": "swarm", "strategy": "broadcast", "agents": ["doomed", "quick"]},
        return_immediately=True,
    )
    # Kill it only once the hub knows the task it started there (the console lists it among
    # the swarm task's delegations): the branch then tries to resume a stream to a partner
    # that no longer answers. Killed any earlier, the branch's stream is cut before it names a
    # task, and nothing can be resumed (the error says the connection broke).
    [doomed_task] = rpc.wait_for(
        lambda: partner_tasks_about(swarm, "doomed", text) or None,
        what="the doomed partner to start working",
    )
    rpc.wait_for(
        lambda: (
            doomed_task["id"] in httpx.get(f"{swarm.url}/ui/tasks/{started['id']}").text or None
        ),
        what="the hub to record the doomed partner's task",
    )
    doomed = swarm.partners["doomed"].process
    doomed.kill()
    doomed.wait(timeout=60)

    task = rpc.settled(swarm.url, started["id"], timeout=30)

    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    report = report_of(task)
    assert report["answers"] == ["Paris"]
    assert report["reason"] == "1 of 2 partners completed"
    killed, alive = confirmed(swarm, report)
    assert alive == {
        "agent": "quick",
        "index": 1,
        "state": "completed",
        "answer": "Paris",
        "partner_state": "TASK_STATE_COMPLETED",
    }
    assert {key: killed[key] for key in ("agent", "index", "state")} == {
        "agent": "doomed",
        "index": 0,
        "state": "error",
    }
    assert "agent 'doomed' is unreachable" in killed["error"]
    assert "answer" not in killed


def test_branch_and_swarm_deadlines_end_slow_branches_and_cancel_them_on_the_partner_side(
    swarm: Swarm,
) -> None:
    text = f"deadline {uuid.uuid4().hex}"
    per_branch = swarm.run(
        text, strategy="broadcast", agents=["quick", "slow-1"], branchDeadline=0.5
    )
    overall = swarm.run(text, strategy="broadcast", agents=["slow-2"], deadline=0.5)

    assert rpc.state(per_branch) == "TASK_STATE_COMPLETED"
    assert [
        (b["agent"], b["state"], b.get("error")) for b in report_of(per_branch)["branches"]
    ] == [
        ("quick", "completed", None),
        ("slow-1", "timeout", "no answer within 0.5 s"),
    ]
    assert rpc.state(overall) == "TASK_STATE_FAILED"
    report = report_of(overall)
    assert report["reason"] == "the swarm did not finish within 0.5 s"
    assert [(b["agent"], b["state"], b.get("error")) for b in report["branches"]] == [
        ("slow-2", "timeout", "the swarm's overall deadline passed"),
    ]

    assert partner_states(swarm, ["slow-1", "slow-2"], text) == {
        "slow-1": ["TASK_STATE_CANCELED"],
        "slow-2": ["TASK_STATE_CANCELED"],
    }
