"""`a2a-hub send` and `a2a-hub tasks` against a real hub process with authentication on: the
credential comes from a flag or the environment, and no secret is ever printed, by the
commands or by the hub."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .hubproc import ROOT, hub_process
from .test_cli import SKILLS, write_config

OPS_KEY = "e2e-ops-key-4a6c8e0b2d"
BOT_TOKEN = "e2e-bot-token-1f3b5d7a9c"
SECRETS = (OPS_KEY, BOT_TOKEN)

CONFIG = """\
server: {log_level: debug}
store: {kind: memory}
auth:
  enabled: true
  credentials:
    - name: ops
      api_key: "${E2E_OPS_KEY}"
    - name: bot
      bearer: "${E2E_BOT_TOKEN}"
"""


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m hub ARGS`, with no HUB_* or A2A_HUB_* variable inherited, and `env` added."""
    inherited = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("HUB_", "A2A_HUB_", "E2E_"))
    }
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        cwd=ROOT,
        env={**inherited, **env, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def assert_no_secret(done: subprocess.CompletedProcess[str]) -> None:
    for secret in SECRETS:
        assert secret not in done.stdout
        assert secret not in done.stderr


@contextmanager
def secrets_in_environment() -> Iterator[None]:
    """The hub process reads its credentials' `${...}` references from the environment."""
    saved = {name: os.environ.get(name) for name in ("E2E_OPS_KEY", "E2E_BOT_TOKEN")}
    os.environ.update({"E2E_OPS_KEY": OPS_KEY, "E2E_BOT_TOKEN": BOT_TOKEN})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = write_config(tmp_path_factory.mktemp("auth-hub"), CONFIG + SKILLS)
    with secrets_in_environment(), hub_process(config) as (_, url):
        yield url


def test_send_without_a_credential_exits_1_saying_what_to_send(
    hub: str,
) -> None:
    done = cli("send", hub, "hello")
    assert done.returncode == 1
    assert "needs a credential" in done.stderr
    assert done.stderr.endswith(
        "; pass --api-key (or set A2A_HUB_API_KEY) or --token (or set A2A_HUB_TOKEN)\n"
    )
    assert "Traceback" not in done.stderr


def test_send_takes_the_api_key_from_the_environment(hub: str) -> None:
    done = cli("send", hub, "keyed hello", A2A_HUB_API_KEY=OPS_KEY)
    assert done.returncode == 0, done.stderr
    assert "artifact response: keyed hello" in done.stdout
    assert_no_secret(done)


def test_send_takes_a_bearer_token_from_the_flag(hub: str) -> None:
    done = cli("send", "--stream", "--token", BOT_TOKEN, hub, "token hello")
    assert done.returncode == 0, done.stderr
    assert "[status] completed" in done.stdout
    assert_no_secret(done)


def test_a_wrong_key_is_refused_without_being_echoed(hub: str) -> None:
    done = cli("send", "--api-key", "wrong-but-long-enough-key", hub, "hi")
    assert done.returncode == 1
    assert "API key in X-API-Key is not valid" in done.stderr
    assert "wrong-but-long-enough-key" not in done.stderr


def test_tasks_lists_only_the_tasks_of_the_credential(hub: str) -> None:
    cli("send", hub, "for the bot", A2A_HUB_TOKEN=BOT_TOKEN)
    mine = cli("tasks", "list", "--url", hub, "--json", A2A_HUB_API_KEY=OPS_KEY)
    theirs = cli("tasks", "list", "--url", hub, "--json", A2A_HUB_TOKEN=BOT_TOKEN)
    assert mine.returncode == 0, mine.stderr
    assert theirs.returncode == 0, theirs.stderr
    assert '"totalSize":' in mine.stdout
    assert mine.stdout != theirs.stdout
    assert_no_secret(mine)
    assert_no_secret(theirs)


def test_card_and_help_show_no_secret(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG + SKILLS)
    card = cli("card", "--config", str(config), E2E_OPS_KEY=OPS_KEY, E2E_BOT_TOKEN=BOT_TOKEN)
    assert card.returncode == 0, card.stderr
    assert '"securitySchemes"' in card.stdout
    assert_no_secret(card)
    helped = cli("send", "--help", A2A_HUB_API_KEY=OPS_KEY)
    assert "--api-key" in helped.stdout
    assert_no_secret(helped)


def test_the_hub_log_shows_no_secret_at_debug_level(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG + SKILLS)
    with secrets_in_environment(), hub_process(config) as (process, url):
        assert cli("send", url, "hi", A2A_HUB_API_KEY=OPS_KEY).returncode == 0
        assert cli("send", url, "hi", A2A_HUB_TOKEN=BOT_TOKEN).returncode == 0
        assert cli("send", url, "hi", A2A_HUB_API_KEY=BOT_TOKEN).returncode == 1
        assert cli("send", url, "hi", A2A_HUB_TOKEN=OPS_KEY).returncode == 1
        process.terminate()
        assert process.stderr is not None
        said = process.stderr.read().decode()
    assert said.count("refused a request") == 2  # the two wrong credentials, logged
    for secret in SECRETS:
        assert secret not in said
