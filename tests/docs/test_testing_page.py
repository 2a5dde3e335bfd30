"""The example of docs/testing.md is a test module: run each of its tests as written."""

from __future__ import annotations

import inspect
import types
from pathlib import Path

import pytest

from tests.docs.test_examples import PYTHON

pytestmark = pytest.mark.anyio

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def _example_module() -> types.ModuleType:
    [block] = [block for block in PYTHON if block.path == PAGE]
    module = types.ModuleType("testing_page_example")
    exec(compile(block.text, block.name, "exec"), module.__dict__)  # runs as `import`
    return module


async def test_the_testing_pages_example_tests_pass() -> None:
    module = _example_module()
    tests = [
        value
        for name, value in vars(module).items()
        if name.startswith("test_") and inspect.iscoroutinefunction(value)
    ]
    assert len(tests) == 2
    for test in tests:
        await test()
