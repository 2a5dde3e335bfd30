"""`Hub`: the hub in-process, without an HTTP server, for Python code and scripts.

```python
async with Hub.from_config("config/hub.yaml") as hub:
    result = await hub.tools["a2a_research"].call(message="Summarise the attached paper")
```

It reads the same files as `a2a-hub serve` (settings, agents.yaml, local skills) and offers
the same tools. Local skills called as tools run on a task manager of its own over an
in-memory store, so a script never touches the tasks of a running server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType

from hub.config import Settings, load_settings
from hub.registry import Registry, load_registry
from hub.skills import LocalSkill, load_skills
from hub.skills.tools import with_tools
from hub.store import MemoryTaskStore, TaskStore
from hub.tasks import TaskManager
from hub.tools import FederationPolicy, PartnerChildren, Partners

__all__ = ["DEFAULT_AGENTS", "Hub", "registry_for"]

DEFAULT_AGENTS = "agents.yaml"


def registry_for(
    settings: Settings, agents: str | Path | None = None, *, env: Mapping[str, str] | None = None
) -> Registry:
    """The registry of `agents` (a path), or of the file the settings name.

    A missing `agents.yaml` at its default place is an empty registry; a file named on
    purpose that is missing is an error.

    Raises:
        ConfigError: the file is wrong (the message names file, line and key).
    """
    path = Path(agents) if agents is not None else Path(settings.agents)
    default = agents is None and settings.agents == DEFAULT_AGENTS
    return load_registry(path, env=env, missing_ok=default)


class Hub:
    """Partners, local skills and their tools, ready to call: use as an async context manager.

    Args:
        settings: the hub's settings.
        registry: the partner agents.
        skills: the local skills by id.
        store: where the tasks of local skills called as tools are kept (in memory by
            default).
        watch: follow agents.yaml for edits while the hub is open.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        registry: Registry,
        skills: Mapping[str, LocalSkill],
        store: TaskStore | None = None,
        watch: bool = True,
    ) -> None:
        self.settings = settings
        self.partners = Partners(registry, federation=FederationPolicy.from_settings(settings))
        self._store = store or MemoryTaskStore()
        self.skills, self.tools = with_tools(skills, self.partners, lambda: self.manager)
        self.manager = TaskManager(
            store=self._store,
            executors=self.skills,
            default_skill=settings.default_skill,
            limits=settings.limits,
            children=PartnerChildren(self.partners),
        )
        self._watch = watch
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
            skills=load_skills(settings.skills),
            store=store,
            watch=watch,
        )

    @property
    def registry(self) -> Registry:
        return self.partners.registry

    async def __aenter__(self) -> Hub:
        async with AsyncExitStack() as stack:
            await self._store.open()
            stack.push_async_callback(self._store.close)
            await stack.enter_async_context(self.partners)
            if self._watch:
                await stack.enter_async_context(self.partners.watching())
            await stack.enter_async_context(self.manager)
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
