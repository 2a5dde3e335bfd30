"""Partners behind OAuth2 (`auth.oauth2` in agents.yaml): the hub obtains its own token from
the test identity provider (tests/identity/idp.py) by the client credentials grant, keeps
it, obtains another before it expires and after a partner refuses it, and never shows it.
The partner is the a2a-sdk's, behind a check of the provider's tokens
(tests/identity/protected.py), over JSON-RPC, HTTP+JSON and gRPC."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml

from hub.client import user_message
from hub.config.tokens import OAuth2ClientSettings
from hub.errors import ConfigError, PartnerAuthError, RemoteRpcError
from hub.identity.partner_auth import PartnerAuth
from hub.partners import Partners
from hub.protocol import Task, TaskState
from hub.registry import AgentEntry, Registry, load_registry
from tests.client.partners import streamed_texts
from tests.identity.idp import CLIENT_CREDENTIALS, IdentityProvider, serve_idp
from tests.identity.protected import (
    HUB_SECRET,
    PARTNER_AUDIENCE,
    TokenCheck,
    client_credentials_scheme,
    hub_client,
    openid_scheme,
    protected_grpc_partner,
    protected_partner,
    serve_idp_with_hub_client,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
async def idp() -> AsyncIterator[IdentityProvider]:
    async with serve_idp_with_hub_client() as served:
        yield served


@pytest.fixture
def check(idp: IdentityProvider) -> TokenCheck:
    return TokenCheck(idp)


oauth2 = hub_client


def partners_for(url: str, auth: dict[str, Any]) -> Partners:
    entry = AgentEntry.model_validate({"name": "billing", "url": url, "auth": {"oauth2": auth}})
    return Partners(Registry([entry]))


async def echoed(partners: Partners, text: str) -> str:
    client = await partners.client("billing")
    answer = await client.send(user_message(text))
    assert isinstance(answer, Task)
    assert answer.status.state is TaskState.COMPLETED, answer.status
    assert answer.artifacts is not None
    return str(answer.artifacts[0].parts[0].text)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_the_hub_obtains_a_token_once_and_calls_with_it_until_it_is_stale(
    idp: IdentityProvider, check: TokenCheck, binding: str
) -> None:
    async with (
        protected_partner(check, binding=binding) as url,
        partners_for(url, oauth2(idp)) as partners,
    ):
        assert await echoed(partners, "one") == "one"
        assert await echoed(partners, "two") == "two"
        client = await partners.client("billing")
        async with client.stream(user_message("three")) as events:
            assert "three" in "".join(streamed_texts([event async for event in events]))
    assert idp.grants[CLIENT_CREDENTIALS] == 1
    assert len(check.admitted) == 3
    assert len({claims["jti"] for claims in check.admitted}) == 1
    claims = check.admitted[0]
    assert claims["sub"] == "a2a-hub"
    assert claims["aud"] == PARTNER_AUDIENCE
    assert claims["scope"] == "billing.read"


async def test_calls_at_once_on_a_cold_cache_ask_the_endpoint_once(
    idp: IdentityProvider, check: TokenCheck
) -> None:
    async with (
        protected_partner(check) as url,
        partners_for(url, oauth2(idp)) as partners,
        anyio.create_task_group() as group,
    ):
        for number in range(12):
            group.start_soon(echoed, partners, f"call {number}")
    assert idp.grants[CLIENT_CREDENTIALS] == 1
    assert len(check.admitted) == 12


async def test_a_token_the_partner_refuses_is_replaced_and_the_call_sent_once_more(
    idp: IdentityProvider, check: TokenCheck
) -> None:
    async with protected_partner(check) as url, partners_for(url, oauth2(idp)) as partners:
        assert await echoed(partners, "first") == "first"
        check.refuse = 1  # the partner revokes the token the hub holds
        assert await echoed(partners, "after the refusal") == "after the refusal"
        assert await echoed(partners, "with the new token") == "with the new token"
    assert check.refused == ["revoked"]
    assert idp.grants[CLIENT_CREDENTIALS] == 2
    first, second, third = (claims["jti"] for claims in check.admitted)
    assert first != second == third


async def test_a_partner_that_refuses_every_token_is_asked_twice_and_nothing_is_shown(
    idp: IdentityProvider, check: TokenCheck, caplog: pytest.LogCaptureFixture
) -> None:
    check.audience = "payroll"  # the hub's tokens are for billing: never let in
    caplog.set_level(logging.DEBUG)
    async with protected_partner(check) as url, partners_for(url, oauth2(idp)) as partners:
        client = await partners.client("billing")
        with pytest.raises(RemoteRpcError) as refused:
            await client.send(user_message("hello"))
    assert refused.value.code == 401
    assert len(check.refused) == 2  # the first token, then one obtained anew
    assert idp.grants[CLIENT_CREDENTIALS] == 2
    tokens = [value.removeprefix("Bearer ") for value in check.seen]
    shown = f"{refused.value} {refused.value.detail} {caplog.text}"
    for secret in (*tokens, HUB_SECRET):
        assert secret not in shown


async def test_a_token_is_obtained_anew_before_it_expires(idp: IdentityProvider) -> None:
    now = [1000.0]
    async with httpx.AsyncClient() as http:
        auth = PartnerAuth(
            "billing",
            oauth2=OAuth2ClientSettings.model_validate(oauth2(idp)),
            on_behalf=None,
            http=http,
            clock=lambda: now[0],
        )
        first = await auth.authorization(secure=True)
        now[0] += 0.85 * 300  # the provider's tokens live 300 s: still fresh
        assert await auth.authorization(secure=True) == first
        assert idp.grants[CLIENT_CREDENTIALS] == 1
        now[0] += 0.1 * 300  # within the last tenth of its life: replaced before it lapses
        second = await auth.authorization(secure=True)
    assert second != first
    assert idp.grants[CLIENT_CREDENTIALS] == 2


@pytest.mark.parametrize("declared", ["oauth2 flow", "openid connect"])
async def test_the_token_endpoint_is_read_from_the_partners_card(
    idp: IdentityProvider, check: TokenCheck, declared: str
) -> None:
    schemes = (
        client_credentials_scheme(f"{idp.issuer}/token")
        if declared == "oauth2 flow"
        else openid_scheme(idp.issuer)
    )
    async with (
        protected_partner(check, schemes=schemes) as url,
        partners_for(url, oauth2(None)) as partners,
    ):
        assert await echoed(partners, "found it") == "found it"
    assert idp.grants[CLIENT_CREDENTIALS] == 1
    assert check.admitted[0]["sub"] == "a2a-hub"


async def test_a_card_that_declares_no_token_endpoint_is_reported_with_the_fix(
    check: TokenCheck,
) -> None:
    async with protected_partner(check) as url, partners_for(url, oauth2(None)) as partners:
        client = await partners.client("billing")
        with pytest.raises(PartnerAuthError, match=r"set auth\.oauth2\.token_url"):
            await client.send(user_message("hello"))
    assert check.seen == []  # nothing was sent to the partner


async def test_a_refused_client_is_reported_without_its_secret(
    idp: IdentityProvider, check: TokenCheck, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = oauth2(idp, client_secret="not-the-secret-19af")
    async with protected_partner(check) as url, partners_for(url, wrong) as partners:
        client = await partners.client("billing")
        with pytest.raises(PartnerAuthError) as failed:
            await client.send(user_message("hello"))
    assert str(failed.value) == (
        "agent 'billing': the hub could not get a token for itself: its token endpoint "
        "refused (invalid_client)"
    )
    assert f"token endpoint {idp.issuer}/token: HTTP 401 invalid_client" in str(failed.value.detail)
    assert "not-the-secret-19af" not in f"{failed.value} {failed.value.detail} {caplog.text}"
    assert check.seen == []


async def test_an_unreachable_token_endpoint_is_reported_and_the_partner_not_called(
    check: TokenCheck,
) -> None:
    async with serve_idp() as gone:
        url = f"{gone.issuer}/token"
    async with (
        protected_partner(check) as partner,
        partners_for(partner, oauth2(None, token_url=url)) as partners,
    ):
        client = await partners.client("billing")
        with pytest.raises(PartnerAuthError, match="its token endpoint could not be reached"):
            await client.send(user_message("hello"))
    assert check.seen == []


async def test_a_grpc_partner_gets_the_token_as_metadata_and_a_refusal_replaces_it(
    idp: IdentityProvider, check: TokenCheck
) -> None:
    async with (
        protected_grpc_partner(check) as agent,
        partners_for(agent.url, oauth2(idp)) as partners,
    ):
        assert await echoed(partners, "over gRPC") == "over gRPC"
        check.refuse = 1
        assert await echoed(partners, "refused once") == "refused once"
        check.refuse = 1
        client = await partners.client("billing")
        async with client.stream(user_message("streamed")) as events:
            assert "streamed" in "".join(streamed_texts([event async for event in events]))
    assert check.refused == ["revoked", "revoked"]
    assert idp.grants[CLIENT_CREDENTIALS] == 3
    assert len(check.admitted) == 3


@pytest.mark.parametrize(
    ("auth", "problem"),
    [
        (
            {"bearer": "${BILLING_SECRET}", "oauth2": {"client_id": "a"}},
            "use one of 'bearer', 'api_key' and 'oauth2', not bearer and oauth2",
        ),
        (
            {"oauth2": {"client_id": "a", "token_url": "http://idp.corp/t"}},
            "token_url must be an https:// URL (http:// only on the loopback address)",
        ),
        ({"oauth2": {"client_id": "a", "client_secret": "${EMPTY_SECRET}"}}, "secret is empty"),
        ({"oauth2": {"client_id": "a", "scopes": ["two words"]}}, "is not a scope"),
        (
            {"oauth2": {"client_id": "a", "client_secret": "written-here"}},
            "agents.0.auth.oauth2.client_secret: write the secret as an environment reference "
            'such as "${BILLING_CLIENT_SECRET}"',
        ),
    ],
)
def test_a_wrong_oauth2_entry_is_refused_when_agents_yaml_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auth: dict[str, Any], problem: str
) -> None:
    monkeypatch.setenv("BILLING_SECRET", "from-the-environment")
    monkeypatch.setenv("EMPTY_SECRET", "")
    auth["oauth2"].setdefault("client_secret", "${BILLING_SECRET}")
    path = tmp_path / "agents.yaml"
    entry = {"name": "billing", "url": "https://billing.example", "auth": auth}
    path.write_text(yaml.safe_dump({"version": 1, "agents": [entry]}))
    with pytest.raises(ConfigError, match=r"agents\.yaml") as refused:
        load_registry(path)
    assert problem in str(refused.value)
    assert "from-the-environment" not in str(refused.value)
