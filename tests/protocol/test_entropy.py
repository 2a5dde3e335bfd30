"""Random bytes for ids: drawn from the operating system in larger reads, never handed out
twice, not to two threads, and not to a forked child and its parent."""

from __future__ import annotations

import os
import threading

import pytest

from hub.protocol import entropy
from hub.protocol.entropy import random_bytes


def test_each_call_gets_the_size_it_asks_for_and_new_bytes() -> None:
    drawn = [random_bytes(10) for _ in range(5000)] + [random_bytes(16) for _ in range(5000)]

    assert {len(chunk) for chunk in drawn[:5000]} == {10}
    assert {len(chunk) for chunk in drawn[5000:]} == {16}
    assert len(set(drawn)) == len(drawn)


def test_the_operating_system_is_asked_once_for_many_draws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []
    urandom = os.urandom

    def counted(size: int) -> bytes:
        reads.append(size)
        return urandom(size)

    monkeypatch.setattr(entropy, "_pools", {})
    monkeypatch.setattr(os, "urandom", counted)
    drawn = {random_bytes(8) for _ in range(1000)}

    assert len(drawn) == 1000
    assert len(reads) == 2  # 512 chunks of 8 bytes a read
    assert reads == [4096, 4096]


def test_threads_drawing_at_once_never_share_a_chunk() -> None:
    drawn: list[list[bytes]] = [[] for _ in range(4)]
    start = threading.Barrier(4)

    def draw(into: list[bytes]) -> None:
        start.wait()
        into.extend(random_bytes(10) for _ in range(20_000))

    threads = [threading.Thread(target=draw, args=(into,)) for into in drawn]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    every = [chunk for into in drawn for chunk in into]
    assert len(set(every)) == len(every) == 80_000


def test_a_forked_child_draws_other_bytes_than_its_parent() -> None:
    random_bytes(10)  # the pool holds unused bytes now
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.write(writing, b"".join(random_bytes(10) for _ in range(100)))
        os._exit(0)
    os.close(writing)
    received = b""
    while chunk := os.read(reading, 4096):
        received += chunk
    os.close(reading)
    os.waitpid(child, 0)
    in_parent = [random_bytes(10) for _ in range(100)]

    in_child = [received[start : start + 10] for start in range(0, len(received), 10)]
    assert len(in_child) == 100
    assert not set(in_child) & set(in_parent)
