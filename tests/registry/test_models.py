"""The agents.yaml models built in code: card URL rules, headers, defaults, frozen values."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from hub.registry import AgentEntry, AuthSettings, ProtocolSettings, TimeoutSettings


@pytest.mark.parametrize(
    ("url", "card_url"),
    [
        ("https://a.example.com", "https://a.example.com/.well-known/agent-card.json"),
        ("https://a.example.com/", "https://a.example.com/.well-known/agent-card.json"),
        (
            "https://a.example.com/team/a",
            "https://a.example.com/team/a/.well-known/agent-card.json",
        ),
        ("https://a.example.com/card.json", "https://a.example.com/card.json"),
        ("https://a.example.com/card.json?v=2", "https://a.example.com/card.json?v=2"),
        ("http://127.0.0.1:9000", "http://127.0.0.1:9000/.well-known/agent-card.json"),
    ],
)
def test_the_card_url_follows_the_url(url: str, card_url: str) -> None:
    assert AgentEntry(name="a", url=url).card_url == card_url


def test_an_entry_with_only_an_inline_card_has_no_card_url() -> None:
    card = {
        "name": "A",
        "description": "a",
        "version": "1",
        "supportedInterfaces": [
            {"url": "https://a.example.com", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [],
    }
    entry = AgentEntry.model_validate({"name": "a", "card": card})
    assert entry.card_url is None
    assert entry.card is not None
    assert entry.card.name == "A"


def test_defaults() -> None:
    entry = AgentEntry(name="a", url="https://a.example.com")
    assert entry.timeout == TimeoutSettings(connect=5.0, read=120.0, deadline=None)
    assert entry.protocol == ProtocolSettings(version="auto", binding="auto")
    assert (entry.weight, entry.enabled, entry.tags) == (1.0, True, ())
    assert entry.auth.http_headers() == {}


def test_headers_combine_an_api_key_with_custom_headers() -> None:
    auth = AuthSettings(
        api_key=SecretStr("k"), headers={"X-Tenant": SecretStr("t"), "X-Trace": SecretStr("u")}
    )
    assert auth.http_headers() == {"X-API-Key": "k", "X-Tenant": "t", "X-Trace": "u"}
    assert auth.http_header_names() == ["X-API-Key", "X-Tenant", "X-Trace"]


def test_the_auth_repr_hides_every_secret() -> None:
    auth = AuthSettings(bearer=SecretStr("b-secret"), headers={"X-A": SecretStr("h-secret")})
    for text in (repr(auth), str(auth), auth.model_dump_json()):
        assert "b-secret" not in text
        assert "h-secret" not in text


def test_models_are_frozen_and_strict() -> None:
    entry = AgentEntry(name="a", url="https://a.example.com")
    with pytest.raises(ValidationError):
        entry.weight = 2.0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        AgentEntry.model_validate({"name": "a", "url": "https://a.example.com", "colour": "red"})


@pytest.mark.parametrize(
    ("value", "seconds"), [(3, 3.0), ("1.5s", 1.5), ("2m", 120.0), ("250ms", 0.25)]
)
def test_timeouts_take_numbers_and_durations(value: object, seconds: float) -> None:
    timeout = TimeoutSettings.model_validate({"connect": value, "read": value, "deadline": value})
    assert (timeout.connect, timeout.read, timeout.deadline) == (seconds, seconds, seconds)


@pytest.mark.parametrize("value", [0, -1, "0s", True])
def test_a_timeout_must_be_positive(value: object) -> None:
    with pytest.raises(ValidationError):
        TimeoutSettings.model_validate({"connect": value})


@pytest.mark.parametrize("name", ["a", "research", "legacy-translator", "a_1", "9lives", "x" * 48])
def test_good_agent_names(name: str) -> None:
    assert AgentEntry(name=name, url="https://a.example.com").name == name


@pytest.mark.parametrize("name", ["", "-a", "_a", "Research", "a b", "a.b", "a\n", "x" * 49])
def test_bad_agent_names(name: str) -> None:
    with pytest.raises(ValidationError):
        AgentEntry(name=name, url="https://a.example.com")


@pytest.mark.parametrize("weight", [0, -1.0, float("inf"), float("nan")])
def test_a_weight_must_be_a_positive_finite_number(weight: float) -> None:
    with pytest.raises(ValidationError):
        AgentEntry(name="a", url="https://a.example.com", weight=weight)


@pytest.mark.parametrize(
    "url",
    [
        "https://ops:s3cret@a.example.com",
        "http://ops@127.0.0.1:8001/",
        "https://:s3cret@a.example.com",
    ],
)
def test_a_url_carrying_credentials_is_refused_without_echoing_them(url: str) -> None:
    with pytest.raises(ValidationError) as raised:
        AgentEntry(name="a", url=url)
    [error] = raised.value.errors()
    assert error["type"] == "url_credentials"
    assert "'auth' section" in error["msg"]
    assert "s3cret" not in error["msg"]


@pytest.mark.parametrize("url", ["https://a.example.com:99999", "https://[::1", "mailto:a@b.c"])
def test_a_url_that_is_not_http_is_refused(url: str) -> None:
    with pytest.raises(ValidationError):
        AgentEntry(name="a", url=url)
