"""The floor under any Python gRPC door: grpcio's asyncio server (on uvloop, as the hub runs)
answering calls that do no work, a unary call and a three-message stream, with its CPU per
call read from /proc as `bench.grpc` reads the hub's.

What the hub's door spends beyond this is its own (conversion, the gate, the task); what is
below it no door on grpcio's asyncio server can save.

    python -m bench.grpc_floor                 # 3 rounds of 3,000 calls each kind
    python -m bench.grpc_floor --calls 1000
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import uvloop

from bench.target import cpu_seconds

SERVICE = "floor.Floor"
PAYLOAD = b"x" * 200
"""About the size of a small SendMessageRequest."""


def _serve(ports: Any) -> None:
    async def unary(request: bytes, context: Any) -> bytes:
        return request

    async def stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
        for _ in range(3):
            yield request

    async def main() -> None:
        server = grpc.aio.server()
        handler = grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "Unary": grpc.unary_unary_rpc_method_handler(unary),
                "Stream": grpc.unary_stream_rpc_method_handler(stream),
            },
        )
        server.add_generic_rpc_handlers((handler,))
        ports.put(server.add_insecure_port("127.0.0.1:0"))
        await server.start()
        await server.wait_for_termination()

    uvloop.run(main())


def _measure(pid: int, call: Callable[[], Any], calls: int) -> tuple[float, float]:
    """Calls a second at concurrency 1, and the server's CPU milliseconds a call."""
    cpu_before, started = cpu_seconds(pid), time.perf_counter()
    for _ in range(calls):
        call()
    elapsed, cpu = time.perf_counter() - started, cpu_seconds(pid) - cpu_before
    return calls / elapsed, cpu / calls * 1000


def _spread(values: list[float], form: str) -> str:
    """The median (min to max)."""
    low, middle, high = min(values), statistics.median(values), max(values)
    return f"{middle:{form}} ({low:{form}} to {high:{form}})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=3000, help="calls of each kind a round")
    args = parser.parse_args(argv)
    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(ports,), daemon=True)
    server.start()
    try:
        channel = grpc.insecure_channel(f"127.0.0.1:{ports.get(timeout=30)}")
        unary = channel.unary_unary(f"/{SERVICE}/Unary")
        stream = channel.unary_stream(f"/{SERVICE}/Stream")
        kinds = {"unary": lambda: unary(PAYLOAD), "stream of 3": lambda: list(stream(PAYLOAD))}
        for call in kinds.values():  # warm up the channel and the server
            for _ in range(200):
                call()
        figures: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
        for _ in range(args.rounds):
            for kind, call in kinds.items():
                figures[kind].append(_measure(server.pid or 0, call, args.calls))
        print("| call | calls/s at c=1 | server CPU ms/call |")
        print("| --- | ---: | ---: |")
        for kind, runs in figures.items():
            rates, cpus = [run[0] for run in runs], [run[1] for run in runs]
            print(f"| {kind} | {_spread(rates, ',.0f')} | {_spread(cpus, '.3f')} |")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
