"""Partners' cards checked against `verify_card`: an a2a-sdk partner whose card the SDK's own
signer signed is accepted (keys written out, or from a JWKS on loopback, refetched for a new
key id); a card changed after signing, one with no signature and one signed by another key
are refused with the reason, which `a2a-hub agents check` and the console's partner page
show."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml
from a2a.types import AgentCard as SdkAgentCard
from a2a.utils.signing import create_agent_card_signer
from joserfc.jwk import ECKey
from jwt import PyJWK
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from hub.client import CardCache, user_message
from hub.config import CardSettings, CardSigningSettings, Settings, StoreSettings
from hub.errors import CardRefusedError, ConfigError
from hub.partners import Partners
from hub.protocol import AgentCard, Task, TaskState
from hub.registry import load_registry
from hub.testing import serve_hub, serve_on_loopback
from hub.trust import CardKeys
from hub.trust.verify import CardVerifier
from tests.client.partners import ECHO, EchoOrWaitExecutor
from tests.e2e.test_cli_agents import a2a_hub
from tests.sdk_agents import sdk_agent
from tests.trust.keys import public_jwk, write_key

pytestmark = pytest.mark.anyio

Signer = Callable[[SdkAgentCard], SdkAgentCard]


def sdk_signer(key_file: Path, kid: str) -> Signer:
    """The a2a-sdk's own card signer (PyJWT), with the EC key in `key_file`."""
    jwk = PyJWK({**public_jwk(key_file), **_private(key_file)})
    return create_agent_card_signer(jwk, {"alg": "ES256", "kid": kid, "typ": "JOSE", "jku": None})


def _private(key_file: Path) -> dict[str, Any]:
    return dict(ECKey.import_key(key_file.read_bytes()).as_dict(private=True))


def tampered(signer: Signer) -> Signer:
    """Signs, then changes the card: what a card altered on its way looks like."""

    def sign(card: SdkAgentCard) -> SdkAgentCard:
        signed = signer(card)
        signed.description = "a partner that says something else"
        return signed

    return sign


@asynccontextmanager
async def signed_partner(
    sign: Signer | None, jwks: Callable[[], list[dict[str, Any]]] | None = None
) -> AsyncIterator[str]:
    """The SDK partner, its card signed by `sign`, with a JWKS at /jwks.json."""

    def build(url: str) -> Starlette:
        agent = sdk_agent(
            url, EchoOrWaitExecutor(), name="signed", description="signs", skill=ECHO, sign=sign
        )

        async def keys(request: Request) -> JSONResponse:
            return JSONResponse({"keys": jwks() if jwks else []})

        return Starlette(routes=[Route("/jwks.json", keys), Mount("/", agent)])

    async with serve_on_loopback(build) as url:
        yield url


def agents_yaml(folder: Path, url: str, verify_card: dict[str, Any]) -> Path:
    path = folder / "agents.yaml"
    entry = {"name": "signed", "url": url, "verify_card": verify_card}
    path.write_text(yaml.safe_dump({"version": 1, "agents": [entry]}))
    return path


async def test_a_card_the_sdk_signed_is_accepted_and_the_partner_called(tmp_path: Path) -> None:
    key = write_key(tmp_path / "partner.key")
    async with signed_partner(sdk_signer(key, "p-1")) as url:
        path = agents_yaml(tmp_path, url, {"keys": [public_jwk(key, kid="p-1")]})
        async with Partners(load_registry(path)) as partners:
            health = await partners.check("signed")
            assert health.ok, health.error
            answer = await (await partners.client("signed")).send(user_message("signed"))
            assert isinstance(answer, Task)
            assert answer.status.state is TaskState.COMPLETED


async def test_keys_from_a_jwks_are_fetched_again_for_a_key_id_they_did_not_hold(
    tmp_path: Path,
) -> None:
    old, new = write_key(tmp_path / "old.key"), write_key(tmp_path / "new.key")
    published = [public_jwk(old, kid="old")]
    fetches = 0

    def jwks() -> list[dict[str, Any]]:
        nonlocal fetches
        fetches += 1
        return list(published)

    async with signed_partner(sdk_signer(new, "new"), jwks) as url, httpx.AsyncClient() as http:
        card = await _card_of(url, http)
        clock = [0.0]
        verifier = CardVerifier(CardKeys(jwks_url=f"{url}/jwks.json"), http, clock=lambda: clock[0])
        with pytest.raises(CardRefusedError, match="signed with key 'new', which verify"):
            await verifier.verify("signed", card)
        published.append(public_jwk(new, kid="new"))
        # Within the minute the JWKS is not fetched again, whatever the card names.
        with pytest.raises(CardRefusedError):
            await verifier.verify("signed", card)
        assert fetches == 1
        clock[0] = 61.0
        await verifier.verify("signed", card)
        assert fetches == 2


async def _card_of(url: str, http: httpx.AsyncClient) -> AgentCard:
    return await CardCache(http).get(f"{url}/.well-known/agent-card.json")


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("tampered", "its agent card signature does not verify with key 'p-1'"),
        ("unsigned", "its agent card has no signature (verify_card is set)"),
        ("other key", "its agent card signature does not verify with key 'p-1'"),
    ],
)
async def test_a_card_that_fails_is_refused_with_the_reason_in_agents_check_and_the_console(
    tmp_path: Path, case: str, reason: str
) -> None:
    key, other = write_key(tmp_path / "partner.key"), write_key(tmp_path / "other.key")
    sign = {
        "tampered": tampered(sdk_signer(key, "p-1")),
        "unsigned": None,
        "other key": sdk_signer(other, "p-1"),
    }[case]
    async with signed_partner(sign) as url:
        path = agents_yaml(tmp_path, url, {"keys": [public_jwk(key, kid="p-1")]})
        expected = f"agent 'signed': {reason}"
        async with Partners(load_registry(path)) as partners:
            with pytest.raises(CardRefusedError) as caught:
                await partners.client("signed")
            assert str(caught.value) == expected
            assert partners.card_error("signed") == expected
        checked = await a2a_hub("agents", "check", cwd=tmp_path)
        assert checked.returncode == 1, checked.stderr
        assert checked.stdout.startswith("FAIL signed")
        assert expected in checked.stdout
        async with (
            serve_hub(partners=load_registry(path)) as hub,
            httpx.AsyncClient(timeout=30) as http,
        ):
            with anyio.fail_after(60):
                page = (await http.get(f"{hub.url}/ui/partners")).text
        assert expected in html.unescape(page)


def test_verify_card_settings_that_cannot_work_are_refused_when_agents_yaml_is_read(
    tmp_path: Path,
) -> None:
    key = write_key(tmp_path / "k.key")
    private = {**public_jwk(key), **_private(key)}
    for verify_card, expected in [
        ({}, "either jwks_url or keys"),
        ({"jwks_url": "https://x/jwks", "keys": [public_jwk(key)]}, "either jwks_url or keys"),
        ({"keys": [private]}, "holds a private or symmetric key"),
        ({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}, "holds a private or symmetric key"),
        ({"keys": [public_jwk(key), public_jwk(key)]}, "keys.0 has no 'kid'"),
        ({"keys": [{"kty": "EC", "crv": "P-256"}]}, "keys.0 is not a valid JWK"),
        ({"jwks_url": "file:///etc/keys"}, "http:// or https:// URL"),
    ]:
        with pytest.raises(ConfigError, match=expected) as caught:
            load_registry(agents_yaml(tmp_path, "https://127.0.0.1:1", verify_card))
        assert private["d"] not in str(caught.value)


async def test_a_hub_accepts_another_hubs_signed_card(tmp_path: Path) -> None:
    key = write_key(tmp_path / "hub.key", "rsa")
    settings = Settings(
        card=CardSettings(signing=CardSigningSettings(key_file=str(key), kid="hub-a")),
        store=StoreSettings(kind="memory"),
    )
    async with serve_hub(settings=settings) as signed:
        path = agents_yaml(tmp_path, signed.url, {"keys": [public_jwk(key, kid="hub-a")]})
        async with Partners(load_registry(path)) as partners:
            health = await partners.check("signed")
            assert health.ok, health.error
