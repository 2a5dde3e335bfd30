"""Cost of one cached agent-card lookup (`CardCache.get` on a fresh entry); target < 50 µs.

The cache is filled once through an in-memory transport, then `get` is timed in a loop on the
same event loop; the figure is wall time per lookup, best of several rounds.

    python -m bench.card_cache [--lookups 200000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import time

import anyio
import httpx

from hub.client import CardCache, card_url

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


async def _measure(lookups: int, rounds: int) -> list[float]:
    url = card_url("http://bench.invalid")
    async with httpx.AsyncClient(transport=httpx.MockTransport(_serve_card)) as http:
        cache = CardCache(http)
        await cache.get(url)
        results = []
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(lookups):
                await cache.get(url)
            results.append((time.perf_counter() - start) / lookups * 1e6)
        return results


def main(argv: list[str] | None = None) -> None:
    """Print the cost of a cached lookup in microseconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lookups", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    per_lookup = anyio.run(_measure, args.lookups, args.rounds)
    print(
        json.dumps(
            {
                "cached_lookup_us_best": round(min(per_lookup), 3),
                "cached_lookup_us_median": round(sorted(per_lookup)[len(per_lookup) // 2], 3),
                "lookups_per_round": args.lookups,
                "target_us": 50,
            }
        )
    )


if __name__ == "__main__":
    main()
