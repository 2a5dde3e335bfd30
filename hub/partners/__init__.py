"""The partner directory: the registry's partners and those added at run time, each with its
card, client, breaker and tool; the view of them one caller may reach; their health, call
statistics, conversations and the partner tasks started on a caller's behalf."""

from hub.partners.children import PartnerChildren
from hub.partners.conversations import Conversations
from hub.partners.directory import Partners
from hub.partners.health import PartnerHealth
from hub.partners.runtime import FederationPolicy, RuntimePartner, RuntimePartners
from hub.partners.stats import CallStats, StatsBook
from hub.partners.view import PartnerView

__all__ = [
    "CallStats",
    "Conversations",
    "FederationPolicy",
    "PartnerChildren",
    "PartnerHealth",
    "PartnerView",
    "Partners",
    "RuntimePartner",
    "RuntimePartners",
    "StatsBook",
]
