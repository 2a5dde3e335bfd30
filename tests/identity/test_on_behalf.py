"""On behalf of the caller (`on_behalf` in agents.yaml): a hub on loopback lets callers in with
the test identity provider's tokens (`auth.oidc`), and its calls to a partner behind OAuth2
(tests/identity/protected.py) carry the caller's identity: the caller's token exchanged at
the provider's token endpoint (RFC 8693) for a partner-audience token whose `act` claim
names the hub, or, only where the entry says so, the caller's own token. Without
`on_behalf` a caller's token never reaches a partner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml
from pydantic import SecretStr

from hub.client import A2AClient, user_message
from hub.config import AuthSettings, CredentialSettings, LimitSettings, OidcSettings, Settings
from hub.config.tokens import OnBehalfSettings
from hub.errors import ConfigError, PartnerAuthError, RemoteRpcError
from hub.identity.partner_auth import PartnerAuth
from hub.protocol import Task, TaskState
from hub.protocol.trace import CallScope, use_scope
from hub.registry import AgentEntry, load_registry
from hub.skills.delegate import delegate
from hub.testing import serve_hub
from hub.testing.hub import LoopbackHub
from tests.identity.idp import AUDIENCE, CLIENT_CREDENTIALS, TOKEN_EXCHANGE, IdentityProvider
from tests.identity.protected import (
    PARTNER_AUDIENCE,
    TokenCheck,
    hub_client,
    protected_partner,
    serve_idp_with_hub_client,
)

pytestmark = pytest.mark.anyio

OPS_KEY = "ops-key-without-a-token-3a9c"


@pytest.fixture
async def idp() -> AsyncIterator[IdentityProvider]:
    async with serve_idp_with_hub_client() as served:
        yield served


@pytest.fixture
async def partner(idp: IdentityProvider) -> AsyncIterator[tuple[str, TokenCheck]]:
    check = TokenCheck(idp)
    async with protected_partner(check) as url:
        yield url, check


def exchange(idp: IdentityProvider, **extra: Any) -> dict[str, Any]:
    settings = hub_client(idp, **extra)
    del settings["scopes"]
    return {"token_exchange": settings}


@asynccontextmanager
async def hub_for(
    idp: IdentityProvider, url: str, on_behalf: dict[str, Any] | None
) -> AsyncIterator[LoopbackHub]:
    entry: dict[str, Any] = {
        "name": "billing",
        "url": url,
        "auth": {"oauth2": hub_client(idp)},
    }
    if on_behalf is not None:
        entry["on_behalf"] = on_behalf
    settings = Settings(
        auth=AuthSettings(
            enabled=True,
            credentials=(CredentialSettings(name="ops", api_key=OPS_KEY),),
            oidc=OidcSettings(issuer=idp.issuer, audience=AUDIENCE),
        ),
        limits=LimitSettings(requests_per_second=0),
        default_skill="delegate",
    )
    async with serve_hub(
        skills=[delegate], partners=[AgentEntry.model_validate(entry)], settings=settings
    ) as hub:
        yield hub


async def through_gateway(hub: LoopbackHub, headers: dict[str, str], text: str) -> Task:
    async with httpx.AsyncClient(headers=headers) as http:
        client = await A2AClient.from_url(f"{hub.url}/agents/billing", http=http)
        with anyio.fail_after(20):
            answer = await client.send(user_message(text))
    assert isinstance(answer, Task)
    assert answer.status.state is TaskState.COMPLETED, answer.status
    return answer


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_token_callers_call_carries_an_exchanged_token_naming_the_hub_as_actor(
    idp: IdentityProvider, partner: tuple[str, TokenCheck]
) -> None:
    url, check = partner
    alice = idp.token("alice")
    async with hub_for(idp, url, exchange(idp)) as hub:
        await through_gateway(hub, bearer(alice), "one")
        await through_gateway(hub, bearer(alice), "two")  # the exchanged token is kept
        await through_gateway(hub, bearer(idp.token("bob")), "three")
    subjects = [(claims["sub"], claims["aud"], claims["act"]) for claims in check.admitted]
    assert subjects == [
        ("alice", PARTNER_AUDIENCE, {"sub": "a2a-hub"}),
        ("alice", PARTNER_AUDIENCE, {"sub": "a2a-hub"}),
        ("bob", PARTNER_AUDIENCE, {"sub": "a2a-hub"}),
    ]
    assert idp.grants[TOKEN_EXCHANGE] == 2
    assert idp.grants[CLIENT_CREDENTIALS] == 1  # the hub's own token, sent as the actor
    assert f"Bearer {alice}" not in check.seen


async def test_the_act_chain_of_a_token_that_already_passed_through_another_hop_grows(
    idp: IdentityProvider, partner: tuple[str, TokenCheck]
) -> None:
    url, check = partner
    relayed = idp.token("alice", act={"sub": "frontend"})
    async with hub_for(idp, url, exchange(idp)) as hub:
        await through_gateway(hub, bearer(relayed), "relayed")
    assert check.admitted[0]["act"] == {"sub": "a2a-hub", "act": {"sub": "frontend"}}


async def test_a_task_that_calls_the_partner_later_still_calls_on_the_callers_behalf(
    idp: IdentityProvider, partner: tuple[str, TokenCheck]
) -> None:
    url, check = partner
    async with (
        hub_for(idp, url, exchange(idp)) as hub,
        httpx.AsyncClient(headers=bearer(idp.token("carol"))) as http,
    ):
        client = await A2AClient.from_url(hub.url, http=http)
        with anyio.fail_after(20):
            task = await client.send(user_message("delegated"), metadata={"agent": "billing"})
        assert isinstance(task, Task)
        assert task.status.state is TaskState.COMPLETED, task.status
    assert [claims["sub"] for claims in check.admitted] == ["carol"]


async def test_a_caller_without_a_token_is_served_with_the_hubs_own(
    idp: IdentityProvider, partner: tuple[str, TokenCheck]
) -> None:
    url, check = partner
    async with hub_for(idp, url, exchange(idp)) as hub:
        await through_gateway(hub, {"X-API-Key": OPS_KEY}, "from ops")
    assert [(claims["sub"], "act" in claims) for claims in check.admitted] == [("a2a-hub", False)]
    assert idp.grants[TOKEN_EXCHANGE] == 0


async def test_without_on_behalf_the_callers_token_never_reaches_the_partner(
    idp: IdentityProvider, partner: tuple[str, TokenCheck]
) -> None:
    url, check = partner
    alice = idp.token("alice")
    async with hub_for(idp, url, None) as hub:
        await through_gateway(hub, bearer(alice), "plain")
    assert [claims["sub"] for claims in check.admitted] == ["a2a-hub"]
    assert all(alice not in value for value in check.seen)


async def test_the_callers_own_token_is_forwarded_only_where_the_entry_says_so(
    idp: IdentityProvider, partner: tuple[str, TokenCheck]
) -> None:
    url, check = partner
    check.audience = AUDIENCE  # a partner that accepts the hub's own callers' tokens
    alice = idp.token("alice")
    async with hub_for(idp, url, {"forward_caller_token": True}) as hub:
        await through_gateway(hub, bearer(alice), "forwarded")
    assert check.seen == [f"Bearer {alice}"]
    assert idp.grants[TOKEN_EXCHANGE] == 0


async def test_a_refused_exchange_fails_the_call_without_showing_the_token(
    idp: IdentityProvider, partner: tuple[str, TokenCheck]
) -> None:
    url, check = partner
    alice = idp.token("alice")
    wrong = exchange(idp, client_secret="not-the-exchange-secret")
    async with hub_for(idp, url, wrong) as hub, httpx.AsyncClient(headers=bearer(alice)) as http:
        client = await A2AClient.from_url(f"{hub.url}/agents/billing", http=http)
        with pytest.raises(RemoteRpcError) as failed:
            await client.send(user_message("refused"))
    assert "agent 'billing'" in str(failed.value)
    assert alice not in str(failed.value)
    assert check.seen == []


async def test_a_callers_token_is_never_forwarded_over_plain_http() -> None:
    async with httpx.AsyncClient() as http:
        auth = PartnerAuth(
            "billing",
            oauth2=None,
            on_behalf=OnBehalfSettings(forward_caller_token=True),
            http=http,
        )
        scope = CallScope.new()
        carried = CallScope(
            trace_id=scope.trace_id, parent_id=scope.parent_id, caller_token=SecretStr("t0k3n")
        )
        with use_scope(carried):
            assert await auth.authorization(secure=True) == "Bearer t0k3n"
            with pytest.raises(PartnerAuthError, match="over TLS only") as refused:
                await auth.authorization(secure=False)
            assert "t0k3n" not in str(refused.value)
        assert await auth.authorization(secure=False) is None  # no caller token: nothing


@pytest.mark.parametrize(
    ("on_behalf", "url", "problem"),
    [
        (
            {"forward_caller_token": True},
            "http://billing.corp",
            "must be an https:// URL (http:// only on the loopback address)",
        ),
        ({}, "https://billing.corp", "set 'token_exchange' (or 'forward_caller_token: true')"),
        (
            {
                "forward_caller_token": True,
                "token_exchange": {
                    "token_url": "https://idp.corp/token",
                    "client_id": "a2a-hub",
                    "client_secret": "${EXCHANGE_SECRET}",
                },
            },
            "https://billing.corp",
            "use either 'token_exchange' or 'forward_caller_token', not both",
        ),
    ],
)
def test_a_wrong_on_behalf_entry_is_refused_when_agents_yaml_is_read(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    on_behalf: dict[str, Any],
    url: str,
    problem: str,
) -> None:
    monkeypatch.setenv("EXCHANGE_SECRET", "exchange-secret")
    path = tmp_path / "agents.yaml"
    entry = {"name": "billing", "url": url, "on_behalf": on_behalf}
    path.write_text(yaml.safe_dump({"version": 1, "agents": [entry]}))
    with pytest.raises(ConfigError, match=r"agents\.yaml") as refused:
        load_registry(path)
    assert problem in str(refused.value)
