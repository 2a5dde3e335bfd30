"""The gateway: every partner of agents.yaml reachable through the hub at `/agents/{name}`,
on every binding and version the hub serves, behind the hub's own auth and limits."""

from hub.server.gateway.gateway import Gateway
from hub.server.gateway.kill import GatewayKill
from hub.server.gateway.service import PartnerService

__all__ = ["Gateway", "GatewayKill", "PartnerService"]
