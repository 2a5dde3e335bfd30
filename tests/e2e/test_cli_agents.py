"""`a2a-hub agents ...` and `a2a-hub call ...` as real child processes, against real partners
served by this test on loopback sockets and agents.yaml files written under tmp_path.

The command runs while the partners serve on the test's own event loop, so it is awaited with
`anyio.run_process` (a blocking `subprocess.run` would stall the partners it talks to).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.config import ServerSettings, Settings, StoreSettings
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc
from tests.runtime_skills import broken, interview

from .hubproc import ROOT

pytestmark = pytest.mark.anyio

TIMEOUT = 30.0
SECRET = "zq-SECRET-7f41c9d2-do-not-print"
_SCRIPT = Path(sys.executable).parent / "a2a-hub"
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "hub"]


async def a2a_hub(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the `a2a-hub` command in `cwd`, with no HUB_* settings inherited."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    inherited.pop("SECRET_TOKEN", None)
    full_env = {**inherited, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **(env or {})}
    with anyio.fail_after(TIMEOUT):
        done = await anyio.run_process([*COMMAND, *args], cwd=cwd, env=full_env, check=False)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


async def ok(*args: str, cwd: Path, env: dict[str, str] | None = None, status: int = 0) -> str:
    """The command's stdout, once it exited with `status` and no traceback."""
    done = await a2a_hub(*args, cwd=cwd, env=env)
    assert done.returncode == status, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def write_agents(folder: Path, body: str) -> Path:
    path = folder / "agents.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def agents_at(folder: Path, urls: dict[str, str]) -> Path:
    """An agents.yaml listing each partner by name at its URL, with nothing else."""
    entries = "".join(f"  - name: {name}\n    url: {url}\n" for name, url in urls.items())
    return write_agents(folder, f"version: 1\nagents:\n{entries}")


@contextmanager
def unreachable_url() -> Iterator[str]:
    """An address where a socket is bound but nothing listens: connections are refused."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{closed.getsockname()[1]}"


class RequestRecorder:
    """Wraps an ASGI app and keeps the method, path and headers of every HTTP request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, str, dict[str, str]]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.requests.append((scope["method"], scope["path"], headers))
        await self.app(scope, receive, send)


@pytest.fixture
async def echoer() -> AsyncIterator[tuple[str, RequestRecorder]]:
    """The a2a-sdk partner (JSON-RPC 1.0) that echoes, recording what it is sent."""
    recorders: list[RequestRecorder] = []

    def build(url: str) -> RequestRecorder:
        recorders.append(RequestRecorder(sdk_jsonrpc(url)))
        return recorders[0]

    async with serve_on_loopback(build) as url:
        yield url, recorders[0]


def _interviewer(url: str) -> Litestar:
    settings = Settings(
        server=ServerSettings(public_url=url),
        store=StoreSettings(kind="memory"),
        default_skill="interview",
    )
    return create_app(
        settings, store=MemoryTaskStore(), skills={"interview": interview, "broken": broken}
    )


@pytest.fixture
async def interviewer() -> AsyncIterator[str]:
    """The hub as a partner: its default skill asks for a name before it answers; its skill
    `broken` always fails."""
    async with serve_on_loopback(_interviewer) as url:
        yield url


# --- agents list -------------------------------------------------------------------------------

LISTED = """\
version: 1
agents:
  - name: research
    url: http://research.example:8080/
    auth: {bearer: "${SECRET_TOKEN}"}
    tags: [research, summarise]
    weight: 2
  - name: legacy
    url: http://legacy.example:9000
    protocol: {version: "0.3", binding: jsonrpc}
    auth: {api_key: "${SECRET_TOKEN}", header: X-Key}
    enabled: false
  - name: plain
    url: http://plain.example/card.json
"""


async def test_agents_list_shows_every_entry_marks_disabled_ones_and_only_the_auth_kind(
    tmp_path: Path,
) -> None:
    agents = write_agents(tmp_path, LISTED)

    done = await a2a_hub(
        "agents", "list", "--agents", str(agents), cwd=tmp_path, env={"SECRET_TOKEN": SECRET}
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "research",
        "  http://research.example:8080/",
        "  tags: research, summarise; weight: 2; auth: bearer",
        "legacy  (disabled)",
        "  http://legacy.example:9000",
        "  tags: -; weight: 1; protocol: 0.3 jsonrpc; auth: api key in X-Key",
        "plain",
        "  http://plain.example/card.json",
        "  tags: -; weight: 1; auth: none",
    ]
    assert SECRET not in done.stdout + done.stderr


async def test_agents_list_json_gives_each_entry_with_its_auth_kind_only(tmp_path: Path) -> None:
    agents = write_agents(tmp_path, LISTED)

    done = await a2a_hub(
        "agents",
        "list",
        "--json",
        "--agents",
        str(agents),
        cwd=tmp_path,
        env={"SECRET_TOKEN": SECRET},
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        {
            "name": "research",
            "url": "http://research.example:8080/",
            "cardUrl": "http://research.example:8080/.well-known/agent-card.json",
            "enabled": True,
            "tags": ["research", "summarise"],
            "weight": 2.0,
            "protocol": {"version": "auto", "binding": "auto"},
            "auth": "bearer",
        },
        {
            "name": "legacy",
            "url": "http://legacy.example:9000",
            "cardUrl": "http://legacy.example:9000/.well-known/agent-card.json",
            "enabled": False,
            "tags": [],
            "weight": 1.0,
            "protocol": {"version": "0.3", "binding": "jsonrpc"},
            "auth": "api key in X-Key",
        },
        {
            "name": "plain",
            "url": "http://plain.example/card.json",
            "cardUrl": "http://plain.example/card.json",
            "enabled": True,
            "tags": [],
            "weight": 1.0,
            "protocol": {"version": "auto", "binding": "auto"},
            "auth": "none",
        },
    ]
    assert SECRET not in done.stdout + done.stderr


async def test_agents_list_reads_the_agents_file_the_settings_name(tmp_path: Path) -> None:
    agents = tmp_path / "partners" / "registry.yaml"
    agents.parent.mkdir()
    agents.write_text("version: 1\nagents:\n  - name: only\n    url: http://only.example\n")
    settings = tmp_path / "hub.yaml"
    settings.write_text(f"store: {{kind: memory}}\nagents: {agents}\n", encoding="utf-8")

    lines = (await ok("agents", "list", "--config", str(settings), cwd=tmp_path)).splitlines()

    assert lines[:2] == ["only", "  http://only.example"]


# --- agents show / check / refresh -------------------------------------------------------------


async def test_agents_show_prints_the_partners_card_interfaces_and_skills(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, _ = echoer
    agents = agents_at(tmp_path, {"echoer": url})

    lines = (
        await ok("agents", "show", "echoer", "--agents", str(agents), cwd=tmp_path)
    ).splitlines()

    assert lines == [
        "echoer: sdk-jsonrpc-1.0 1.0.0",
        "  a2a-sdk partner for the client tests",
        f"  interface: JSONRPC 1.0 {url}/",
        "  streaming: yes",
        "  skill echo [echo]: echoes",
    ]


async def test_agents_check_exits_1_with_a_fail_line_for_the_unreachable_partner_only(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, _ = echoer
    with unreachable_url() as down:
        agents = agents_at(tmp_path, {"echoer": url, "offline": down})
        done = await a2a_hub("agents", "check", "--agents", str(agents), cwd=tmp_path)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    healthy = [line for line in lines if line.startswith("ok ")]
    failed = [line for line in lines if line.startswith("FAIL")]
    assert len(healthy) == 1
    assert healthy[0].split()[1] == "echoer"
    assert healthy[0].endswith(f"via JSONRPC 1.0 {url}/")
    assert len(failed) == 1
    assert failed[0].split()[1] == "offline"
    # The line under the FAIL line says why, naming where the card was looked for.
    reason = lines[lines.index(failed[0]) + 1]
    assert reason.startswith("     agent 'offline': ")
    assert down in reason


async def test_agents_refresh_reads_the_card_from_the_partner_and_prints_it(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, recorder = echoer
    agents = agents_at(tmp_path, {"echoer": url})

    lines = (
        await ok("agents", "refresh", "echoer", "--agents", str(agents), cwd=tmp_path)
    ).splitlines()

    assert lines[0] == "echoer: sdk-jsonrpc-1.0 1.0.0"
    assert f"  interface: JSONRPC 1.0 {url}/" in lines
    assert [(method, path) for method, path, _ in recorder.requests] == [
        ("GET", "/.well-known/agent-card.json")
    ]


# --- call --------------------------------------------------------------------------------------


async def test_call_prints_the_completed_state_and_the_echo(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, _ = echoer
    agents = agents_at(tmp_path, {"echoer": url})

    lines = (
        await ok("call", "echoer", "hello", "--agents", str(agents), cwd=tmp_path)
    ).splitlines()

    assert re.fullmatch(r"echoer: completed  \(task \S+, context \S+\)", lines[0])
    assert lines[1:] == ["  echo: hello"]


async def test_call_json_prints_the_tool_result(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, _ = echoer
    agents = agents_at(tmp_path, {"echoer": url})

    result = json.loads(
        await ok("call", "echoer", "hello", "--json", "--agents", str(agents), cwd=tmp_path)
    )

    assert result["tool"] == "a2a_echoer"
    assert result["agent"] == "echoer"
    assert result["state"] == "completed"
    assert result["text"] == "hello"
    # camelCase keys, as in A2A's JSON and every other --json output.
    assert result["needsInput"] is False
    assert isinstance(result["taskId"], str)
    assert isinstance(result["contextId"], str)
    assert result["taskId"]
    assert result["contextId"]
    assert result["artifacts"] == [{"name": "echo", "text": "hello", "data": [], "files": []}]


async def test_call_stream_prints_the_events_in_order_ending_with_completed(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, _ = echoer
    agents = agents_at(tmp_path, {"echoer": url})

    lines = (
        await ok(
            "call", "echoer", "streamed", "--stream", "--raw", "--agents", str(agents), cwd=tmp_path
        )
    ).splitlines()

    assert len(lines) == 3
    assert lines[0].startswith("[task] ")
    assert lines[0].endswith(" submitted")
    assert lines[1:] == ["[artifact] echo: streamed", "[status] completed"]


async def test_call_answers_a_partners_question_with_task_id_and_completes(
    tmp_path: Path, interviewer: str
) -> None:
    agents = agents_at(tmp_path, {"interviewer": interviewer})

    # Exit status 3: the task waits for input.
    asked = (
        await ok("call", "interviewer", "hi", "--agents", str(agents), cwd=tmp_path, status=3)
    ).splitlines()
    assert asked[0].startswith("interviewer: input-required  (task ")
    task_id, context_id = asked[0].removesuffix(")").split("(task ", 1)[1].split(", context ")
    assert asked[1:] == [
        "  What is your name?",
        f'  answer with: a2a-hub call interviewer "..." --task-id {task_id}',
    ]

    answered = json.loads(
        await ok(
            "call",
            "interviewer",
            "Ada",
            "--task-id",
            task_id,
            "--json",
            "--agents",
            str(agents),
            cwd=tmp_path,
        )
    )
    assert answered["state"] == "completed"
    assert answered["needsInput"] is False
    assert answered["text"] == "Hello, Ada!"
    assert (answered["taskId"], answered["contextId"]) == (task_id, context_id)


async def test_call_that_ends_failed_exits_1_printing_the_failure(
    tmp_path: Path, interviewer: str
) -> None:
    agents = agents_at(tmp_path, {"interviewer": interviewer})

    done = await a2a_hub(
        "call", "interviewer", "hi", "--skill", "broken", "--agents", str(agents), cwd=tmp_path
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("interviewer: failed  (task ")
    assert lines[1:] == ["  the broken skill always fails"]


async def test_call_with_a_skill_the_partner_lacks_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    recorders: list[RequestRecorder] = []

    def build(url: str) -> RequestRecorder:
        recorders.append(RequestRecorder(_interviewer(url)))
        return recorders[0]

    async with serve_on_loopback(build) as url:
        agents = agents_at(tmp_path, {"interviewer": url})
        done = await a2a_hub(
            "call", "interviewer", "hi", "--skill", "brokn", "--agents", str(agents), cwd=tmp_path
        )

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines()[-1] == (
        "a2a-hub call: error: partner 'interviewer' has no skill 'brokn'; did you mean "
        "'broken'? (its skills: interview, broken)"
    )
    assert [method for method, _, _ in recorders[0].requests] == ["GET"]  # the card only


UNKNOWN = """\
version: 1
agents:
  - name: research
    url: http://research.example
  - name: translate
    url: http://translate.example
  - name: retired
    url: http://retired.example
    enabled: false
"""


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["call", "reserch", "hello"], id="call"),
        pytest.param(["agents", "show", "reserch"], id="agents-show"),
        pytest.param(["agents", "check", "reserch"], id="agents-check"),
        pytest.param(["swarm", "hello", "--agent", "reserch"], id="swarm"),
    ],
)
async def test_an_unknown_partner_name_exits_2_listing_the_known_names(
    tmp_path: Path, command: list[str]
) -> None:
    agents = write_agents(tmp_path, UNKNOWN)

    done = await a2a_hub(*command, "--agents", str(agents), cwd=tmp_path)

    # Nothing was sent: a usage error, as the README's table of exit statuses says.
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("a2a-hub: ")
    assert "'reserch'" in done.stderr
    # The known names are the enabled ones: the disabled `retired` is not offered.
    assert "(known: research, translate)" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


async def test_a_broken_agents_yaml_exits_2_naming_the_line_and_suggesting_the_key(
    tmp_path: Path,
) -> None:
    agents = write_agents(
        tmp_path,
        "version: 1\nagents:\n  - name: research\n    ulr: http://research.example\n",
    )

    done = await a2a_hub("call", "research", "hi", "--agents", str(agents), cwd=tmp_path)

    assert done.returncode == 2
    assert "agents.yaml:4:" in done.stderr
    assert "did you mean 'url'?" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


# --- secrets -----------------------------------------------------------------------------------


async def test_a_bearer_secret_reaches_the_partner_and_no_output(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, recorder = echoer
    with unreachable_url() as down:
        agents = write_agents(
            tmp_path,
            "version: 1\nagents:\n"
            f'  - name: echoer\n    url: {url}\n    auth: {{bearer: "${{SECRET_TOKEN}}"}}\n'
            f"  - name: offline\n    url: {down}\n"
            '    auth: {api_key: "${SECRET_TOKEN}", headers: {X-Extra: "${SECRET_TOKEN}"}}\n',
        )
        where = ("--agents", str(agents))
        commands: list[tuple[list[str], int]] = [
            (["agents", "list"], 0),
            (["agents", "show", "echoer"], 0),
            (["agents", "check"], 1),
            (["call", "echoer", "hello", "--json"], 0),
            (["call", "offline", "hello"], 1),
        ]
        # One after the other: each command has the whole of its bound to itself.
        outcomes = {
            index: await a2a_hub(*args, *where, cwd=tmp_path, env={"SECRET_TOKEN": SECRET})
            for index, (args, _) in enumerate(commands)
        }

    for index, (args, status) in enumerate(commands):
        done = outcomes[index]
        assert done.returncode == status, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, args
        assert SECRET not in done.stdout, args
        assert SECRET not in done.stderr, args
    assert recorder.requests, "the partner was never called"
    for method, path, headers in recorder.requests:
        assert headers.get("authorization") == f"Bearer {SECRET}", (method, path)
    assert {method for method, _, _ in recorder.requests} == {"GET", "POST"}


async def test_swarm_and_route_json_use_camel_case_keys(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, _ = echoer
    agents = agents_at(tmp_path, {"echoer": url})

    swarmed = json.loads(
        await ok(
            "swarm", "hello", "--agent", "echoer", "--json", "--agents", str(agents), cwd=tmp_path
        )
    )
    assert swarmed["answers"] == ["hello"]
    [branch] = swarmed["branches"]
    assert set(branch) == {"agent", "index", "state", "answer", "taskId", "seconds"}

    ranked = json.loads(await ok("route", "hello", "--json", "--agents", str(agents), cwd=tmp_path))
    assert {key for candidate in ranked for key in candidate} <= {
        "kind", "name", "score", "reasons", "skill"
    }  # fmt: skip


async def test_swarm_judge_is_named_as_the_swarm_skill_names_it_or_by_the_partner_name(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, _ = echoer
    agents = agents_at(tmp_path, {"echoer": url})
    args = ["swarm", "hi", "--strategy", "best_of", "--agent", "echoer", "--agents", str(agents)]

    outcomes = []
    for judge in ("a2a_echoer", "echoer"):
        done = await a2a_hub(*args, "--judge", judge, "--json", cwd=tmp_path)
        assert "Traceback" not in done.stderr
        result = json.loads(done.stdout)
        outcomes.append((done.returncode, result["ok"], result["reason"]))
    assert outcomes[0] == outcomes[1]

    unknown = await a2a_hub(*args, "--judge", "a2a_nobody", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "a2a_nobody" in unknown.stderr


async def test_agents_show_of_an_unreachable_partner_names_its_url_once(tmp_path: Path) -> None:
    with unreachable_url() as url:
        agents = agents_at(tmp_path, {"gone": url})
        done = await a2a_hub("agents", "show", "gone", "--agents", str(agents), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        f"a2a-hub: cannot reach {url}; check that the agent is running and that the URL is right\n"
    )


async def test_agents_check_aligns_its_columns_and_names_a_refused_connection_once(
    tmp_path: Path, echoer: tuple[str, RequestRecorder]
) -> None:
    url, _ = echoer
    with unreachable_url() as down:
        agents = agents_at(tmp_path, {"a-long-partner-name": down, "echoer": url})
        done = await a2a_hub("agents", "check", "--agents", str(agents), cwd=tmp_path)

    assert done.returncode == 1, done.stdout + done.stderr
    failed, reason, healthy = done.stdout.splitlines()
    assert failed == "FAIL a-long-partner-name  card       -  breaker closed"
    assert re.fullmatch(r"ok   echoer               card +\d+ ms  breaker closed  via .*", healthy)
    assert healthy.index(" breaker ") == failed.index(" breaker "), done.stdout
    # What was refused, where, once: no transport class names, no address nested in itself.
    assert reason == (
        "     agent 'a-long-partner-name': its agent card could not be read (unreachable) "
        f"[GET {down}/.well-known/agent-card.json: connection refused]"
    )
