"""What every TaskStore does the same way: run against the in-memory and the SQLite store."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from datetime import timedelta

import pytest

from hub.errors import InvalidParamsError, StoreError
from hub.protocol import TaskState, TaskStatus
from hub.store import TaskQuery, TaskRecord, TaskStore

from .records import BASE, at, make_record

pytestmark = pytest.mark.anyio

S = TaskState


def ids(records: list[TaskRecord]) -> list[str]:
    return [record.task.id for record in records]


async def test_a_put_record_is_returned_whole_by_get(store: TaskStore) -> None:
    record = make_record("t1", owner="alice", skill="translate")
    await store.put(record)
    assert await store.get("t1") == record


async def test_get_of_an_unknown_task_returns_none(store: TaskStore) -> None:
    assert await store.get("missing") is None


async def test_put_replaces_every_part_of_an_existing_record(store: TaskStore) -> None:
    await store.put(make_record("t1", owner="alice", skill="echo", context_id="c1"))
    newer = make_record(
        "t1", when=at(5), state=S.COMPLETED, owner="bob", skill="translate", context_id="c2"
    )
    await store.put(newer)
    assert await store.get("t1") == newer
    assert (await store.list(TaskQuery(owner="alice"))).total_size == 0
    assert (await store.list(TaskQuery(context_id="c1"))).total_size == 0
    assert ids((await store.list(TaskQuery(owner="bob", state=S.COMPLETED))).records) == ["t1"]


async def test_mutating_a_task_after_put_or_get_does_not_change_the_stored_one(
    store: TaskStore,
) -> None:
    record = make_record("t1")
    await store.put(record)
    record.task.status = TaskStatus(state=S.FAILED)
    fetched = await store.get("t1")
    assert fetched is not None
    fetched.task.status.state = S.CANCELED
    again = await store.get("t1")
    assert again is not None
    assert again.task.status.state is S.WORKING


async def test_put_many_stores_every_record(store: TaskStore) -> None:
    records = [make_record(f"t{n}", when=at(n)) for n in range(5)]
    await store.put_many(records)
    assert [await store.get(f"t{n}") for n in range(5)] == records
    await store.put_many([])


async def test_list_is_newest_status_first_with_task_id_breaking_ties(store: TaskStore) -> None:
    await store.put_many(
        [
            make_record("b", when=at(1)),
            make_record("a", when=at(2)),
            make_record("c", when=at(2)),
            make_record("d", when=at(0)),
        ]
    )
    page = await store.list(TaskQuery())
    assert ids(page.records) == ["c", "a", "b", "d"]
    assert page.next_cursor == ""
    assert page.total_size == 4


async def test_a_task_without_status_timestamp_sorts_as_oldest(store: TaskStore) -> None:
    await store.put(make_record("undated", when=None))
    await store.put(make_record("ancient", when=BASE.replace(year=1900)))
    await store.put(make_record("recent", when=at(0)))
    assert ids((await store.list(TaskQuery())).records) == ["recent", "ancient", "undated"]


async def test_list_of_an_empty_store_is_one_empty_page(store: TaskStore) -> None:
    page = await store.list(TaskQuery())
    assert (page.records, page.next_cursor, page.total_size) == ([], "", 0)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (TaskQuery(owner="alice"), ["a3", "a2", "a1"]),
        (TaskQuery(owner=""), ["n1"]),
        (TaskQuery(context_id="c2"), ["b1", "a2"]),
        (TaskQuery(state=S.COMPLETED), ["b1", "a1"]),
        (TaskQuery(updated_after=at(2)), ["b1", "a3", "a2"]),
        (TaskQuery(updated_after=at(2) + timedelta(microseconds=1)), ["b1", "a3"]),
        (TaskQuery(owner="alice", context_id="c1", state=S.WORKING), ["a3"]),
        (TaskQuery(owner="alice", updated_after=at(2), state=S.COMPLETED), []),
        (TaskQuery(skill="translate"), ["b1", "a2"]),
        (TaskQuery(owner="alice", skill="translate"), ["a2"]),
    ],
    ids=[
        "owner",
        "empty owner",
        "context",
        "state",
        "updated at or after",
        "updated strictly after",
        "owner context and state",
        "no match",
        "skill",
        "owner and skill",
    ],
)
async def test_list_filters_and_counts_matches(
    store: TaskStore, query: TaskQuery, expected: list[str]
) -> None:
    await store.put_many(
        [
            make_record("n1", when=at(0), owner="", context_id="c0"),
            make_record("a1", when=at(1), owner="alice", context_id="c1", state=S.COMPLETED),
            make_record("a2", when=at(2), owner="alice", context_id="c2", skill="translate"),
            make_record("a3", when=at(3), owner="alice", context_id="c1"),
            make_record(
                "b1", when=at(4), owner="bob", context_id="c2", state=S.COMPLETED, skill="translate"
            ),
        ]
    )
    page = await store.list(query)
    assert ids(page.records) == expected
    assert page.total_size == len(expected)


async def test_pages_cover_every_task_once_and_total_size_counts_all_pages(
    store: TaskStore,
) -> None:
    # Five tasks share each timestamp, so page boundaries fall inside ties.
    records = [make_record(f"t{n:02d}", when=at(n // 5), owner="alice") for n in range(23)]
    await store.put_many(records)
    seen: list[str] = []
    cursor = None
    while True:
        page = await store.list(TaskQuery(owner="alice", page_size=5, cursor=cursor))
        assert page.total_size == 23
        seen += ids(page.records)
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    assert seen == ids(sorted(records, key=lambda r: (r.task.status.timestamp, r.task.id)))[::-1]


async def test_tasks_put_between_pages_cause_no_duplicate_and_no_skip(store: TaskStore) -> None:
    existing = [make_record(f"old{n:02d}", when=at(n // 3)) for n in range(20)]
    await store.put_many(existing)
    seen: list[str] = []
    cursor = None
    added = 0
    while True:
        page = await store.list(TaskQuery(page_size=4, cursor=cursor))
        seen += ids(page.records)
        # New tasks are newer than all (the usual case) or tie with a listed one.
        await store.put(make_record(f"new{added:02d}", when=at(100 + added)))
        await store.put(make_record(f"tie{added:02d}", when=at(3)))
        added += 1
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    assert len(seen) == len(set(seen))
    assert set(ids(existing)) <= set(seen)
    assert not any(task_id.startswith("new") for task_id in seen)


async def test_the_last_page_has_an_empty_cursor(store: TaskStore) -> None:
    await store.put_many([make_record(f"t{n}", when=at(n)) for n in range(4)])
    first = await store.list(TaskQuery(page_size=2))
    assert first.next_cursor
    last = await store.list(TaskQuery(page_size=2, cursor=first.next_cursor))
    assert ids(last.records) == ["t1", "t0"]
    assert last.next_cursor == ""


def _token(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor!",
        "%%%",
        _token(b"\xff\xfe"),
        _token(b"{}"),
        _token(b"5"),
        _token(b'["x", "t1"]'),
        _token(b'[true, "t1"]'),
        _token(b"[1, 2]"),
        _token(b'[1, "t1", 3]'),
        _token(b'[1e3, "t1"]'),
        _token(b'[99999999999999999999999, "t1"]'),
    ],
)
async def test_a_malformed_page_token_is_an_invalid_params_error(
    store: TaskStore, cursor: str
) -> None:
    await store.put(make_record("t1"))
    with pytest.raises(InvalidParamsError) as caught:
        await store.list(TaskQuery(cursor=cursor))
    assert caught.value.violations[0][0] == "pageToken"


async def test_a_page_size_below_one_is_an_invalid_params_error(store: TaskStore) -> None:
    with pytest.raises(InvalidParamsError):
        await store.list(TaskQuery(page_size=0))


async def test_find_in_states_returns_exactly_the_tasks_in_those_states(store: TaskStore) -> None:
    await store.put_many(
        [
            make_record("submitted", when=at(1), state=S.SUBMITTED),
            make_record("working", when=at(2), state=S.WORKING),
            make_record("parked", when=at(3), state=S.INPUT_REQUIRED),
            make_record("done", when=at(4), state=S.COMPLETED),
        ]
    )
    found = await store.find_in_states([S.SUBMITTED, S.WORKING])
    assert ids(found) == ["working", "submitted"]
    assert found[0] == await store.get("working")
    assert await store.find_in_states([]) == []
    assert await store.find_in_states([S.AUTH_REQUIRED]) == []


async def test_delete_terminal_before_removes_only_terminal_tasks_older_than_the_cutoff(
    store: TaskStore,
) -> None:
    old = {state: make_record(f"old-{state.name}", when=at(0), state=state) for state in S}
    await store.put_many(list(old.values()))
    await store.put(make_record("new-done", when=at(10), state=S.COMPLETED))
    await store.put(make_record("at-cutoff", when=at(5), state=S.FAILED))
    deleted = await store.delete_terminal_before(at(5))
    terminal = {S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED}
    assert deleted == len(terminal)
    for state, record in old.items():
        stored = await store.get(record.task.id)
        assert (stored is None) == (state in terminal)
    assert await store.get("new-done") is not None
    assert await store.get("at-cutoff") is not None
    assert (await store.list(TaskQuery())).total_size == len(S) - len(terminal) + 2


_CALLS: dict[str, Callable[[TaskStore], Awaitable[object]]] = {
    "put": lambda s: s.put(make_record("t1")),
    "put_many": lambda s: s.put_many([make_record("t1")]),
    "put_many of none": lambda s: s.put_many([]),
    "get": lambda s: s.get("t1"),
    "list": lambda s: s.list(TaskQuery()),
    "find_in_states": lambda s: s.find_in_states([S.WORKING]),
    "delete_terminal_before": lambda s: s.delete_terminal_before(at(0)),
    "ping": lambda s: s.ping(),
}


@pytest.mark.parametrize("call", _CALLS.values(), ids=_CALLS.keys())
async def test_every_call_after_close_raises_store_error(
    store: TaskStore, call: Callable[[TaskStore], Awaitable[object]]
) -> None:
    await store.close()
    with pytest.raises(StoreError):
        await call(store)


async def test_close_twice_is_harmless_and_open_makes_the_store_usable_again(
    store: TaskStore,
) -> None:
    await store.put(make_record("t1"))
    await store.close()
    await store.close()
    await store.open()
    assert await store.get("t1") == make_record("t1")


async def test_an_open_store_answers_the_readiness_ping(store: TaskStore) -> None:
    await store.put(make_record("t1"))
    assert await store.ping() is None
    assert await store.get("t1") == make_record("t1")
