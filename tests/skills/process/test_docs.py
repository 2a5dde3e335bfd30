"""The documented example runs, and the documentation covers every setting."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hub.config import ProcessSkillSettings, load_settings
from hub.protocol import TaskState
from hub.skills import load_skills

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


def test_docs_describe_every_process_setting() -> None:
    text = (ROOT / "docs/skills.md").read_text()
    section = text[text.index("## Process skills") :]
    table = section[section.index("### Settings") : section.index("### Arguments")]
    first_cells = re.findall(r"^\| (.+?) \|", table, re.M)
    documented = {key for cell in first_cells for key in re.findall(r"`(\w+)`", cell)}
    assert set(ProcessSkillSettings.model_fields) <= documented
