"""Client CPU per request: httpx's own transport against an aiohttp-backed one.

Starts `bench.canned_server` (a server that does no work) in a subprocess, then sends the
same SendMessage calls through `A2AClient` — and, for the floor, bare `httpx` POSTs — once
with httpx's default transport and once with `httpx_aiohttp.AiohttpTransport`, and reports
this process's CPU time per request (user + system, `time.process_time`) and requests/s,
as medians over the rounds (min to max).

    python -m bench.client_transport [--requests 3000] [--concurrency 1 16] [--rounds 3]

`httpx-aiohttp` is not a dependency of the hub; install it to include that column.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import anyio
import httpx

from bench.spread import spread
from hub.client import A2AClient, user_message
from hub.protocol import AgentCard

__all__ = ["main"]


def _card(url: str) -> AgentCard:
    return AgentCard.model_validate(
        {
            "name": "canned",
            "description": "canned replies",
            "version": "1",
            "supportedInterfaces": [
                {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
        }
    )


def _transport(kind: str) -> httpx.AsyncBaseTransport:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    if kind == "httpx":
        return httpx.AsyncHTTPTransport(limits=limits)
    from httpx_aiohttp import AiohttpTransport

    return AiohttpTransport()


async def _run(
    kind: str, url: str, mode: str, requests: int, concurrency: int
) -> tuple[float, float]:
    async with httpx.AsyncClient(transport=_transport(kind), timeout=30) as http:
        client = A2AClient(_card(url), http=http)
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}
        ).encode()
        headers = {"content-type": "application/json", "A2A-Version": "1.0"}

        async def one() -> None:
            if mode == "a2a":
                await client.send(user_message("hello"))
            else:
                response = await http.post(url, content=body, headers=headers)
                response.raise_for_status()

        async def worker(count: int, call: Callable[[], Awaitable[None]]) -> None:
            for _ in range(count):
                await call()

        for _ in range(50):  # warm up: connections, caches
            await one()
        share, extra = divmod(requests, concurrency)
        cpu, wall = time.process_time(), time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in range(concurrency):
                group.start_soon(worker, share + (1 if index < extra else 0), one)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu / requests * 1e3, requests / wall


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main(argv: list[str] | None = None) -> None:
    """Print CPU ms per request and requests/s for each transport, mode and concurrency."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    kinds = ["httpx"]
    try:
        import httpx_aiohttp  # noqa: F401
    except ImportError:
        print("httpx-aiohttp is not installed: measuring httpx's own transport only")
    else:
        kinds.append("aiohttp")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.canned_server", "--port", str(port)],
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)  # waiting for another process to listen
        for mode in ("a2a", "raw"):
            for concurrency in args.concurrency:
                for kind in kinds:
                    runs = [
                        anyio.run(_run, kind, url, mode, args.requests, concurrency)
                        for _ in range(args.rounds)
                    ]
                    cpu = spread([run[0] for run in runs], 3)
                    rate = spread([run[1] for run in runs], 0)
                    print(
                        f"{mode:4} c={concurrency:<3} {kind:8} {cpu} ms CPU/request  {rate} req/s",
                        flush=True,
                    )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
