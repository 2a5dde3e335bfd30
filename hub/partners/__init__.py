"""The partner directory: the registry's partners and those added at run time, each with its
card, client, breaker and tool; their health, call statistics, conversations and the partner
tasks started on a caller's behalf."""

from hub.partners.children import PartnerChildren
from hub.partners.conversations import Conversations
from hub.partners.directory import PartnerHealth, Partners
from hub.partners.runtime import FederationPolicy, RuntimePartner, RuntimePartners
from hub.partners.stats import CallStats, StatsBook

__all__ = [
    "CallStats",
    "Conversations",
    "FederationPolicy",
    "PartnerChildren",
    "PartnerHealth",
    "Partners",
    "RuntimePartner",
    "RuntimePartners",
    "StatsBook",
]
