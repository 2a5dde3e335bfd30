"""`ConsolePlugin`: mounts the console on the hub's app at `ui.path` when `ui.enabled`.

The console's modules are imported only then (this one imports none of them), so a hub that
serves no console does not load its pages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from litestar.config.app import AppConfig
from litestar.plugins import InitPluginProtocol

from hub.config import Settings
from hub.protocol import AgentSkill
from hub.store import TaskStore

if TYPE_CHECKING:
    from hub.console.traffic import TrafficSource

__all__ = ["ConsolePlugin"]


class ConsolePlugin(InitPluginProtocol):
    """The console's router, templates and state, added to the app it is given to.

    Args:
        settings: the hub's settings (`ui`, `auth`, the public URL).
        store: the task store the hub serves (for the delegation ledger's lines).
        skills: the card entries of the local skills, by id.
        traffic: the hub's request rate and error rate, when it measures them.
        skill_models: the entry of `models:` each orchestrator skill uses, by skill id (a
            credential sees the tokens and cost of the models of its skills only).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: TaskStore,
        skills: Mapping[str, AgentSkill],
        traffic: TrafficSource | None = None,
        skill_models: Mapping[str, str] | None = None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._skills = skills
        self._traffic = traffic
        self._skill_models = dict(skill_models or {})

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        if not self._settings.ui.enabled:
            return app_config
        from hub.console.app import build_console

        console = build_console(
            self._settings,
            store=self._store,
            skills=self._skills,
            traffic=self._traffic,
            skill_models=self._skill_models,
        )
        app_config.route_handlers.append(console.router)
        app_config.state["console"] = console.state
        app_config.template_config = console.templates
        return app_config
