"""`python -m hub ...` as real subprocesses, against config files and a real hub process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .hubproc import ROOT, hub_process

TIMEOUT = 60.0


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m hub ARGS` from the repository root, with no HUB_* settings inherited."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("HUB_")}
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        cwd=ROOT,
        env={**env, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def ok(*args: str, status: int = 0) -> str:
    """The command's stdout, once it exited with `status` and no traceback."""
    done = cli(*args)
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def write_config(folder: Path, body: str) -> Path:
    path = folder / "hub.yaml"
    path.write_text(body, encoding="utf-8")
    return path


SKILLS = """
skills:
  - builtin: echo
  - module: tests.e2e.crash_skills:interview
"""


@pytest.fixture(scope="module")
def hub_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("cli-hub")
    config = write_config(
        folder,
        f"server: {{log_level: warning}}\nstore: {{kind: sqlite, path: {folder / 'hub.db'}}}\n"
        + SKILLS
        + "  - module: tests.runtime_skills:broken\n",
    )
    with hub_process(config) as (_, url):
        yield url


# --- without a running hub ---------------------------------------------------------------------


def test_skills_lists_the_configured_skills_and_marks_the_default(tmp_path: Path) -> None:
    config = write_config(tmp_path, "store: {kind: memory}\n" + SKILLS)
    lines = ok("skills", "--config", str(config)).splitlines()
    assert lines[0] == "echo  (default)"
    assert "interview" in lines
    assert "  asks for a name, then greets" in lines


def test_card_prints_the_card_with_its_interfaces_and_skills(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        "server: {public_url: 'http://hub.example:9999/'}\ncard: {name: cli-test}\n" + SKILLS,
    )
    card = json.loads(ok("card", "--config", str(config)))
    assert card["name"] == "cli-test"
    assert [skill["id"] for skill in card["skills"]] == ["echo", "interview"]
    interfaces = card["supportedInterfaces"]
    assert {
        "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0",
        "url": "http://hub.example:9999",
    } in interfaces
    assert {interface["url"] for interface in interfaces} == {"http://hub.example:9999"}


@pytest.mark.parametrize("command", ["skills", "card", "serve", "tasks"])
def test_a_config_error_exits_2_naming_file_and_line_without_a_traceback(
    tmp_path: Path, command: str
) -> None:
    config = write_config(tmp_path, "store: {kind: memory}\nserver:\n  prot: 8000\n")
    args = [command, "--config", str(config)] + (["list"] if command == "tasks" else [])
    done = cli(*args)
    assert done.returncode == 2
    assert f"{config}:3:" in done.stderr
    assert "'server.prot'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_skill_that_cannot_be_loaded_exits_2_without_a_traceback(tmp_path: Path) -> None:
    config = write_config(tmp_path, "skills:\n  - module: tests.e2e.crash_skills:nothing\n")
    done = cli("card", "--config", str(config))
    assert done.returncode == 2
    assert f"{config}:2: skill 'tests.e2e.crash_skills:nothing'" in done.stderr
    assert "Traceback" not in done.stderr


def test_send_to_an_address_where_nothing_listens_exits_1_without_a_traceback() -> None:
    # A bound socket that does not listen: connections are refused, and no one else gets it.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
        done = cli("send", url, "hello")
    assert done.returncode == 1
    # The URL once, and none of the transport's internals.
    assert done.stderr == (
        f"a2a-hub: cannot reach {url}; check that the agent is running and that the URL is right\n"
    )


def test_tasks_without_url_names_the_settings_it_took_the_hub_from(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        config = write_config(tmp_path, f"server: {{port: {port}}}\n")
        done = cli("tasks", "list", "--config", str(config))
    assert done.returncode == 1
    assert done.stderr == (
        f"a2a-hub: cannot reach http://127.0.0.1:{port}, the hub these settings describe "
        "(server.public_url, or server.host and server.port); check that it is running, or "
        "pass --url\n"
    )


def test_tasks_without_a_task_id_is_a_usage_error_before_anything_is_sent() -> None:
    action = "subscribe"  # as get and cancel: one check before the card is read
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        listening.setblocking(False)
        done = cli("tasks", action, "--url", f"http://127.0.0.1:{listening.getsockname()[1]}")
        with pytest.raises(BlockingIOError):
            listening.accept()  # no connection was made
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == f"a2a-hub tasks: error: tasks {action} needs a TASK_ID"


# --- against a running hub ---------------------------------------------------------------------


def test_serve_on_port_0_advertises_the_port_it_really_bound(hub_url: str) -> None:
    card = httpx.get(f"{hub_url}/.well-known/agent-card.json", timeout=10).json()
    assert {interface["url"] for interface in card["supportedInterfaces"]} == {hub_url}


def test_send_prints_the_completed_task_and_the_echoed_text(hub_url: str) -> None:
    lines = ok("send", hub_url, "hello from the cli").splitlines()
    assert lines[0].startswith("task ")
    assert lines[0].endswith(": completed")
    assert lines[1:] == ["  artifact response: hello from the cli"]


def test_send_stream_prints_the_text_between_the_status_lines(hub_url: str) -> None:
    lines = ok("send", "--stream", hub_url, "streamed hello").splitlines()
    assert lines[0].startswith("[task] ")
    assert lines[1:] == ["[status] working", "streamed hello", "[status] completed"]


def test_send_stream_raw_prints_the_events_in_order_ending_with_completed(hub_url: str) -> None:
    lines = ok("send", "--stream", "--raw", hub_url, "streamed hello").splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == [
        "[task]",
        "[status]",
        "[artifact]",
        "[status]",
    ]
    assert lines[0].endswith(" submitted")
    assert lines[1] == "[status] working"
    assert lines[2] == "[artifact] response: streamed hello"
    assert lines[3] == "[status] completed"


def test_send_stream_json_prints_one_stream_response_per_line(hub_url: str) -> None:
    events = [
        json.loads(line) for line in ok("send", "--stream", "--json", hub_url, "hi").splitlines()
    ]
    assert [next(iter(event)) for event in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_send_json_prints_the_task_as_json(hub_url: str) -> None:
    task = json.loads(ok("send", "--json", hub_url, "as json"))
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [artifact["parts"] for artifact in task["artifacts"]] == [[{"text": "as json"}]]
    assert task["history"][0]["parts"] == [{"text": "as json"}]


def test_tasks_list_shows_the_tasks_sent(hub_url: str) -> None:
    sent = json.loads(ok("send", "--json", hub_url, "list me"))
    lines = ok("tasks", "list", "--url", hub_url).splitlines()
    listed = {line.split()[0]: line.split()[1] for line in lines[:-1]}
    assert listed[sent["id"]] == "completed"
    assert lines[-1] == f"({len(lines) - 1} of {len(lines) - 1})"


def test_tasks_list_pages_with_the_printed_token_and_shows_time_and_skill(hub_url: str) -> None:
    first = json.loads(ok("send", "--json", "--skill", "echo", hub_url, "page one"))
    second = json.loads(
        ok("send", "--json", "--skill", "echo", "--context-id", first["contextId"], hub_url, "two")
    )
    args = ["tasks", "list", "--url", hub_url, "--context-id", first["contextId"]]
    page = ok(*args, "--page-size", "1").splitlines()
    assert page[-1].startswith("next page: --page-token ")
    token = page[-1].split()[-1]
    rest = ok(*args, "--page-size", "1", "--page-token", token).splitlines()
    rows = [page[0].split(), rest[0].split()]
    assert {row[0] for row in rows} == {first["id"], second["id"]}
    for row in rows:
        assert row[1] == "completed"
        assert row[2].startswith(first["status"]["timestamp"][:4])  # an ISO time
        assert row[3] == "echo"
        assert row[-2:] == ["context", first["contextId"]]


def test_tasks_list_names_the_skill_of_a_task_sent_without_one(hub_url: str) -> None:
    sent = json.loads(ok("send", "--json", hub_url, "to the default"))
    assert sent["metadata"] == {"skill": "echo"}  # the task itself says what ran it
    args = ["tasks", "list", "--url", hub_url, "--context-id", sent["contextId"]]
    [row, total] = ok(*args).splitlines()
    assert row.split()[:2] == [sent["id"], "completed"]
    assert row.split()[3] == "echo"
    assert total == "(1 of 1)"


def test_tasks_list_filters_by_a_state_written_as_the_cli_prints_it(hub_url: str) -> None:
    parked = json.loads(ok("send", "--json", "--skill", "interview", hub_url, "hi", status=3))
    lines = ok("tasks", "list", "--url", hub_url, "--state", "input-required").splitlines()
    assert parked["id"] in {line.split()[0] for line in lines[:-1]}
    assert all(line.split()[1] == "input-required" for line in lines[:-1] if "context" in line)


def test_tasks_list_json_filters_by_context(hub_url: str) -> None:
    sent = json.loads(ok("send", "--json", hub_url, "in a context"))
    page = json.loads(
        ok("tasks", "list", "--url", hub_url, "--context-id", sent["contextId"], "--json")
    )
    assert [task["id"] for task in page["tasks"]] == [sent["id"]]


def test_tasks_get_shows_one_task(hub_url: str) -> None:
    sent = json.loads(ok("send", "--json", hub_url, "get me"))
    lines = ok("tasks", "get", sent["id"], "--url", hub_url).splitlines()
    assert lines == [
        f"task {sent['id']} (context {sent['contextId']}): completed",
        "  artifact response: get me",
    ]


def test_tasks_cancel_cancels_a_task_waiting_for_input(hub_url: str) -> None:
    parked = json.loads(ok("send", "--json", "--skill", "interview", hub_url, "hi", status=3))
    assert parked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

    # Canceling succeeds (0); the task, read again, is canceled (1).
    lines = ok("tasks", "cancel", parked["id"], "--url", hub_url).splitlines()
    assert lines[0] == f"task {parked['id']} (context {parked['contextId']}): canceled"

    again = json.loads(ok("tasks", "get", parked["id"], "--url", hub_url, "--json", status=1))
    assert again["status"]["state"] == "TASK_STATE_CANCELED"


@pytest.mark.parametrize(("skill", "status"), [("echo", 0), ("broken", 1)])
def test_subscribing_to_a_task_that_has_ended_prints_it_and_exits_by_its_state(
    hub_url: str, skill: str, status: int
) -> None:
    sent = json.loads(ok("send", "--json", "--skill", skill, hub_url, "ended", status=status))
    lines = ok("tasks", "subscribe", sent["id"], "--url", hub_url, status=status).splitlines()
    # As `tasks get` prints it: its state, its status message, its artifacts.
    assert lines == ok("tasks", "get", sent["id"], "--url", hub_url, status=status).splitlines()
    assert lines[0] == f"task {sent['id']} (context {sent['contextId']}): {STATES[skill]}"
    if skill == "echo":
        assert lines[1:] == ["  artifact response: ended"]
    events = ok("tasks", "subscribe", sent["id"], "--url", hub_url, "--json", status=status)
    [event] = [json.loads(line) for line in events.splitlines()]
    assert event["task"]["id"] == sent["id"]
    assert event["task"]["status"]["state"] == sent["status"]["state"]


STATES = {"echo": "completed", "broken": "failed"}


def test_an_error_about_a_tasks_state_names_it_as_the_cli_prints_it(hub_url: str) -> None:
    sent = json.loads(ok("send", "--json", hub_url, "done already"))
    canceled = cli("tasks", "cancel", sent["id"], "--url", hub_url)
    answered = cli("send", hub_url, "more", "--task-id", sent["id"])
    assert canceled.returncode == answered.returncode == 1
    assert canceled.stderr == (
        f"a2a-hub: agent '{hub_url}': CancelTask failed: task {sent['id']} is completed; "
        "a terminal task cannot be canceled (code -32002)\n"
    )
    assert f"task {sent['id']} is completed and accepts no more messages" in answered.stderr
    assert "TASK_STATE_" not in answered.stderr


@pytest.mark.parametrize(
    ("skill", "status", "state"),
    [
        ("echo", 0, "completed"),
        ("broken", 1, "failed"),
        ("interview", 3, "input-required"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_send_exits_by_the_tasks_state(
    hub_url: str, skill: str, status: int, state: str, stream: bool
) -> None:
    args = ["send", "--skill", skill, hub_url, "hi"]
    out = ok(*([*args[:1], "--stream", *args[1:]] if stream else args), status=status)
    assert state in out
    hint = [line for line in out.splitlines() if "answer with:" in line]
    if status == 3:
        assert len(hint) == 1
        assert hint[0].startswith(f'  answer with: a2a-hub send {hub_url} "..." --task-id ')
    else:
        assert hint == []


def test_tasks_subscribe_follows_a_task_until_it_waits_for_input(hub_url: str) -> None:
    parked = json.loads(ok("send", "--json", "--skill", "interview", hub_url, "hi", status=3))
    lines = ok("tasks", "subscribe", parked["id"], "--url", hub_url, status=3).splitlines()
    assert lines[0] == f"[task] {parked['id']} input-required"
    assert lines[-1].endswith(f"--task-id {parked['id']}")


def test_tasks_get_of_an_unknown_task_exits_1_without_a_traceback(hub_url: str) -> None:
    done = cli("tasks", "get", "no-such-task", "--url", hub_url)
    assert done.returncode == 1
    assert done.stderr.startswith("a2a-hub: ")
    assert "Traceback" not in done.stderr


# --- one way to name the hub -------------------------------------------------------------------


def test_every_command_that_talks_to_a_hub_takes_its_url_as_url(hub_url: str) -> None:
    sent = ok("send", "--url", hub_url, "by flag").splitlines()
    assert sent[1:] == ["  artifact response: by flag"]
    # The older spelling, the URL before the text, still works, options anywhere.
    assert ok("send", hub_url, "--stream", "by word").splitlines()[-1] == "[status] completed"
    task_id = sent[0].split()[1]
    assert ok("tasks", "get", task_id, "--url", hub_url).splitlines() == sent
    by_flag = json.loads(ok("status", "--url", hub_url, "--json"))
    by_word = json.loads(ok("status", hub_url, "--json"))
    assert by_flag["name"] == by_word["name"]
    assert ok("agents", "check", "--url", hub_url) == ok("agents", "check", "--hub", hub_url)
    card = json.loads(ok("card", "--url", hub_url))
    assert {interface["url"] for interface in card["supportedInterfaces"]} == {hub_url}


def test_a_url_given_twice_or_not_at_all_is_a_usage_error() -> None:
    twice = cli("send", "--url", "http://127.0.0.1:9", "http://127.0.0.1:9", "hi")
    assert twice.returncode == 2
    assert twice.stderr.splitlines()[-1] == (
        "a2a-hub send: error: the URL is given twice (http://127.0.0.1:9 and "
        "http://127.0.0.1:9); give it once"
    )
    missing = cli("send", "hi")
    assert missing.returncode == 2
    assert missing.stderr.splitlines()[-1] == (
        "a2a-hub send: error: send needs the agent's URL: --url URL (or URL before TEXT)"
    )


def test_swarm_help_names_the_strategies_and_the_default_and_card_says_whose_card() -> None:
    swarm = " ".join(ok("swarm", "--help").split())
    assert "(default: broadcast, every answer)" in swarm
    for strategy in ("race", "vote", "best_of", "map", "chain"):
        assert f" {strategy} " in swarm
    card = " ".join(ok("card", "--help").split())
    assert "the agent card the hub would serve with these settings" in card
    assert "--url URL" in card
