"""Memory growth with stored tasks: server RSS after 1,000 and after 100,000 completed tasks.

The hub keeps tasks in its SQLite store, not in memory, so its resident set should barely grow
between the two readings: the target is at most 30 MiB. The first 1,000 tasks also warm up the
server (imports, caches, connection pools), so the difference shows growth per stored task,
not start-up cost. The reference agent keeps every task in memory and is there only to check
the harness (`--target reference`).

    python -m bench.memory                          # the hub, 1,000 then 100,000 tasks
    python -m bench.memory --target reference --total 20000
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from bench.load import format_result, run_load_sync
from bench.target import REPO, TARGETS, ServerStartError, exit_on_sigterm, pin_self, start_server

__all__ = ["main"]

_MIB = 1024 * 1024


def main(argv: list[str] | None = None) -> int:
    """Measure RSS at two task counts and print the difference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=sorted(TARGETS), default="hub")
    parser.add_argument("--first", type=int, default=1_000, help="tasks before the first reading")
    parser.add_argument("--total", type=int, default=100_000, help="tasks at the second reading")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--limit-mib", type=float, default=30.0, help="target growth, MiB")
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--client-core", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print JSON instead of lines")
    args = parser.parse_args(argv)
    if not 0 < args.first < args.total:
        parser.error("need 0 < --first < --total")
    exit_on_sigterm()
    cores = os.sched_getaffinity(0)
    server_core = args.server_core if args.server_core in cores else None
    if args.client_core in cores:
        pin_self(args.client_core)

    target = TARGETS[args.target]
    log_path = REPO / "bench" / "results" / f"memory-{target.name}.log"
    try:
        with start_server(target, core=server_core, log_path=log_path) as server:
            first = run_load_sync(
                port=server.port,
                path=target.rpc_path,
                scenario="send",
                concurrency=args.concurrency,
                duration=None,
                count=args.first,
            )
            rss_first = server.rss_bytes()
            rest = run_load_sync(
                port=server.port,
                path=target.rpc_path,
                scenario="send",
                concurrency=args.concurrency,
                duration=None,
                count=args.total - args.first,
            )
            rss_total = server.rss_bytes()
    except ServerStartError as exc:
        print(f"{target.name}: {exc}", file=sys.stderr)
        return 1

    growth_mib = (rss_total - rss_first) / _MIB
    completed = first.completed + rest.completed
    report = {
        "target": target.name,
        "tasks_first": first.completed,
        "tasks_total": completed,
        "errors": first.errors + rest.errors,
        "rss_first_mib": rss_first / _MIB,
        "rss_total_mib": rss_total / _MIB,
        "growth_mib": growth_mib,
        "growth_bytes_per_task": (rss_total - rss_first) / max(1, rest.completed),
        "limit_mib": args.limit_mib,
        "within_limit": growth_mib <= args.limit_mib,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"first  {format_result(first)}")
        print(f"rest   {format_result(rest)}")
        print(
            f"{target.name}: RSS {report['rss_first_mib']:.1f} MiB after {first.completed} tasks, "
            f"{report['rss_total_mib']:.1f} MiB after {completed} tasks: "
            f"+{growth_mib:.1f} MiB ({report['growth_bytes_per_task']:.0f} bytes/task); "
            f"target at most {args.limit_mib:g} MiB: "
            + ("within" if report["within_limit"] else "OVER")
        )
    # A benchmark measures; it fails only when it could not measure.
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
