"""The push notifier: push configs kept in the store, and the task observer that turns every
committed change of a task with configs into a notification.

The configs of every task that can still change are also held in memory (`_routes`), loaded
from the store at start-up and kept in step by create, delete and the tasks' own ends, so
the observer, which runs in the task manager's commit loop, decides in a dict lookup whether
a task has anyone to tell. Reads (get, list) go to the store, which keeps the configs of
finished tasks until the task record expires.

Which states are sent: not SUBMITTED (the caller that created the task knows it), then every
committed change from the first WORKING on, throttled by the sender, and the terminal state
at once, with the artifacts.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Collection
from types import TracebackType

import anyio
import httpx
from anyio.abc import TaskGroup

from hub.client import DeferredTransport, build_http_client, connection_limits
from hub.client.guard import Resolver, UrlGuard
from hub.config import PushSettings
from hub.errors import (
    InvalidParamsError,
    LimitExceededError,
    StoreError,
    StoreOutageError,
    TaskNotFoundError,
    UnsafeUrlError,
)
from hub.protocol import (
    ListTaskPushNotificationConfigsResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from hub.protocol.requests import DEFAULT_PAGE_SIZE
from hub.push.config import PushTarget, accept_config
from hub.push.delivery import WebhookDelivery
from hub.push.sender import PushSender
from hub.store import PushConfigRecord, PushConfigStore, SharedPushConfigStore
from hub.tasks.live import snapshot

__all__ = ["LIVE_STATES", "PushNotifier"]

log = logging.getLogger("hub.push")

LIVE_STATES = frozenset(
    state for state in TaskState if not state.is_terminal and state is not TaskState.UNSPECIFIED
)
"""The states of tasks whose configs are held in memory (they can still change)."""

_UNKNOWN_TASK = "new-task"
"""Stands in for the id of a task that is not created yet, while a config is checked."""

_RECENTLY_FINISHED = 1024
"""How many such tasks are remembered: far more than can end between a config's commit on
one replica and its notice on another."""

SHUTDOWN_GRACE = 2.0
"""Seconds the requests in flight may take to finish when the hub stops (retries and
throttled states are dropped at once)."""


class PushNotifier:
    """Push notification configs and their delivery.

    Use as an async context manager around the task manager (enter it first, so that the
    tasks restart recovery marks failed are reported): entering loads the configs of the
    tasks that can still change and starts the sender; leaving lets notifications in flight
    finish for up to `SHUTDOWN_GRACE` seconds, then stops them.

    Args:
        store: where configs are kept.
        settings: the `push` settings (allow lists, timeout, throttle, retries, limit).
        http: the client to post with; default: one of its own, closed on exit.
        resolver: how webhook hosts are resolved (tests inject one).
    """

    def __init__(
        self,
        *,
        store: PushConfigStore,
        settings: PushSettings,
        http: httpx.AsyncClient | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        self._store = store
        self._settings = settings
        self.guard = UrlGuard.from_settings(settings, resolver=resolver)
        self._http = http
        self._own_http: httpx.AsyncClient | None = None
        self._sender: PushSender | None = None
        self._group: TaskGroup | None = None
        self._routes: dict[str, dict[str, PushTarget]] = {}
        self._shared = store if isinstance(store, SharedPushConfigStore) else None
        self._finished: OrderedDict[str, Task] = OrderedDict()
        """With replicas: tasks this replica ended with no config routed, newest last."""
        self._saving: dict[tuple[str, str], anyio.Event] = {}

    # -- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> PushNotifier:
        self._route_all(await self._store.find_push_configs(LIVE_STATES))
        http = self._http
        deferred: DeferredTransport | None = None
        if http is None:
            # aiohttp is imported in the background: the first request is not served later
            # for it, and the first webhook (sent later still) finds it built.
            deferred = DeferredTransport(connection_limits())
            # Redirects are not followed: httpx's default, and every request says so too.
            http = self._own_http = build_http_client(
                timeout=httpx.Timeout(self._settings.timeout), transport=deferred
            )
        delivery = WebhookDelivery(
            http=http,
            guard=self.guard,
            timeout=self._settings.timeout,
            retry_delays=self._settings.retry_delays,
        )
        self._sender = PushSender(delivery, throttle=self._settings.throttle)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        if deferred is not None:
            self._group.start_soon(deferred.prepare)
        self._sender.bind(self._group)
        if self._shared is not None:
            # Replicas: a config made on another replica is routed here too, so whichever
            # replica commits a change of its task delivers it.
            self._group.start_soon(self._shared.push_config_notices, self._config_changed)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        try:
            if self._sender is not None:
                self._sender.bind(None)
                self._sender.stop()
                with anyio.move_on_after(SHUTDOWN_GRACE, shield=True):
                    await self._sender.wait_idle()
            if group is not None:
                group.cancel_scope.cancel()
                await group.__aexit__(None, None, None)
        finally:
            own, self._own_http = self._own_http, None
            if own is not None:
                with anyio.CancelScope(shield=True):
                    await own.aclose()

    async def wait_idle(self) -> None:
        """Return once no notification is being sent or waiting for its turn (retries
        included); a task that changes meanwhile starts new ones."""
        if self._sender is not None:
            await self._sender.wait_idle()

    # -- the task observer -----------------------------------------------------------------

    def observe(self, task: Task) -> None:
        """A `TaskObserver`: queue a notification of `task` for each of its configs."""
        targets = self._routes.get(task.id)
        if not targets or self._sender is None:
            if self._shared is not None and task.status.state.is_terminal:
                # A config made on another replica a moment ago may not be routed here yet:
                # its notice finds the task among those this replica just finished.
                self._finished[task.id] = snapshot(task)
                if len(self._finished) > _RECENTLY_FINISHED:
                    self._finished.popitem(last=False)
            return
        state = task.status.state
        final = state.is_terminal
        if state is TaskState.SUBMITTED:
            return
        if final:
            del self._routes[task.id]
        self._sender.notify(snapshot(task), list(targets.values()), final=final)

    # -- configs ---------------------------------------------------------------------------

    async def check(
        self, config: TaskPushNotificationConfig, *, task_id: str | None
    ) -> TaskPushNotificationConfig:
        """The config as it will be kept, its URL resolved and checked (before it is added).

        `task_id` is None for a config sent with the message that creates its task: its id
        is not known yet, so `attach` completes the config.

        Raises:
            InvalidParamsError: a field cannot be used.
            UnsafeUrlError: the SSRF guard refuses the URL.
        """
        accepted = accept_config(config, task_id=task_id or _UNKNOWN_TASK)
        await self.guard.check(accepted.url)
        return accepted

    async def create(
        self, config: TaskPushNotificationConfig, *, task: Task, owner: str, protocol: str
    ) -> TaskPushNotificationConfig:
        """Add (or replace) a checked config of `task`, durably.

        A finished task (completed, failed, canceled, rejected) takes a config too, kept for
        get, list and delete like any other; nothing is ever sent to it, since the task will
        not change again.

        `task` must show the task's state as it is now: nothing awaited may come between
        reading it and this call.

        Raises:
            LimitExceededError: the task has `push.max_configs_per_task` configs already.
        """
        if task.status.state.is_terminal:
            return await self._keep(config, task=task, owner=owner, protocol=protocol)
        record, replaced = self._add(config, task=task, owner=owner, protocol=protocol)
        try:
            await self._store.put_push_config(record)
        except BaseException:
            self._undo(record, replaced)
            raise
        return record.config

    def attach(
        self, config: TaskPushNotificationConfig, *, task: Task, owner: str, protocol: str
    ) -> PushConfigRecord:
        """Add a config sent inside SendMessage (and `check`ed before), from the task
        manager's `on_task` hook, which cannot wait: it is routed at once and saved in the
        background; `saved()` waits for that.

        The task manager calls the hook only for a task the message may go to, which is
        never a finished one.

        Raises:
            LimitExceededError: as for `create`.
        """
        if self._group is None:
            raise RuntimeError("PushNotifier used outside 'async with'")
        accepted = accept_config(config, task_id=task.id)
        record, _ = self._add(accepted, task=task, owner=owner, protocol=protocol)
        key = (record.task_id, record.config_id)
        done = self._saving[key] = anyio.Event()
        self._group.start_soon(self._save, record, done)
        return record

    async def saved(self, record: PushConfigRecord) -> None:
        """Wait until a config added by `attach` is in the store (or failed to be saved)."""
        done = self._saving.get((record.task_id, record.config_id))
        if done is not None:
            await done.wait()

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig:
        """One config of the task.

        Raises:
            TaskNotFoundError: the task has no config `config_id` (§3.1.8).
        """
        await self._settle(task_id)
        record = await self._store.get_push_config(task_id, config_id)
        if record is None:
            raise TaskNotFoundError(
                f"task {task_id} has no push notification config {config_id!r}",
                metadata={"taskId": task_id},
            )
        return record.config

    async def list(
        self, task_id: str, *, page_size: int | None = None, page_token: str | None = None
    ) -> ListTaskPushNotificationConfigsResponse:
        """The task's configs, oldest first, in pages.

        Raises:
            InvalidParamsError: `page_token` is not one this call returned.
        """
        await self._settle(task_id)
        records = await self._store.list_push_configs(task_id)
        start = 0
        if page_token:
            if not page_token.isdigit() or int(page_token) > len(records):
                raise InvalidParamsError(
                    f"pageToken {page_token[:40]!r} is not a token this hub returned",
                    violations=[("pageToken", "use the nextPageToken of the previous page")],
                )
            start = int(page_token)
        end = start + (page_size or DEFAULT_PAGE_SIZE)
        return ListTaskPushNotificationConfigsResponse(
            configs=[record.config for record in records[start:end]],
            next_page_token=str(end) if end < len(records) else "",
        )

    async def delete(self, task_id: str, config_id: str) -> None:
        """Delete a config; nothing is sent to it from now on. Deleting a config that does
        not exist is no error (§3.1.10)."""
        await self._settle(task_id)
        routes = self._routes.get(task_id)
        if routes is not None:
            target = routes.pop(config_id, None)
            if target is not None:
                target.active = False
            if not routes:
                del self._routes[task_id]
                if self._sender is not None:
                    self._sender.forget(task_id)
        await self._store.delete_push_config(task_id, config_id)

    # -- internals -------------------------------------------------------------------------

    def _add(
        self, config: TaskPushNotificationConfig, *, task: Task, owner: str, protocol: str
    ) -> tuple[PushConfigRecord, PushTarget | None]:
        """Route a config of a task that can still change (its configs are all in memory)."""
        self._check_limit(task.id, config.id, self._routes.get(task.id, {}))
        record = PushConfigRecord(config=config, owner=owner, protocol=protocol)
        return record, self._route(record)

    async def _keep(
        self, config: TaskPushNotificationConfig, *, task: Task, owner: str, protocol: str
    ) -> TaskPushNotificationConfig:
        """Store a config of a finished task without routing it: no change of the task is
        left to notify (and routes of finished tasks would never be let go)."""
        kept = await self._store.list_push_configs(task.id)
        self._check_limit(task.id, config.id, {record.config_id for record in kept})
        record = PushConfigRecord(config=config, owner=owner, protocol=protocol)
        await self._store.put_push_config(record)
        return record.config

    def _check_limit(self, task_id: str, config_id: str | None, known: Collection[str]) -> None:
        """Refuse a new config id beyond `push.max_configs_per_task` (a known id is replaced).

        Raises:
            LimitExceededError: the task has as many configs as the limit.
        """
        if config_id not in known and len(known) >= self._settings.max_configs_per_task:
            raise LimitExceededError(
                f"task {task_id} has {len(known)} push notification configs, the limit "
                "(push.max_configs_per_task); delete one or reuse its id",
                metadata={"taskId": task_id},
            )

    def _route(self, record: PushConfigRecord) -> PushTarget | None:
        """Hold `record` for delivery; returns the target it replaced, if any."""
        target = PushTarget(record, self.guard.parse(record.config.url))
        routes = self._routes.setdefault(record.task_id, {})
        replaced = routes.get(record.config_id)
        if replaced is not None:
            replaced.active = False
        routes[record.config_id] = target
        return replaced

    def _route_all(self, records: Collection[PushConfigRecord]) -> None:
        for record in records:
            try:
                self._route(record)
            except UnsafeUrlError:
                log.warning(
                    "push config %s of task %s has an unusable URL; it is skipped",
                    record.config_id,
                    record.task_id,
                )

    def _config_changed(self, task_id: str) -> None:
        if self._group is not None and self._shared is not None:
            self._group.start_soon(self._reroute, self._shared, task_id)

    async def _reroute(self, store: SharedPushConfigStore, task_id: str) -> None:
        """Route the configs of `task_id` ("": of every live task) as the store has them
        now, another replica having changed them."""
        try:
            if task_id:
                stored = await store.get(task_id)
                live = stored is not None and not stored.task.status.state.is_terminal
                finished = self._finished.pop(task_id, None)
                wanted = live or finished is not None
                records = await store.list_push_configs(task_id) if wanted else []
            else:
                finished, live = None, True
                records = await store.find_push_configs(LIVE_STATES)
        except StoreOutageError:
            return  # the store logs its outage; its reconnection re-reads every config
        except StoreError as exc:
            log.warning("could not read push configs changed on another replica: %s", exc)
            return
        if not live:
            if finished is not None and records and self._sender is not None:
                # This replica wrote the end before it heard of the config: it reports it.
                self._route_all(records)
                targets = list(self._routes.pop(task_id, {}).values())
                self._sender.notify(finished, targets, final=True)
            records = []
        dropped = [self._routes.pop(task_id, {})] if task_id else list(self._routes.values())
        if not task_id:
            self._routes = {}
        for routes in dropped:
            for target in routes.values():
                target.active = False
        self._route_all(records)

    def _undo(self, record: PushConfigRecord, replaced: PushTarget | None) -> None:
        routes = self._routes.get(record.task_id)
        if routes is None:
            return
        if replaced is not None:
            replaced.active = True
            routes[record.config_id] = replaced
            return
        routes.pop(record.config_id, None)
        if not routes:
            del self._routes[record.task_id]

    async def _save(self, record: PushConfigRecord, done: anyio.Event) -> None:
        key = (record.task_id, record.config_id)
        try:
            await self._store.put_push_config(record)
        except StoreError as exc:
            # Delivery goes on from memory; only a restart would lose the config.
            log.error("could not save push config %s of task %s: %s", key[1], key[0], exc)
        finally:
            done.set()
            if self._saving.get(key) is done:
                del self._saving[key]

    async def _settle(self, task_id: str) -> None:
        """Wait for the background saves of the task's configs, so reads see them."""
        for (saving_task, _), done in list(self._saving.items()):
            if saving_task == task_id:
                await done.wait()
