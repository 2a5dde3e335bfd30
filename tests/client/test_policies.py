"""Retry policy, interface choice and the HTTP error helpers, without a network."""

from __future__ import annotations

import sys

import httpx
import pytest

from hub.client import A2AClient, BreakerConfig, CircuitBreaker, RetryPolicy, choose_interface
from hub.client.http_errors import retry_after_seconds, translate_http_errors
from hub.errors import (
    AgentBusyError,
    AgentTimeoutError,
    AgentUnreachableError,
    CircuitOpenError,
    ConnectionLostError,
    NoSupportedInterfaceError,
)
from hub.protocol import AgentCard
from hub.protocol.grpc.extra import grpc_installed
from tests.client.scripted import card_document

pytestmark = pytest.mark.anyio


def card_with(*interfaces: tuple[str, str]) -> AgentCard:
    document = card_document("http://x")
    document["supportedInterfaces"] = [
        {
            "url": f"http://x/{binding}/{version}",
            "protocolBinding": binding,
            "protocolVersion": version,
        }
        for binding, version in interfaces
    ]
    return AgentCard.model_validate(document)


class Flaky:
    """Fails with the given errors in turn, then returns "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


FAST = RetryPolicy(attempts=3, base_delay=0.0, max_delay=0.0, max_retry_after=0.01)


async def test_reads_are_retried_on_transient_failures() -> None:
    operation = Flaky(AgentTimeoutError("slow"), ConnectionLostError("cut"))

    assert await FAST.call(operation, idempotent=True) == "ok"
    assert operation.calls == 3


@pytest.mark.parametrize(
    "error",
    [AgentTimeoutError("slow"), ConnectionLostError("cut"), AgentBusyError("busy", code=503)],
)
async def test_writes_are_not_resent_once_the_request_may_have_arrived(error: Exception) -> None:
    operation = Flaky(error)

    with pytest.raises(type(error)):
        await FAST.call(operation, idempotent=False)
    assert operation.calls == 1


async def test_writes_are_retried_when_no_connection_was_made() -> None:
    operation = Flaky(AgentUnreachableError("refused"))

    assert await FAST.call(operation, idempotent=False) == "ok"
    assert operation.calls == 2


async def test_a_retry_after_beyond_the_cap_is_raised_not_waited_for() -> None:
    operation = Flaky(AgentBusyError("busy", code=503, retry_after=3600))

    with pytest.raises(AgentBusyError):
        await FAST.call(operation, idempotent=True)
    assert operation.calls == 1


def test_the_wait_honours_retry_after_within_the_cap() -> None:
    policy = RetryPolicy(max_retry_after=5.0)
    busy = AgentBusyError("busy", code=429, retry_after=2.0)

    assert policy._delay(busy, attempt=1) == 2.0
    assert policy._delay(busy, attempt=3) == 2.0
    assert 0 <= policy._delay(AgentUnreachableError("down"), attempt=3) <= 0.4


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3", 3.0),
        (" 0 ", 0.0),
        (None, None),
        ("soon", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
    ],
)
def test_retry_after_is_read_as_seconds_or_a_date(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value) == seconds


def test_the_first_supported_interface_is_chosen() -> None:
    card = card_with(("GRPC", "0.3"), ("JSONRPC", "0.3.0"), ("HTTP+JSON", "1.0"))

    interface, version = choose_interface(card)

    assert (interface.protocol_binding, version) == ("JSONRPC", "0.3")


def test_a_card_that_prefers_grpc_is_spoken_to_over_grpc() -> None:
    card = card_with(("GRPC", "1.0.1"), ("JSONRPC", "1.0"))

    interface, version = choose_interface(card)
    jsonrpc, _ = choose_interface(card, binding="jsonrpc")

    assert (interface.protocol_binding, version) == ("GRPC", "1.0")
    assert jsonrpc.protocol_binding == "JSONRPC"


@pytest.mark.parametrize("binding", [None, "grpc"])
def test_without_the_grpc_extra_a_grpc_card_names_the_pip_command(
    binding: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("grpc", "google.rpc"):
        monkeypatch.setitem(sys.modules, name, None)  # as if never installed
    grpc_installed.cache_clear()
    try:
        with pytest.raises(NoSupportedInterfaceError) as refused:
            choose_interface(card_with(("GRPC", "1.0"), ("HTTP+JSON", "0.3")), binding=binding)
        rest, _ = choose_interface(card_with(("GRPC", "1.0"), ("HTTP+JSON", "1.0")))
    finally:
        grpc_installed.cache_clear()

    assert "gRPC needs the grpc extra: pip install 'a2a-hub[grpc]'" in str(refused.value)
    assert "supported: JSONRPC 1.0, JSONRPC 0.3, HTTP+JSON 1.0)" in str(refused.value)
    assert rest.protocol_binding == "HTTP+JSON"


def test_an_override_picks_a_later_interface() -> None:
    card = card_with(("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"))

    rest, _ = choose_interface(card, binding="http+json")
    legacy, version = choose_interface(card, protocol_version="0.3", binding="auto")

    assert rest.url == "http://x/HTTP+JSON/1.0"
    assert (legacy.url, version) == ("http://x/JSONRPC/0.3", "0.3")


def test_a_card_with_nothing_this_client_speaks_is_refused() -> None:
    card = card_with(("GRPC", "0.3"), ("HTTP+JSON", "0.3"), ("JSONRPC", "2.0"))

    with pytest.raises(NoSupportedInterfaceError, match=r"GRPC 0\.3") as refused:
        choose_interface(card)

    assert "pip install" not in str(refused.value)


async def test_an_open_breaker_refuses_calls_before_any_request() -> None:
    breaker = CircuitBreaker("x", BreakerConfig(failure_threshold=1, cool_down=60))
    breaker.record_failure()
    async with httpx.AsyncClient() as http:
        client = A2AClient(card_with(("JSONRPC", "1.0")), http=http, breaker=breaker)
        with pytest.raises(CircuitOpenError):
            await client.get_task("t1")


def test_connect_errors_become_unreachable_and_read_errors_lost() -> None:
    with pytest.raises(AgentUnreachableError, match="'billing'"), translate_http_errors("billing"):
        raise httpx.ConnectError("refused")
    with pytest.raises(ConnectionLostError, match="'billing'"), translate_http_errors("billing"):
        raise httpx.ReadError("reset")
    with pytest.raises(AgentTimeoutError, match="'billing'"), translate_http_errors("billing"):
        raise httpx.ReadTimeout("slow")


def test_a_partner_added_at_run_time_is_never_spoken_to_over_grpc() -> None:
    both = card_with(("GRPC", "1.0"), ("JSONRPC", "1.0"))
    only = card_with(("GRPC", "1.0"))

    interface, _ = choose_interface(both, grpc=False)
    with pytest.raises(NoSupportedInterfaceError) as refused:
        choose_interface(only, grpc=False)

    assert interface.protocol_binding == "JSONRPC"
    assert "pip install" not in str(refused.value)
