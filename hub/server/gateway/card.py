"""A partner's card as the gateway serves it: reached through the hub, guarded by the hub.

The card keeps what the partner says about itself (name, skills, modes, ...) and changes
what is now the hub's to say: where to call (the hub's interfaces at `/agents/{name}`, in
both versions), how to authenticate (the hub's own schemes; the partner's credentials stay
in agents.yaml), and what the gateway serves (no push notifications).
"""

from __future__ import annotations

from dataclasses import dataclass

from hub.protocol import AgentCard, AgentInterface
from hub.protocol.card import BINDING_HTTP_JSON, BINDING_JSONRPC
from hub.server.card import CardDocument, grpc_interface

__all__ = ["TENANT_PREFIX", "CardShelf", "GatewayPolicy", "gateway_card", "partner_tenant"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GatewayPolicy:
    """What the hub decides for every partner card it serves.

    Attributes:
        hub_card: the hub's own card, whose security schemes and requirements replace the
            partner's.
        streaming: the hub serves streams (`card.streaming`).
        authenticated: auth is on, so an extended card can be served (to authenticated
            callers only).
        grpc_address: the gRPC door's `host:port` when it is on: the card lists it, with
            the partner's tenant (`agents/<name>`).
    """

    hub_card: AgentCard
    streaming: bool
    authenticated: bool
    grpc_address: str | None = None


def partner_tenant(agent_name: str) -> str:
    """The tenant a gRPC request names to be served by the partner `agent_name`."""
    return f"{TENANT_PREFIX}{agent_name}"


TENANT_PREFIX = "agents/"


def gateway_card(card: AgentCard, *, url: str, policy: GatewayPolicy, agent_name: str) -> AgentCard:
    """`card` rewritten to be called at `url` (`{base}/agents/{name}`) through the hub.

    The interfaces are the hub's three (JSON-RPC 1.0, HTTP+JSON 1.0, JSON-RPC 0.3), and its
    gRPC door with the partner's tenant when the door is on: the hub translates to whatever
    the partner speaks. Signatures are dropped, since they no longer match, and so are the
    skills' security requirements, which named the partner's schemes.
    """
    interfaces = [
        AgentInterface(url=url, protocol_binding=BINDING_JSONRPC, protocol_version="1.0"),
        AgentInterface(url=url, protocol_binding=BINDING_HTTP_JSON, protocol_version="1.0"),
        AgentInterface(url=url, protocol_binding=BINDING_JSONRPC, protocol_version="0.3"),
    ]
    if policy.grpc_address is not None:
        interfaces.append(grpc_interface(policy.grpc_address, tenant=partner_tenant(agent_name)))
    capabilities = card.capabilities.model_copy(
        update={
            "streaming": bool(card.capabilities.streaming) and policy.streaming,
            # The gateway refuses push configs: see PartnerService.
            "push_notifications": False,
            "extended_agent_card": bool(card.capabilities.extended_agent_card)
            and policy.authenticated,
        }
    )
    return card.model_copy(
        update={
            "supported_interfaces": interfaces,
            "capabilities": capabilities,
            "security_schemes": policy.hub_card.security_schemes,
            "security_requirements": policy.hub_card.security_requirements,
            "skills": [
                skill.model_copy(update={"security_requirements": None}) for skill in card.skills
            ],
            "signatures": None,
        }
    )


class CardShelf:
    """The rendered gateway cards, one per partner, rendered again only when the partner's
    card changes (a new card object from the card cache or a reloaded agents.yaml).

    Args:
        size: the most documents kept; the least recently used goes first (partners that
            were removed, or added at run time, do not pile up).
    """

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._documents: dict[str, tuple[AgentCard, CardDocument]] = {}

    def document(
        self, name: str, card: AgentCard, *, url: str, policy: GatewayPolicy
    ) -> CardDocument:
        """The document of `card` as the gateway serves it (both renderings), rendered again
        only when the partner's card changed."""
        kept = self._documents.pop(name, None)
        if kept is None or kept[0] is not card:
            rewritten = gateway_card(card, url=url, policy=policy, agent_name=name)
            kept = (card, CardDocument.render(rewritten))
        self._documents[name] = kept  # last, as the most recently used
        while len(self._documents) > self._size:
            del self._documents[next(iter(self._documents))]
        return kept[1]
