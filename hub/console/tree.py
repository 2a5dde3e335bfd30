"""A task's delegation tree as a live region of its own: the tree's HTML (`/tasks/{id}/tree`)
and an event whenever it changes (`/tasks/{id}/tree/events`).

While the task's skill runs, the tree is the one the delegation ledger keeps in memory, which
a partner's events change without the hub task itself changing (a branch starts working,
streams, fails): the events stream watches its version, so a page shows each branch's change
as it happens. Once the task has ended the tree is the stored one (the ledger's lines, the
swarm's result), and the stream ends. Only the hub's own tasks have a tree here; a task is
read through the same operation as its page (`GetTask`, as the visitor), so a credential sees
only the trees of the tasks it may see.
"""

from __future__ import annotations

import dataclasses

from litestar import get
from litestar.response import Response, Template

from hub.console.access import AnyRequest, console_of, hub_of, task_of_page, visitor_of
from hub.console.children import DelegationView, delegation_view, live_view
from hub.console.live import change_stream, ended_stream
from hub.console.render import page, problem
from hub.console.sending import task_path
from hub.errors import ProtocolError
from hub.orchestrator import plan_record
from hub.protocol import Task
from hub.tasks.ledger import DelegationLedger
from hub.tasks.live_tree import DELEGATE

__all__ = ["TREE_ROUTES", "delegation_of"]

PLAN = "plan"
"""The heading of the tree of an orchestrator's calls."""

_WATCH_INTERVAL = 0.2
"""Seconds between looks at a running tree's version (a memory read)."""


def _ledger(request: AnyRequest) -> DelegationLedger:
    return hub_of(request).service.manager.ledger


async def delegation_of(request: AnyRequest, task: Task) -> DelegationView | None:
    """The tree below the hub's task `task`: the live one while its skill runs here, else
    the stored one; None when it reached no partner. The calls of an orchestrator's plan
    are headed `plan`, not `delegate`."""
    store = console_of(request).store
    tree = _ledger(request).live_tree(task.id)
    view = live_view(tree) if tree is not None else None
    if view is None:
        view = delegation_view(task, await store.list_children(task.id))
    if view is not None and view.strategy == DELEGATE and await plan_record(store, task.id):
        view = dataclasses.replace(view, strategy=PLAN)
    return view


@get("/tasks/{task_id:str}/tree")
async def tree_fragment(request: AnyRequest) -> Template:
    visitor = visitor_of(request)
    try:
        task = await task_of_page(request, visitor)
    except ProtocolError as error:
        return problem(request, visitor, error)
    base = task_path(console_of(request).path, task.id, None)
    tree = await delegation_of(request, task)
    terminal = task.status.state.is_terminal
    return page(request, visitor, "_tree.html", tree=tree, tree_base=base, tree_terminal=terminal)


@get("/tasks/{task_id:str}/tree/events")
async def tree_events(request: AnyRequest) -> Response[bytes]:
    visitor = visitor_of(request)
    try:
        task = await task_of_page(request, visitor)
    except ProtocolError as error:
        return Response(
            content=error.message.encode(), status_code=error.http_status, media_type="text/plain"
        )
    ledger = _ledger(request)
    if task.status.state.is_terminal and ledger.live_tree(task.id) is None:
        return ended_stream()  # the page shows the stored tree already

    async def fingerprint() -> object:
        tree = ledger.live_tree(task.id)
        return None if tree is None else (id(tree), tree.version)

    return await change_stream(request, visitor, fingerprint, interval=_WATCH_INTERVAL)


TREE_ROUTES = [tree_fragment, tree_events]
