"""The console: web pages at `ui.path` to see and drive the hub's partners, tasks and swarms,
through the same operations the A2A endpoints serve (docs/console.md).

Each name is imported when it is first used (`hub.lazy`): the app factory imports
`ConsolePlugin` for every hub, and the pages load only for a hub that serves them.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hub.console.app import CONTENT_SECURITY_POLICY, Console, build_console
    from hub.console.plugin import ConsolePlugin
    from hub.console.traffic import TrafficSource

__all__ = ["CONTENT_SECURITY_POLICY", "Console", "ConsolePlugin", "TrafficSource", "build_console"]

if not TYPE_CHECKING:
    from hub.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "hub.console.app": ["CONTENT_SECURITY_POLICY", "Console", "build_console"],
            "hub.console.plugin": ["ConsolePlugin"],
            "hub.console.traffic": ["TrafficSource"],
        },
    )
