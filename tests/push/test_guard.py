"""The SSRF guard: forbidden addresses refused when a config is created, and a host that
resolves differently later refused when a notification is delivered."""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Sequence

import pytest

from hub.errors import UnsafeUrlError
from hub.push import UrlGuard
from hub.testing import serve_on_loopback

from .conftest import FAST, running_hub, user_message
from .receiver import WebhookReceiver

pytestmark = pytest.mark.anyio

PUBLIC = "93.184.216.34"

FORBIDDEN = {
    "loopback v4": "127.0.0.1",
    "loopback v4, not .1": "127.10.20.30",
    "loopback v6": "::1",
    "private 10/8": "10.1.2.3",
    "private 172.16/12": "172.20.0.5",
    "private 192.168/16": "192.168.1.10",
    "shared 100.64/10": "100.64.0.7",
    "unique-local v6": "fd12:3456::1",
    "link-local v4 (cloud metadata)": "169.254.169.254",
    "link-local v6": "fe80::1",
    "multicast v4": "224.0.0.251",
    "multicast v6": "ff02::1",
    "unspecified v4": "0.0.0.0",
    "unspecified v6": "::",
    "IPv4-mapped loopback": "::ffff:127.0.0.1",
    "6to4 of a private address": "2002:c0a8:0101::1",
    "documentation range": "192.0.2.10",
    "broadcast": "255.255.255.255",
}


class Dns:
    """A resolver the test controls: names map to address lists; others do not resolve."""

    def __init__(self, **names: Sequence[str]) -> None:
        self.names = {name.replace("_", "-") + ".test": list(a) for name, a in names.items()}
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        if host not in self.names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.names[host]


@pytest.mark.parametrize("address", FORBIDDEN.values(), ids=FORBIDDEN.keys())
async def test_every_forbidden_address_family_is_refused_by_name_and_as_a_literal(
    address: str,
) -> None:
    guard = UrlGuard(resolver=Dns(hook=[address]))
    literal = f"[{address}]" if ":" in address else address
    for url in ("https://hook.test/notify", f"http://{literal}:8080/notify"):
        with pytest.raises(UnsafeUrlError) as refused:
            await guard.check(url)
        assert refused.value.violations[0][0] == "url"


async def test_one_forbidden_address_among_public_ones_is_enough_to_refuse() -> None:
    guard = UrlGuard(resolver=Dns(hook=[PUBLIC, "10.0.0.1"]))
    with pytest.raises(UnsafeUrlError):
        await guard.check("https://hook.test/")


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hook.test/x",
        "file:///etc/passwd",
        "gopher://hook.test/",
        "hook.test/relative",
        "https://user:secret@hook.test/",
        "http://hook.test:99999/",
        "https:///no-host",
        "https://unknown.test/",
        "https://hook.test/" + "x" * 3000,
    ],
)
async def test_urls_that_are_not_plain_http_to_a_resolvable_host_are_refused(url: str) -> None:
    guard = UrlGuard(resolver=Dns(hook=[PUBLIC]))
    with pytest.raises(UnsafeUrlError):
        await guard.check(url)


async def test_public_addresses_and_the_allow_lists_are_accepted() -> None:
    dns = Dns(hook=[PUBLIC, "2606:2800:220:1:248:1893:25c8:1946"], inside=["10.1.2.3"])
    guard = UrlGuard(resolver=dns)
    checked = await guard.check("https://hook.test/notify?x=1")
    assert checked.addresses == (PUBLIC, "2606:2800:220:1:248:1893:25c8:1946")
    assert checked.request_url(PUBLIC) == f"https://{PUBLIC}:443/notify?x=1"
    assert checked.host_header == "hook.test"
    assert checked.tls_server_name == "hook.test"
    by_host = UrlGuard(allow_hosts=["Inside.Test."], resolver=dns)
    assert (await by_host.check("http://inside.test:8080/")).host_header == "inside.test:8080"
    by_range = UrlGuard(allow_cidrs=[ipaddress.ip_network("10.0.0.0/8")], resolver=dns)
    await by_range.check("http://inside.test/")
    assert by_range.refusal("::ffff:10.9.9.9") is None
    assert by_range.refusal("192.168.0.1") == "a private address"


async def test_a_config_for_any_forbidden_address_is_refused_when_it_is_created() -> None:
    dns = Dns(**{f"family{n}": [address] for n, address in enumerate(FORBIDDEN.values())})
    answers = {}
    async with running_hub(resolver=dns) as hub:
        task_id = await hub.parked_task()
        for n, family in enumerate(FORBIDDEN):
            url = f"http://family{n}.test/notify"
            created = await hub.call(
                "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": url}
            )
            inline = await hub.call(
                "SendMessage",
                {
                    "message": user_message("hi"),
                    "configuration": {"taskPushNotificationConfig": {"url": url}},
                },
            )
            answers[family] = [
                (document["error"]["code"], document["error"]["data"][0]["reason"])
                for document in (created, inline)
            ]
        listed = await hub.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert answers == {family: [(-32602, "UNSAFE_URL")] * 2 for family in FORBIDDEN}
    assert listed["configs"] == []


async def test_a_host_that_turns_private_after_the_config_was_created_gets_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    webhook = WebhookReceiver()
    caplog.set_level(logging.WARNING, logger="hub.push")
    dns = Dns(rebind=[PUBLIC])
    async with serve_on_loopback(webhook) as url:
        port = url.rsplit(":", 1)[1]
        async with running_hub(resolver=dns) as hub:
            task_id = await hub.parked_task()
            await hub.add_config(task_id, f"http://rebind.test:{port}/hook", id="rebound")
            # The name now points at the receiver on loopback: a hub that resolved the name
            # again through the system (or reused the first answer) would reach it.
            dns.names["rebind.test"] = ["127.0.0.1"]
            await hub.result("CancelTask", {"id": task_id})
            await hub.push.wait_idle()
    assert webhook.received == []
    assert dns.asked == ["rebind.test", "rebind.test"]
    [warning] = [r.getMessage() for r in caplog.records if r.name == "hub.push"]
    assert "refused by the address check" in warning
    assert "rebound" in warning


async def test_an_allowed_name_is_delivered_to_the_address_checked_with_its_own_host_header(
    receiver: tuple[WebhookReceiver, str],
) -> None:
    webhook, url = receiver
    port = url.rsplit(":", 1)[1]
    dns = Dns(named_hook=["127.0.0.1"])
    settings = FAST.model_copy(update={"allow_hosts": ("named-hook.test",)})
    async with running_hub(push=settings, resolver=dns) as hub:
        task_id = await hub.parked_task()
        await hub.add_config(task_id, f"http://named-hook.test:{port}/hook")
        await hub.result("CancelTask", {"id": task_id})
        [delivery] = await webhook.wait_for(1, "/hook")
    assert delivery.headers["host"] == f"named-hook.test:{port}"
    assert delivery.state == "TASK_STATE_CANCELED"
