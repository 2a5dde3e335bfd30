"""Settings that need the `identity` extra stop with the pip command when it is absent: the
check run in a Python whose `joserfc` cannot be imported (a package on the path first that
refuses, as a missing one would)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
from hub.config import CardSettings, CardSigningSettings, Settings
from hub.errors import ConfigError
from hub.registry import AgentsFile
from hub.server.card import build_card, sign_card
from hub.skills.echo import echo
from pydantic import ValidationError

settings = Settings(card=CardSettings(signing=CardSigningSettings(key_file="k.pem")))
try:
    sign_card(build_card(settings, [echo.card]), settings)
except ConfigError as exc:
    print(exc)
try:
    entry = {"name": "p", "url": "https://p", "verify_card": {"keys": [{"kty": "EC"}]}}
    AgentsFile.model_validate({"version": 1, "agents": [entry]})
except ValidationError as exc:
    print(exc.errors()[0]["msg"])
"""


@pytest.mark.timeout(120)
def test_without_the_extra_signing_and_verify_card_name_the_pip_command(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "joserfc"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('joserfc is not installed')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow.parent), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    signing, verify = done.stdout.splitlines()
    assert signing == (
        "card.signing needs the identity extra (joserfc missing): pip install 'a2a-hub[identity]'"
    )
    assert verify == "verify_card needs the identity extra: pip install 'a2a-hub[identity]'"
