"""What the task manager asks of the store as a whole: ListTasks pages, and the tasks a
stopped hub left running."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from hub.protocol import ListTasksRequest, ListTasksResponse, TaskState
from hub.protocol.requests import DEFAULT_PAGE_SIZE
from hub.store import TaskQuery, TaskRecords
from hub.tasks.live import LiveTask, snapshot
from hub.tasks.observer import TaskObserver, notify_observers

__all__ = ["INTERRUPTED_BY_RESTART", "list_tasks", "recover_interrupted"]

log = logging.getLogger("hub.tasks")

INTERRUPTED_BY_RESTART = "interrupted by restart"


async def list_tasks(
    store: TaskRecords, request: ListTasksRequest, *, owner: str = "", skill: str | None = None
) -> ListTasksResponse:
    """A ListTasks page: the request's filters, `owner`'s tasks only unless it is "", and
    those of local skill `skill` only when given."""
    page_size = request.page_size or DEFAULT_PAGE_SIZE
    page = await store.list(
        TaskQuery(
            owner=owner or None,
            context_id=request.context_id or None,
            state=request.status if request.status is not TaskState.UNSPECIFIED else None,
            updated_after=request.status_timestamp_after,
            skill=skill,
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


async def recover_interrupted(store: TaskRecords, observers: Sequence[TaskObserver]) -> None:
    """Tasks that were running when the hub stopped cannot resume: mark them failed."""
    stale = await store.find_in_states([TaskState.SUBMITTED, TaskState.WORKING])
    for record in stale:
        live = LiveTask(record)  # no commits: written here, at once
        live.fail(INTERRUPTED_BY_RESTART)
        await store.put(live.record())
        notify_observers(observers, live.task)
    if stale:
        log.warning("marked %d interrupted task(s) failed after a restart", len(stale))
