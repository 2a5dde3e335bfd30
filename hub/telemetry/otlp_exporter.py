"""The SDK's OTLP/HTTP span exporter, sending the hub's own encoding of the spans.

`HubSpanExporter` is the SDK's `OTLPSpanExporter`: endpoint, headers, timeout, compression,
TLS, retries and the `OTEL_EXPORTER_OTLP_*` variables are all its own. Only the bytes differ:
they come from `hub.telemetry.otlp_encoding`, which writes the same request several times
more cheaply than the SDK's protobuf messages.

The SDK has no public seam for the body: its `export` encodes and sends in one method. The
bytes are therefore handed to the HTTP client the SDK exporter builds for itself (the private
`_client`, whose `export(bytes)` compresses, posts and retries and answers with a result that
has `success`), inside the exporter's own metrics (`_metrics.export_operation`); its
`_shutdown` flag and `_max_request_size` limit are honoured when present. The client and
the metrics are looked for when the exporter is built, by shape; an SDK release that renames
or reshapes them makes this exporter the SDK's unchanged (its `export`, its encoder): slower,
never broken. The hub pins no SDK version for this.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from hub.telemetry.otlp_encoding import encode_spans

__all__ = ["HubSpanExporter"]

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

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        send, operation = self._send, self._operation
        if send is None or operation is None:
            return super().export(spans)
        if getattr(self, "_shutdown", False):
            _logger.warning("the OTLP span exporter is shut down: a batch was dropped")
            return SpanExportResult.FAILURE
        with operation(len(spans)) as outcome:
            try:
                body = encode_spans(spans)
            except Exception as error:  # the SDK's encoder fails the batch the same way
                _logger.error("a span batch could not be encoded for OTLP: %s", error)
                outcome.error = error
                return SpanExportResult.FAILURE
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
