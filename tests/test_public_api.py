"""The exported names: sorted, complete, and every one importable."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PACKAGES = [
    "hub",
    "hub.errors",
    "hub.protocol",
    "hub.protocol.v03",
    "hub.store",
    "hub.tasks",
    "hub.push",
    "hub.skills",
    "hub.app",
    "hub.assembly",
    "hub.partners",
    "hub.client",
    "hub.registry",
    "hub.tools",
    "hub.swarm",
    "hub.runtime",
    "hub.protocol.trace",
    "hub.config",
    "hub.testing",
    "hub.testing.local_model",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_every_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=lambda item: (not item.isupper(), item))
    assert len(exported) == len(set(exported))
    for attribute in exported:
        assert hasattr(module, attribute), f"{name}.{attribute}"


def test_the_skill_author_api_is_at_the_top() -> None:
    import hub

    assert {"skill", "SkillContext", "SkillError", "load_settings"} <= set(hub.__all__)
    assert {"TaskState", "Part", "Artifact", "Message", "ToolResult", "ClientError"} <= set(
        hub.__all__
    )


USER_SKILLS = """\
from hub import (
    Artifact,
    ClientError,
    Hub,
    Message,
    Part,
    SkillContext,
    SkillError,
    StateName,
    TaskState,
    ToolResult,
    skill,
)


@skill(id="greet", description="Greets.")
async def greet(ctx: SkillContext) -> str:
    await ctx.progress("thinking")
    return f"Hello, {ctx.text}!"


@skill(id="parts", description="Answers with parts.")
async def parts(ctx: SkillContext) -> list[Part]:
    return [Part(text="one"), Part(data={"n": 2})]


@skill(id="ask", description="Asks, then calls a partner.")
async def ask(ctx: SkillContext) -> Artifact | Message:
    answer: Message = await ctx.ask("Which partner?")
    try:
        result: ToolResult = await ctx.agents[answer.text()].call(message=ctx.text)
    except ClientError as exc:
        raise SkillError(f"the partner failed: {exc}") from exc
    state: StateName = result.state
    if state != "completed":
        raise ctx.fail(f"the partner ended {state}")
    voted = await ctx.swarm(strategy="vote", quorum=2)
    return Artifact(artifact_id="a", parts=[Part(text=voted.answer or "")])


def served(hub: Hub) -> object:
    return hub.asgi_app()


FINAL = {TaskState.COMPLETED, TaskState.FAILED}
"""

MISTAKES = """\
from hub import SkillContext, ToolResult, skill
from hub import Stratgy


@skill(id="typo", description="Typos the type checker catches.")
async def typo(ctx: SkillContext) -> str:
    await ctx.swarm(strategy="majority")
    result: ToolResult = await ctx.agents["x"].call(message="hi")
    return "yes" if result.state == "complete" else "no"
"""


def _mypy_strict(folder: Path, module: str, body: str) -> subprocess.CompletedProcess[str]:
    """`mypy --strict` as a user runs it: in a folder of their own, outside this repository,
    on the package as installed in the environment."""
    (folder / f"{module}.py").write_text(body, encoding="utf-8")
    mypy = Path(sys.executable).parent / "mypy"
    env = {name: value for name, value in os.environ.items() if not name.startswith("MYPY")}
    return subprocess.run(
        [str(mypy), "--strict", "--cache-dir", str(folder / ".mypy_cache"), f"{module}.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.timeout(900)  # mypy's own bound is 600 s
def test_a_users_skill_module_passes_mypy_strict_outside_the_repository(
    tmp_path: Path,
) -> None:
    assert not tmp_path.is_relative_to(ROOT)
    done = _mypy_strict(tmp_path, "my_skills", USER_SKILLS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in 1 source file")


@pytest.mark.slow
@pytest.mark.timeout(900)  # mypy's own bound is 600 s
def test_mypy_catches_a_misspelled_name_strategy_and_state_in_a_users_module(
    tmp_path: Path,
) -> None:
    done = _mypy_strict(tmp_path, "mistakes", MISTAKES)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert len(errors) == 3, done.stdout
    # The names are exported lazily, yet a misspelled one is still an error.
    assert errors[0].startswith('mistakes.py:2: error: Module "hub" has no attribute "Stratgy"')
    assert errors[1].startswith('mistakes.py:7: error: Argument "strategy"')
    assert errors[2].startswith("mistakes.py:9: error: Non-overlapping equality check")


def test_the_package_is_marked_typed() -> None:
    assert (ROOT / "hub" / "py.typed").is_file()
