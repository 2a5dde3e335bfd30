"""Load generator: `SendMessage` / `SendStreamingMessage` at a fixed concurrency, over JSON-RPC
(the default) or the REST binding (`POST /message:send`, `POST /message:stream`).

Each of `concurrency` workers owns one keep-alive HTTP/1.1 connection and sends one request
after another, for a fixed duration or until a fixed count has been sent. The client is an
`asyncio.Protocol` on uvloop with the httptools C parser (both already installed with
`uvicorn[standard]`): it costs a few tens of microseconds of CPU per request, so one core drives
well past 2,000 requests/s and the server, not the client, is what gets measured. A request is an
error when the status is not 200, the body holds an error (JSON-RPC's `error`, or a REST body
without the task or message), or a stream carries no event.

    python -m bench.load --port 8001 --scenario send --concurrency 16 --duration 10
    python -m bench.load --port 8001 --binding rest --scenario stream --duration 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import cast

import httptools
import uvloop

__all__ = ["BINDINGS", "SCENARIOS", "LoadResult", "percentile", "run_load", "run_load_sync"]

# Scenario name -> JSON-RPC method (A2A 1.0 names).
SCENARIOS: dict[str, str] = {"send": "SendMessage", "stream": "SendStreamingMessage"}
# Scenario name -> the REST binding's path for it (below the `path` given).
_REST_PATHS = {"send": "message:send", "stream": "message:stream"}
BINDINGS = ("jsonrpc", "rest")

_MESSAGE = '{"message":{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"hello"}]}%s}'
_BODY = '{"jsonrpc":"2.0","id":%d,"method":"%s","params":' + _MESSAGE + "}"
_HEAD = (
    "POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\nA2A-Version: 1.0\r\nContent-Length: "
)
# Seconds a worker waits before reconnecting after a refused connection, so a dead server
# costs a few hundred attempts per run instead of a busy loop.
_RECONNECT_PAUSE = 0.05


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadResult:
    """What one load run measured. `completed` counts successful requests only."""

    scenario: str
    concurrency: int
    completed: int
    errors: int
    elapsed_s: float
    p50_ms: float
    p99_ms: float
    client_cpu_s: float

    @property
    def requests_per_s(self) -> float:
        """Successful requests per second of wall time."""
        return self.completed / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def client_cpu_us_per_request(self) -> float:
        """CPU the load generator spent per request, in microseconds."""
        sent = self.completed + self.errors
        return self.client_cpu_s / sent * 1e6 if sent else 0.0

    def to_dict(self) -> dict[str, float | int | str]:
        """Plain values for JSON, derived figures included."""
        data: dict[str, float | int | str] = asdict(self)
        data["requests_per_s"] = self.requests_per_s
        data["client_cpu_us_per_request"] = self.client_cpu_us_per_request
        return data


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection carrying one request at a time."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self._body: list[bytes] = []
        self.closed = False
        self.keep_alive = True

    # asyncio.Protocol callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(exc)
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(exc or ConnectionResetError("server closed the connection"))

    # httptools callbacks
    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        body = b"".join(self._body)
        self._body = []
        self.keep_alive = self._parser.should_keep_alive()
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result((self._parser.get_status_code(), body))

    def _fail(self, exc: BaseException) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def request(self, payload: bytes) -> asyncio.Future[tuple[int, bytes]]:
        """Write one request; the future resolves to (status, whole body)."""
        assert self._transport is not None
        waiter: asyncio.Future[tuple[int, bytes]] = self._loop.create_future()
        self._waiter = waiter
        self._transport.write(payload)
        return waiter

    def close(self) -> None:
        """Close the socket; a pending request fails with ConnectionResetError."""
        self.closed = True
        if self._transport is not None:
            self._transport.close()


def _jsonrpc_ok(data: bytes) -> bool:
    try:
        reply = json.loads(data)
    except ValueError:
        return False
    return isinstance(reply, dict) and "result" in reply and "error" not in reply


def _rest_ok(data: bytes) -> bool:
    """A REST answer or stream event: one of the StreamResponse members, no `error`."""
    try:
        reply = json.loads(data)
    except ValueError:
        return False
    return isinstance(reply, dict) and "error" not in reply and bool(reply.keys() & _REST_KINDS)


_REST_KINDS = {"task", "message", "statusUpdate", "artifactUpdate"}


def _stream_ok(body: bytes, event_ok: Callable[[bytes], bool] = _jsonrpc_ok) -> bool:
    """True when the SSE body holds at least one event and `event_ok` accepts each one."""
    if body[:1] == b"{":
        # An error raised before the first event arrives as a plain JSON response.
        return False
    events = 0
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data: list[bytes] = []
        for line in block.split(b"\n"):
            if line.startswith(b"data:"):
                data.append(line[5:].lstrip(b" "))
            elif line.startswith(b"event:") and line[6:].strip() == b"error":
                return False
        if data:
            if not event_ok(b"\n".join(data)):
                return False
            events += 1
    return events > 0


class _Run:
    """State shared by the workers of one load run."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        path: str,
        scenario: str,
        binding: str,
        deadline: float,
        count: int | None,
        metadata: dict[str, object] | None = None,
        pause: float = 0.0,
    ) -> None:
        self.host = host
        self.pause = pause
        self.port = port
        self.method = SCENARIOS[scenario]
        self.rest = binding == "rest"
        self.deadline = deadline
        self.count = count
        event_ok = _rest_ok if self.rest else _jsonrpc_ok
        self.check: Callable[[bytes], bool] = (
            (lambda body: _stream_ok(body, event_ok)) if scenario == "stream" else event_ok
        )
        if self.rest:
            path = f"{path.rstrip('/')}/{_REST_PATHS[scenario]}"
        self.head = _HEAD.format(path=path, host=host, port=port).encode()
        self.metadata = f',"metadata":{json.dumps(metadata)}' if metadata else ""
        self.issued = 0
        self.errors = 0
        self.latencies: list[float] = []

    def next_payload(self) -> bytes | None:
        """The next request's bytes, or None when the run's time or count is used up."""
        if time.monotonic() >= self.deadline:
            return None
        if self.count is not None and self.issued >= self.count:
            return None
        self.issued += 1
        if self.rest:
            body = (_MESSAGE % (uuid.uuid4(), self.metadata)).encode()
        else:
            body = (_BODY % (self.issued, self.method, uuid.uuid4(), self.metadata)).encode()
        return b"%s%d\r\n\r\n%s" % (self.head, len(body), body)


async def _worker(run: _Run) -> None:
    loop = asyncio.get_running_loop()
    conn: _Connection | None = None
    try:
        while (payload := run.next_payload()) is not None:
            if conn is None or conn.closed:
                try:
                    _, conn = await loop.create_connection(
                        lambda: _Connection(loop), run.host, run.port
                    )
                except OSError:
                    run.errors += 1
                    conn = None
                    await asyncio.sleep(_RECONNECT_PAUSE)
                    continue
            started = time.perf_counter()
            try:
                status, body = await conn.request(payload)
            except (OSError, httptools.HttpParserError):
                run.errors += 1
                conn.close()
                continue
            elapsed = time.perf_counter() - started
            if status == 200 and run.check(body):
                run.latencies.append(elapsed)
            else:
                run.errors += 1
            if not conn.keep_alive:
                conn.close()
            if run.pause:
                await asyncio.sleep(run.pause)
    finally:
        if conn is not None:
            conn.close()


def percentile(ordered: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def run_load(
    *,
    host: str = "127.0.0.1",
    port: int,
    path: str = "/",
    scenario: str = "send",
    binding: str = "jsonrpc",
    concurrency: int = 16,
    duration: float | None = 10.0,
    count: int | None = None,
    request_timeout: float = 30.0,
    metadata: dict[str, object] | None = None,
    pause: float = 0.0,
) -> LoadResult:
    """Run one load and measure it.

    Args:
        host: Server address; only loopback is expected.
        port: Server port.
        path: JSON-RPC endpoint path, or the REST binding's base path.
        scenario: `send` or `stream` (see `SCENARIOS`).
        binding: `jsonrpc` or `rest` (see `BINDINGS`).
        concurrency: Workers, each with its own connection and one request in flight.
        duration: Seconds during which new requests are started; None with a `count`.
        count: Total requests to send; the run also stops at `duration` if both are given.
        request_timeout: Seconds allowed past the end for requests still in flight; those
            still unanswered then count as errors.
        metadata: The request's `params.metadata` (e.g. `{"skill": "delegate"}`), if any.
        pause: Seconds each worker waits after an answer before its next request (0: none),
            so that the server idles between calls as it does behind a slow partner.
    """
    if duration is None and count is None:
        raise ValueError("give a duration, a count, or both")
    if binding not in BINDINGS:
        raise ValueError(f"unknown binding {binding!r} (known: {', '.join(BINDINGS)})")
    # A count-only run is still bounded in time: an hour is far past any sane count here.
    span = duration if duration is not None else 3600.0
    started_wall = time.perf_counter()
    started_cpu = time.process_time()
    run = _Run(
        host=host,
        port=port,
        path=path,
        scenario=scenario,
        binding=binding,
        deadline=time.monotonic() + span,
        count=count,
        metadata=metadata,
        pause=pause,
    )
    workers = [asyncio.create_task(_worker(run)) for _ in range(concurrency)]
    try:
        async with asyncio.timeout(span + request_timeout):
            await asyncio.gather(*workers)
    except TimeoutError:
        # Requests cut off by the timeout were sent but never answered.
        run.errors += run.issued - len(run.latencies) - run.errors
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    elapsed = time.perf_counter() - started_wall
    cpu = time.process_time() - started_cpu
    ordered = sorted(run.latencies)
    return LoadResult(
        scenario=scenario,
        concurrency=concurrency,
        completed=len(ordered),
        errors=run.errors,
        elapsed_s=elapsed,
        p50_ms=percentile(ordered, 0.50) * 1e3,
        p99_ms=percentile(ordered, 0.99) * 1e3,
        client_cpu_s=cpu,
    )


def run_load_sync(**kwargs: object) -> LoadResult:
    """`run_load` on a fresh uvloop event loop, for synchronous callers."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(run_load(**kwargs))  # type: ignore[arg-type]


def format_result(result: LoadResult) -> str:
    """One human-readable line."""
    return (
        f"{result.scenario:6} c={result.concurrency:<3} {result.requests_per_s:8.1f} req/s  "
        f"p50 {result.p50_ms:7.2f} ms  p99 {result.p99_ms:7.2f} ms  "
        f"errors {result.errors}  ok {result.completed}  "
        f"client CPU {result.client_cpu_us_per_request:.1f} us/req"
    )


def main(argv: list[str] | None = None) -> None:
    """Command line: one load run, printed as a line or as JSON."""
    parser = argparse.ArgumentParser(description="A2A load generator (JSON-RPC or REST)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="send")
    parser.add_argument("--binding", choices=BINDINGS, default="jsonrpc")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=None, help="seconds (default 10)")
    parser.add_argument("--count", type=int, default=None, help="total requests")
    parser.add_argument(
        "--pause", type=float, default=0.0, help="seconds each worker waits between its calls"
    )
    parser.add_argument("--core", type=int, default=None, help="pin this process to one core")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a line")
    args = parser.parse_args(argv)
    if args.core is not None:
        os.sched_setaffinity(0, {args.core})
    duration = args.duration if args.duration is not None or args.count else 10.0
    result = run_load_sync(
        host=args.host,
        port=args.port,
        path=args.path,
        scenario=args.scenario,
        binding=args.binding,
        concurrency=args.concurrency,
        duration=duration,
        count=args.count,
        pause=args.pause,
    )
    print(json.dumps(result.to_dict()) if args.json else format_result(result))


if __name__ == "__main__":
    main()
