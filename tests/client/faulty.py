"""A partner that answers every A2A call with one kind of fault, over a real socket, and what a
caller of the hub may and may not learn about it.

The partner serves a valid card (so the hub picks it and calls it), then answers each call
with the fault: an HTML page, invalid JSON, JSON cut short, a redirect, an HTTP 500 page
holding a secret, or nothing at all (its interface's port refuses connections). Its answers
carry `SECRET` and the internal address `INTERNAL`, which must never reach a caller.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from hub.client import CARD_PATH
from hub.testing import serve_on_loopback
from tests.client.scripted import Handler, ScriptedAgent, card_document, respond

SECRET = "s3cr3t-db-password-7f2c"
INTERNAL = "10.9.8.7"

FAULTS = ("html", "invalid-json", "truncated-json", "redirect", "http-500", "refused")
"""The faults, as test ids."""

NOT_A2A = "answered something that is not A2A (HTTP "

KIND = {
    "html": NOT_A2A + "200, ",
    "invalid-json": NOT_A2A + "200, ",
    "truncated-json": NOT_A2A + "200, ",
    "redirect": NOT_A2A + "302, a redirect",
    "http-500": "answered HTTP 500",
    "refused": "is unreachable",
}
"""What the caller's message says after "agent '<name>' " for each fault."""

_CALLS = ("SendMessage", "SendStreamingMessage", "GetTask", "CancelTask", "SubscribeToTask")


def fault_handler(fault: str) -> Handler:
    """The answer a partner with `fault` gives to every call."""
    if fault == "html":
        page = f"<html><body><h1>Welcome to nginx</h1><!-- {SECRET} --></body></html>"
        return respond(200, page.encode(), "text/html")
    if fault == "invalid-json":
        return respond(200, f"{{oops {SECRET} at {INTERNAL}".encode())
    if fault == "truncated-json":
        return respond(200, f'{{"jsonrpc": "2.0", "id": 1, "result": {{"task": "{SECRET}'.encode())
    if fault == "redirect":
        location = f"http://{INTERNAL}:8080/a2a?token={SECRET}"
        return respond(302, b"", "text/plain", headers=[("location", location)])
    if fault == "http-500":
        page = f"Internal Server Error: password={SECRET} connecting to {INTERNAL}:5432"
        return respond(500, page.encode(), "text/plain")
    raise ValueError(f"unknown fault {fault!r}")


@dataclass(frozen=True)
class FaultyPartner:
    url: str
    """Where its card is served."""
    interface: str
    """Where its card says to send A2A calls (a refusing port for "refused")."""
    agent: ScriptedAgent

    @property
    def addresses(self) -> tuple[str, ...]:
        """What a caller must never see: the partner's addresses and its secrets."""
        netloc = self.interface.removeprefix("http://")
        return (netloc, self.url.removeprefix("http://"), INTERNAL, SECRET)


@asynccontextmanager
async def faulty_partner(fault: str, *, streaming: bool = True) -> AsyncIterator[FaultyPartner]:
    """A partner on a loopback socket answering every call with `fault`."""
    agent = ScriptedAgent()
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        async with serve_on_loopback(agent) as url:
            if fault == "refused":
                interface = f"http://127.0.0.1:{refusing.getsockname()[1]}"
            else:
                interface = url
                for call in _CALLS:
                    agent.routes[call] = fault_handler(fault)
            card = card_document(interface + "/", name="faulty")
            card["capabilities"] = {"streaming": streaming}
            agent.routes[f"GET {CARD_PATH}"] = respond(200, json.dumps(card).encode())
            yield FaultyPartner(url=url, interface=interface, agent=agent)


def assert_nothing_leaks(text: str, partner: FaultyPartner) -> None:
    """`text` (what a caller received) holds none of the partner's addresses or secrets, and
    no sign of a crash inside the hub."""
    for hidden in partner.addresses:
        assert hidden not in text, f"{hidden!r} reached the caller: {text}"
    assert "Traceback" not in text
    assert "internal error; the hub log" not in text
