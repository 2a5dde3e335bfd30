"""Who a credential of the `auth` settings is once it is let in (`Caller`): its name and what
it may use, and the call scope its work runs in.

It is the one mapping from a credential to a scope, used by the server for each request
(`hub/server/auth.py` finds the caller by its secret) and by the composition root for a task
resumed after a restart, which has no request (`owner_caller` finds it by the task's owner).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pydantic import SecretStr

from hub.config.budget import BudgetSettings
from hub.config.security import AuthSettings, CredentialSettings
from hub.protocol.trace import Allowed, CallScope

__all__ = ["Caller", "owner_caller"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Caller:
    """The party behind one request.

    Attributes:
        name: the credential's name, which owns the tasks it creates; "" when auth is off
            (every caller is then the same anonymous owner).
        address: the client's IP address ("" when unknown).
        skills: the local skills it may use; None for all.
        agents: the partner agents its tasks may reach; None for all.
        operator: may use the operator's actions (the kill switch); with auth off every
            caller may, as every caller may cancel every task.
        budget: what it may spend over a window; None for no limit.
        groups: for a caller with an identity provider's token, the values of the claim
            `auth.oidc.claim` names (its scopes or groups); empty otherwise.
        token: that token, for the partner calls made on its behalf (`on_behalf`); never
            shown.
    """

    name: str = ""
    address: str = ""
    skills: frozenset[str] | None = None
    agents: frozenset[str] | None = None
    operator: bool = True
    budget: BudgetSettings | None = None
    groups: frozenset[str] = frozenset()
    token: SecretStr | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, credential: CredentialSettings) -> Caller:
        """The caller a credential lets in."""
        return cls(
            name=credential.name,
            skills=None if credential.skills is None else frozenset(credential.skills),
            agents=None if credential.agents is None else frozenset(credential.agents),
            operator=credential.operator,
            budget=credential.budget,
        )

    @property
    def limit_key(self) -> str:
        """What rate and stream limits count against: the credential, or with auth off the
        client address."""
        return f"credential '{self.name}'" if self.name else f"address {self.address or '?'}"

    @property
    def reach(self) -> Allowed:
        """The partners it may reach: every one for a credential not limited to some, and
        with auth off."""
        return Allowed.of(self.agents)

    def scope(self, call_scope: CallScope) -> CallScope:
        """`call_scope` carrying this caller's name and scopes to the work it starts."""
        return replace(
            call_scope,
            caller=self.name,
            skills=self.skills,
            agents=self.reach,
            caller_token=self.token,
        )


def owner_caller(auth: AuthSettings, owner: str) -> Caller | None:
    """The caller whose tasks `owner` (a task record's owner) names, as the settings are
    now: with auth off, the anonymous caller that may use everything; with auth on, the
    credential of that name, or None when none has it (removed, renamed, or a task made
    while auth was off)."""
    if not auth.enabled:
        return Caller()
    for credential in auth.credentials:
        if credential.name == owner:
            return Caller.of(credential)
    return None
