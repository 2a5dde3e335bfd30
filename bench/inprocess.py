"""CPU per SendMessage with the hub's app driven in this process: no sockets, no server, no
load generator, and several configurations of the hub side by side, round by round.

Over HTTP (`bench.run`, `bench.load`) a request also pays for uvicorn, the loopback and a
load generator on the other core, and on a shared machine the rounds move by several
percent: more than a step of a few microseconds. Here each configuration is one app in this
process, its lifespan entered once, and each round sends `--requests` SendMessages to the
echo skill through every app in turn (the ASGI messages of a JSON-RPC POST, the body
whole). The figure is this process's CPU per request, all threads included (so the
exporter's thread too), median of the rounds (min to max), and each configuration's ratio
to the first one in the same round (median of the rounds).

Configurations (`--configs`, the first is the base of the ratios):

- `off`: metrics and access log off, no traces;
- `metrics`: the default settings (metrics on, the access log below the log level);
- `spans`: `metrics`, and every trace recorded into a span sink that drops each span
  (what recording costs the serving thread);
- `traces`: `metrics`, and every trace exported with OTLP/HTTP (the hub's span batches and
  exporter) to a local receiver (`bench.otlp_sink`, a child process);
- `named`: `metrics`, with the app started where sniffio is told that asyncio runs it, as
  `a2a-hub serve` starts it (`hub/cli/serve.py`); the others run where nothing told it.

    python -m bench.inprocess [--configs off,metrics,spans,traces,named] [--rounds 16]
        [--requests 600] [--store memory|sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import gc
import json
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack, nullcontext
from pathlib import Path
from typing import Any

import sniffio
from litestar import Litestar

from bench.otlp_sink import running_sink
from bench.spread import spread
from bench.target import pin_self
from hub.app import create_app
from hub.config import Settings, settle_default_skill
from hub.skills import configured_skills
from hub.store import build_store
from hub.telemetry.otel import SpanRecord
from hub.telemetry.setup import build_telemetry

__all__ = ["main"]

CONFIGS = ("off", "metrics", "spans", "traces", "named")
_OFF = {"metrics": {"enabled": False}, "access_log": False}


class _Drop:
    """A span sink that takes every ended span and keeps nothing."""

    def on_end(self, span: SpanRecord) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def shutdown(self) -> None:
        return None


def _settings(config: str, *, store: str, folder: Path, endpoint: str) -> Settings:
    telemetry: dict[str, Any] = {}
    if config == "off":
        telemetry = dict(_OFF)
    elif config == "traces":
        telemetry = {"traces": {"enabled": True, "endpoint": endpoint}}
    store_settings: dict[str, Any] = {"kind": store}
    if store == "sqlite":
        store_settings["path"] = str(folder / f"{config}.db")
    return Settings.model_validate(
        {
            "telemetry": telemetry,
            "store": store_settings,
            "limits": {"max_tasks": 10_000_000, "max_contexts": 10_000_000},
        }
    )


def _library(config: str) -> str | None:
    """What sniffio is told runs a configuration's app: asyncio for `named` only."""
    return "asyncio" if config == "named" else None


def _app(settings: Settings, config: str) -> Litestar:
    skills = configured_skills(settings)
    settings = settle_default_skill(settings, list(skills))
    store = build_store(settings.store.kind, settings.store.path)
    processor = _Drop() if config == "spans" else None
    telemetry = build_telemetry(settings.telemetry, span_processor=processor)
    return create_app(settings, store=store, skills=skills, telemetry=telemetry)


def _body(number: int) -> bytes:
    message = {"messageId": f"m-{number}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    call = {"jsonrpc": "2.0", "id": number, "method": "SendMessage", "params": {"message": message}}
    return json.dumps(call).encode()


async def _send_message(app: Litestar, number: int) -> None:
    body = _body(number)
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    answered: list[dict[str, Any]] = []

    async def receive() -> Any:
        if pending:
            return pending.pop()
        await asyncio.Event().wait()  # the request is whole: nothing more comes
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        answered.append(message)

    scope: Any = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"a2a-version", b"1.0"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    await app(scope, receive, send)
    if answered[0]["status"] != 200 or b'"error"' in answered[1]["body"]:
        raise RuntimeError(f"SendMessage failed: {answered}")


async def _cpu_per_request(app: Litestar, count: int, first: int) -> float:
    started = time.process_time()
    for number in range(first, first + count):
        await _send_message(app, number)
    return (time.process_time() - started) / count * 1e6


async def _measure(
    configs: list[str], *, rounds: int, requests: int, store: str, sink_core: int | None
) -> None:
    # The receiver runs only when a configuration exports to it.
    sink = running_sink(core=sink_core) if "traces" in configs else nullcontext("")
    with (
        sink as url,
        tempfile.TemporaryDirectory(prefix="bench-inprocess-") as folder,
    ):
        endpoint = f"{url}/v1/traces"
        settings = {
            config: _settings(config, store=store, folder=Path(folder), endpoint=endpoint)
            for config in configs
        }
        apps = {config: _app(settings[config], config) for config in configs}
        async with AsyncExitStack() as stack:
            for config, app in apps.items():
                # What the lifespan starts (the workers, the commits) keeps the context it
                # was started in.
                token = sniffio.current_async_library_cvar.set(_library(config))
                try:
                    await stack.enter_async_context(app.lifespan())
                finally:
                    sniffio.current_async_library_cvar.reset(token)
            await _rounds(apps, rounds=rounds, requests=requests)


async def _rounds(apps: dict[str, Litestar], *, rounds: int, requests: int) -> None:
    loop = asyncio.get_running_loop()
    number = 0

    def within(config: str) -> contextvars.Context:
        """A context for the requests, sniffio told what the lifespan was told."""
        context = contextvars.copy_context()
        context.run(sniffio.current_async_library_cvar.set, _library(config))
        return context

    async def one(config: str, count: int) -> float:
        nonlocal number
        number += count
        run = _cpu_per_request(apps[config], count, number)
        return await loop.create_task(run, context=within(config))

    for config in apps:  # warm-up: imports, caches, the first tasks
        await one(config, min(requests, 300))
    gc.freeze()  # as `a2a-hub serve` does once started
    figures: dict[str, list[float]] = {config: [] for config in apps}
    for round_number in range(1, rounds + 1):
        for config in apps:
            figures[config].append(await one(config, requests))
        line = "  ".join(f"{config} {figures[config][-1]:.1f}" for config in apps)
        print(f"round {round_number}/{rounds}: {line} us", flush=True)
    _report(figures)


def _report(figures: dict[str, list[float]]) -> None:
    configs = list(figures)
    base = figures[configs[0]]
    print(f"\nCPU per SendMessage in process, us: median (min-max); ratio to {configs[0]}")
    print(f"| configuration | us per request | / {configs[0]} (median of rounds) |")
    print("| --- | ---: | ---: |")
    for config in configs:
        ratios = [value / first for first, value in zip(base, figures[config], strict=True)]
        print(f"| {config} | {spread(figures[config], 1)} | {spread(ratios, 3)} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="off,metrics,spans,traces,named")
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--requests", type=int, default=600, help="per configuration per round")
    parser.add_argument("--store", choices=["memory", "sqlite"], default="memory")
    parser.add_argument("--core", type=int, default=0, help="pin this process to one core")
    parser.add_argument("--sink-core", type=int, default=1, help="the OTLP receiver's core")
    args = parser.parse_args(argv)
    configs = [config.strip() for config in args.configs.split(",") if config.strip()]
    unknown = [config for config in configs if config not in CONFIGS]
    if unknown or not configs:
        parser.error(f"unknown configuration(s) {unknown} (known: {', '.join(CONFIGS)})")
    # Pinned, as the HTTP benchmarks pin their server: a process that moves between cores
    # pays for cold caches at every move, far more than the steps measured here.
    available = os.sched_getaffinity(0)
    pinned = pin_self(args.core)
    if not pinned:
        print(f"core {args.core} is not available: running unpinned", file=sys.stderr)
    sink_core = args.sink_core if pinned and args.sink_core in available else None
    measure = _measure(
        configs, rounds=args.rounds, requests=args.requests, store=args.store, sink_core=sink_core
    )
    asyncio.run(measure)


if __name__ == "__main__":
    main()
