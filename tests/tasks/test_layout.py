"""The task core's shape: no import circles among its modules, and a live task whose state
only its own verbs change."""

from __future__ import annotations

import ast
from pathlib import Path

import hub.tasks
from hub.tasks.live import LiveTask


def _imports() -> dict[str, set[str]]:
    """Each module of hub/tasks and the modules of hub/tasks it imports (those under
    TYPE_CHECKING too: a circle there is a circle to a reader)."""
    package = Path(hub.tasks.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        imported = graph.setdefault(path.stem, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[:2] == ["hub", "tasks"] and len(parts) > 2:
                    imported.add(parts[2])
    return graph


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def test_no_module_of_the_task_core_imports_one_that_imports_it_back() -> None:
    graph = _imports()
    circles = sorted(module for module in graph if module in _reaches(graph, module))
    assert circles == []


def test_a_live_task_keeps_its_fields_private() -> None:
    assert [name for name in LiveTask.__slots__ if not name.startswith("_")] == []
