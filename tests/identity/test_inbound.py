"""Callers with tokens from the company's identity provider (`auth.oidc`): the test provider of
tests/identity/idp.py on loopback, a hub checking its tokens, and every way a token is let
in or refused, through the JSON-RPC and HTTP+JSON doors."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from joserfc.jwk import RSAKey

from hub.app import create_app
from hub.config import (
    AuthSettings,
    CardSettings,
    CredentialSettings,
    LimitSettings,
    OidcSettings,
    Settings,
)
from hub.errors import ConfigError
from hub.store import MemoryTaskStore
from tests.identity.idp import AUDIENCE, IdentityProvider, new_key, serve_idp
from tests.server.auth_hub import (
    ALICE_KEY,
    DOORS,
    Credential,
    Door,
    auth_skills,
    message,
    outcome_of,
    serve_in_process,
)

pytestmark = pytest.mark.anyio


def oidc_settings(idp: IdentityProvider, **oidc: Any) -> Settings:
    return Settings(
        auth=AuthSettings(
            enabled=True,
            credentials=(CredentialSettings(name="alice", api_key=ALICE_KEY),),
            oidc=OidcSettings.model_validate(
                {
                    "issuer": idp.issuer,
                    "audience": AUDIENCE,
                    "keys_min_interval": 0,
                    "claim": "groups",
                    **oidc,
                }
            ),
        ),
        limits=LimitSettings(requests_per_second=0),
        card=CardSettings(extended_card=True),
    )


@pytest.fixture
async def idp() -> AsyncIterator[IdentityProvider]:
    async with serve_idp() as provider:
        yield provider


@pytest.fixture
async def hub(idp: IdentityProvider) -> AsyncIterator[httpx.AsyncClient]:
    async with serve_in_process(oidc_settings(idp)) as http:
        yield http


def bearer(token: str) -> Credential:
    return Credential("token", {"Authorization": f"Bearer {token}"})


async def send(http: httpx.AsyncClient, token: str, text: str = "hi") -> httpx.Response:
    return await http.post(
        "/",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {"message": message(text)},
        },
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
    )


def challenge_of(response: httpx.Response) -> str:
    assert response.status_code == 401
    return response.headers["www-authenticate"]


@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
async def test_a_valid_token_gets_in_through_every_door_as_its_subject(
    idp: IdentityProvider, hub: httpx.AsyncClient, door: Door
) -> None:
    outcome = await door.call(hub, bearer(idp.token("alice")), "send")
    assert outcome.ok, outcome
    listed = await hub.post(
        "/",
        json={"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}},
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {idp.token('alice')}"},
    )
    # The task belongs to the token's subject: a later token of the same subject sees it,
    # another subject does not.
    assert len(listed.json()["result"]["tasks"]) == 1
    others = await hub.post(
        "/",
        json={"jsonrpc": "2.0", "id": 3, "method": "ListTasks", "params": {}},
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {idp.token('bob')}"},
    )
    assert others.json()["result"]["tasks"] == []


@pytest.mark.parametrize(
    ("mint", "reason"),
    [
        (lambda idp: idp.token(lifetime=-120), "the token has expired (exp)"),
        (
            lambda idp: idp.token(audience="another-service"),
            "the token is meant for another audience (aud); this hub is 'a2a-hub-test'",
        ),
        # Signed by a key the issuer never published, under the name of the one it did.
        (
            lambda idp: idp.token(key=new_key(), kid=idp.signing_key.kid),
            "the token's signature does not match the issuer's key",
        ),
        (
            lambda idp: idp.token(key=new_key(), kid="not-published"),
            "the token is signed with a key the issuer does not publish (kid 'not-published')",
        ),
        (lambda idp: idp.token(nbf=4_000_000_000), "the token is not valid yet (nbf)"),
        (lambda idp: idp.token(iss="https://elsewhere.example"), None),
        (lambda idp: "not.a.jwt-at-all", "the bearer token is not a signed JWT"),
    ],
    ids=["expired", "audience", "wrong-key", "unknown-key", "not-yet", "issuer", "garbage"],
)
async def test_a_bad_token_gets_401_saying_why_and_never_the_token(
    idp: IdentityProvider,
    hub: httpx.AsyncClient,
    caplog: pytest.LogCaptureFixture,
    mint: Any,
    reason: str | None,
) -> None:
    token = mint(idp)
    if reason is None:  # the issuer's own name is in the message: computed here
        reason = "the token was issued by another issuer (iss)"
    caplog.set_level(logging.DEBUG)
    for door in DOORS:
        response = await _raw(hub, door, token)
        challenge = challenge_of(response)
        assert f'error="invalid_token", error_description="{reason}"' in challenge
        assert reason in response.text
        for shown in (response.text, challenge, caplog.text):
            assert token not in shown
            assert token.split(".")[2] not in shown


async def _raw(http: httpx.AsyncClient, door: Door, token: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    if door.name == "rest-1.0":
        return await http.get("/tasks", headers={"A2A-Version": "1.0", **headers})
    version = {} if door.v03 else {"A2A-Version": "1.0"}
    method = "tasks/get" if door.v03 else "GetTask"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": "x"}}
    return await http.post("/", json=body, headers={**version, **headers})


async def test_a_rotated_key_is_read_again_once_and_let_in(
    idp: IdentityProvider, hub: httpx.AsyncClient
) -> None:
    assert (await send(hub, idp.token())).status_code == 200
    assert (await send(hub, idp.token())).status_code == 200
    assert idp.key_reads == 1  # kept
    idp.rotate()
    assert (await send(hub, idp.token())).status_code == 200
    assert idp.key_reads == 2
    assert (await send(hub, idp.token())).status_code == 200
    assert idp.key_reads == 2


async def test_unknown_keys_are_read_again_at_most_once_per_interval(
    idp: IdentityProvider,
) -> None:
    async with serve_in_process(oidc_settings(idp, keys_min_interval=3600)) as hub:
        assert (await send(hub, idp.token())).status_code == 200
        stranger = RSAKey.generate_key(2048, parameters={"kid": "stranger"})
        for _ in range(5):
            refused = await send(hub, idp.token(key=stranger))
            assert "does not publish" in challenge_of(refused)
        assert idp.key_reads == 1


async def test_a_group_grants_the_skills_it_maps_to(idp: IdentityProvider) -> None:
    settings = oidc_settings(
        idp, map={"a2a-echo": {"skills": ["echo"], "agents": []}, "a2a-admin": {}}
    )
    async with serve_in_process(settings) as hub:
        echoer = idp.token("carol", groups=["staff", "a2a-echo"])
        admin = idp.token("dave", groups=["a2a-admin"])
        nobody = idp.token("erin", groups=["staff"])

        card = await hub.get(
            "/extendedAgentCard",
            headers={"A2A-Version": "1.0", "Authorization": f"Bearer {echoer}"},
        )
        assert [skill["id"] for skill in card.json()["skills"]] == ["echo"]
        everything = await hub.get(
            "/extendedAgentCard",
            headers={"A2A-Version": "1.0", "Authorization": f"Bearer {admin}"},
        )
        assert {skill["id"] for skill in everything.json()["skills"]} == set(auth_skills())

        refused = outcome_of(await send(hub, nobody))
        assert refused.status == 401
        assert refused.message == "the token's groups claim grants nothing on this hub"


async def test_the_card_declares_openid_connect_beside_the_keys(
    idp: IdentityProvider, hub: httpx.AsyncClient
) -> None:
    card = (await hub.get("/.well-known/agent-card.json", headers={"A2A-Version": "1.0"})).json()
    assert card["securitySchemes"]["oidc"] == {
        "openIdConnectSecurityScheme": {
            "description": (
                f"a JWT from {idp.issuer} for the audience {AUDIENCE}, in "
                "'Authorization: Bearer <token>'"
            ),
            "openIdConnectUrl": f"{idp.issuer}/.well-known/openid-configuration",
        }
    }
    # Alternatives: one requirement per scheme.
    assert [item["schemes"] for item in card["securityRequirements"]] == [
        {"apiKey": {"list": []}},
        {"oidc": {"list": []}},
    ]


async def test_an_api_key_still_gets_in_beside_tokens(hub: httpx.AsyncClient) -> None:
    outcome = await DOORS[0].call(hub, Credential("alice", {"X-API-Key": ALICE_KEY}), "send")
    assert outcome.ok


async def test_keys_that_cannot_be_read_are_a_refusal_that_says_so() -> None:
    async with serve_idp() as idp:
        issuer = idp.issuer
        token = idp.token()
    idp.issuer = issuer
    async with serve_in_process(oidc_settings(idp)) as hub:
        refused = await send(hub, token)
        assert f"the signing keys of {issuer} could not be read; try again later" in (
            challenge_of(refused)
        )


def test_a_grant_naming_a_skill_not_served_stops_the_hub() -> None:
    settings = Settings(
        auth=AuthSettings(
            enabled=True,
            oidc=OidcSettings(
                issuer="https://idp.example",
                audience="hub",
                map={"ops": {"skills": ["nowhere"]}},  # type: ignore[dict-item]
            ),
        )
    )
    with pytest.raises(ConfigError, match=r"auth\.oidc\.map 'ops': skills nowhere are not served"):
        create_app(settings, store=MemoryTaskStore(), skills=auth_skills())


def test_a_plain_http_issuer_off_loopback_is_refused() -> None:
    with pytest.raises(ValueError, match=r"must be an https:// URL"):
        OidcSettings(issuer="http://idp.example", audience="hub")


async def test_a_token_is_an_operator_only_when_one_of_its_values_says_so(
    idp: IdentityProvider,
) -> None:
    settings = oidc_settings(
        idp, map={"a2a-users": {}, "a2a-operators": {"operator": True}}, claim="groups"
    )
    async with serve_in_process(settings) as hub:
        user = idp.token("frank", groups=["a2a-users"])
        operator = idp.token("grace", groups=["a2a-users", "a2a-operators"])
        body = {"contextId": "a-context-no-one-uses"}

        refused = await hub.post(
            "/admin/kill", json=body, headers={"Authorization": f"Bearer {user}"}
        )
        killed = await hub.post(
            "/admin/kill", json=body, headers={"Authorization": f"Bearer {operator}"}
        )

    assert refused.status_code == 403
    assert killed.status_code == 200
    assert killed.json()["canceled"] == []
