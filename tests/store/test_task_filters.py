"""The console's ListTasks filters (partner, text) and task details, held alike by every store:
each filter alone and with owner scope, pages that keep the filters, text search of unicode and
of what looks like query syntax, and a clear refusal of a search the stores do not answer."""

from __future__ import annotations

from datetime import datetime

import pytest

from hub.errors import InvalidParamsError
from hub.protocol import Message, Part, Role, Task, TaskState, TaskStatus
from hub.store import SEARCH_COUNT_LIMIT, ChildRecord, TaskQuery, TaskRecord, TaskStore
from tests.store.records import at, make_record

pytestmark = pytest.mark.anyio

S = TaskState


def said(
    task_id: str,
    *texts: str,
    when: datetime,
    owner: str = "",
    skill: str = "echo",
    state: TaskState = S.COMPLETED,
    answer: str | None = None,
) -> TaskRecord:
    """A record whose history holds `texts` (a user message each) and, when given, whose
    status message is `answer`."""
    history = [
        Message(message_id=f"{task_id}-{n}", role=Role.USER, parts=[Part(text=text)])
        for n, text in enumerate(texts)
    ]
    status = TaskStatus(
        state=state,
        timestamp=when,
        message=(
            None
            if answer is None
            else Message(message_id=f"{task_id}-a", role=Role.AGENT, parts=[Part(text=answer)])
        ),
    )
    task = Task(id=task_id, context_id=f"ctx-{task_id}", status=status, history=history)
    return TaskRecord(task=task, skill=skill, owner=owner)


def line(parent_id: str, agent: str, child_id: str) -> ChildRecord:
    return ChildRecord(parent_id=parent_id, agent=agent, child_id=child_id, state=S.COMPLETED)


async def ids(store: TaskStore, query: TaskQuery) -> list[str]:
    return [record.task.id for record in (await store.list(query)).records]


async def test_the_partner_filter_keeps_the_tasks_that_reached_that_partner(
    store: TaskStore,
) -> None:
    await store.put_many(
        [make_record(f"t{n}", when=at(n), owner="alice" if n % 2 else "bob") for n in range(6)]
    )
    await store.put_children(
        [
            line("t1", "billing", "c1"),
            line("t1", "billing", "c2"),  # two children on one partner: the task once
            line("t2", "billing", "c3"),
            line("t2", "search", "c4"),
            line("t5", "search", "c5"),
        ]
    )
    page = await store.list(TaskQuery(partner="billing"))
    assert [record.task.id for record in page.records] == ["t2", "t1"]
    assert page.total_size == 2
    assert await ids(store, TaskQuery(partner="search")) == ["t5", "t2"]
    assert await ids(store, TaskQuery(partner="nobody")) == []
    # Owner scope applies: bob's tasks are the even ones.
    assert await ids(store, TaskQuery(partner="search", owner="bob")) == ["t2"]
    assert (await store.list(TaskQuery(partner="billing", owner="alice"))).total_size == 1


async def test_the_text_filter_finds_a_substring_of_any_message_ignoring_case(
    store: TaskStore,
) -> None:
    await store.put_many(
        [
            said("t1", "Please pay the INVOICE 42", when=at(1)),
            said("t2", "hello", "where is my invoice?", when=at(2)),
            said("t3", "nothing here", when=at(3), answer="The invoice was sent"),
            said("t4", "an unrelated question", when=at(4)),
        ]
    )
    page = await store.list(TaskQuery(text="invoice"))
    assert [record.task.id for record in page.records] == ["t3", "t2", "t1"]
    assert page.total_size == 3
    assert await ids(store, TaskQuery(text="VOIC")) == ["t3", "t2", "t1"]
    assert await ids(store, TaskQuery(text="invoice 42")) == ["t1"]
    assert await ids(store, TaskQuery(text="unrelated q")) == ["t4"]
    assert await ids(store, TaskQuery(text="absent words")) == []


async def test_text_search_reads_unicode_and_takes_query_syntax_literally(
    store: TaskStore,
) -> None:
    await store.put_many(
        [
            said("t1", "Grüße aus Zürich 🚀", when=at(1)),
            said("t2", "東京タワーの高さは", when=at(2)),
            said("t3", 'say "quoted" AND 100% of it_all \\ back', when=at(3)),
            said("t4", "a NUL \x00 inside", when=at(4)),
            said("t5", "plain zurich, no umlaut; 100 percent", when=at(5)),
        ]
    )
    assert await ids(store, TaskQuery(text="aus Zürich")) == ["t1"]
    assert await ids(store, TaskQuery(text="Zürich 🚀")) == ["t1"]
    assert await ids(store, TaskQuery(text="京タワー")) == ["t2"]
    assert await ids(store, TaskQuery(text='"quoted" AND')) == ["t3"]
    assert await ids(store, TaskQuery(text="100%")) == ["t3"]
    assert await ids(store, TaskQuery(text="it_all")) == ["t3"]
    assert await ids(store, TaskQuery(text="of it_al")) == ["t3"]
    assert await ids(store, TaskQuery(text="\\ back")) == ["t3"]
    assert await ids(store, TaskQuery(text="NUL")) == ["t4"]
    assert await ids(store, TaskQuery(text="ZURICH")) == ["t5"]


async def test_a_task_is_found_by_its_new_messages_and_no_longer_by_the_replaced_ones(
    store: TaskStore,
) -> None:
    await store.put(said("t1", "first question", when=at(1), state=S.WORKING))
    await store.put(said("t2", "other question", when=at(2)))
    assert await ids(store, TaskQuery(text="first")) == ["t1"]
    await store.put(said("t1", "rewritten entirely", when=at(3), answer="with an answer"))
    assert await ids(store, TaskQuery(text="first")) == []
    assert await ids(store, TaskQuery(text="rewritten")) == ["t1"]
    assert await ids(store, TaskQuery(text="an answer")) == ["t1"]
    assert await store.delete_terminal_before(at(10)) == 2
    assert await ids(store, TaskQuery(text="question")) == []
    assert await ids(store, TaskQuery(text="rewritten")) == []


@pytest.mark.parametrize("text", ["", "ab", "x" * 201])
async def test_a_search_too_short_or_too_long_is_refused_with_a_clear_error(
    store: TaskStore, text: str
) -> None:
    with pytest.raises(InvalidParamsError, match="text search") as raised:
        await store.list(TaskQuery(text=text))
    assert raised.value.violations[0][0] == "text"


async def test_every_filter_keeps_owner_scope(store: TaskStore) -> None:
    records = [
        said(
            f"t{n}",
            f"common words {n}",
            when=at(n),
            owner=("alice", "bob")[n % 2],
            skill=("echo", "translate")[n % 3 == 0],
            state=(S.COMPLETED, S.FAILED)[n % 4 == 0],
        )
        for n in range(12)
    ]
    await store.put_many(records)
    await store.put_children([line(f"t{n}", "billing", f"c{n}") for n in range(12)])
    by_id = {record.task.id: record for record in records}
    queries = [
        TaskQuery(state=S.FAILED),
        TaskQuery(skill="translate"),
        TaskQuery(partner="billing"),
        TaskQuery(context_id="ctx-t4"),
        TaskQuery(text="common words"),
        TaskQuery(text="words 1", skill="echo", partner="billing", state=S.COMPLETED),
    ]
    for query in queries:
        everyone = await store.list(query)
        assert everyone.records, query
        for owner in ("alice", "bob"):
            scoped = await store.list(
                TaskQuery(
                    owner=owner,
                    state=query.state,
                    skill=query.skill,
                    partner=query.partner,
                    context_id=query.context_id,
                    text=query.text,
                )
            )
            expected = [r.task.id for r in everyone.records if by_id[r.task.id].owner == owner]
            assert [r.task.id for r in scoped.records] == expected, (owner, query)
            assert scoped.total_size == len(expected)


@pytest.mark.parametrize(
    "query",
    [
        TaskQuery(skill="translate", page_size=4),
        TaskQuery(partner="billing", page_size=4),
        TaskQuery(text="page text", page_size=4),
        TaskQuery(text="page text", partner="billing", skill="translate", page_size=3),
    ],
    ids=["skill", "partner", "text", "all three"],
)
async def test_pages_of_a_filtered_list_have_no_duplicate_and_no_gap(
    store: TaskStore, query: TaskQuery
) -> None:
    # Ties on the status time too: the cursor's task id must split them.
    records = [
        said(
            f"t{n:02}",
            "page text" if n % 3 else "other",
            when=at(n // 2),
            skill="translate" if n % 2 else "echo",
        )
        for n in range(40)
    ]
    await store.put_many(records)
    await store.put_children([line(f"t{n:02}", "billing", "c") for n in range(0, 40, 5)])
    await store.put_children([line(f"t{n:02}", "search", "c") for n in range(40)])
    expected = (await store.list(TaskQuery(**{**_filters(query), "page_size": 100}))).records
    assert len(expected) >= 2
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = await store.list(TaskQuery(**{**_filters(query), "cursor": cursor}))
        assert page.total_size == len(expected)
        seen.extend(record.task.id for record in page.records)
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    assert seen == [record.task.id for record in expected]
    assert len(set(seen)) == len(seen)


def _filters(query: TaskQuery) -> dict[str, object]:
    return {
        "skill": query.skill,
        "partner": query.partner,
        "text": query.text,
        "page_size": query.page_size,
    }


async def test_task_details_give_the_creation_time_and_partners_of_each_task(
    store: TaskStore,
) -> None:
    await store.put(said("t1", "start", when=at(1), state=S.SUBMITTED))
    await store.put(said("t1", "start", when=at(7), state=S.COMPLETED))
    await store.put(said("t2", "other", when=at(3), owner="bob", skill="translate"))
    await store.put_children(
        [
            line("t1", "search", "c1"),
            line("t1", "billing", "c2"),
            line("t1", "search", "c3"),
        ]
    )
    details = await store.describe_tasks(["t1", "t2", "unknown", "t1"])
    assert set(details) == {"t1", "t2"}
    assert details["t1"].created == at(1)
    assert details["t1"].partners == ("search", "billing")
    assert details["t2"].created == at(3)
    assert details["t2"].partners == ()
    assert (details["t1"].skill, details["t1"].owner) == ("echo", "")
    assert (details["t2"].skill, details["t2"].owner) == ("translate", "bob")
    assert await store.describe_tasks([]) == {}


async def test_a_search_with_many_matches_counts_to_its_limit_and_pages_them_all(
    store: TaskStore,
) -> None:
    many = SEARCH_COUNT_LIMIT + 5
    records = [
        said(f"t{n:05}", "common word" if n % 7 else "rare word", when=at(n))
        for n in range(many + many // 6)
    ]
    await store.put_many(records)
    await store.put_children([line(r.task.id, "billing", "c") for r in records])
    common = [r.task.id for r in reversed(records) if "common" in r.task.history[0].text()]
    assert len(common) > SEARCH_COUNT_LIMIT
    for query in (TaskQuery(text="common"), TaskQuery(partner="billing", text="common")):
        first = await store.list(query)
        assert first.total_size == SEARCH_COUNT_LIMIT + 1
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await store.list(
                TaskQuery(partner=query.partner, text=query.text, page_size=300, cursor=cursor)
            )
            seen.extend(record.task.id for record in page.records)
            if not page.next_cursor:
                break
            cursor = page.next_cursor
        assert seen == common
    rare = await store.list(TaskQuery(text="rare word"))
    assert rare.total_size == len(records) - len(common)
    assert (await store.list(TaskQuery(partner="billing"))).total_size == SEARCH_COUNT_LIMIT + 1
