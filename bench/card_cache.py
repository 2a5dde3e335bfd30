"""Cost of one cached agent-card lookup (`CardCache.get` on a fresh entry); target < 50 µs.

The cache is filled once through an in-memory transport, then each lookup is timed in a loop
on the same event loop; the figure is wall time per lookup, best of several rounds. Three
lookups are timed: `CardCache.get`, `Partners.card(name)` (the same by partner name, as a
tool call does it) and `Partners.client(name)` (card and ready client, the whole lookup
before a tool call sends anything).

    python -m bench.card_cache [--lookups 200000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Awaitable, Callable

import anyio
import httpx

from hub.client import CardCache, card_url
from hub.partners import Partners
from hub.registry import AgentEntry, Registry

__all__ = ["main"]

_CARD = {
    "name": "bench",
    "description": "card for the cache benchmark",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "http://bench.invalid/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}],
}


def _serve_card(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=_CARD, headers={"cache-control": "max-age=3600"})


async def _time(lookup: Callable[[], Awaitable[object]], lookups: int, rounds: int) -> list[float]:
    await lookup()
    results = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(lookups):
            await lookup()
        results.append((time.perf_counter() - start) / lookups * 1e6)
    return results


async def _measure(lookups: int, rounds: int) -> dict[str, list[float]]:
    url = card_url("http://bench.invalid")
    registry = Registry([AgentEntry(name="bench", url="http://bench.invalid")])
    async with httpx.AsyncClient(transport=httpx.MockTransport(_serve_card)) as http:
        cache = CardCache(http)
        partners = Partners(registry, http=http)
        return {
            "cached_lookup": await _time(lambda: cache.get(url), lookups, rounds),
            "partner_card": await _time(lambda: partners.card("bench"), lookups, rounds),
            "partner_client": await _time(lambda: partners.client("bench"), lookups, rounds),
        }


def main(argv: list[str] | None = None) -> None:
    """Print the cost of a cached lookup in microseconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lookups", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    figures = anyio.run(_measure, args.lookups, args.rounds)
    report: dict[str, object] = {}
    for name, per_lookup in figures.items():
        report[f"{name}_us_best"] = round(min(per_lookup), 3)
        report[f"{name}_us_median"] = round(statistics.median(per_lookup), 3)
        report[f"{name}_us_worst"] = round(max(per_lookup), 3)
    report.update({"lookups_per_round": args.lookups, "target_us": 50})
    print(json.dumps(report))


if __name__ == "__main__":
    main()
