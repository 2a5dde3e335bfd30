"""The ids the hub makes for tasks, contexts, messages and artifacts."""

from __future__ import annotations

import time
import uuid

from hub.protocol.base import new_id


def test_an_id_is_a_uuid7_in_32_hex_digits() -> None:
    made = new_id()

    assert len(made) == 32
    assert made == made.lower()
    parsed = uuid.UUID(hex=made)
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122
    assert parsed.hex == made


def test_an_id_carries_the_millisecond_it_was_made_in() -> None:
    before = time.time_ns() // 1_000_000
    made = new_id()
    after = time.time_ns() // 1_000_000

    assert before <= int(made[:12], 16) <= after


def test_ids_made_in_later_milliseconds_sort_after_earlier_ones() -> None:
    earlier = [new_id() for _ in range(50)]
    first_millisecond = int(earlier[-1][:12], 16)
    while time.time_ns() // 1_000_000 <= first_millisecond:
        time.sleep(0.001)
    later = [new_id() for _ in range(50)]

    assert max(earlier) < min(later)


def test_ids_made_in_the_same_millisecond_differ_in_their_random_bits() -> None:
    made = [new_id() for _ in range(20_000)]

    assert len(set(made)) == len(made)
    # The random bits are not a counter: within one millisecond the ids are not in order.
    by_millisecond: dict[str, list[str]] = {}
    for made_id in made:
        by_millisecond.setdefault(made_id[:12], []).append(made_id)
    busiest = max(by_millisecond.values(), key=len)
    assert len(busiest) >= 10
    assert busiest != sorted(busiest)
