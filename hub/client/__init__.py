"""Calling other A2A agents: `A2AClient`, its transports (JSON-RPC, HTTP+JSON, gRPC), the card
cache, retries and breaker."""

from hub.client.breaker import BreakerConfig, BreakerSnapshot, BreakerState, CircuitBreaker
from hub.client.call_auth import CallAuth
from hub.client.card_cache import CARD_PATH, CardCache, CardListener, CardRecord, card_url
from hub.client.client import A2AClient, Timeouts, user_message
from hub.client.deferred_transport import DeferredTransport
from hub.client.grpc_channels import GrpcChannels
from hub.client.guard import GuardedTransport, UrlGuard
from hub.client.http_client import build_http_client, connection_limits
from hub.client.http_errors import fault_of, translate_http_errors
from hub.client.interface import choose_interface
from hub.client.jsonrpc import JsonRpcTransport
from hub.client.rest import RestTransport
from hub.client.resume import ResumePolicy
from hub.client.retry import RetryPolicy
from hub.client.transport import EventStream, Transport, TransportOptions

__all__ = [
    "CARD_PATH",
    "A2AClient",
    "BreakerConfig",
    "BreakerSnapshot",
    "BreakerState",
    "CallAuth",
    "CardCache",
    "CardListener",
    "CardRecord",
    "CircuitBreaker",
    "DeferredTransport",
    "EventStream",
    "GrpcChannels",
    "GuardedTransport",
    "JsonRpcTransport",
    "RestTransport",
    "ResumePolicy",
    "RetryPolicy",
    "Timeouts",
    "Transport",
    "TransportOptions",
    "UrlGuard",
    "build_http_client",
    "card_url",
    "choose_interface",
    "connection_limits",
    "fault_of",
    "translate_http_errors",
    "user_message",
]
