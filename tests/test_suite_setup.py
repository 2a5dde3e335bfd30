"""The suite's own set-up: the root conftest loads without the a2a-sdk, so the tests that do
not talk to an SDK agent (the protocol's, for one) are collected where it is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WITHOUT_SDK = """
import importlib.abc, sys

class NoSdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "a2a" or name.startswith("a2a."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoSdk())
import tests.conftest
"""


def test_the_root_conftest_loads_without_the_a2a_sdk() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", WITHOUT_SDK],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loaded.returncode == 0, loaded.stderr
