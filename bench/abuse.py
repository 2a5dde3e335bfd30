"""A bounded abuse test: 200 concurrent clients for 60 s against the echo skill, with a
slow-loris client and an oversized-body client among them.

- the load: `bench.load` with 200 workers, each with its own connection, SendMessage after
  SendMessage;
- the slow loris: 50 connections that send a request line, then one header byte a second
  (the hub closes each after `server.header_timeout`, 10 s by default);
- the oversized bodies: one client that, again and again, announces a 64 MiB body and
  starts sending it (JSON-RPC and REST in turn).

It passes when the load sees no error at all (no 5xx, no refused connection), every
slow-loris connection is closed by the hub (so a run must last longer than the header
timeout), every oversized request is refused (REST: 413; JSON-RPC: -32600) without the
server reading the body, and afterwards the store holds a completed task for every
acknowledged SendMessage and no task left working. The hub runs `bench/hub.yaml` pinned to
core 0; all clients share core 1.

    python -m bench.abuse [--duration 60] [--clients 200]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass, field

import httpx
import uvloop

from bench.load import LoadResult, format_result, run_load
from bench.target import REPO, TARGETS, exit_on_sigterm, pin_self, start_server

__all__ = ["main"]

RESULTS = REPO / "bench" / "results"
_OVERSIZED = 64 * 1024 * 1024


@dataclass(slots=True)
class _Abuse:
    loris_opened: int = 0
    loris_closed_by_server: int = 0
    loris_open_at_end: int = 0
    oversized_sent: int = 0
    oversized_status: dict[str, int] = field(default_factory=dict)


async def _slow_loris(port: int, connections: int, until: float, abuse: _Abuse) -> None:
    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        abuse.loris_opened += 1
        writer.write(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        try:
            while time.monotonic() < until:
                await writer.drain()
                await asyncio.sleep(1.0)
                if reader.at_eof():
                    abuse.loris_closed_by_server += 1
                    return
                writer.write(b"a")
            abuse.loris_open_at_end += 1
        except (ConnectionError, OSError):
            abuse.loris_closed_by_server += 1
        finally:
            writer.close()

    await asyncio.gather(*(one() for _ in range(connections)), return_exceptions=True)


async def _oversized(port: int, until: float, abuse: _Abuse) -> None:
    """Alternately over JSON-RPC (refused with -32600 in an HTTP 200, as JSON-RPC errors are)
    and over REST (refused with HTTP 413)."""
    paths = ["/", "/message:send"]
    while time.monotonic() < until:
        path = paths[abuse.oversized_sent % 2]
        abuse.oversized_sent += 1
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"A2A-Version: 1.0\r\nContent-Length: {_OVERSIZED}\r\n\r\n"
        ).encode()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(head + b"{" + b" " * 65536)
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(4096), timeout=10)
            writer.close()
            outcome = _refusal(answer)
        except (ConnectionError, OSError, TimeoutError):
            outcome = "closed"
        abuse.oversized_status[outcome] = abuse.oversized_status.get(outcome, 0) + 1
        await asyncio.sleep(0.2)


def _refusal(answer: bytes) -> str:
    status = answer.split(b" ", 2)[1].decode() if answer.count(b" ") >= 2 else "closed"
    if status == "200" and b'"code":-32600' in answer:
        return "200 -32600"
    return status


async def _run(port: int, clients: int, duration: float) -> tuple[LoadResult, _Abuse]:
    abuse = _Abuse()
    until = time.monotonic() + duration
    load, *_ = await asyncio.gather(
        run_load(port=port, scenario="send", concurrency=clients, duration=duration),
        _slow_loris(port, 50, until, abuse),
        _oversized(port, until, abuse),
    )
    return load, abuse


def _store_totals(port: int) -> dict[str, int]:
    headers = {"A2A-Version": "1.0"}
    totals = {}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
        for label, state in (
            ("all", None),
            ("completed", "TASK_STATE_COMPLETED"),
            ("working", "TASK_STATE_WORKING"),
            ("submitted", "TASK_STATE_SUBMITTED"),
        ):
            params = {"pageSize": "1", **({"status": state} if state else {})}
            totals[label] = int(http.get("/tasks", params=params).json()["totalSize"])
    return totals


def main(argv: list[str] | None = None) -> None:
    """Run the abuse test and print its figures; exit 1 when it did not pass."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=200)
    args = parser.parse_args(argv)
    exit_on_sigterm()
    if not pin_self(1):
        print("warning: cannot pin to core 1; figures mean little", file=sys.stderr)
    with start_server(TARGETS["hub"], core=0, log_path=RESULTS / "abuse-hub.log") as hub:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            load, abuse = runner.run(_run(hub.port, args.clients, args.duration))
        time.sleep(1.0)
        totals = _store_totals(hub.port)
    print(f"load:       {format_result(load)}")
    print(
        f"slow loris: {abuse.loris_opened} connections, {abuse.loris_closed_by_server} closed "
        f"by the server, {abuse.loris_open_at_end} still open at the end"
    )
    print(f"oversized:  {abuse.oversized_sent} requests, answers {abuse.oversized_status}")
    print(f"store:      {totals}")
    lost = load.completed - totals["completed"]
    passed = (
        load.errors == 0
        and abuse.loris_closed_by_server == abuse.loris_opened
        and lost <= 0
        and totals["working"] == 0
        and totals["submitted"] == 0
        and set(abuse.oversized_status) <= {"413", "200 -32600", "closed"}
    )
    print(
        f"acknowledged sends without a completed task: {max(lost, 0)}; "
        f"{'PASS' if passed else 'FAIL'}"
    )
    raise SystemExit(0 if passed else 1)


if __name__ == "__main__":
    main()
