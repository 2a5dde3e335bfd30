"""Ctrl-C and a closed pipe in front of real `a2a-hub` processes: one line on stderr, never a
traceback, and the exit status scripts rely on (130 interrupted, 141 output closed).

The partner is a hub served by this test on a loopback socket: its skill `forever` sets an
event when it starts and then works until canceled, so the test knows when a command is in
the middle of its work before it presses Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from hub import SkillContext, skill
from hub.app import create_app
from hub.client import A2AClient, build_http_client, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.protocol import SendMessageConfiguration, Task
from hub.skills import load_skills
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback

from .hubproc import ROOT
from .test_cli_agents import COMMAND, a2a_hub, write_agents

pytestmark = pytest.mark.anyio

TIMEOUT = 30.0


@dataclass
class Partner:
    url: str
    started: anyio.Event
    folder: Path
    task_id: str = ""
    go: anyio.Event = field(default_factory=anyio.Event)

    def rearm(self) -> None:
        self.started = anyio.Event()


@pytest.fixture
async def partner(tmp_path: Path) -> AsyncIterator[Partner]:
    state = Partner(url="", started=anyio.Event(), folder=tmp_path)

    @skill(id="halfway", description="Writes half its answer, then the rest once let go.")
    async def halfway(ctx: SkillContext) -> AsyncIterator[str]:
        yield "Hello, "
        state.started.set()
        await state.go.wait()
        yield "world"

    @skill(id="forever", description="Works until it is canceled.")
    async def forever(ctx: SkillContext) -> str:
        await ctx.progress("working")
        state.started.set()
        await anyio.sleep_forever()
        return "never"

    def build(url: str) -> object:
        settings = Settings(
            server=ServerSettings(public_url=url), store=StoreSettings(kind="memory")
        )
        skills = {**load_skills(settings.skills), "forever": forever, "halfway": halfway}
        return create_app(settings, store=MemoryTaskStore(), skills=skills)

    async with serve_on_loopback(build) as url:
        state.url = url
        write_agents(
            tmp_path,
            f"version: 1\nagents:\n  - name: first\n    url: {url}\n"
            f"  - name: second\n    url: {url}\n",
        )
        yield state


async def start(*args: str, cwd: Path, stdout: int = subprocess.PIPE) -> Process:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env = {**inherited, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return await anyio.open_process(
        [*COMMAND, *args], cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE
    )


async def interrupt(process: Process) -> tuple[int, str]:
    """Ctrl-C, then the exit status and everything the command said on stderr."""
    process.send_signal(signal.SIGINT)
    assert process.stderr is not None
    said = b""
    async for chunk in process.stderr:
        said += chunk
    return await process.wait(), said.decode()


STREAMS = {
    "send --stream": lambda p: ["send", "--stream", "--skill", "forever", p.url, "hi"],
    "call --stream": lambda p: ["call", "--stream", "first", "hi", "--skill", "forever"],
}


@pytest.mark.parametrize("command", list(STREAMS))
async def test_ctrl_c_during_a_stream_exits_130_saying_how_to_cancel_or_follow_the_task(
    partner: Partner, command: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(*STREAMS[command](partner), cwd=partner.folder)
        async with process:
            assert process.stdout is not None
            lines = BufferedByteReceiveStream(process.stdout)
            first = (await lines.receive_until(b"\n", 65536)).decode()
            task_id = first.split()[1]  # "[task] ID submitted"
            await partner.started.wait()
            status, said = await interrupt(process)
    assert status == 130, said
    assert "Traceback" not in said
    # A partner called by name is reached again by name (with the credentials of agents.yaml,
    # its address not shown); an agent called by URL, by that URL.
    where = "--agent first" if command.startswith("call") else f"--url {partner.url}"
    assert said.splitlines() == [
        f"a2a-hub: interrupted; task {task_id} may still run on the agent: cancel it with "
        f"`a2a-hub tasks cancel {task_id} {where}` or follow it with "
        f"`a2a-hub tasks subscribe {task_id} {where}`"
    ]
    # The command the line gives does what it says.
    with anyio.fail_after(TIMEOUT):
        canceled = await a2a_hub(*f"tasks cancel {task_id} {where}".split(), cwd=partner.folder)
    assert canceled.returncode == 0, canceled.stderr
    assert canceled.stdout.splitlines()[0].endswith(": canceled")


async def test_following_a_running_task_prints_the_text_it_produced_before_then_the_rest(
    partner: Partner,
) -> None:
    async with build_http_client() as http:
        client = await A2AClient.from_url(partner.url, http=http)
        working = await client.send(
            user_message("hi"),
            configuration=SendMessageConfiguration(return_immediately=True),
            metadata={"skill": "halfway"},
        )
    assert isinstance(working, Task)
    with anyio.fail_after(TIMEOUT):
        await partner.started.wait()  # "Hello, " is written
        process = await start(
            "tasks", "subscribe", working.id, "--agent", "first", cwd=partner.folder
        )
        async with process:
            assert process.stdout is not None
            assert process.stderr is not None
            lines = BufferedByteReceiveStream(process.stdout)
            first = (await lines.receive_until(b"\n", 65536)).decode()
            partner.go.set()
            rest = b""
            async for chunk in process.stdout:
                rest += chunk
            said = b""
            async for chunk in process.stderr:
                said += chunk
            status = await process.wait()
    assert status == 0, said.decode()
    assert first == f"[task] {working.id} working"
    assert rest.decode().splitlines() == ["Hello, world", "[status] completed"]


WAITS = {
    "call": ["call", "first", "hi", "--skill", "forever"],
    "swarm": ["swarm", "hi", "--agent", "first", "--agent", "second", "--skill", "forever"],
}


@pytest.mark.parametrize("command", list(WAITS))
async def test_ctrl_c_while_waiting_for_an_answer_exits_130_with_one_line(
    partner: Partner, command: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start(*WAITS[command], cwd=partner.folder)
        async with process:
            await partner.started.wait()
            status, said = await interrupt(process)
    assert status == 130, said
    assert "Traceback" not in said
    assert len(said.splitlines()) == 1
    assert said.startswith("a2a-hub: interrupted; ")


CLOSED = {
    "--help": lambda p: ["--help"],
    "--version": lambda p: ["--version"],
    "send --help": lambda p: ["send", "--help"],
    "card": lambda p: ["card"],
    "skills": lambda p: ["skills"],
    "send": lambda p: ["send", p.url, "hi"],
    "send --stream": lambda p: ["send", "--stream", p.url, "hi"],
    "tasks list": lambda p: ["tasks", "list", "--url", p.url],
    "agents list": lambda p: ["agents", "list"],
    "agents show": lambda p: ["agents", "show", "first"],
    "agents check": lambda p: ["agents", "check"],
    "call": lambda p: ["call", "first", "hi"],
    "call --stream": lambda p: ["call", "--stream", "first", "hi"],
    "route": lambda p: ["route", "hi"],
    "swarm": lambda p: ["swarm", "hi"],
    "agents refresh": lambda p: ["agents", "refresh", "first"],
    "tasks get": lambda p: ["tasks", "get", p.task_id, "--url", p.url],
    "tasks subscribe": lambda p: ["tasks", "subscribe", p.task_id, "--url", p.url],
}


@pytest.mark.parametrize("command", list(CLOSED))
async def test_a_closed_output_ends_the_command_quietly(partner: Partner, command: str) -> None:
    if command.startswith("tasks ") and command != "tasks list":
        # A task that works until it is canceled, for the command to print.
        async with build_http_client() as http:
            client = await A2AClient.from_url(partner.url, http=http)
            working = await client.send(
                user_message("hi"),
                configuration=SendMessageConfiguration(return_immediately=True),
                metadata={"skill": "forever"},
            )
            assert isinstance(working, Task)
            partner.task_id = working.id
    # The reading end is closed before the command writes anything: every write fails.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with anyio.fail_after(TIMEOUT):
            process = await start(*CLOSED[command](partner), cwd=partner.folder, stdout=write_end)
    finally:
        os.close(write_end)
    with anyio.fail_after(TIMEOUT):
        async with process:
            assert process.stderr is not None
            said = b""
            async for chunk in process.stderr:
                said += chunk
            status = await process.wait()
    assert "Traceback" not in said.decode()
    assert said == b""
    # argparse's help and version output already ignore a closed pipe and exit 0.
    assert status == (0 if "--help" in command or command == "--version" else 141)


# Every command that waits on an agent, stopped while it waits (those above are stopped in the
# middle of a task): each reads a card first, from a server that takes the request and never
# answers. One way in per code path: `tasks get` and `cancel` wait as `tasks list` does,
# `agents refresh` as `agents show`.
SILENT = {
    "send": lambda url: ["send", url, "hi"],
    "tasks list": lambda url: ["tasks", "list", "--url", url],
    "tasks subscribe": lambda url: ["tasks", "subscribe", "t-1", "--url", url],
    "agents show": lambda url: ["agents", "show", "silent"],
    "agents check": lambda url: ["agents", "check"],
    "call": lambda url: ["call", "silent", "hi"],
    "route": lambda url: ["route", "hi"],
    "swarm": lambda url: ["swarm", "hi", "--agent", "silent"],
}


async def test_ctrl_c_while_any_command_waits_for_an_agent_exits_130_with_one_line(
    tmp_path: Path,
) -> None:
    results: dict[str, tuple[int, str]] = {}

    async def stopped_while_waiting(name: str) -> None:
        """The command, on a server of its own: Ctrl-C once its first request arrived."""
        waiting = anyio.Event()

        async def take_and_never_answer(stream: anyio.abc.SocketStream) -> None:
            async with stream:
                await stream.receive()
                waiting.set()
                await anyio.sleep_forever()

        folder = tmp_path / name.replace(" ", "-")
        folder.mkdir()
        async with (
            await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0) as listener,
            anyio.create_task_group() as serving,
        ):
            port = listener.extra(anyio.abc.SocketAttribute.local_port)
            url = f"http://127.0.0.1:{port}"
            write_agents(folder, f"version: 1\nagents:\n  - name: silent\n    url: {url}\n")
            serving.start_soon(listener.serve, take_and_never_answer)
            process = await start(*SILENT[name](url), cwd=folder)
            async with process:
                await waiting.wait()
                results[name] = await interrupt(process)
            serving.cancel_scope.cancel()

    # All at once: each is a process of its own, most of its time spent starting.
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as group:
            for name in SILENT:
                group.start_soon(stopped_while_waiting, name)
    assert set(results) == set(SILENT)
    for name, (status, said) in results.items():
        assert status == 130, (name, said)
        assert "Traceback" not in said, name
        assert len(said.splitlines()) == 1, (name, said)
        assert said.startswith("a2a-hub: interrupted; "), (name, said)


async def test_ctrl_c_stops_serve_after_its_shutdown_with_exit_130(tmp_path: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        process = await start("serve", "--port", "0", "--store", "memory", cwd=tmp_path)
        async with process:
            assert process.stderr is not None
            lines = BufferedByteReceiveStream(process.stderr)
            said = b""
            while b"Application startup complete." not in said:
                said += await lines.receive_until(b"\n", 65536) + b"\n"
            process.send_signal(signal.SIGINT)
            async for chunk in process.stderr:
                said += chunk
            status = await process.wait()
    text = said.decode()
    assert status == 130, text
    assert "Traceback" not in text
    assert "Application shutdown complete." in text  # shut down in order, then reported
    assert text.splitlines()[-1] == "a2a-hub: interrupted; `a2a-hub serve` was stopped"
