"""`a2a-hub status [URL]` and `a2a-hub agents check --hub URL`: a running hub's partners,
breakers, latency and error figures, live tasks and load, read from its `GET /status`
(behind a credential when the hub has auth on; nothing secret in it)."""

from __future__ import annotations

import argparse
import json

from hub.cli.outcome import Running
from hub.cli.settings import command_settings
from hub.telemetry.status import HubStatus, PartnerStatus

__all__ = ["COUNTED", "check_running_hub", "hub_status", "status"]

COUNTED = (
    "(routed calls: delegate turns and swarm branches, whose recent latency and errors the "
    "router weighs; /metrics counts every request sent to a partner, gateway traffic and "
    "failed card reads included)"
)
"""What the partner figures count, printed under them: they are not `/metrics`' counts."""


async def hub_status(url: str, args: argparse.Namespace) -> HubStatus:
    """Read the hub's status, with `--api-key` / `--token` (or their variables) if given.

    Raises:
        ClientError: the hub cannot be reached, refuses the credential, or answers
            something that is not a status.
    """
    from hub.cli.direct import cli_http_client, hub_headers
    from hub.client.http_errors import check_status, read_json, translate_http_errors

    async with cli_http_client() as http:
        headers = await hub_headers(http, url, args)
        with translate_http_errors(url):
            response = await http.get(f"{url}/status", headers=headers)
            check_status(response, url)
        return HubStatus.model_validate(read_json(response, url))


async def status(args: argparse.Namespace, running: Running) -> int:
    """`a2a-hub status [URL]` (default: the settings' `server.public_url`)."""
    url = (args.url or command_settings(args).server.base_url()).rstrip("/")
    running.url, running.url_from_settings = url, args.url is None
    found = await hub_status(url, args)
    if args.json:
        print(json.dumps(found.to_wire(), indent=2))
        return 0
    print(
        f"{found.name} {found.version} at {url}: up {_duration(found.uptime)}, "
        f"{found.requests_per_second:.1f} req/s, {found.error_rate:.0%} errors, "
        f"{found.live_tasks} live tasks ({found.parked_tasks} waiting for input), "
        f"{found.open_streams} open streams"
    )
    if not found.partners:
        print("no partner agents")
    for partner in found.partners:
        print(partner_line(partner))
    if found.partners:
        print(COUNTED)
    return 0


async def check_running_hub(args: argparse.Namespace, running: Running) -> int:
    """`a2a-hub agents check --hub URL [NAME...]`: the partners as the running hub sees them;
    exit status 1 when a partner is not up (its card unread, or its breaker not closed)."""
    from hub.cli.outcome import UsageError

    url = args.hub.rstrip("/")
    running.url = url
    found = await hub_status(url, args)
    partners = {partner.name: partner for partner in found.partners}
    unknown = [name for name in args.names if name not in partners]
    if unknown:
        known = ", ".join(sorted(partners)) or "none"
        raise UsageError(f"the hub at {url} has no partner {', '.join(unknown)} (known: {known})")
    chosen = [partners[name] for name in args.names] if args.names else found.partners
    if args.json:
        print(json.dumps([partner.to_wire() for partner in chosen], indent=2))
    elif not chosen:
        print("no partner agents to check")
    for partner in [] if args.json else chosen:
        print(partner_line(partner))
    if chosen and not args.json:
        print(COUNTED)
    return 0 if all(partner.up for partner in chosen) else 1


def partner_line(partner: PartnerStatus) -> str:
    """One partner as `status` and `agents check --hub` print it."""
    breaker = partner.breaker
    mark = "ok  " if partner.up else "FAIL"
    latency = f"{partner.latency_ms:.0f} ms" if partner.latency_ms is not None else "-"
    line = (
        f"{mark} {partner.name}  breaker {breaker.state}  latency {latency}  "
        f"errors {partner.error_rate:.0%}  routed calls {partner.calls}"
    )
    if partner.origin != "registry":
        line += f"  ({partner.origin})"
    if partner.card_error is not None:
        line += f"\n     {partner.card_error}"
    if breaker.state != "closed":
        line += (
            f"\n     {breaker.consecutive_failures} failures in a row; "
            f"next trial in {breaker.retry_in:.1f} s"
        )
    return line


def _duration(seconds: float) -> str:
    minutes, second = divmod(int(seconds), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}h{minute:02d}m" if hours else f"{minute}m{second:02d}s"
