"""`a2a-hub send`'s options reach the agent: metadata, the delegate and swarm directives, a
data part, file parts, extra headers and a time limit; checked by a real CLI process against
a hub served by this test, whose skill answers with what it was sent."""

from __future__ import annotations

import base64
import json
import os
import pty
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hub import Part, SkillContext, skill
from hub.app import create_app
from hub.config import ServerSettings, Settings, StoreSettings
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.scripted import card_document

from .hubproc import ROOT
from .test_cli_agents import COMMAND, RequestRecorder, a2a_hub, ok, write_agents

pytestmark = pytest.mark.anyio


@skill(id="inspect", description="Answers with the metadata and parts it was sent.")
async def inspect(ctx: SkillContext) -> str:
    parts = [
        part.model_dump(mode="json", by_alias=True, exclude_none=True) for part in ctx.message.parts
    ]
    return json.dumps({"metadata": ctx.metadata, "parts": parts})


@skill(id="forever", description="Works until it is canceled.")
async def forever(ctx: SkillContext) -> str:
    await anyio.sleep_forever()
    return "never"


@skill(id="count", description="Counts to three, one chunk at a time.")
async def count(ctx: SkillContext) -> AsyncIterator[str]:
    for word in ("one ", "two ", "three"):
        yield word


@skill(id="report", description="Answers as the swarm skill does: a text and a data part.")
async def report(ctx: SkillContext) -> None:
    await ctx.artifact([Part(text="two answers"), Part(data={"answers": ["a", "b"]})], name="swarm")


@pytest.fixture
async def agent() -> AsyncIterator[tuple[str, RequestRecorder]]:
    recorders: list[RequestRecorder] = []

    def build(url: str) -> RequestRecorder:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            default_skill="inspect",
        )
        app = create_app(
            settings,
            store=MemoryTaskStore(),
            skills={"inspect": inspect, "forever": forever, "count": count, "report": report},
        )
        recorders.append(RequestRecorder(app))
        return recorders[0]

    async with serve_on_loopback(build) as url:
        yield url, recorders[0]


def seen(task: dict[str, Any]) -> dict[str, Any]:
    seen_text: str = task["artifacts"][0]["parts"][0]["text"]
    return json.loads(seen_text)  # type: ignore[no-any-return]


async def test_every_send_option_reaches_the_agent(
    tmp_path: Path, agent: tuple[str, RequestRecorder]
) -> None:
    url, recorder = agent
    (tmp_path / "payload.json").write_text('{"rows": [1, 2]}')
    (tmp_path / "notes.txt").write_bytes(b"some notes\n")
    out = await ok(
        "send", url, "look",
        "--metadata", "priority=2", "--metadata", "label=urgent",
        "--agent", "research", "--strategy", "vote", "--skill", "inspect",
        "--data", "@payload.json", "--file", "notes.txt",
        "--header", "X-Trace-Note: from the cli", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    received = seen(json.loads(out))
    assert received["metadata"] == {
        "priority": 2,
        "label": "urgent",
        "agent": "research",
        "strategy": "vote",
        "skill": "inspect",
    }
    assert received["parts"] == [
        {"text": "look"},
        {"data": {"rows": [1, 2]}},
        {
            "raw": base64.b64encode(b"some notes\n").decode(),
            "filename": "notes.txt",
            "mediaType": "text/plain",
        },
    ]
    posts = [headers for method, _, headers in recorder.requests if method == "POST"]
    assert [headers.get("x-trace-note") for headers in posts] == ["from the cli"]


async def test_send_timeout_gives_up_with_exit_1_naming_the_task(
    tmp_path: Path, agent: tuple[str, RequestRecorder]
) -> None:
    url, _ = agent
    # The timeout runs from the card's fetch: it must leave the agent time to name the task
    # on a loaded machine, or there is no task to name.
    done = await a2a_hub(
        "send", "--stream", "--skill", "forever", "--timeout", "5", url, "hi", cwd=tmp_path
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"a2a-hub: no answer from {url} within --timeout 5s; task ")
    assert done.stderr.endswith(" may still run\n")


NO_FILE = "No such file or directory"
BAD_JSON = "Expecting property name enclosed in double quotes"


@pytest.mark.parametrize(
    ("option", "error"),
    [
        (["--data", "@missing.json"], f"--data: cannot read missing.json ({NO_FILE})"),
        (["--data", "{oops"], f"--data is not valid JSON ({BAD_JSON}, line 1 column 2)"),
        (["--file", "missing.bin"], f"--file: cannot read missing.bin ({NO_FILE})"),
        (["--metadata", "novalue"], "argument --metadata: 'novalue' is not KEY=VALUE"),
        (["--header", "NoColon"], "argument --header: 'NoColon' is not 'Name: value'"),
    ],
)  # fmt: skip
async def test_a_send_option_that_cannot_be_used_is_a_usage_error(
    tmp_path: Path, agent: tuple[str, RequestRecorder], option: list[str], error: str
) -> None:
    url, recorder = agent
    done = await a2a_hub("send", url, "hi", *option, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == f"a2a-hub send: error: {error}"
    assert [method for method, _, _ in recorder.requests if method == "POST"] == []


async def test_streamed_chunks_are_printed_as_one_text_and_raw_shows_each_event(
    tmp_path: Path, agent: tuple[str, RequestRecorder]
) -> None:
    url, _ = agent
    text = (await ok("send", "--stream", "--skill", "count", url, "go", cwd=tmp_path)).splitlines()
    assert text[0].startswith("[task] ")
    assert text[1:] == ["[status] working", "one two three", "[status] completed"]

    raw = await ok("send", "--stream", "--raw", "--skill", "count", url, "go", cwd=tmp_path)
    assert [line for line in raw.splitlines() if line.startswith("[artifact]")] == [
        "[artifact] response: one ",
        "[artifact] response: two ",
        "[artifact] response: three",
    ]


@pytest.mark.parametrize("command", ["send", "call"])
async def test_colours_only_on_a_terminal_and_never_with_no_color(
    tmp_path: Path, agent: tuple[str, RequestRecorder], command: str
) -> None:
    url, _ = agent
    write_agents(tmp_path, f"version: 1\nagents:\n  - name: inspector\n    url: {url}\n")
    argv = [command, url if command == "send" else "inspector", "hi"]
    green = "\033[32mcompleted\033[0m"

    async def on_a_terminal(**env: str) -> str:
        controller, terminal = pty.openpty()
        try:
            with anyio.fail_after(60):
                process = await anyio.open_process(
                    [*COMMAND, *argv],
                    cwd=tmp_path,
                    env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                    stdout=terminal,
                    stderr=subprocess.PIPE,
                )
                async with process:
                    assert await process.wait() == 0
        finally:
            os.close(terminal)
        said = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal's other end is closed: all was read
                break
            if not chunk:
                break
            said += chunk
        os.close(controller)
        return said.decode()

    assert green in await on_a_terminal()
    plain = await on_a_terminal(NO_COLOR="1")
    assert "\033[" not in plain
    assert ": completed" in plain
    piped = await ok(*argv, cwd=tmp_path)
    assert "\033[" not in piped
    assert ": completed" in piped


STORE_DOWN = "the hub cannot reach its task store right now; retry shortly"


def _hub_without_its_store(url: str) -> Any:
    """An agent that answers every call as a hub whose task store is down: its card, then the
    hub's own JSON-RPC error (-32603, reason STORE_UNAVAILABLE) for any request."""
    from hub.errors import StoreUnavailableError
    from hub.server.errors import jsonrpc_error

    card = card_document(
        url, name="storeless", version="1", description="a hub whose store is down", skills=[]
    )

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] == "GET":
            answer: dict[str, Any] = card
        else:
            error = StoreUnavailableError(STORE_DOWN, metadata={"retryAfter": "1"})
            answer = {"jsonrpc": "2.0", "id": json.loads(body)["id"], "error": jsonrpc_error(error)}
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": json.dumps(answer).encode()})

    return app


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["send"], id="send"),
        pytest.param(["send", "--stream"], id="send-stream"),
        pytest.param(["tasks", "get", "t-1", "--url"], id="tasks-get"),
    ],
)
async def test_the_agents_own_message_is_shown_for_its_internal_error(
    tmp_path: Path, command: list[str]
) -> None:
    async with serve_on_loopback(_hub_without_its_store) as url:
        args = [*command, url] + (["hello"] if command[0] == "send" else [])
        done = await a2a_hub(*args, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    operation = "GetTask" if command[0] == "tasks" else "SendMessage"
    if "--stream" in command:
        operation = "SendStreamingMessage"
    assert done.stderr == (
        f"a2a-hub: agent '{url}': {operation} failed: {STORE_DOWN} (code -32603)\n"
    )


async def test_an_artifacts_text_and_its_data_are_printed_on_lines_of_their_own(
    tmp_path: Path, agent: tuple[str, RequestRecorder]
) -> None:
    url, _ = agent
    lines = (await ok("send", "--skill", "report", url, "hi", cwd=tmp_path)).splitlines()
    assert lines[1:] == [
        "  artifact swarm: two answers",
        '  artifact swarm data: {"answers": ["a", "b"]}',
    ]
