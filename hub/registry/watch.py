"""`RegistryWatcher`: reloads `agents.yaml` when it changes, keeping the last good registry.

The file is polled rather than watched through OS notifications: polling works the same on
every platform, in containers and on network mounts, and a one-second delay is of no
consequence for a list of partners.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
import anyio.to_thread

from hub.errors import ConfigError
from hub.registry.loader import load_registry
from hub.registry.registry import Registry, RegistryDiff

__all__ = ["RegistryListener", "RegistryWatcher"]

log = logging.getLogger(__name__)

RegistryListener = Callable[[Registry, Registry, RegistryDiff], None]
"""Called as `listener(old, new, diff)` after a reload that changed the registry."""

_Stat = tuple[int, int] | None
"""(mtime_ns, size) of the file, or None when it cannot be read."""

# A file changed twice within the file system's timestamp resolution can keep its mtime and
# size; while the last change is this recent the content is compared on every poll.
_RACY_NS = 2_000_000_000
# Values no real file has, so that the first poll always reads the file.
_UNSEEN_STAT: _Stat = (-1, -1)
_UNSEEN_DIGEST = "unseen"


def _stat(path: Path) -> _Stat:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class RegistryWatcher:
    """Polls an `agents.yaml` file and swaps in a new `Registry` when a valid edit appears.

    Used as an async context manager; the polling task lives in its task group and stops when
    the block exits. A broken edit (bad YAML, a validation error, an unset variable, a deleted
    file) keeps the last good registry and logs one warning per distinct error; a file that
    is missing while the registry is empty (a default agents.yaml never written) is no error.

    Args:
        path: the file.
        env: where `${NAME}` references are looked up (default: the process environment at
            each reload).
        interval: seconds between two looks at the file.
        initial: the registry to start from; without it the file is loaded on entry, and a
            bad file raises ConfigError there.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        env: Mapping[str, str] | None = None,
        interval: float = 1.0,
        initial: Registry | None = None,
    ) -> None:
        if not interval > 0:
            raise ValueError("interval must be greater than zero")
        self._path = Path(path)
        self._env = env
        self._interval = interval
        self._registry = initial
        self._listeners: list[RegistryListener] = []
        self._lock = anyio.Lock()
        self._stack: AsyncExitStack | None = None
        self._stat: _Stat = _UNSEEN_STAT
        self._racy = True
        self._digest: str | None = _UNSEEN_DIGEST
        self._failure: str | None = None
        self.polls = 0
        """Looks at the file the poller has finished: how a caller knows one has happened."""

    @property
    def registry(self) -> Registry:
        """The last registry that loaded without error."""
        if self._registry is None:
            raise RuntimeError("the watcher has no registry yet: enter it with 'async with'")
        return self._registry

    @property
    def path(self) -> Path:
        """The watched file."""
        return self._path

    def subscribe(self, listener: RegistryListener) -> Callable[[], None]:
        """Call `listener(old, new, diff)` after each reload that changes the registry.

        Returns:
            A function that unsubscribes it (calling it twice does nothing).
        """
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def reload(self) -> Registry:
        """Read the file now, whether or not it looks changed.

        Raises:
            ConfigError: the file is bad; the current registry stays in use.
        """
        try:
            registry = await self._refresh(force=True)
        except ConfigError as error:
            # Reported to the caller; the poller need not warn about the same error again.
            self._failure = str(error)
            raise
        assert registry is not None  # a forced refresh always loads
        return registry

    async def __aenter__(self) -> Self:
        if self._stack is not None:
            raise RuntimeError("the watcher is already running")
        if self._registry is None:
            await self.reload()
        async with AsyncExitStack() as stack:
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            group.start_soon(self._poll)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        stack, self._stack = self._stack, None
        assert stack is not None
        # The block's own exception is not the polling task's: it propagates unchanged
        # rather than inside an exception group.
        await stack.__aexit__(None, None, None)
        return None

    async def _poll(self) -> None:
        while True:
            await anyio.sleep(self._interval)
            try:
                await self._refresh(force=False)
            except ConfigError as error:
                self._report(str(error))
            except Exception as error:
                # Not a mistake in the file but a fault in reading it: say so, keep polling.
                self._report(f"{self._path}: {type(error).__name__}: {error}", unexpected=True)
            self.polls += 1

    def _report(self, message: str, *, unexpected: bool = False) -> None:
        if message == self._failure:
            return
        self._failure = message
        log.warning(
            "%s was not reloaded; the last good registry stays in use:\n%s",
            self._path,
            message,
            exc_info=unexpected,
        )

    async def _refresh(self, *, force: bool) -> Registry | None:
        """Load the file if it changed (always, with `force`); None when it did not.

        Raises:
            ConfigError: the file is bad.
        """
        async with self._lock:
            stat = await anyio.to_thread.run_sync(_stat, self._path)
            if not force and stat == self._stat and not self._racy:
                return None
            self._stat = stat
            empty = self._registry is not None and not self._registry.all()
            if stat is None and not force and empty:
                # No file and no partners (a default agents.yaml that does not exist): nothing
                # was lost, nothing to report; the file is read once it appears.
                return None
            self._racy = stat is not None and time.time_ns() - stat[0] < _RACY_NS
            digest = await anyio.to_thread.run_sync(_digest, self._path)
            if not force and digest == self._digest:
                return None
            self._digest = digest
            new = await anyio.to_thread.run_sync(partial(load_registry, self._path, env=self._env))
            self._swap(new)
            return new

    def _swap(self, new: Registry) -> None:
        old, self._registry = self._registry, new
        recovered, self._failure = self._failure is not None, None
        if old is None:
            return
        diff = old.diff(new)
        if diff:
            log.info("%s reloaded: %s", self._path, diff)
        elif recovered:
            log.info("%s is valid again", self._path)
        if old.fingerprint == new.fingerprint:
            return
        for listener in tuple(self._listeners):
            try:
                listener(old, new, diff)
            except Exception:
                log.exception("a listener of %s failed on a reload", self._path)
