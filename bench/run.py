"""Throughput, latency and server CPU per request: the hub against the SDK reference agent.

A bare Litestar JSON echo (`bench.litestar_echo`) runs beside them, so the hub's own cost
per request can be read against what any request costs on the same stack.

Each server runs as a child pinned to one core (`taskset -c 0`) and this process, which drives
the load, pins itself to another (core 1), so the two never compete for a core. Targets run
interleaved — reference, hub, reference, hub … for `--rounds` rounds — so that noise from a
shared machine falls on both; the report gives the median of each figure over the rounds and
the ratio hub / reference. Each round starts each server afresh, with an empty store.

    python -m bench.run                      # what `make bench` runs
    python -m bench.run --targets reference --quick
    python -m bench.run --targets hub-off,hub,hub-traces --scenarios send --concurrency 16

The last compares the hub with telemetry off, with metrics (its default) and with metrics and
traces exported to a local OTLP receiver (`bench.otlp_sink`, started on the load
generator's core).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.load import SCENARIOS, LoadResult, format_result, run_load_sync
from bench.otlp_sink import running_sink
from bench.target import (
    REPO,
    TARGETS,
    RunningServer,
    ServerStartError,
    Target,
    baseline_target,
    exit_on_sigterm,
    pin_self,
    start_server,
)

__all__ = ["Measurement", "Plan", "Ratio", "Summary", "main", "ratios", "summarise"]

RESULTS = REPO / "bench" / "results"


@dataclass(frozen=True, slots=True, kw_only=True)
class Measurement:
    """One load run against one server in one round, with the server's CPU over that run."""

    target: str
    round: int
    load: LoadResult
    server_cpu_s: float

    @property
    def server_cpu_ms_per_request(self) -> float:
        """Server CPU per successful request, in milliseconds."""
        return self.server_cpu_s / self.load.completed * 1e3 if self.load.completed else 0.0

    def to_dict(self) -> dict[str, object]:
        """Plain values for JSON."""
        return {
            "target": self.target,
            "round": self.round,
            "server_cpu_s": self.server_cpu_s,
            "server_cpu_ms_per_request": self.server_cpu_ms_per_request,
            **self.load.to_dict(),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What to run, from the command line."""

    targets: tuple[str, ...]
    scenarios: tuple[str, ...]
    concurrency: tuple[int, ...]
    duration: float
    warmup: float
    rounds: int
    server_core: int | None
    client_core: int | None
    baseline: Path | None = None
    """Another checkout whose hub is the `baseline` target (`--baseline`)."""

    def target(self, name: str) -> Target:
        """The server the target `name` starts."""
        if name == "baseline" and self.baseline is not None:
            return baseline_target(self.baseline)
        return TARGETS[name]


def _measure(server: RunningServer, plan: Plan, round_no: int) -> list[Measurement]:
    """Warm the server up, then one load run per scenario x concurrency."""
    for scenario in plan.scenarios:
        run_load_sync(
            port=server.port,
            path=server.target.rpc_path,
            scenario=scenario,
            concurrency=16,
            duration=plan.warmup,
        )
    measurements = []
    for scenario in plan.scenarios:
        for concurrency in plan.concurrency:
            result, cpu = server.load(
                path=server.target.rpc_path,
                scenario=scenario,
                concurrency=concurrency,
                duration=plan.duration,
            )
            measurement = Measurement(
                target=server.target.name, round=round_no, load=result, server_cpu_s=cpu
            )
            print(
                f"  {server.target.name:9} {format_result(result)}  "
                f"server CPU {measurement.server_cpu_ms_per_request:.3f} ms/req",
                flush=True,
            )
            measurements.append(measurement)
    return measurements


@contextlib.contextmanager
def otlp_sink(plan: Plan) -> Iterator[str | None]:
    """A local OTLP receiver (`bench.otlp_sink`) on the load generator's core while a target
    that exports traces is in the plan; yields its URL (None when none is needed). The
    servers find it through `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`."""
    if not any(plan.target(name).traces for name in plan.targets):
        yield None
        return
    with running_sink(core=plan.client_core) as url:
        os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"{url}/v1/traces"
        try:
            yield url
        finally:
            os.environ.pop("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None)


def run_plan(plan: Plan) -> tuple[list[Measurement], dict[str, str]]:
    """Run every round; returns the measurements and the targets that failed, with why."""
    measurements: list[Measurement] = []
    failed: dict[str, str] = {}
    for round_no in range(1, plan.rounds + 1):
        print(f"round {round_no}/{plan.rounds}", flush=True)
        for name in plan.targets:
            if name in failed:
                continue
            log_path = RESULTS / f"{name}-round{round_no}.log"
            try:
                with start_server(
                    plan.target(name), core=plan.server_core, log_path=log_path
                ) as server:
                    measurements.extend(_measure(server, plan, round_no))
            except ServerStartError as exc:
                print(f"  {name}: {exc}", file=sys.stderr, flush=True)
                failed[name] = exc.summary
    return measurements, failed


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """Medians over rounds for one target x scenario x concurrency; errors and ok are totals."""

    target: str
    scenario: str
    concurrency: int
    rounds: int
    errors: int
    completed: int
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    server_cpu_ms_per_request: float
    client_cpu_us_per_request: float
    requests_per_s_range: tuple[float, float] = (0.0, 0.0)
    """Lowest and highest requests/s over the rounds."""
    server_cpu_range: tuple[float, float] = (0.0, 0.0)
    """Lowest and highest server CPU ms/req over the rounds."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Ratio:
    """One target's medians divided by another's, for the same scenario and concurrency."""

    scenario: str
    concurrency: int
    requests_per_s: float | None
    p50_ms: float | None
    p99_ms: float | None
    server_cpu_ms_per_request: float | None


def summarise(measurements: Sequence[Measurement]) -> list[Summary]:
    """Medians over rounds, plus total errors and requests, per target x scenario x c."""
    groups: dict[tuple[str, str, int], list[Measurement]] = {}
    for m in measurements:
        groups.setdefault((m.target, m.load.scenario, m.load.concurrency), []).append(m)
    return [
        Summary(
            target=target,
            scenario=scenario,
            concurrency=concurrency,
            rounds=len(group),
            errors=sum(m.load.errors for m in group),
            completed=sum(m.load.completed for m in group),
            requests_per_s=statistics.median(m.load.requests_per_s for m in group),
            p50_ms=statistics.median(m.load.p50_ms for m in group),
            p99_ms=statistics.median(m.load.p99_ms for m in group),
            server_cpu_ms_per_request=statistics.median(m.server_cpu_ms_per_request for m in group),
            client_cpu_us_per_request=statistics.median(
                m.load.client_cpu_us_per_request for m in group
            ),
            requests_per_s_range=_range([m.load.requests_per_s for m in group]),
            server_cpu_range=_range([m.server_cpu_ms_per_request for m in group]),
        )
        for (target, scenario, concurrency), group in groups.items()
    ]


def _range(values: Sequence[float]) -> tuple[float, float]:
    return min(values), max(values)


def _divide(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def ratios(rows: Sequence[Summary], over: str, under: str) -> list[Ratio]:
    """`over` / `under` for each figure, where both targets have the same scenario and c."""
    index = {(r.target, r.scenario, r.concurrency): r for r in rows}
    out: list[Ratio] = []
    for row in rows:
        base = index.get((under, row.scenario, row.concurrency))
        if row.target != over or base is None:
            continue
        out.append(
            Ratio(
                scenario=row.scenario,
                concurrency=row.concurrency,
                requests_per_s=_divide(row.requests_per_s, base.requests_per_s),
                p50_ms=_divide(row.p50_ms, base.p50_ms),
                p99_ms=_divide(row.p99_ms, base.p99_ms),
                server_cpu_ms_per_request=_divide(
                    row.server_cpu_ms_per_request, base.server_cpu_ms_per_request
                ),
            )
        )
    return out


def _times(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


COMPARISONS = (
    ("hub", "baseline"),
    ("hub", "reference"),
    ("hub", "litestar-echo"),
    ("hub", "hub-off"),
    ("hub-traces", "hub-off"),
    ("hub-traces-10", "hub-off"),
)
"""The ratio tables a report has, where both targets ran: the hub against another
checkout's (`--baseline`), against the SDK's reference and against a bare Litestar JSON
echo, and the hub with metrics (its default) and with traces against telemetry off."""


def render_markdown(
    plan: Plan,
    rows: Sequence[Summary],
    ratio_rows: Mapping[tuple[str, str], Sequence[Ratio]],
    failed: dict[str, str],
    environment: dict[str, object],
) -> str:
    """The report: settings, one table of medians, then one table of ratios per comparison
    (`ratio_tables`: title, e.g. "hub / reference", to its rows)."""
    lines = [
        "# a2a-hub benchmark",
        "",
        f"- when: {environment['when']}; host: {environment['cpus']} CPUs, "
        f"Python {environment['python']}, load average before/after "
        f"{environment['loadavg_before']} / {environment['loadavg_after']}",
        f"- {plan.rounds} round(s), targets interleaved ({', '.join(plan.targets)}); "
        f"{plan.duration:g} s per run after {plan.warmup:g} s warm-up per scenario; "
        f"server on core {plan.server_core}, load generator on core {plan.client_core}",
        "- figures are medians over rounds (min to max in brackets); errors and ok are totals "
        "over rounds; "
        "server CPU is utime+stime of the server process per successful request",
        "",
    ]
    if rows:
        lines += [
            "| target | scenario | c | req/s | p50 ms | p99 ms | server CPU ms/req | errors | ok "
            "| client CPU µs/req |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
    else:
        lines.append("No measurements.")
    for r in rows:
        lines.append(
            f"| {r.target} | {r.scenario} | {r.concurrency} "
            f"| {r.requests_per_s:.1f} ({r.requests_per_s_range[0]:.1f}\N{EN DASH}"
            f"{r.requests_per_s_range[1]:.1f}) | {r.p50_ms:.2f} | {r.p99_ms:.2f} "
            f"| {r.server_cpu_ms_per_request:.3f} ({r.server_cpu_range[0]:.3f}\N{EN DASH}"
            f"{r.server_cpu_range[1]:.3f}) | {r.errors} | {r.completed} "
            f"| {r.client_cpu_us_per_request:.0f} |"
        )
    for (over, under), compared in ratio_rows.items():
        if not compared:
            continue
        lines += [
            "",
            f"## {over} / {under}",
            "",
            "Above 1x is better for req/s; below 1x is better for latency and CPU.",
            "",
            "| scenario | c | req/s | p50 | p99 | server CPU/req |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for q in compared:
            lines.append(
                f"| {q.scenario} | {q.concurrency} | {_times(q.requests_per_s)} "
                f"| {_times(q.p50_ms)} | {_times(q.p99_ms)} "
                f"| {_times(q.server_cpu_ms_per_request)} |"
            )
    if "otlp_spans" in environment:
        lines += ["", f"OTLP receiver: {environment['otlp_spans']} spans received."]
    if failed:
        lines += ["", "## failed to run", ""]
        lines += [f"- {name}: {why}" for name, why in failed.items()]
    return "\n".join(lines) + "\n"


def _names(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _parse(argv: list[str] | None) -> Plan:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--targets", default="reference,litestar-echo,hub", help="from: " + ", ".join(TARGETS)
    )
    parser.add_argument("--scenarios", default="send,stream", help="from: send, stream")
    parser.add_argument("--concurrency", default="1,16,64")
    parser.add_argument("--duration", type=float, default=None, help="seconds per run (10)")
    parser.add_argument("--warmup", type=float, default=None, help="seconds per scenario (2)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (3)")
    parser.add_argument("--quick", action="store_true", help="1 round of 2 s runs, to smoke-test")
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--client-core", type=int, default=1)
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another checkout of a2a-hub with its own .venv (e.g. a git worktree of an "
        "earlier commit): its hub runs as the target `baseline`, interleaved with `hub`",
    )
    args = parser.parse_args(argv)
    targets = _names(args.targets)
    scenarios = _names(args.scenarios)
    if args.baseline is not None and "baseline" not in targets:
        targets = (*targets, "baseline")
    for name in targets:
        if name == "baseline" and args.baseline is not None:
            continue
        if name not in TARGETS:
            parser.error(f"unknown target {name!r} (known: {', '.join(TARGETS)})")
    for name in scenarios:
        if name not in SCENARIOS:
            parser.error(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})")
    quick = args.quick
    return Plan(
        targets=targets,
        scenarios=scenarios,
        concurrency=tuple(int(c) for c in _names(args.concurrency)),
        duration=args.duration or (2.0 if quick else 10.0),
        warmup=args.warmup or (0.5 if quick else 2.0),
        rounds=args.rounds or (1 if quick else 3),
        server_core=args.server_core,
        client_core=args.client_core,
        baseline=args.baseline,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the plan, print the Markdown report and write it with the JSON beside it."""
    plan = _parse(argv)
    exit_on_sigterm()
    cores = os.sched_getaffinity(0)
    if plan.server_core not in cores or plan.client_core not in cores:
        # Without two cores the server and the load share one and the figures mean little.
        print(f"warning: cores {sorted(cores)} available; not pinning", file=sys.stderr)
        plan = dataclasses.replace(plan, server_core=None, client_core=None)
    elif plan.client_core is not None:
        pin_self(plan.client_core)
    environment: dict[str, object] = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "loadavg_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    with otlp_sink(plan) as sink:
        measurements, failed = run_plan(plan)
        if sink is not None:
            environment["otlp_spans"] = httpx.get(f"{sink}/stats", timeout=5).json()["spans"]
    environment["loadavg_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = summarise(measurements)
    ratio_rows = {pair: ratios(rows, *pair) for pair in COMPARISONS}
    report = render_markdown(plan, rows, ratio_rows, failed, environment)
    print()
    print(report)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.md").write_text(report)
    document = {
        "environment": environment,
        "plan": dataclasses.asdict(plan),
        "medians": [dataclasses.asdict(r) for r in rows],
        "ratios": {
            f"{over}/{under}": [dataclasses.asdict(q) for q in compared]
            for (over, under), compared in ratio_rows.items()
        },
        "failed": failed,
        "measurements": [m.to_dict() for m in measurements],
    }
    (RESULTS / "latest.json").write_text(json.dumps(document, indent=2, default=str) + "\n")
    print(f"written: {_relative(RESULTS / 'latest.md')}, {_relative(RESULTS / 'latest.json')}")
    errors = sum(m.load.errors for m in measurements)
    return 1 if failed or errors else 0


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
