"""The hub's spans leave in batches, through the SDK's OTLP/HTTP span exporter with the hub's
own encoding.

`SpanBatches` is the hub's batch span processor: the serving thread encodes each ended
`SpanRecord` into its OTLP bytes at once (while what it reads is still in the processor's
caches, and so that no record with its dictionaries lives on for the garbage collector to
walk) and appends them to a queue (no lock, no SDK object); one daemon thread wraps and
sends them in batches, as the SDK's `BatchSpanProcessor` does and under the same
`OTEL_BSP_*` variables: a batch once `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` spans wait (512),
whatever waits every `OTEL_BSP_SCHEDULE_DELAY` milliseconds (5000), and spans beyond
`OTEL_BSP_MAX_QUEUE_SIZE` waiting (2048) dropped and logged.

`HubSpanExporter` is the SDK's `OTLPSpanExporter`: endpoint, headers, timeout, compression,
TLS, retries and the `OTEL_EXPORTER_OTLP_*` variables are all its own. Only the bytes differ:
they come from `hub.telemetry.otlp_encoding`, which writes the spans straight from the
records, several times more cheaply than the SDK's protobuf messages.

The SDK has no public seam for the body: its `export` encodes and sends in one method. The
bytes are therefore handed to the HTTP client the SDK exporter builds for itself (the private
`_client`, whose `export(bytes)` compresses, posts and retries and answers with a result that
has `success`), inside the exporter's own metrics (`_metrics.export_operation`); its
`_shutdown` flag and `_max_request_size` limit are honoured when present. The client and
the metrics are looked for when the exporter is built, by shape; on an SDK release that
renames or reshapes them, `otlp_sink` falls back to the SDK's own pipeline (its
`BatchSpanProcessor` and this exporter's inherited `export`, the SDK's encoder, handed the
records as `ReadableSpan`s): slower, never broken. The hub pins no SDK version for this.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from hub.telemetry.otel import OtelTracer, ProcessorSink, SpanRecord, SpanSink
from hub.telemetry.otlp_encoding import encode_request, encode_span

__all__ = ["EncodedSpanExporter", "HubSpanExporter", "SpanBatches", "otlp_sink"]

_Encoded = tuple[OtelTracer, bytes]
"""An ended span's OTLP bytes, with the tracer that recorded it (its resource and scope)."""

_logger = logging.getLogger(__name__)

# The SDK's default limit on a request's size before compression (64 MiB).
_MAX_REQUEST_SIZE = 64 * 1024 * 1024


class HubSpanExporter(OTLPSpanExporter):
    """An `OTLPSpanExporter` (same arguments) whose request bodies are the hub's encoding.

    `direct` says whether the SDK's HTTP client was found; without it, `export` is the SDK's.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The client's `export(data)` and the metrics' `export_operation(count)` (a context
        # manager), when the SDK has them in that shape.
        self._send = _one_argument_method(getattr(self, "_client", None), "export")
        self._operation = _one_argument_method(getattr(self, "_metrics", None), "export_operation")
        limit = getattr(self, "_max_request_size", _MAX_REQUEST_SIZE)
        self._limit = limit if isinstance(limit, int) else _MAX_REQUEST_SIZE

    @property
    def direct(self) -> bool:
        return self._send is not None and self._operation is not None

    def export_encoded(self, spans: Sequence[_Encoded]) -> SpanExportResult:
        """Send one batch of encoded spans (`direct` exporters only)."""
        send, operation = self._send, self._operation
        if send is None or operation is None:
            raise RuntimeError("this SDK's OTLP exporter has no HTTP client the hub can use")
        if getattr(self, "_shutdown", False):
            _logger.warning("the OTLP span exporter is shut down: a batch was dropped")
            return SpanExportResult.FAILURE
        with operation(len(spans)) as outcome:
            body = encode_request(spans)
            if 0 < self._limit < len(body):
                _logger.warning(
                    "a span batch of %d bytes exceeds the OTLP exporter's limit of %d bytes "
                    "and was dropped",
                    len(body),
                    self._limit,
                )
                outcome.error = ValueError(f"span batch of {len(body)} bytes is too large")
                return SpanExportResult.FAILURE
            sent = send(body)
            if getattr(sent, "success", False) is not True:
                outcome.error = getattr(sent, "error", None)
                status_code = getattr(sent, "status_code", None)
                if status_code is not None:
                    outcome.error_attrs = {"http.response.status_code": status_code}
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS


class EncodedSpanExporter(Protocol):
    """What sends the batches of `SpanBatches` (`HubSpanExporter`)."""

    def export_encoded(self, spans: Sequence[_Encoded]) -> SpanExportResult: ...

    def shutdown(self) -> None: ...


class SpanBatches:
    """Ended spans, exported in batches by one daemon thread (started with the first span).

    Args:
        exporter: sends each batch.
        schedule_delay: seconds between exports of what waits (`OTEL_BSP_SCHEDULE_DELAY`).
        max_queue_size: spans that may wait; more are dropped (`OTEL_BSP_MAX_QUEUE_SIZE`).
        max_export_batch_size: spans in one export (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).
    """

    def __init__(
        self,
        exporter: EncodedSpanExporter,
        *,
        schedule_delay: float | None = None,
        max_queue_size: int | None = None,
        max_export_batch_size: int | None = None,
    ) -> None:
        self._exporter = exporter
        self._delay = (
            schedule_delay
            if schedule_delay is not None
            else _setting("OTEL_BSP_SCHEDULE_DELAY", 5000) / 1000
        )
        self._max_queue = max_queue_size or _setting("OTEL_BSP_MAX_QUEUE_SIZE", 2048)
        batch = max_export_batch_size or _setting("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)
        self._batch = min(batch, self._max_queue)
        # Appended by the serving thread, taken by the exporting one: a deque's append and
        # popleft need no lock of ours.
        self._queue: deque[_Encoded] = deque()
        self._wake = threading.Event()
        self._exporting = threading.Lock()
        self._starting = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.dropped = 0
        """Spans dropped: the queue was full, or they ended after `shutdown`."""

    def on_end(self, span: SpanRecord) -> None:
        queue = self._queue
        if len(queue) >= self._max_queue or self._stopped:
            self._drop()
            return
        try:
            queue.append((span.tracer, encode_span(span)))
        except Exception as error:  # the SDK's encoder fails its batch the same way
            _logger.error("span %r could not be encoded for OTLP: %s", span.name, error)
            return
        if len(queue) >= self._batch:
            self._wake.set()
        if self._thread is None:
            self._start()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Export everything that waits, now, in this thread."""
        return self._export(whole_batches=False)

    def shutdown(self) -> None:
        """Export what waits and stop the thread; later spans are dropped."""
        self._stopped = True
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join()
        self._export(whole_batches=False)
        self._exporter.shutdown()

    def _start(self) -> None:
        with self._starting:
            if self._thread is None and not self._stopped:
                thread = threading.Thread(target=self._run, name="a2a-hub-spans", daemon=True)
                thread.start()
                self._thread = thread

    def _run(self) -> None:
        while not self._stopped:
            # Woken by a whole batch, or at the schedule's time with whatever waits.
            timed_out = len(self._queue) < self._batch and not self._wake.wait(self._delay)
            self._wake.clear()
            if not self._stopped:
                self._export(whole_batches=not timed_out)

    def _export(self, *, whole_batches: bool) -> bool:
        """Export the waiting spans in batches (only whole ones when `whole_batches`);
        whether every export succeeded."""
        queue = self._queue
        succeeded = True
        with self._exporting:
            while len(queue) >= (self._batch if whole_batches else 1):
                batch = [queue.popleft() for _ in range(min(self._batch, len(queue)))]
                try:
                    result = self._exporter.export_encoded(batch)
                except Exception:
                    _logger.exception("a batch of %d spans could not be exported", len(batch))
                    result = SpanExportResult.FAILURE
                succeeded = succeeded and result is SpanExportResult.SUCCESS
        return succeeded

    def _drop(self) -> None:
        if not self.dropped:
            if self._stopped:
                _logger.warning("a span ended after its tracer was shut down and was dropped")
            else:
                _logger.warning(
                    "spans are being dropped: %d wait for export already "
                    "(OTEL_BSP_MAX_QUEUE_SIZE); is the OTLP collector reachable?",
                    len(self._queue),
                )
        self.dropped += 1


def otlp_sink(exporter: HubSpanExporter) -> SpanSink:
    """Where a tracer exporting through `exporter` sends its spans: `SpanBatches`, or, on an
    SDK whose exporter does not have the parts the hub sends through, the SDK's own batch
    processor (the records as `ReadableSpan`s, the SDK's encoder)."""
    if exporter.direct:
        return SpanBatches(exporter)
    _logger.info(
        "the OpenTelemetry SDK's OTLP exporter is not the shape the hub expects: "
        "spans are encoded by the SDK"
    )
    return ProcessorSink(BatchSpanProcessor(exporter))


def _setting(name: str, default: int) -> int:
    """A positive whole number from the environment; `default` when unset or unreadable."""
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


def _one_argument_method(owner: object, name: str) -> Callable[[Any], Any] | None:
    """`owner`'s method `name`, if it has one that takes a single argument."""
    method: object = getattr(owner, name, None)
    if not callable(method) or not _takes_one_argument(method):
        return None
    return method


def _takes_one_argument(function: Callable[..., Any]) -> bool:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return False
    try:
        signature.bind(object())
    except TypeError:
        return False
    return True
