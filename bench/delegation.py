"""The cost of one hop through the hub: caller → hub → partner, against caller → partner.

The partner is `bench.canned_server` (it answers from memory, so nearly all that is measured is
the hub). Every path is driven by the same load generator at each concurrency, in the same run,
interleaved within each round:

- `direct`: SendMessage to the partner (the baseline of every other path);
- `relay`: SendMessage to the hub's `bench.delegation_skill:relay` skill, which calls the
  partner through `ctx.agents["partner"]` (a skill's own delegation);
- `delegate`: SendMessage to the hub's built-in `delegate` skill, `metadata.agent` naming the
  partner;
- `gateway`: SendMessage to the hub's gateway, `/agents/partner`, which forwards it.

The partner holds each answer `--partner-delay` seconds (default 50 ms, a fast real agent):
then the hub is not the bottleneck and the p50 difference is what the hop adds. With
`--partner-delay 0` the hub itself is what limits the rate, and the run shows its ceiling.
With `--partner-delay 0 --pause 0.05` the callers wait 50 ms between their calls instead:
the hub idles as long between calls as behind the slow partner, and each call's own work
is the instant partner's (what idling costs the next call: `bench/idle_gap.py`).

Reported per path and concurrency, as medians over rounds with the min and max: the p50 the hop adds
(each round's p50 less that round's direct p50), p99, requests/s, and the hub's CPU per call
(utime + stime of the hub process over the run, divided by the calls that succeeded; for the
direct path, the partner's CPU per call, a control: its work per call is the same at every
concurrency, so its rise at c=1 is what idle gaps cost on this machine). The hub is pinned to
core 0; the partner and the load generator share core 1.

    python -m bench.delegation [--paths relay,delegate,gateway] [--concurrency 1,16]
                               [--partner-delay 0.05] [--pause 0] [--duration 6] [--rounds 3]
                               [--baseline ../a2a-hub-before]

`--baseline DIR` measures the hub of another checkout (its own `.venv`) in every round too,
beside this one's: a change's before and after under the same noise.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from bench.load import LoadResult, format_result
from bench.spread import spread
from bench.target import (
    RESULTS,
    RunningServer,
    Target,
    add_run_arguments,
    baseline_target,
    canned_command,
    hub_command,
    hub_rounds,
)

__all__ = ["PATHS", "main"]

_AGENTS = Path("var/bench-agents.yaml")
_STORE = Path("var/bench-delegation.db")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Path:
    """Where a path's requests go: the partner or the hub, at which URL, with which metadata."""

    via_hub: bool
    url_path: str = "/"
    metadata: dict[str, object] | None = None


PATHS: dict[str, _Path] = {
    "direct": _Path(via_hub=False),
    "relay": _Path(via_hub=True, metadata={"skill": "relay"}),
    "delegate": _Path(via_hub=True, metadata={"skill": "delegate", "agent": "partner"}),
    "gateway": _Path(via_hub=True, url_path="/agents/partner"),
}


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
    cpu_ms: float
    """The hub's CPU per call; on the direct path, the partner's."""
    hub: str = "hub"
    """Which hub the round ran: this checkout's, or `baseline` (`--baseline`)."""


def _load(
    server: RunningServer, path: str, concurrency: int, duration: float, pause: float = 0.0
) -> tuple[LoadResult, float]:
    """One load of `path` and the CPU seconds `server` spent on it."""
    route = PATHS[path]
    return server.load(
        path=route.url_path,
        scenario="send",
        concurrency=concurrency,
        duration=duration,
        metadata=route.metadata,
        pause=pause,
    )


def _round(
    partner: RunningServer, hub: RunningServer, args: argparse.Namespace, round_no: int
) -> list[_Run]:
    runs = []
    for concurrency in args.concurrency:
        for path in ("direct", *args.paths):
            # The direct path's CPU is the partner's: the same work at every concurrency, so
            # it shows what the machine itself adds per call at low rates.
            server = partner if path == "direct" else hub
            result, spent = _load(server, path, concurrency, args.duration, args.pause)
            cpu_ms = spent / result.completed * 1e3 if result.completed else 0.0
            whose = "partner" if path == "direct" else "hub"
            print(
                f"  {path:9} {format_result(result)}  {whose} CPU {cpu_ms:.3f} ms/call", flush=True
            )
            runs.append(_Run(path, concurrency, round_no, result, cpu_ms, hub.target.name))
    return runs


def _added(runs: list[_Run], path: str, concurrency: int, hub: str) -> list[float]:
    """Each round's p50 on `path` less the direct p50 measured beside it (same round, same
    hub's turn)."""
    direct = {
        (r.round, r.hub): r.load.p50_ms
        for r in runs
        if r.path == "direct" and r.concurrency == concurrency
    }
    return [
        r.load.p50_ms - direct[r.round, r.hub]
        for r in runs
        if r.path == path
        and r.concurrency == concurrency
        and r.hub == hub
        and (r.round, r.hub) in direct
    ]


def _report(runs: list[_Run], args: argparse.Namespace) -> str:
    lines = [
        "| path | c | added p50 ms | p50 ms | p99 ms | req/s "
        "| CPU ms/call (hub; direct: the partner's) | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    hubs = list(dict.fromkeys(r.hub for r in runs))
    rows = [("direct", None)] + [(path, hub) for path in args.paths for hub in hubs]
    for path, hub in rows:
        for c in args.concurrency:
            mine = [
                r
                for r in runs
                if r.path == path and r.concurrency == c and (hub is None or r.hub == hub)
            ]
            if not mine:
                continue
            cpu = [r.cpu_ms for r in mine]
            label = path if hub in (None, "hub") else f"{path} ({hub})"
            lines.append(
                f"| {label} | {c} "
                f"| {spread(_added(runs, path, c, hub)) if hub is not None else '—'} "
                f"| {spread([r.load.p50_ms for r in mine])} "
                f"| {spread([r.load.p99_ms for r in mine])} "
                f"| {spread([r.load.requests_per_s for r in mine], 0)} "
                f"| {spread(cpu, 3)} "
                f"| {sum(r.load.errors for r in mine)} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Measure the hops and print a Markdown table of medians with the min and max."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--paths", default="relay,delegate,gateway", help="from: relay, delegate, gateway"
    )
    add_run_arguments(parser, concurrency="1,16", duration=6.0)
    parser.add_argument(
        "--partner-delay",
        type=float,
        default=0.05,
        help="seconds the partner holds each answer (0: the hub's own ceiling)",
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds each caller waits between its calls (the hub idles as behind a slow "
        "partner, with an instant one)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another checkout of a2a-hub with its own .venv (e.g. a git worktree of an "
        "earlier commit): its hub is measured too, after or before this one's in each round",
    )
    args = parser.parse_args(argv)
    args.paths = [p.strip() for p in args.paths.split(",") if p.strip() and p != "direct"]
    for path in args.paths:
        if path not in PATHS:
            parser.error(f"unknown path {path!r} (known: relay, delegate, gateway)")
    args.concurrency = [int(c) for c in args.concurrency.split(",")]

    def measure(partner: RunningServer, hub: RunningServer, round_no: int) -> list[_Run]:
        _load(partner, "direct", 16, args.warmup)
        for path in args.paths:
            _load(hub, path, 16, args.warmup)
        return _round(partner, hub, args, round_no)

    hubs = [Target(name="hub", command=_hub_command, store=_STORE)]
    if args.baseline is not None:
        hubs.append(
            baseline_target(
                args.baseline,
                config="bench/delegation.yaml",
                store=Path("var/bench-delegation-baseline.db"),
                extra=["--agents", str(_AGENTS)],
            )
        )
    runs = hub_rounds(
        "delegation",
        Target(name="partner", command=canned_command("--delay", str(args.partner_delay))),
        hubs,
        agents=_AGENTS,
        rounds=args.rounds,
        measure=measure,
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "delegation.json").write_text(
        json.dumps(
            [
                {
                    "path": r.path,
                    "hub": r.hub,
                    "round": r.round,
                    "cpu_ms": r.cpu_ms,
                    **r.load.to_dict(),
                }
                for r in runs
            ],
            indent=2,
        )
    )
    print()
    print(
        f"partner holds each answer {args.partner_delay * 1000:g} ms; "
        f"callers pause {args.pause * 1000:g} ms between calls; {args.rounds} rounds of "
        f"{args.duration:g} s runs; medians (min to max)"
    )
    print(_report(runs, args))


if __name__ == "__main__":
    main()
