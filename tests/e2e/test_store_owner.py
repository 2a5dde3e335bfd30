"""One process owns a SQLite store. Beside a running `a2a-hub serve`, a second `serve`, an
`a2a-hub mcp --store` and a `uvicorn my_app:app` on the same file are refused (exit 2 for the
command line) with a message naming the running hub, while `a2a-hub mcp` as the README starts
it keeps its tasks apart; the running hub's live task is never touched. Once the owner is
killed with -9, the file is free for the next hub, whose start-up recovery then applies."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from . import rpc
from .hubproc import ROOT
from .partnerproc import _HUB_LINE, Child, stop_all

USAGE = 2
"""A configuration error: nothing was read or sent."""


@dataclass
class Owner:
    config: Path
    database: Path
    hub: Child
    url: str
    task_id: str


def _env() -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    return {**inherited, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[Owner]:
    """A running hub on a SQLite file, with one task working on it."""
    database = tmp_path / "var" / "hub.db"
    config = tmp_path / "hub.yaml"
    config.write_text(
        "server: {log_level: warning}\n"
        f"store: {{kind: sqlite, path: {database}}}\n"
        "skills:\n"
        "  - builtin: echo\n"
        "  - module: tests.e2e.crash_skills:forever\n",
        encoding="utf-8",
    )
    argv = [sys.executable, "-m", "hub", "serve", "--config", str(config), "--port", "0"]
    hub = Child(argv, _HUB_LINE, "owning hub")
    try:
        url = hub.wait_ready(60)
        task = rpc.send(url, "go", {"skill": "forever"}, return_immediately=True)
        rpc.wait_for(
            lambda: (
                True if rpc.state(rpc.get_task(url, task["id"])) == "TASK_STATE_WORKING" else None
            ),
            what="the forever task to work",
            timeout=60,
        )
        yield Owner(config, database, hub, url, task["id"])
    finally:
        stop_all([hub])


def _refused(argv: list[str], owner: Owner, *, status: int = USAGE) -> str:
    """Run a command that must be refused; what it said on stderr."""
    done = subprocess.run(
        argv,
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == status, done.stderr
    assert f"in use by another process (pid {owner.hub.process.pid}" in done.stderr
    return done.stderr


def _still_working(owner: Owner) -> None:
    """The owner's task works on, in the hub and in its file (which a second process's
    start-up recovery would have marked failed behind the hub's back)."""
    task = rpc.get_task(owner.url, owner.task_id)
    assert rpc.state(task) == "TASK_STATE_WORKING", task
    reader = sqlite3.connect(f"file:{owner.database}?mode=ro", uri=True)
    try:
        stored = reader.execute(
            "SELECT state FROM tasks WHERE task_id = ?", (owner.task_id,)
        ).fetchall()
    finally:
        reader.close()
    assert stored == [("TASK_STATE_WORKING",)]
    assert rpc.state(rpc.send(owner.url, "still here")) == "TASK_STATE_COMPLETED"


def test_a_second_serve_on_the_same_file_is_refused_naming_the_running_hub(
    owner: Owner,
) -> None:
    said = _refused(
        [sys.executable, "-m", "hub", "serve", "--config", str(owner.config), "--port", "0"],
        owner,
    )
    assert said.startswith("a2a-hub: configuration error:\n")
    assert "hub serve --config" in said  # the other process's command
    assert "--store memory" in said
    assert "listening on" not in said  # refused before binding
    _still_working(owner)


def test_mcp_given_the_same_file_is_refused(owner: Owner) -> None:
    argv = [sys.executable, "-m", "hub", "mcp", "--config", str(owner.config)]
    _refused([*argv, "--store", str(owner.database)], owner)
    _still_working(owner)


def test_uvicorn_serving_the_embedded_app_on_the_same_file_is_refused(
    owner: Owner, tmp_path: Path
) -> None:
    app = tmp_path / "my_app.py"
    app.write_text(
        f"from hub import Hub\n\napp = Hub.from_config({str(owner.config)!r}).asgi_app()\n",
        encoding="utf-8",
    )
    argv = [sys.executable, "-m", "uvicorn", "my_app:app", "--app-dir", str(tmp_path)]
    # uvicorn's own status for an app whose start-up failed.
    _refused([*argv, "--port", "0"], owner, status=3)
    _still_working(owner)


@pytest.mark.anyio
async def test_mcp_started_as_the_readme_shows_keeps_its_tasks_apart(owner: Owner) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hub", "mcp", "--config", str(owner.config)],
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    with anyio.fail_after(120):
        async with Client(params) as client:
            result = await client.call_tool("skill_echo", {"message": "hello"})
            assert not result.is_error
    _still_working(owner)


def test_once_the_owner_is_killed_the_next_hub_takes_the_file_over(owner: Owner) -> None:
    owner.hub.process.send_signal(signal.SIGKILL)
    owner.hub.process.wait(timeout=30)
    argv = [sys.executable, "-m", "hub", "serve", "--config", str(owner.config), "--port", "0"]
    successor = Child(argv, _HUB_LINE, "next hub")
    try:
        url = successor.wait_ready(60)
        interrupted = rpc.settled(url, owner.task_id, timeout=60)
    finally:
        stop_all([successor])
    assert rpc.state(interrupted) == "TASK_STATE_FAILED"
    assert rpc.status_text(interrupted) == "interrupted by restart"
