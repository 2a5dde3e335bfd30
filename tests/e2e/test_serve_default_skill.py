"""`a2a-hub serve` with a settings file that leaves `default_skill` out serves the first
skill listed by default, as docs/configuration.md says and `a2a-hub skills` shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from . import rpc
from .hubproc import ROOT, hub_process

SHOUT = "  - module: tests.runtime_skills:shout\n"


@pytest.mark.parametrize(
    "skills",
    [SHOUT, SHOUT + "  - builtin: echo\n"],
    ids=["only-its-own-skills", "echo-listed-second"],
)
def test_a_message_naming_no_skill_goes_to_the_first_skill_listed(
    tmp_path: Path, skills: str
) -> None:
    config = tmp_path / "hub.yaml"
    config.write_text(
        f"server: {{log_level: warning}}\nstore: {{kind: memory}}\nskills:\n{skills}",
        encoding="utf-8",
    )
    listed = subprocess.run(
        [sys.executable, "-m", "hub", "skills", "--config", str(config), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert '"id": "shout"' in listed.stdout
    with hub_process(config, timeout=60) as (_, url):
        task = rpc.send(url, "quiet words")
        card = httpx.get(f"{url}/.well-known/agent-card.json", timeout=30).json()
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "QUIET WORDS"}]
    assert card["skills"][0]["id"] == "shout"
