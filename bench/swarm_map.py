"""Hub CPU for a `map` swarm of N items: does it grow with N, or with its square?

The hub's app is driven in this process (ASGI, no sockets): one SendMessage to the `swarm`
skill with `strategy: map`, N items across ten partners, on a SQLite store in a temporary
folder (the default store). The partners are answered in this process too, by an httpx
transport that replies to each SendMessage with a completed task of its own id, after
`--partner-delay` seconds, so branches end one by one as they do over a network rather than
all in one turn of the event loop. The figure is this process's CPU over the swarm (the
partners' replies are a small part of it), median of `--rounds` (min to max), each round on
a fresh app and store, and the same per item.

    python -m bench.swarm_map [--sizes 1000,4000] [--rounds 3] [--partner-delay 0.002]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager

from bench.spread import spread
from bench.target import pin_self
from hub.app import create_app
from hub.config import ServerSettings, Settings, StoreSettings, SwarmSettings
from hub.partners import Partners
from hub.registry import load_registry
from hub.skills.swarm import swarm
from hub.store import build_store

__all__ = ["main"]

_PARTNERS = 10


def _card(url: str) -> dict[str, Any]:
    return {
        "name": "partner",
        "description": "answers every message at once",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "work", "name": "work", "description": "work", "tags": []}],
    }


def _partners(delay: float) -> httpx.AsyncClient:
    ids = itertools.count()

    async def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=_card(f"{request.url.scheme}://{request.url.host}/"))
        rpc_id = json.loads(request.content)["id"]
        n = next(ids)
        if delay > 0:
            await asyncio.sleep(delay)
        task = {
            "id": f"t-{n}",
            "contextId": f"c-{n}",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": f"answer {n}"}]}],
        }
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": rpc_id, "result": {"task": task}})

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


async def _one(size: int, delay: float, folder: Path) -> float:
    """Hub CPU seconds of one map swarm of `size` items, on a fresh app and store."""
    lines = ["version: 1", "agents:"]
    for i in range(_PARTNERS):
        lines += [f"  - name: p{i}", f"    url: http://p{i}.partner/"]
    agents = folder / "agents.yaml"
    agents.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store_path = folder / f"hub-{uuid.uuid4().hex}.db"
    settings = Settings(
        server=ServerSettings(public_url="http://hub.bench"),
        store=StoreSettings(kind="sqlite", path=str(store_path)),
        default_skill="swarm",
        swarm=SwarmSettings(max_items=max(size, 1)),
    )
    partners = Partners(load_registry(agents), http=_partners(delay))
    app = create_app(
        settings,
        store=build_store("sqlite", str(store_path)),
        skills={"swarm": swarm},
        partners=partners,
    )
    names = [f"p{i}" for i in range(_PARTNERS)]

    def body(items: list[str]) -> dict[str, Any]:
        message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "do"}]}
        metadata = {"skill": "swarm", "strategy": "map", "agents": names, "items": items}
        params = {"message": message, "metadata": metadata}
        return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}

    async with (
        LifespanManager(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://hub.bench", timeout=3600
        ) as client,
    ):
        headers = {"A2A-Version": "1.0"}
        # Warm-up: every card read, the store's first writes; not counted.
        await client.post("/", json=body(["warm"] * _PARTNERS), headers=headers)
        items = [f"item {i}" for i in range(size)]
        started = time.process_time()
        reply = (await client.post("/", json=body(items), headers=headers)).json()
        cpu = time.process_time() - started
    state = reply["result"]["task"]["status"]["state"]
    if state != "TASK_STATE_COMPLETED":
        raise RuntimeError(f"the map of {size} items ended {state}")
    return cpu


async def _run(sizes: list[int], rounds: int, delay: float) -> dict[int, list[float]]:
    figures: dict[int, list[float]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory(prefix="bench-swarm-map-") as folder:
        for round_no in range(1, rounds + 1):
            for size in sizes:
                cpu = await _one(size, delay, Path(folder))
                figures[size].append(cpu)
                print(f"  round {round_no} map {size:6}: {cpu:7.2f} s hub CPU", flush=True)
    return figures


def main(argv: list[str] | None = None) -> None:
    """Run the map benchmark and print a Markdown table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,4000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partner-delay", type=float, default=0.002)
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    if not pin_self(1):
        print("warning: cannot pin to core 1; figures mean little", file=sys.stderr)
    figures = asyncio.run(_run(sizes, args.rounds, args.partner_delay))
    print()
    print(f"{args.rounds} rounds; medians (min to max)")
    print("| items | hub CPU s | hub CPU ms per item |")
    print("| ---: | ---: | ---: |")
    for size in sizes:
        per_item = [cpu * 1e3 / size for cpu in figures[size]]
        print(f"| {size:,} | {spread(figures[size], 2)} | {spread(per_item, 3)} |")


if __name__ == "__main__":
    main()
