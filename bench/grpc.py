"""SendMessage and SendStreamingMessage over gRPC: the hub's gRPC door beside the a2a-sdk
reference server's (`bench.reference_agent --grpc-port`, the SDK's own `GrpcHandler`) and
beside the hub's own JSON-RPC door, in one run.

Each server runs as a child pinned to one core (`taskset -c 0`), this process drives the load
from another (core 1). Targets run interleaved, reference then hub, for `--rounds` rounds,
each started afresh with an empty store; the report gives the median (min to max) of each figure
over the rounds and the ratio hub / reference. The gRPC load has one channel (one HTTP/2
connection) per worker and one call in flight on each, as `bench.load` has one connection per
worker over HTTP; each call sends a new message ("hello", the echo skill) and counts as done
when its task is COMPLETED.

    python -m bench.grpc                          # c=1 and c=16, 3 rounds of 5 s
    python -m bench.grpc --rounds 1 --duration 2  # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import uvloop

from bench.load import LoadResult, percentile
from bench.target import (
    REPO,
    RESULTS,
    RunningServer,
    Target,
    free_port,
    hub_command,
    pin_self,
    start_server,
)
from hub.protocol.grpc import a2a_pb2 as pb
from hub.protocol.grpc import a2a_pb2_grpc

__all__ = ["grpc_load", "main"]

SCENARIOS = ("send", "stream")
_V1 = (("a2a-version", "1.0"),)
_DASH = "\N{EN DASH}"
_SETTLE = 0.25
"""Seconds a server has to finish work trailing its last answer before its CPU is read."""


def _request(worker: int, number: int) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(
            message_id=f"bench-{worker}-{number}",
            role=pb.ROLE_USER,
            parts=[pb.Part(text="hello")],
        )
    )


async def _completed(stub: a2a_pb2_grpc.A2AServiceStub, scenario: str, request: object) -> bool:
    if scenario == "send":
        answer = await stub.SendMessage(request, metadata=_V1, timeout=30)
        return bool(answer.task.status.state == pb.TASK_STATE_COMPLETED)
    state = pb.TASK_STATE_UNSPECIFIED
    async for event in stub.SendStreamingMessage(request, metadata=_V1, timeout=30):
        if event.HasField("status_update"):
            state = event.status_update.status.state
        elif event.HasField("task"):
            state = event.task.status.state
    return bool(state == pb.TASK_STATE_COMPLETED)


async def grpc_load(
    address: str, *, scenario: str, concurrency: int, duration: float
) -> LoadResult:
    """Run `concurrency` workers against the gRPC server at `address` for `duration` s."""
    latencies: list[float] = []
    errors = 0
    channels = [grpc.aio.insecure_channel(address) for _ in range(concurrency)]
    try:
        for channel in channels:
            await asyncio.wait_for(channel.channel_ready(), 30)
        deadline = time.monotonic() + duration
        started_wall = time.perf_counter()
        started_cpu = time.process_time()

        async def worker(number: int, channel: grpc.aio.Channel) -> None:
            nonlocal errors
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            sent = 0
            while time.monotonic() < deadline:
                sent += 1
                began = time.perf_counter()
                try:
                    ok = await _completed(stub, scenario, _request(number, sent))
                except grpc.aio.AioRpcError:
                    ok = False
                if ok:
                    latencies.append(time.perf_counter() - began)
                else:
                    errors += 1

        await asyncio.gather(*(worker(n, c) for n, c in enumerate(channels)))
        elapsed = time.perf_counter() - started_wall
        cpu = time.process_time() - started_cpu
    finally:
        for channel in channels:
            await channel.close()
    ordered = sorted(latencies)
    return LoadResult(
        scenario=scenario,
        concurrency=concurrency,
        completed=len(ordered),
        errors=errors,
        elapsed_s=elapsed,
        p50_ms=percentile(ordered, 0.50) * 1e3,
        p99_ms=percentile(ordered, 0.99) * 1e3,
        client_cpu_s=cpu,
    )


@dataclass(frozen=True, slots=True)
class Row:
    """One load run: which server, through which door, and what it measured."""

    target: str
    door: str
    round: int
    load: LoadResult
    server_cpu_s: float

    def key(self) -> tuple[str, str, str, int]:
        return (self.target, self.door, self.load.scenario, self.load.concurrency)

    def to_dict(self) -> dict[str, object]:
        return {
            "target": self.target,
            "door": self.door,
            "round": self.round,
            "server_cpu_s": self.server_cpu_s,
            **self.load.to_dict(),
        }


def _targets(grpc_port: int) -> list[Target]:
    store = Path("var/bench-grpc-hub.db")

    def reference(port: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "bench.reference_agent",
            "--port",
            str(port),
            "--grpc-port",
            str(grpc_port),
        ]

    def hub(port: int) -> list[str]:
        return hub_command(port, store=store)

    return [
        Target(name="reference", command=reference),
        Target(
            name="hub",
            command=hub,
            store=store,
            env={"HUB_SERVER__GRPC__ENABLED": "true", "HUB_SERVER__GRPC__PORT": str(grpc_port)},
        ),
    ]


def _measure(server: RunningServer, run: Callable[[], LoadResult]) -> tuple[LoadResult, float]:
    before = server.cpu_seconds()
    result = run()
    time.sleep(_SETTLE)
    return result, server.cpu_seconds() - before


def _round(
    target: Target,
    number: int,
    grpc_port: int,
    *,
    concurrencies: Sequence[int],
    duration: float,
    server_core: int | None,
) -> list[Row]:
    rows = []
    log = RESULTS / f"grpc-{target.name}.log"
    with start_server(target, core=server_core, log_path=log) as server:
        for scenario in SCENARIOS:
            for concurrency in concurrencies:

                def over_grpc(
                    scenario: str = scenario, concurrency: int = concurrency
                ) -> LoadResult:
                    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                        return runner.run(
                            grpc_load(
                                f"127.0.0.1:{grpc_port}",
                                scenario=scenario,
                                concurrency=concurrency,
                                duration=duration,
                            )
                        )

                load, cpu = _measure(server, over_grpc)
                rows.append(Row(target.name, "grpc", number, load, cpu))
                print(f"  {target.name:9} grpc    {_line(load, cpu)}", flush=True)
                if target.name == "hub":
                    load, cpu = server.load(
                        scenario=scenario, concurrency=concurrency, duration=duration
                    )
                    rows.append(Row(target.name, "jsonrpc", number, load, cpu))
                    print(f"  {target.name:9} jsonrpc {_line(load, cpu)}", flush=True)
    return rows


def _line(load: LoadResult, cpu: float) -> str:
    per = cpu / load.completed * 1e3 if load.completed else 0.0
    return (
        f"{load.scenario:6} c={load.concurrency:<3} {load.requests_per_s:9.1f} req/s  "
        f"p50 {load.p50_ms:7.2f} ms  p99 {load.p99_ms:7.2f} ms  errors {load.errors}  "
        f"server CPU {per:.3f} ms/req"
    )


def _spread(values: list[float], digits: int = 1) -> str:
    return (
        f"{statistics.median(values):,.{digits}f} "
        f"({min(values):,.{digits}f}{_DASH}{max(values):,.{digits}f})"
    )


def report(rows: list[Row]) -> str:
    """The markdown table of medians (min to max) over the rounds, with hub / reference."""
    by_key: dict[tuple[str, str, str, int], list[Row]] = {}
    for row in rows:
        by_key.setdefault(row.key(), []).append(row)
    lines = [
        "| scenario | c | reference gRPC req/s | hub gRPC req/s | hub / reference | "
        "hub JSON-RPC req/s | hub gRPC p50 ms | hub gRPC CPU ms/req | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    scenarios = sorted({key[2] for key in by_key}, key=SCENARIOS.index)
    concurrencies = sorted({key[3] for key in by_key})
    for scenario in scenarios:
        for c in concurrencies:
            ref = by_key.get(("reference", "grpc", scenario, c), [])
            hub = by_key.get(("hub", "grpc", scenario, c), [])
            jsonrpc = by_key.get(("hub", "jsonrpc", scenario, c), [])
            if not (ref and hub):
                continue
            ratio = statistics.median(r.load.requests_per_s for r in hub) / max(
                statistics.median(r.load.requests_per_s for r in ref), 1e-9
            )
            cpu = [r.server_cpu_s / r.load.completed * 1e3 for r in hub if r.load.completed]
            errors = sum(r.load.errors for r in ref + hub + jsonrpc)
            lines.append(
                f"| {scenario} | {c} | {_spread([r.load.requests_per_s for r in ref])} "
                f"| {_spread([r.load.requests_per_s for r in hub])} | {ratio:.2f}x "
                f"| {_spread([r.load.requests_per_s for r in jsonrpc]) if jsonrpc else '-'} "
                f"| {_spread([r.load.p50_ms for r in hub], 2)} "
                f"| {_spread(cpu, 3)} | {errors} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Command line: run the rounds, print the table, keep every run in bench/results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load run")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    args = parser.parse_args(argv)
    pinned = pin_self(1)
    server_core = 0 if pinned else None
    rows: list[Row] = []
    for number in range(1, args.rounds + 1):
        print(f"round {number}/{args.rounds}", flush=True)
        grpc_port = free_port()
        for target in _targets(grpc_port):
            rows.extend(
                _round(
                    target,
                    number,
                    grpc_port,
                    concurrencies=args.concurrency,
                    duration=args.duration,
                    server_core=server_core,
                )
            )
    table = report(rows)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = RESULTS / f"grpc-{stamp}.json"
    out.write_text(json.dumps([row.to_dict() for row in rows], indent=1), encoding="utf-8")
    print(
        f"\n{'pinned: servers on core 0, load on core 1' if pinned else 'not pinned'}; "
        f"runs in {out.relative_to(REPO)}"
    )


if __name__ == "__main__":
    main()
