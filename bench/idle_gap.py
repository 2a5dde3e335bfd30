"""What idling between calls costs a server's next call on this machine: the same SendMessage,
one caller (c=1), sent back to back or after a pause of each `--pauses` length.

Each target (`bench.target.TARGETS`, by default the hub with its echo skill and the bare
Litestar JSON echo) is started once, pinned to core 0, and this process, pinned to core 1,
loads it: each round runs every pause in turn against the same server. Per run, the server's
CPU per call is its utime + stime over the run (from `/proc`, in 10 ms ticks) divided by the
calls answered. The work of a call is the same at every pause: only the time the server
spent idle before it differs. What a pause adds to that CPU is what the latency figures of
the slow-partner benchmarks (`bench.delegation` at c=1 with a 50 ms partner) pay on top of
the hub's own work.

    python -m bench.idle_gap [--targets hub,litestar-echo] [--pauses 0,0.005,0.05]
                             [--calls 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from bench.load import run_load_sync
from bench.spread import spread
from bench.target import RESULTS, TARGETS, RunningServer, exit_on_sigterm, pin_self, start_server

__all__ = ["main"]


@dataclass(frozen=True, slots=True)
class _Run:
    target: str
    pause: float
    cpu_ms: float
    p50_ms: float


def _run(server: RunningServer, name: str, pause: float, calls: int) -> _Run:
    result, spent = server.load(
        path=server.target.rpc_path, concurrency=1, count=calls, pause=pause
    )
    if result.errors or not result.completed:
        raise SystemExit(f"{name}: {result.errors} errors in {calls} calls")
    run = _Run(name, pause, spent / result.completed * 1e3, result.p50_ms)
    print(
        f"  {name:14} pause {pause * 1000:5g} ms  CPU {run.cpu_ms:.3f} ms/call  "
        f"p50 {run.p50_ms:.2f} ms",
        flush=True,
    )
    return run


def _report(runs: list[_Run], targets: list[str], pauses: list[float]) -> str:
    lines = [
        "| target | pause ms | server CPU ms/call | / back to back (median of rounds) | p50 ms |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name in targets:
        base = [r.cpu_ms for r in runs if r.target == name and r.pause == pauses[0]]
        for pause in pauses:
            mine = [r for r in runs if r.target == name and r.pause == pause]
            cpu = [r.cpu_ms for r in mine]
            ratios = [value / first for first, value in zip(base, cpu, strict=True)]
            lines.append(
                f"| {name} | {pause * 1000:g} | {spread(cpu, 3)} | {spread(ratios)} "
                f"| {spread([r.p50_ms for r in mine])} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="hub,litestar-echo")
    parser.add_argument(
        "--pauses", default="0,0.005,0.05", help="seconds between calls; the first is the base"
    )
    parser.add_argument("--calls", type=int, default=300, help="per target, pause and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    targets = [name.strip() for name in args.targets.split(",") if name.strip()]
    unknown = [name for name in targets if name not in TARGETS]
    if unknown or not targets:
        parser.error(f"unknown target(s) {unknown} (known: {', '.join(TARGETS)})")
    pauses = [float(pause) for pause in args.pauses.split(",") if pause.strip()]
    exit_on_sigterm()
    if not pin_self(1):
        print("warning: cannot pin to core 1; figures mean little", file=sys.stderr)
    runs: list[_Run] = []
    for name in targets:
        target = TARGETS[name]
        with start_server(target, core=0, log_path=RESULTS / f"idle-gap-{name}.log") as server:
            run_load_sync(port=server.port, path=target.rpc_path, concurrency=1, count=200)
            for round_no in range(1, args.rounds + 1):
                print(f"{name}: round {round_no}/{args.rounds}", flush=True)
                for pause in pauses:
                    runs.append(_run(server, name, pause, args.calls))
    print()
    print(
        f"c=1, {args.calls} calls per run, {args.rounds} rounds; medians (min to max); "
        "server CPU from /proc in 10 ms ticks"
    )
    print(_report(runs, targets, pauses))


if __name__ == "__main__":
    main()
