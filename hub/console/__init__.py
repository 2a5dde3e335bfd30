"""The console: web pages at `ui.path` to see and drive the hub's partners, tasks and swarms,
through the same operations the A2A endpoints serve (docs/console.md)."""

from hub.console.app import CONTENT_SECURITY_POLICY, Console, build_console
from hub.console.traffic import TrafficSource

__all__ = ["CONTENT_SECURITY_POLICY", "Console", "TrafficSource", "build_console"]
