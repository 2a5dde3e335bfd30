"""The cost of one delegation hop: caller → hub skill → partner, against caller → partner.

The partner is `bench.canned_server` (it answers from memory, so nearly all that is measured is
the hub); the hub runs `bench.delegation_skill:relay`, which calls the partner through
`ctx.agents["partner"]` for every message. Both are driven by the same load generator at each
concurrency, in the same run, interleaved round by round:

- `direct`: SendMessage to the partner;
- `via hub`: SendMessage to the hub, whose skill sends one SendMessage to the partner.

The partner holds each answer `--partner-delay` seconds (default 50 ms, a fast real agent):
then the hub is not the bottleneck and the p50 difference is what the hop adds. With
`--partner-delay 0` the hub itself is what limits the rate, and the run shows its ceiling.

Reported per concurrency, as medians over rounds: p50 and p99 latency of both paths, the p50
the hop adds, requests/s, and the hub's CPU per delegated call (utime + stime of the hub
process over the run, divided by the calls that succeeded). The hub is pinned to core 0; the
partner and the load generator share core 1.

    python -m bench.delegation [--concurrency 1,16] [--duration 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from bench.load import LoadResult, format_result, run_load_sync
from bench.target import (
    RESULTS,
    RunningServer,
    Target,
    add_run_arguments,
    canned_command,
    hub_command,
    hub_rounds,
)

__all__ = ["main"]

_AGENTS = Path("var/bench-agents.yaml")
_STORE = Path("var/bench-delegation.db")
_SETTLE = 0.25


def _hub_command(port: int) -> list[str]:
    return hub_command(
        port, config="bench/delegation.yaml", store=_STORE, extra=["--agents", str(_AGENTS)]
    )


@dataclass(frozen=True, slots=True)
class _Run:
    path: str
    concurrency: int
    round: int
    load: LoadResult
    hub_cpu_ms: float | None


def _load(server: RunningServer, concurrency: int, duration: float) -> LoadResult:
    return run_load_sync(
        port=server.port, scenario="send", concurrency=concurrency, duration=duration
    )


def _round(
    partner: RunningServer, hub: RunningServer, args: argparse.Namespace, round_no: int
) -> list[_Run]:
    runs = []
    for concurrency in args.concurrency:
        direct = _load(partner, concurrency, args.duration)
        print(f"  direct   {format_result(direct)}", flush=True)
        runs.append(_Run("direct", concurrency, round_no, direct, None))
        before = hub.cpu_seconds()
        via = _load(hub, concurrency, args.duration)
        time.sleep(_SETTLE)
        cpu_ms = (hub.cpu_seconds() - before) / via.completed * 1e3 if via.completed else 0.0
        print(f"  via hub  {format_result(via)}  hub CPU {cpu_ms:.3f} ms/call", flush=True)
        runs.append(_Run("via hub", concurrency, round_no, via, cpu_ms))
    return runs


def _median(runs: list[_Run], path: str, concurrency: int, figure: str) -> float:
    values = [
        getattr(run.load, figure) if figure != "hub_cpu_ms" else run.hub_cpu_ms
        for run in runs
        if run.path == path and run.concurrency == concurrency
    ]
    return statistics.median(v for v in values if v is not None)


def _report(runs: list[_Run], args: argparse.Namespace) -> str:
    lines = [
        "| c | direct p50 ms | via hub p50 ms | added p50 ms | direct p99 ms | via hub p99 ms "
        "| direct req/s | via hub req/s | hub CPU ms/call | errors |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in args.concurrency:
        direct_p50 = _median(runs, "direct", c, "p50_ms")
        via_p50 = _median(runs, "via hub", c, "p50_ms")
        errors = sum(run.load.errors for run in runs if run.concurrency == c)
        lines.append(
            f"| {c} | {direct_p50:.2f} | {via_p50:.2f} | {via_p50 - direct_p50:.2f} "
            f"| {_median(runs, 'direct', c, 'p99_ms'):.2f} "
            f"| {_median(runs, 'via hub', c, 'p99_ms'):.2f} "
            f"| {_median(runs, 'direct', c, 'requests_per_s'):.0f} "
            f"| {_median(runs, 'via hub', c, 'requests_per_s'):.0f} "
            f"| {_median(runs, 'via hub', c, 'hub_cpu_ms'):.3f} | {errors} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Measure the delegation hop and print a Markdown table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, concurrency="1,16", duration=8.0)
    parser.add_argument(
        "--partner-delay",
        type=float,
        default=0.05,
        help="seconds the partner holds each answer (0: the hub's own ceiling)",
    )
    args = parser.parse_args(argv)
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    partner_target = Target(
        name="partner", command=canned_command("--delay", str(args.partner_delay))
    )
    hub_target = Target(name="hub", command=_hub_command, store=_STORE)

    def measure(partner: RunningServer, hub: RunningServer, round_no: int) -> list[_Run]:
        _load(hub, 16, args.warmup)
        _load(partner, 16, args.warmup)
        return _round(partner, hub, args, round_no)

    runs = hub_rounds(
        "delegation",
        partner_target,
        hub_target,
        agents=_AGENTS,
        rounds=args.rounds,
        measure=measure,
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "delegation.json").write_text(
        json.dumps(
            [
                {"path": r.path, "round": r.round, "hub_cpu_ms": r.hub_cpu_ms, **r.load.to_dict()}
                for r in runs
            ],
            indent=2,
        )
    )
    print()
    print(f"partner holds each answer {args.partner_delay * 1000:g} ms")
    print(_report(runs, args))


if __name__ == "__main__":
    main()
