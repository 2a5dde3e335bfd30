"""The examples of README.md and docs/*.md, run so that they stay true.

A fenced block is an example to run unless the line before its fence is a comment
`<!-- example: fragment (why) -->`: a piece of a larger program (the body of a skill, a line
inside an `async with` shown above it). Every Python example is a whole script (no top-level
`await`); the skills the examples define are served and answer; the README's CLI tour runs
against a real hub process, its placeholders (`TASK_ID`, `NAME`, the address) filled in.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from hub import Hub, Skill
from hub.client import A2AClient, build_http_client, user_message
from hub.protocol import Task, TaskState
from hub.testing import serve_on_loopback
from tests.e2e.hubproc import hub_process

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FRAGMENT = "<!-- example: fragment"


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    text: str
    fragment: bool

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _blocks() -> list[Block]:
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            fence = re.match(r"^```(\w+)$", lines[index])
            if fence is None:
                index += 1
                continue
            end = lines.index("```", index + 1)
            before = lines[index - 1] if index else ""
            found.append(
                Block(
                    path=path,
                    line=index + 1,
                    lang=fence.group(1),
                    text="\n".join(lines[index + 1 : end]) + "\n",
                    fragment=before.startswith(FRAGMENT),
                )
            )
            index = end + 1
    return found


BLOCKS = _blocks()
PYTHON = [block for block in BLOCKS if block.lang == "python" and not block.fragment]


@pytest.mark.parametrize("block", PYTHON, ids=lambda block: block.name)
def test_every_python_example_is_a_whole_script(block: Block) -> None:
    compile(block.text, block.name, "exec")


def _example_skills() -> list[Skill]:
    skills: list[Skill] = []
    for block in PYTHON:
        if "@skill(" not in block.text:
            continue
        module = types.ModuleType(f"example_{block.line}")
        exec(compile(block.text, block.name, "exec"), module.__dict__)  # runs as `import`
        skills.extend(value for value in vars(module).values() if isinstance(value, Skill))
    return skills


@pytest.mark.anyio
async def test_the_skills_the_examples_define_are_served_and_answer() -> None:
    skills = _example_skills()
    assert {"summarize", "count", "interview", "greet"} <= {s.skill_id for s in skills}
    hub = Hub(skills=skills, agents=ROOT / "tests" / "docs" / "no-agents.yaml")
    async with (
        serve_on_loopback(lambda url: hub.asgi_app(public_url=url)) as url,
        build_http_client() as http,
    ):
        client = await A2AClient.from_url(url, http=http)
        for local in skills:
            reply = await client.send(
                user_message("three little words"), metadata={"skill": local.skill_id}
            )
            assert isinstance(reply, Task), local.skill_id
            waiting = TaskState.INPUT_REQUIRED if local.skill_id == "interview" else None
            assert reply.status.state is (waiting or TaskState.COMPLETED), local.skill_id


def _cli_tour() -> list[str]:
    [tour] = [
        block
        for block in BLOCKS
        if block.path.name == "README.md"
        and block.lang == "sh"
        and "a2a-hub tasks get" in block.text
    ]
    return [line.split("#", 1)[0].strip() for line in tour.text.splitlines() if line.strip()]


def test_the_readme_cli_tour_runs_against_a_real_hub(tmp_path: Path) -> None:
    served = tmp_path / "served.yaml"
    served.write_text(
        "server: {log_level: warning}\nstore: {kind: memory}\nskills:\n  - builtin: echo\n"
        "  - module: tests.e2e.crash_skills:interview\n"
    )
    with hub_process(served) as (_, url):
        # The folder the user runs the commands in: its settings point at the running hub.
        (tmp_path / "config").mkdir()
        (tmp_path / "config" / "hub.yaml").write_text(
            f"server: {{public_url: '{url}'}}\nskills:\n  - builtin: echo\n"
        )
        (tmp_path / "agents.yaml").write_text(
            f"version: 1\nagents:\n  - name: self\n    url: {url}\n"
        )

        def run(command: str) -> subprocess.CompletedProcess[str]:
            argv = shlex.split(command.replace("http://127.0.0.1:8000", url))
            assert argv[0].endswith("a2a-hub"), command
            return subprocess.run(
                [sys.executable, "-m", "hub", *argv[1:]],
                cwd=tmp_path,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )

        completed = json.loads(run(f'a2a-hub send {url} "done" --json').stdout)["id"]
        parked = [
            json.loads(run(f"a2a-hub send {url} hi --skill interview --json").stdout)["id"]
            for _ in range(2)
        ]
        task_for = {"get": completed, "cancel": parked[0], "subscribe": parked[1]}
        expected = {"subscribe": 3}  # the task it follows waits for input
        for command in _cli_tour():
            action = command.split()[2] if command.split()[1] == "tasks" else ""
            command = command.replace("TASK_ID", task_for.get(action, "")).replace("NAME", "self")
            done = run(command)
            assert "Traceback" not in done.stderr, command
            assert done.returncode == expected.get(action, 0), (command, done.stderr)
            assert done.stdout, command
