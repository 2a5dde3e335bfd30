"""The command line's own surface as real `python -m hub` / `a2a-hub` processes: version,
help, and mistakes made on purpose, each an argparse-style error (exit 2) against the
command's own usage, or a message that says what to fix."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from litestar import Litestar

from hub.testing import serve_on_loopback

from .hubproc import ROOT
from .test_cli import cli
from .test_cli_agents import COMMAND, a2a_hub

COMMANDS = [
    "serve",
    "card",
    "skills",
    "send",
    "tasks",
    "agents",
    "call",
    "route",
    "swarm",
    "status",
]


def test_version_names_the_distribution_for_both_entry_points() -> None:
    expected = f"a2a-hub {version('a2a-hub')}\n"
    module = cli("--version")
    assert (module.returncode, module.stdout) == (0, expected)
    script = subprocess.run(
        [*COMMAND, "--version"], capture_output=True, text=True, check=False, timeout=60
    )
    assert (script.returncode, script.stdout) == (0, expected)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_a_description_in_its_help(command: str) -> None:
    done = cli(command, "--help")
    assert done.returncode == 0
    paragraphs = done.stdout.split("\n\n")
    assert paragraphs[0].startswith(f"usage: a2a-hub {command}")
    # The description is the paragraph between the usage and the arguments.
    assert not paragraphs[1].startswith(("positional arguments", "options"))


def test_serve_help_names_the_environment_variables() -> None:
    out = cli("serve", "--help").stdout
    for name in ("HUB_CONFIG", "HUB_PORT", "HUB_STORE", "HUB_AGENTS", "HUB_SECTION__KEY"):
        assert name in out


def test_a_misspelled_flag_is_shown_against_its_own_commands_usage() -> None:
    done = cli("send", "--strem", "http://127.0.0.1:9", "hi")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: a2a-hub send ")
    assert done.stderr.splitlines()[-1] == (
        "a2a-hub send: error: unrecognized arguments: --strem (did you mean --stream?)"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["tasks", "list", "--page-size", "0"],
            "a2a-hub tasks: error: argument --page-size: 0 is out of range (from 1 to 100)",
        ),
        (
            ["swarm", "hi", "--limit", "many"],
            "a2a-hub swarm: error: argument --limit: 'many' is not an integer (1 or more)",
        ),
        (
            ["serve", "--port", "70000"],
            "a2a-hub serve: error: argument --port: 70000 is out of range (from 0 to 65535)",
        ),
        (
            ["send", "127.0.0.1:8000", "hi"],
            "a2a-hub send: error: argument URL: '127.0.0.1:8000' has no scheme; "
            "did you mean http://127.0.0.1:8000?",
        ),
        (
            ["send", "--url", "127.0.0.1:8000", "hi"],
            "a2a-hub send: error: argument --url: '127.0.0.1:8000' has no scheme; "
            "did you mean http://127.0.0.1:8000?",
        ),
        (
            ["call", "somebody", "hi", "--data", "{not json"],
            "a2a-hub call: error: --data is not valid JSON (Expecting property name enclosed "
            "in double quotes, line 1 column 2)",
        ),
    ],
)
def test_a_bad_value_is_an_argparse_error_with_what_is_allowed(
    tmp_path: Path, args: list[str], error: str
) -> None:
    (tmp_path / "agents.yaml").write_text(
        "version: 1\nagents:\n  - name: somebody\n    url: http://127.0.0.1:9\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "hub", *args],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"usage: a2a-hub {args[0]} ")
    assert done.stderr.splitlines()[-1] == error
    assert "Traceback" not in done.stderr


@pytest.mark.anyio
async def test_send_to_a_url_without_an_agent_card_says_where_the_card_was_looked_for(
    tmp_path: Path,
) -> None:
    # An HTTP server that is no A2A agent: an app without routes answers 404 everywhere.
    async with serve_on_loopback(Litestar(route_handlers=[])) as url:
        with anyio.fail_after(60):
            done = await a2a_hub("send", url, "hi", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        f"a2a-hub: no A2A agent card at {url}/.well-known/agent-card.json, and {url} does not "
        "answer A2A JSON-RPC either; check the URL (give the agent's base URL, or its card's "
        "URL)\n"
    )


@pytest.mark.anyio
async def test_serve_without_a_settings_file_says_it_serves_the_built_in_defaults(
    tmp_path: Path,
) -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"}
    process = await anyio.open_process(
        [sys.executable, "-m", "hub", "serve", "--port", "0", "--store", "memory"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    said: list[str] = []
    async with process:
        assert process.stderr is not None
        lines = BufferedByteReceiveStream(process.stderr)
        with anyio.fail_after(60):
            while not said or "listening on" not in said[-1]:
                said.append((await lines.receive_until(b"\n", 65536)).decode())
        process.terminate()
    assert said[0] == (
        "a2a-hub: no config/hub.yaml here: serving the built-in defaults "
        "(see docs/configuration.md)"
    )
    assert said[1].startswith("a2a-hub listening on http://127.0.0.1:")
