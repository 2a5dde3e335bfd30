"""The documented example runs, and the documentation covers every setting."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from hub import Hub
from hub.client import A2AClient, build_http_client, user_message
from hub.config import ProcessSkillSettings, load_settings
from hub.protocol import StreamResponse, TaskState
from hub.skills import load_skills
from hub.testing import serve_on_loopback

from .harness import artifact_text, request, running_hub, send

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.anyio
async def test_the_example_config_serves_a_working_process_skill(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)  # the example's paths are from the repository root
    settings = load_settings(ROOT / "config/examples/process-skills.yaml", env={})
    skills = load_skills(settings.skills)
    async with running_hub(skills["word-count"]) as hub:
        parked = await send(hub, request("three little words", skill="word-count"))
        assert parked.status.state is TaskState.INPUT_REQUIRED
        assert parked.status.message is not None
        assert parked.status.message.text() == "Report 3 word(s)? (yes/no)"
        done = await send(hub, request("yes", task_id=parked.id))
    assert done.status.state is TaskState.COMPLETED
    assert artifact_text(done).endswith("The prompt has 3 word(s).")
    assert [a.name for a in done.artifacts or []] == ["assistant-response", "summary"]


@pytest.mark.anyio
async def test_the_examples_thinking_is_a_status_update_and_the_answer_the_artifact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over real HTTP, as `a2a-hub send --stream` sees it: the example agent's `thinking` line
    arrives as a working status, and the artifact holds the answer alone."""
    monkeypatch.chdir(ROOT)
    hub = Hub.from_config(ROOT / "config/examples/process-skills.yaml", env={})
    async with (
        serve_on_loopback(lambda url: hub.asgi_app(public_url=url)) as url,
        build_http_client() as http,
    ):
        client = await A2AClient.from_url(url, http=http)
        events: list[StreamResponse] = []
        with anyio.fail_after(30):
            meta = {"skill": "word-count"}
            async with client.stream(user_message("three little words"), metadata=meta) as got:
                events += [event async for event in got]
            task_id = events[-1].status_update.task_id if events[-1].status_update else ""
            answer = user_message("yes", task_id=task_id)
            async with client.stream(answer) as got:
                events += [event async for event in got]
    statuses = [
        (event.status_update.status.message.metadata or {}).get("processEvent")
        for event in events
        if event.status_update is not None and event.status_update.status.message is not None
    ]
    assert statuses[:4] == ["init", "thinking", "tool_use", "tool_result"]
    thinking = [
        event.status_update.status
        for event in events
        if event.status_update is not None
        and event.status_update.status.message is not None
        and (event.status_update.status.message.metadata or {}).get("processEvent") == "thinking"
    ]
    assert [status.state for status in thinking] == [TaskState.WORKING]
    assert thinking[0].message is not None
    assert thinking[0].message.text() == "The task is to count the words of the prompt. "
    finished = {
        event.artifact_update.artifact.name: event.artifact_update.artifact.parts
        for event in events
        if event.artifact_update is not None and event.artifact_update.last_chunk
    }
    assert [part.text for part in finished["assistant-response"]] == ["The prompt has 3 word(s)."]
    assert [part.data for part in finished["summary"]] == [
        {"summary": "counted the words", "stats": {"words": 3}}
    ]
    last = events[-1].status_update
    assert last is not None
    assert last.status.state is TaskState.COMPLETED


def test_docs_describe_every_process_setting() -> None:
    text = (ROOT / "docs/skills.md").read_text()
    section = text[text.index("## Process skills") :]
    table = section[section.index("### Settings") : section.index("### Arguments")]
    first_cells = re.findall(r"^\| (.+?) \|", table, re.M)
    documented = {key for cell in first_cells for key in re.findall(r"`(\w+)`", cell)}
    assert set(ProcessSkillSettings.model_fields) <= documented


def test_the_example_files_own_try_it_lines_are_the_readmes_on_the_same_port() -> None:
    example = ROOT / "config/examples/process-skills.yaml"
    tried = [
        line.removeprefix("#   ")
        for line in example.read_text(encoding="utf-8").splitlines()
        if line.startswith("#   a2a-hub ")
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    port = load_settings(example, env={}).server.port
    serve, *sends = tried
    assert f".venv/bin/{serve} --port {port}\n" in readme
    assert sends
    for command in sends:
        assert f"--url http://127.0.0.1:{port} " in command
        assert f".venv/bin/{command.replace('<the task id it printed>', 'TASK_ID')}\n" in readme
