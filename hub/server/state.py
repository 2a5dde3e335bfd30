"""What the route handlers share, built by `create_app` and held in the app's state."""

from __future__ import annotations

from dataclasses import dataclass

from hub.config import Settings
from hub.server.gate import Gate
from hub.server.service import A2AService

__all__ = ["HubState"]


@dataclass(slots=True, kw_only=True)
class HubState:
    settings: Settings
    service: A2AService
    gate: Gate
