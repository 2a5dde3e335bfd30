"""Inbound authentication: API keys and bearer tokens from the settings, a 401 with a challenge
on every door, the card that says exactly that, the extended card, skill scopes, and secrets
that never show."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from hub.app import create_app
from hub.config import (
    AuthSettings,
    CardSettings,
    CredentialSettings,
    Settings,
    load_settings,
)
from hub.errors import CardMismatchError, ConfigError
from hub.server.auth import Authenticator
from hub.server.card import ServedFeatures, build_card, check_card
from hub.store import MemoryTaskStore
from tests.server.auth_hub import (
    ALICE,
    ALICE_KEY,
    BOB,
    BOB_TOKEN,
    CAROL,
    CAROL_KEY,
    DOORS,
    NOBODY,
    SECRETS,
    WRONG_KEY,
    Credential,
    Door,
    auth_settings,
    auth_skills,
    message,
    serve_in_process,
)

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}
CHALLENGE = 'Bearer realm="a2a-hub", ApiKey realm="a2a-hub", header="X-API-Key"'


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with serve_in_process(auth_settings()) as client:
        yield client


async def test_the_public_card_is_open_and_names_exactly_the_schemes_enforced(
    http: httpx.AsyncClient,
) -> None:
    card = (await http.get("/.well-known/agent-card.json")).json()
    assert card["securityRequirements"] == [
        {"schemes": {"apiKey": {"list": []}}},
        {"schemes": {"bearer": {"list": []}}},
    ]
    schemes = card["securitySchemes"]
    assert schemes["apiKey"]["apiKeySecurityScheme"] == {
        "description": "an API key in the X-API-Key header",
        "location": "header",
        "name": "X-API-Key",
    }
    assert schemes["bearer"]["httpAuthSecurityScheme"] == {
        "description": "a bearer token in 'Authorization: Bearer <token>'",
        "scheme": "Bearer",
    }
    # The 0.3 view of the same schemes, for 0.3 clients.
    assert card["security"] == [{"apiKey": []}, {"bearer": []}]
    assert (schemes["apiKey"]["type"], schemes["apiKey"]["in"]) == ("apiKey", "header")
    assert (schemes["bearer"]["type"], schemes["bearer"]["scheme"]) == ("http", "Bearer")
    assert card["capabilities"]["extendedAgentCard"] is True


async def test_with_auth_off_the_card_names_no_scheme() -> None:
    app = create_app(Settings(), store=MemoryTaskStore(), skills=auth_skills())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://h") as c:
        card = (await c.get("/.well-known/agent-card.json")).json()
    assert "securitySchemes" not in card
    assert "securityRequirements" not in card
    assert "security" not in card


async def test_only_the_schemes_of_configured_credentials_are_advertised() -> None:
    settings = Settings(
        auth=AuthSettings(
            enabled=True,
            api_key_header="X-Hub-Key",
            credentials=(CredentialSettings(name="ops", api_key=ALICE_KEY),),
        )
    )
    async with serve_in_process(settings) as client:
        card = (await client.get("/.well-known/agent-card.json")).json()
        refused = await client.get("/tasks", headers=V1)
        in_default_header = await client.get("/tasks", headers={**V1, "X-API-Key": ALICE_KEY})
        in_named_header = await client.get("/tasks", headers={**V1, "X-Hub-Key": ALICE_KEY})
    assert list(card["securitySchemes"]) == ["apiKey"]
    assert card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"]["name"] == "X-Hub-Key"
    assert refused.headers["www-authenticate"] == 'ApiKey realm="a2a-hub", header="X-Hub-Key"'
    assert in_default_header.status_code == 401
    assert in_named_header.status_code == 200


@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-API-Key": WRONG_KEY},
        {"X-API-Key": ""},
        {"Authorization": f"Bearer {WRONG_KEY}"},
        {"Authorization": f"Bearer {ALICE_KEY}"},  # an API key is no bearer token
        {"Authorization": f"Basic {BOB_TOKEN}"},
        {"Authorization": "Bearer "},
        {"X-API-Key": BOB_TOKEN},  # nor is a bearer token an API key
        {"X-API-Key": ALICE_KEY, "Authorization": f"Bearer {BOB_TOKEN}"},  # two callers
        {"X-API-Key": ALICE_KEY, "Authorization": f"Bearer {WRONG_KEY}"},
    ],
    ids=[
        "none",
        "wrong key",
        "empty key",
        "wrong token",
        "key as token",
        "basic",
        "empty bearer",
        "token as key",
        "two credentials",
        "good key, bad token",
    ],
)
async def test_a_missing_or_bad_credential_gets_401_with_a_challenge(
    http: httpx.AsyncClient, door: Door, headers: dict[str, str]
) -> None:
    refused = await door.call(http, Credential("", headers), "start")
    assert refused.status == 401
    assert refused.reason == "UNAUTHENTICATED"
    if door.name == "rest-1.0":
        assert refused.code == 401
    else:
        assert refused.code == -32000
    listed = await http.get("/tasks", headers={**V1, "X-API-Key": ALICE_KEY})
    assert listed.json()["totalSize"] == 0  # nothing was started


async def test_the_401_bodies_and_headers_as_sent(http: httpx.AsyncClient) -> None:
    rpc = await http.post(
        "/", json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}, headers=V1
    )
    assert rpc.status_code == 401
    assert rpc.headers["www-authenticate"] == CHALLENGE
    assert rpc.json() == {
        "jsonrpc": "2.0",
        "id": None,  # refused before the body is read
        "error": {
            "code": -32000,
            "message": "this hub needs a credential: an API key in the X-API-Key header or a "
            "bearer token in 'Authorization: Bearer <token>'",
            "data": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "UNAUTHENTICATED",
                    "domain": "a2a-protocol.org",
                    "metadata": {},
                }
            ],
        },
    }
    rest = await http.get("/tasks", headers={**V1, "Authorization": f"Bearer {WRONG_KEY}"})
    assert rest.status_code == 401
    assert rest.headers["www-authenticate"] == (
        'Bearer realm="a2a-hub", error="invalid_token", '
        'error_description="the bearer token is not valid", '
        'ApiKey realm="a2a-hub", header="X-API-Key"'
    )
    assert rest.json() == {
        "error": {
            "code": 401,
            "status": "UNAUTHENTICATED",
            "message": "the bearer token is not valid",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "UNAUTHENTICATED",
                    "domain": "a2a-protocol.org",
                    "metadata": {},
                }
            ],
        }
    }


@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
@pytest.mark.parametrize("who", [ALICE, BOB, CAROL], ids=["api key", "bearer", "scoped key"])
async def test_each_credential_gets_in_through_every_door(
    http: httpx.AsyncClient, door: Door, who: Credential
) -> None:
    started = await door.call(http, who, "start")
    assert started.status == 200
    assert started.ok, started


@pytest.mark.parametrize(
    ("path", "verb"),
    [
        ("/status", "GET"),
        ("/metrics", "GET"),
        ("/extendedAgentCard", "GET"),
        ("/tasks", "GET"),
        ("/tasks/t1", "GET"),
        ("/tasks/t1:cancel", "POST"),
        ("/tasks/t1:subscribe", "GET"),
        ("/tasks/t1/pushNotificationConfigs", "GET"),
        ("/message:send", "POST"),
        ("/message:stream", "POST"),
        ("/", "POST"),
        ("/", "GET"),
    ],
)
async def test_everything_but_the_card_needs_a_credential(
    http: httpx.AsyncClient, path: str, verb: str
) -> None:
    refused = await http.request(verb, path, headers=V1)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == CHALLENGE
    for card_path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
        assert (await http.get(card_path)).status_code == 200


async def test_the_probes_answer_without_a_credential(http: httpx.AsyncClient) -> None:
    alive = await http.get("/healthz")
    ready = await http.get("/readyz")
    assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
    assert ready.status_code == 200
    assert ready.json() == {"ready": True, "checks": {"store": "ok", "registry": "ok (0 partners)"}}


@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
async def test_the_extended_card_shows_an_authenticated_caller_the_skills_it_may_use(
    http: httpx.AsyncClient, door: Door
) -> None:
    refused = await door.call(http, NOBODY, "extended_card")
    assert refused.status == 401
    full = await door.call(http, ALICE, "extended_card")
    scoped = await door.call(http, CAROL, "extended_card")
    assert full.ok, full
    assert [skill["id"] for skill in full.result["skills"]] == ["echo", "interview", "waits"]
    assert [skill["id"] for skill in scoped.result["skills"]] == ["echo", "interview"]
    public = (await http.get("/.well-known/agent-card.json")).json()
    for key in ("name", "version", "supportedInterfaces", "capabilities", "securityRequirements"):
        assert full.result[key] == public[key]
    assert set(full.result["securitySchemes"]) == set(public["securitySchemes"])


async def test_an_extended_card_with_auth_off_stops_the_hub_at_start() -> None:
    settings = Settings(card=CardSettings(extended_card=True))
    with pytest.raises(CardMismatchError, match=r"auth\.enabled"):
        create_app(settings, store=MemoryTaskStore(), skills=auth_skills())


def test_a_card_whose_schemes_differ_from_those_enforced_stops_the_hub() -> None:
    skills = [skill.card for skill in auth_skills().values()]
    card = build_card(auth_settings(), skills)
    check_card(
        card,
        ServedFeatures(
            push_notifications=True,
            extended_card=True,
            security_schemes=frozenset({"apiKey", "bearer"}),
        ),
    )
    with pytest.raises(CardMismatchError, match="securitySchemes"):
        check_card(card, ServedFeatures(push_notifications=True, extended_card=True))
    with pytest.raises(CardMismatchError, match="securitySchemes"):
        check_card(
            build_card(Settings(), skills),
            ServedFeatures(push_notifications=True, security_schemes=frozenset({"bearer"})),
        )


@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
async def test_a_skill_outside_the_credentials_scope_is_refused(
    http: httpx.AsyncClient, door: Door
) -> None:
    if door.name == "rest-1.0":
        response = await http.post(
            "/message:send",
            json={"message": message("go"), "metadata": {"skill": "waits"}},
            headers={**V1, **CAROL.headers},
        )
        assert response.status_code == 403
        error = response.json()["error"]
        assert (error["status"], error["details"][0]["reason"]) == (
            "PERMISSION_DENIED",
            "SKILL_NOT_ALLOWED",
        )
    else:
        v03 = door.name == "jsonrpc-0.3"
        params = {"message": message("go", v03=v03), "metadata": {"skill": "waits"}}
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send" if v03 else "SendMessage",
            "params": params,
        }
        response = await http.post("/", json=body, headers={**({} if v03 else V1), **CAROL.headers})
        assert response.status_code == 200
        assert response.json()["error"]["code"] == -32602
    listed = await http.get("/tasks", headers={**V1, **CAROL.headers})
    assert listed.json()["totalSize"] == 0


async def test_an_unknown_skill_lists_only_the_skills_the_caller_may_use(
    http: httpx.AsyncClient,
) -> None:
    response = await http.post(
        "/message:send",
        json={"message": message("go"), "metadata": {"skill": "nope"}},
        headers={**V1, **CAROL.headers},
    )
    assert response.status_code == 400
    assert "(known: echo, interview)" in response.json()["error"]["message"]


async def test_the_default_skill_outside_the_scope_is_refused_with_the_way_out() -> None:
    settings = auth_settings()
    settings = settings.model_copy(
        update={
            "auth": AuthSettings(
                enabled=True,
                credentials=(
                    CredentialSettings(name="carol", api_key=CAROL_KEY, skills=("interview",)),
                ),
            )
        }
    )
    async with serve_in_process(settings) as client:
        refused = await client.post(
            "/message:send", json={"message": message("hi")}, headers={**V1, **CAROL.headers}
        )
        allowed = await client.post(
            "/message:send",
            json={"message": message("hi"), "metadata": {"skill": "interview"}},
            headers={**V1, **CAROL.headers},
        )
    assert refused.status_code == 403
    assert "metadata.skill" in refused.json()["error"]["message"]
    assert allowed.json()["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


@pytest.mark.parametrize(
    ("skills", "problem"),
    [(("echo", "nope"), "nope are not served"), ((), "skills is empty")],
)
def test_a_credential_scoped_to_skills_that_are_not_served_stops_the_hub(
    skills: tuple[str, ...], problem: str
) -> None:
    auth = AuthSettings(
        enabled=True, credentials=(CredentialSettings(name="x", api_key=ALICE_KEY, skills=skills),)
    )
    with pytest.raises(ConfigError, match=problem):
        create_app(Settings(auth=auth), store=MemoryTaskStore(), skills=auth_skills())


async def test_the_credential_table_keeps_digests_only() -> None:
    authenticator = Authenticator(auth_settings().auth, skills=auth_skills())
    kept = repr(vars_of(authenticator))
    for secret in SECRETS:
        assert secret not in kept
    caller = await authenticator.identify({"x-api-key": ALICE_KEY}, address="10.0.0.1")
    assert (caller.name, caller.address, caller.skills) == ("alice", "10.0.0.1", None)
    assert (await authenticator.identify({"authorization": f"bearer {BOB_TOKEN}"})).name == "bob"


def vars_of(authenticator: Authenticator) -> dict[str, object]:
    return {name: getattr(authenticator, name) for name in vars(authenticator)}


async def test_no_secret_shows_in_answers_headers_logs_or_the_card(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    async with serve_in_process(auth_settings()) as client:
        seen.append((await client.get("/.well-known/agent-card.json")).text)
        for who in (ALICE, BOB, CAROL, NOBODY):
            for headers in (who.headers, {"X-API-Key": WRONG_KEY}, {"Authorization": WRONG_KEY}):
                for door in DOORS:
                    for operation in ("start", "get", "extended_card"):
                        outcome = await Door(door.name).call(
                            client, Credential(who.name, headers), operation, "t1"
                        )
                        seen.append(repr(outcome))
                response = await client.get("/tasks", headers={**V1, **headers})
                seen.append(response.text + json.dumps(dict(response.headers)))
    seen.extend(record.getMessage() for record in caplog.records)
    seen.append(repr(auth_settings()))
    text = "\n".join(seen)
    for secret in SECRETS:
        assert secret not in text


# -- secrets in config/hub.yaml ---------------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hub.yaml"
    path.write_text(text, encoding="utf-8")
    return path


HUB_YAML = """\
auth:
  enabled: true
  credentials:
    - name: ops
      api_key: "${HUB_OPS_KEY}"
    - name: partner-bot
      bearer: "${HUB_PARTNER_TOKEN}"
      skills: [delegate, echo]
      agents: [research]
cors:
  allow_origins: ["https://app.example.com"]
"""


def test_credentials_written_as_references_are_read_from_the_environment(
    tmp_path: Path,
) -> None:
    env = {"HUB_OPS_KEY": ALICE_KEY, "HUB_PARTNER_TOKEN": BOB_TOKEN}
    settings = load_settings(write(tmp_path, HUB_YAML), env=env)
    ops, bot = settings.auth.credentials
    assert ops.api_key is not None
    assert ops.api_key.get_secret_value() == ALICE_KEY
    assert bot.bearer is not None
    assert bot.bearer.get_secret_value() == BOB_TOKEN
    assert (bot.skills, bot.agents) == (("delegate", "echo"), ("research",))
    assert settings.cors.allow_origins == ("https://app.example.com",)
    assert ALICE_KEY not in repr(settings)
    assert BOB_TOKEN not in repr(settings)


def test_a_literal_secret_in_hub_yaml_is_refused_by_file_line_and_key(tmp_path: Path) -> None:
    text = HUB_YAML.replace('"${HUB_OPS_KEY}"', f'"{ALICE_KEY}"')
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text), env={"HUB_PARTNER_TOKEN": BOB_TOKEN})
    message = str(caught.value)
    assert message == (
        f"{tmp_path / 'hub.yaml'}:5: auth.credentials.0.api_key: write the secret as an "
        'environment reference such as "${HUB_OPS_KEY}", not literally'
    )
    assert ALICE_KEY not in message


def test_a_reference_to_an_unset_variable_is_named_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, HUB_YAML), env={"HUB_OPS_KEY": ALICE_KEY})
    assert str(caught.value) == (
        f"{tmp_path / 'hub.yaml'}:7: auth.credentials.1.bearer: environment variable "
        "HUB_PARTNER_TOKEN is not set"
    )


def test_a_secret_too_short_is_refused_without_showing_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(
            write(tmp_path, HUB_YAML), env={"HUB_OPS_KEY": "short", "HUB_PARTNER_TOKEN": BOB_TOKEN}
        )
    assert "shorter than 16 characters" in str(caught.value)
    assert "short'" not in str(caught.value)
    assert ": short" not in str(caught.value)
