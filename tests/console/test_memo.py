"""Memo: a value shared by the pages that ask at about the same time, computed again once
its time is up or its version moved on."""

from __future__ import annotations

import pytest

from hub.console.memo import Memo

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_value_is_computed_once_per_ttl_and_version() -> None:
    clock = Clock()
    memo = Memo(1.0, clock=clock)
    computed: list[int] = []

    async def compute() -> int:
        computed.append(len(computed))
        return len(computed)

    assert await memo.get("a", compute, version=1) == 1
    assert await memo.get("a", compute, version=1) == 1  # the same second, same version
    assert await memo.get("b", compute, version=1) == 2  # another key (scope)
    assert await memo.get("a", compute, version=2) == 3  # what it shows changed
    clock.now += 0.5
    assert await memo.get("a", compute, version=2) == 3
    clock.now += 0.6
    assert await memo.get("a", compute, version=2) == 4  # its second is up
    assert computed == [0, 1, 2, 3]
