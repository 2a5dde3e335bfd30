"""What the task manager asks of the store as a whole: ListTasks pages, and the tasks a
stopped hub left running (failed, unless their skill can resume them)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from hub.protocol import ListTasksRequest, ListTasksResponse, TaskState
from hub.protocol.requests import DEFAULT_PAGE_SIZE
from hub.store import TaskQuery, TaskRecord, TaskRecords
from hub.tasks.live import LiveTask, snapshot
from hub.tasks.observer import TaskObserver, notify_observers

__all__ = ["INTERRUPTED_BY_RESTART", "list_tasks", "recover_interrupted"]

log = logging.getLogger("hub.tasks")

INTERRUPTED_BY_RESTART = "interrupted by restart"


async def list_tasks(
    store: TaskRecords,
    request: ListTasksRequest,
    *,
    owner: str = "",
    skill: str | None = None,
    partner: str | None = None,
    text: str | None = None,
) -> ListTasksResponse:
    """A ListTasks page: the request's filters, `owner`'s tasks only unless it is "", and
    the console's filters when given: those of local skill `skill`, those that started a
    task on `partner`, those whose messages hold `text`."""
    page_size = request.page_size or DEFAULT_PAGE_SIZE
    page = await store.list(
        TaskQuery(
            owner=owner or None,
            context_id=request.context_id or None,
            state=request.status if request.status is not TaskState.UNSPECIFIED else None,
            updated_after=request.status_timestamp_after,
            skill=skill,
            partner=partner,
            text=text,
            page_size=page_size,
            cursor=request.page_token or None,
        )
    )
    tasks = [
        snapshot(
            record.task,
            history_length=request.history_length,
            artifacts=bool(request.include_artifacts),
        )
        for record in page.records
    ]
    return ListTasksResponse(
        tasks=tasks,
        next_page_token=page.next_cursor,
        page_size=page_size,
        total_size=page.total_size,
    )


async def recover_interrupted(
    store: TaskRecords,
    observers: Sequence[TaskObserver],
    *,
    refusal: Callable[[TaskRecord], str | None] | None = None,
) -> list[TaskRecord]:
    """Tasks that were running when the hub stopped: those whose skill can resume are
    returned as they are (the caller runs them again); the others are marked failed.

    Args:
        refusal: why a task cannot resume (its failure message), or None when it can;
            without it, none can, and each fails `INTERRUPTED_BY_RESTART`.
    """
    stale = await store.find_in_states([TaskState.SUBMITTED, TaskState.WORKING])
    kept: list[TaskRecord] = []
    failed = 0
    for record in stale:
        reason = INTERRUPTED_BY_RESTART if refusal is None else refusal(record)
        if reason is None:
            kept.append(record)
            continue
        live = LiveTask(record)  # no commits: written here, at once
        live.fail(reason)
        await store.put(live.record())
        notify_observers(observers, live.task)
        failed += 1
    if failed:
        log.warning("marked %d interrupted task(s) failed after a restart", failed)
    return kept
