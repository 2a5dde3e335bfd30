"""Orchestrators in hub.yaml: what a mistake gets, and what a good entry serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.config import load_settings
from hub.errors import ConfigError
from hub.llm import chat
from hub.orchestrator import Orchestrator, orchestrator
from hub.skills import configured_skills


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hub.yaml"
    path.write_text(text, encoding="utf-8")
    return path


PLANNER = """
skills:
  - builtin: echo
  - orchestrator:
      id: planner
      description: plans
      model: {model}
      tools: {{agents: ["*"]}}
"""


def test_a_literal_api_key_is_refused_naming_its_line_not_its_value(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "models:\n  default:\n    provider: openai\n    model: m\n    api_key: sk-live-1234\n",
    )
    with pytest.raises(ConfigError) as refused:
        load_settings(path, env={})
    message = str(refused.value)
    assert f"{path}:5: models.default.api_key" in message
    assert '"${OPENAI_API_KEY}"' in message
    assert "sk-live" not in message


def test_an_api_key_from_an_unset_variable_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "models:\n  claude:\n    provider: anthropic\n    model: m\n"
        '    api_key: "${ANTHROPIC_KEY}"\n',
    )
    with pytest.raises(ConfigError, match="environment variable ANTHROPIC_KEY is not set"):
        load_settings(path, env={})


def test_an_orchestrator_naming_an_undeclared_model_is_refused_at_its_entry(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "models:\n  local: {provider: openai, model: m, base_url: 'http://127.0.0.1:1/v1'}\n"
        + PLANNER.format(model="default"),
    )
    settings = load_settings(path, env={})
    with pytest.raises(ConfigError) as refused:
        configured_skills(settings)
    message = str(refused.value)
    assert "orchestrator 'planner' uses model 'default', which models: does not declare" in message
    assert "(declared: local)" in message
    assert f"{path}:" in message


def test_a_good_entry_is_an_orchestrator_skill_on_the_card(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "models:\n  local: {provider: openai, model: m, base_url: 'http://127.0.0.1:1/v1'}\n"
        + PLANNER.format(model="local"),
    )
    skills = configured_skills(load_settings(path, env={}))
    planner = skills["planner"]
    assert isinstance(planner, Orchestrator)
    assert planner.card.description == "plans"
    assert planner.resumable


def test_without_the_llm_extra_an_orchestrator_stops_with_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The extra's absence, as importlib sees it on a machine without pydantic-ai.
    monkeypatch.setattr(chat.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"pip install 'a2a-hub\[llm\]'"):
        orchestrator(id="planner", description="d", model={"provider": "openai", "model": "m"})


@pytest.mark.parametrize(
    ("tools", "error"),
    [
        ({"swarm": ["race"]}, "tools.swarm needs partners"),
        ({"agents": ["*"], "swarm": ["stampede"]}, "unknown swarm strategy 'stampede'"),
    ],
)
def test_tools_that_cannot_work_are_refused(tools: dict[str, object], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        orchestrator(
            id="p", description="d", model={"provider": "openai", "model": "m"}, tools=tools
        )
