"""The screenshot script of docs/console.md runs as a user runs it (`python -m
scripts.console_screenshots`), so it does not rot: a hub, its traffic, the pages asked for."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.console_screenshots import PAGES, VIEWPORT, main

# It starts a Python process that drives Chromium.
pytestmark = [pytest.mark.browser, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_the_script_writes_the_pages_it_is_asked_for(tmp_path: Path) -> None:
    asked = ["--pages", "overview,delegation", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "scripts.console_screenshots", *asked],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    written = sorted(path.name for path in tmp_path.iterdir())
    assert written == ["console-delegation.png", "console-overview.png"]
    width, height = png_size(tmp_path / "console-delegation.png")
    assert (width, height) == (VIEWPORT["width"], VIEWPORT["height"])
    width, height = png_size(tmp_path / "console-overview.png")
    assert width == VIEWPORT["width"]
    assert height >= VIEWPORT["height"]


def test_every_page_has_a_name_of_its_own_and_an_unknown_one_is_refused() -> None:
    names = [shot.name for shot in PAGES]
    assert len(set(names)) == len(names)
    assert main(["--pages", "overview,no-such-page"]) == 2
