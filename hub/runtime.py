"""`Hub`: the hub in-process, for Python code and scripts, and embedded in your own server.

```python
import anyio

from hub import Hub


async def main() -> None:
    async with Hub.from_config("config/hub.yaml") as hub:
        result = await hub.tools["a2a_research"].call(message="Summarise the attached paper")
        print(result.state, result.text)


anyio.run(main)
```

It reads the same files as `a2a-hub serve` (settings, agents.yaml, local skills) and offers
the same tools. Local skills called as tools run on a task manager of its own over an
in-memory store, so a script never touches the tasks of a running server.

The same hub can be served: `hub.asgi_app()` is the ASGI app `a2a-hub serve` runs (mount it
in your own server), and `await hub.serve(port=8000)` runs it on uvicorn in the current event
loop. Skills written in Python need no settings file: `Hub(skills=[my_skill],
agents="agents.yaml")`.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
from anyio import TASK_STATUS_IGNORED
from anyio.abc import TaskStatus
from litestar import Litestar

from hub.app import create_app
from hub.assembly import HubCore, build_core, build_partners
from hub.config import Settings, load_settings, settle_default_skill
from hub.errors import ConfigError
from hub.partners import Partners
from hub.registry import Registry, registry_for
from hub.server.connections import ServerConfig
from hub.skills import LocalSkill, configured_skills
from hub.skills.toolbox import Toolbox
from hub.store import (
    MemoryTaskStore,
    TaskStore,
    build_store,
    check_store_free,
    store_location,
)
from hub.tasks import TaskManager

if TYPE_CHECKING:
    import uvicorn

__all__ = ["Hub", "announce", "listen"]


def listen(settings: Settings) -> tuple[socket.socket, Settings]:
    """A listening socket on the settings' host and port, and the settings with the port
    really bound (with port 0, the card must advertise the port chosen, not 0).

    Raises:
        ConfigError: the address cannot be bound (the message says what to change).
    """
    family = socket.AF_INET6 if ":" in settings.server.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.server.host, settings.server.port))
        # Listening now means connections queue from the moment the address is known.
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {settings.server.host}:{settings.server.port} ({exc.strerror}); "
            "choose another port or stop what is using it"
        ) from None
    port = sock.getsockname()[1]
    bound = settings.model_copy(
        update={"server": settings.server.model_copy(update={"port": port})}
    )
    return sock, bound


def announce(settings: Settings) -> None:
    """Say on stderr where the hub listens and where it keeps its tasks. Printed, not logged:
    the address must show whatever the log level (tests read it too)."""
    store = settings.store
    where = store_location(store.kind, store.path, dsn=store.dsn)
    print(
        f"a2a-hub listening on http://{settings.server.host}:{settings.server.port} "
        f"(store: {where})",
        file=sys.stderr,
        flush=True,
    )


async def _until_cancelled(server: uvicorn.Server, sock: socket.socket) -> None:
    """Run uvicorn's `server` on `sock` until it stops or the caller is cancelled; a cancel
    asks it to stop and waits for its shutdown. Cut off mid-loop instead, uvicorn would leave
    the listening socket registered with the event loop after it is closed (a later socket
    given the same descriptor then never wakes) and the app's shutdown unrun (the store,
    and with it the SQLite file's lock, left open)."""
    stopped = anyio.Event()

    async def run() -> None:
        with anyio.CancelScope(shield=True):
            try:
                await server.serve(sockets=[sock])
            finally:
                stopped.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            await stopped.wait()
        finally:
            server.should_exit = True


def _by_id(skills: Mapping[str, LocalSkill] | Sequence[LocalSkill]) -> dict[str, LocalSkill]:
    if isinstance(skills, Mapping):
        return dict(skills)
    by_id: dict[str, LocalSkill] = {}
    for local in skills:
        if local.card.id in by_id:
            raise ConfigError(f"two skills have the id '{local.card.id}'")
        by_id[local.card.id] = local
    return by_id


class Hub:
    """Partners, local skills and their tools, ready to call: use as an async context manager.

    The hub's core (partners, tools, task manager) is built on first use, so a hub that is
    only served (`asgi_app`, `serve`) builds the served app's core alone.

    Args:
        settings: the hub's settings.
        registry: the partner agents.
        skills: the local skills by id.
        store: where the tasks of local skills called as tools are kept (in memory by
            default). A shared store (PostgreSQL, the replicas') also brings the partners
            the hub's replicas added at run time, followed while the hub is open.
        watch: follow agents.yaml for edits while the hub is open.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        registry: Registry | None = None,
        skills: Mapping[str, LocalSkill] | Sequence[LocalSkill] | None = None,
        agents: str | Path | None = None,
        store: TaskStore | None = None,
        watch: bool = True,
    ) -> None:
        settings = settings or Settings()
        local = configured_skills(settings) if skills is None else _by_id(skills)
        # Unless the settings name the default skill, the first one served answers by default.
        self.settings = settle_default_skill(settings, list(local))
        self._registry = registry if registry is not None else registry_for(settings, agents)
        self._local = local
        self._store = store
        self._watch = watch
        self._core: HubCore | None = None
        self._stack: AsyncExitStack | None = None

    @classmethod
    def from_config(
        cls,
        path: str | Path | None = None,
        *,
        agents: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        store: TaskStore | None = None,
        watch: bool = True,
    ) -> Hub:
        """A hub built from a settings file (default `config/hub.yaml`, as `a2a-hub serve`).

        Args:
            path: the settings file.
            agents: the agents.yaml to use instead of the one the settings name.
            env: where `${NAME}` references and `HUB_*` overrides are read (os.environ).
            store: see the class.
            watch: see the class.

        Raises:
            ConfigError: a file is wrong.
        """
        env = os.environ if env is None else env
        settings = load_settings(path, env=env)
        registry = registry_for(settings, agents, env=env)
        return cls(
            settings,
            registry=registry,
            skills=configured_skills(settings),
            store=store,
            watch=watch,
        )

    def _built(self) -> HubCore:
        if self._core is None:
            self._core = build_core(
                self.settings,
                skills=self._local,
                store=self._store or MemoryTaskStore(),
                partners=build_partners(self.settings, self._registry),
                watch=self._watch,
            )
        return self._core

    @property
    def registry(self) -> Registry:
        """The partner agents: agents.yaml as last read."""
        return self._core.partners.registry if self._core is not None else self._registry

    @property
    def partners(self) -> Partners:
        """The partner agents, each with its card, client and tool (`ctx.agents`)."""
        return self._built().partners

    @property
    def skills(self) -> Mapping[str, LocalSkill]:
        """The local skills by id, each bound to `tools`."""
        return self._built().skills

    @property
    def tools(self) -> Toolbox:
        """Every tool by name: `a2a_<partner>` and `skill_<id>`."""
        return self._built().toolbox

    @property
    def manager(self) -> TaskManager:
        """Runs the local skills' tasks, over the hub's own store."""
        return self._built().manager

    def asgi_app(
        self, settings: Settings | None = None, *, public_url: str | None = None
    ) -> Litestar:
        """The hub's ASGI app, as `a2a-hub serve` runs it: mount it in your own server.

        The app keeps its tasks in the store the settings name (`store.kind`, `store.path`)
        and opens and closes it, and its own partner connections, in its lifespan; it does
        not need the hub to be entered with `async with`.

        Args:
            settings: these settings instead of the hub's (for example with the port bound).
            public_url: the URL callers reach the app at, advertised in its card (default:
                `server.public_url`, else `http://host:port` of the settings).

        Raises:
            ConfigError: the default skill is not served, or the settings are inconsistent.
        """
        settings = settings or self.settings
        if public_url is not None:
            server = settings.server.model_copy(update={"public_url": public_url})
            settings = settings.model_copy(update={"server": server})
        store = build_store(
            settings.store.kind,
            settings.store.path,
            dsn=settings.store.dsn,
            pool_size=settings.store.pool_size,
            lease=settings.store.lease,
        )
        partners = build_partners(settings, self.registry)
        return create_app(settings, store=store, skills=self._local, partners=partners)

    async def serve(
        self,
        *,
        host: str | None = None,
        port: int | None = None,
        task_status: TaskStatus[str] = TASK_STATUS_IGNORED,
    ) -> None:
        """Serve the hub on uvicorn in the current event loop until cancelled.

        `url = await task_group.start(partial(hub.serve, port=0))` gives the URL served once
        the socket listens (requests sent from then on queue until uvicorn takes them). Like
        `a2a-hub serve`, it prints where it listens and where the tasks are kept
        (`store.path`, `var/hub.db` of the current folder by default) on stderr.

        Args:
            host: the address to listen on (default: `server.host`).
            port: the port (default: `server.port`; 0 picks a free one).
            task_status: set to the URL served, for `TaskGroup.start`.

        Raises:
            StoreInUseError: the settings' SQLite store is open in another process.
            ConfigError: the address cannot be bound, or the settings are inconsistent.
        """
        import uvicorn

        server = self.settings.server.model_copy(
            update={
                key: value for key, value in (("host", host), ("port", port)) if value is not None
            }
        )
        check_store_free(self.settings.store.kind, self.settings.store.path)
        sock, settings = listen(self.settings.model_copy(update={"server": server}))
        try:
            app = self.asgi_app(settings)
            announce(settings)
            task_status.started(f"http://{settings.server.host}:{settings.server.port}")
            config = ServerConfig(
                app,
                settings=settings.server,
                log_level=settings.server.log_level,
                timeout_graceful_shutdown=5,
            )
            await _until_cancelled(uvicorn.Server(config), sock)
        finally:
            sock.close()

    async def __aenter__(self) -> Hub:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self._built().running())
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, traceback)
