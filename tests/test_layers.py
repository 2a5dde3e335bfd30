"""The import contracts in pyproject.toml (`make lint`): the real tree keeps them, and a copy
of the package with an import that breaks one is refused, naming that import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    # The tool imports the root package from its working directory, so a copy is checked
    # as itself and not as the installed `hub`.
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def copy_of_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(
        ROOT / "hub", project / "hub", ignore=shutil.ignore_patterns("__pycache__", "static")
    )
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    return project


def lint_a_copy_with(tmp_path: Path, files: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The contracts checked on a copy of the package with `files` (paths from the project
    root) added to it."""
    project = copy_of_project(tmp_path)
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    return lint_imports(project)


def test_the_real_tree_keeps_every_import_contract() -> None:
    checked = lint_imports(ROOT)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 broken" in checked.stdout


def test_an_upward_import_breaks_the_layers_contract_and_is_named(tmp_path: Path) -> None:
    checked = lint_a_copy_with(tmp_path, {"hub/store/upward.py": "import hub.server.rest\n"})

    assert checked.returncode == 1
    assert "hub's packages import only downward (docs/architecture.md) BROKEN" in checked.stdout
    assert "hub.store.upward -> hub.server.rest (l.1)" in checked.stdout


def test_an_import_between_independent_siblings_is_refused(tmp_path: Path) -> None:
    checked = lint_a_copy_with(tmp_path, {"hub/push/sideways.py": "from hub.swarm import router\n"})

    assert checked.returncode == 1
    assert "hub.push.sideways -> hub.swarm" in checked.stdout


def test_a_package_without_a_place_in_the_order_is_refused(tmp_path: Path) -> None:
    checked = lint_a_copy_with(tmp_path, {"hub/newroom/__init__.py": ""})

    assert checked.returncode == 1
    assert "hub.newroom" in checked.stdout


def test_an_import_cycle_inside_a_package_is_refused(tmp_path: Path) -> None:
    checked = lint_a_copy_with(
        tmp_path,
        {
            "hub/protocol/first.py": "from hub.protocol import second\n",
            "hub/protocol/second.py": "from hub.protocol import first\n",
        },
    )

    assert checked.returncode == 1
    assert "No cycles are allowed in hub.protocol" in checked.stdout
