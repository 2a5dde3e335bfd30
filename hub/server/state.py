"""What the route handlers share, built by `create_app` and held in the app's state."""

from __future__ import annotations

from dataclasses import dataclass, field

from hub.config import Settings
from hub.server.gate import Gate
from hub.server.gateway import Gateway
from hub.server.kill import KillSwitch
from hub.server.observability import Observability
from hub.server.operations import A2AOperations
from hub.server.service import A2AService
from hub.skills.extensions import ExtensionPolicy

__all__ = ["HubState"]


@dataclass(slots=True, kw_only=True)
class HubState:
    settings: Settings
    service: A2AService
    gate: Gate
    gateway: Gateway
    observability: Observability
    kill_switch: KillSwitch
    """Cancels every open task of a context or a caller (`POST /admin/kill`, the console)."""
    extensions: ExtensionPolicy = field(default_factory=ExtensionPolicy)
    """The extensions the hub's own endpoints declare and require (not the gateway's)."""

    def service_for(self, agent_name: str | None) -> A2AOperations:
        """The operations a request is served with: the hub's own, or with `agent_name` (a
        route under `/agents/{agent_name}`) the partner's, through the gateway."""
        if agent_name is None:
            return self.service
        return self.gateway.service(agent_name)
