"""The hub's log format: `text` (one readable line) or `json` (one object per line), both
for the hub's own loggers and uvicorn's, with the trace of the work that logged.

JSON lines carry `time`, `level`, `logger`, `message`, `trace_id` and `span_id` (of the
current call scope: the hub's own span when tracing is on, else the caller's), the access
log's fields, and `exception` when there is one. httpx's line per request is dropped below
DEBUG: a call to a partner is logged by the hub at DEBUG (`hub.client`).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Literal

from hub.protocol.trace import current_scope

__all__ = ["JsonFormatter", "TextFormatter", "configure_logging"]

_TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message`, with ` trace_id=…` when the line belongs to a trace."""

    def __init__(self) -> None:
        super().__init__(_TEXT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = getattr(record, "access", None)
        if isinstance(fields, dict):
            return f"{line} trace_id={fields['trace_id']} span_id={fields['span_id']}"
        scope = current_scope()
        if scope is None:
            return line
        return f"{line} trace_id={scope.trace_id} span_id={scope.parent_id}"


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        scope = current_scope()
        if scope is not None:
            entry["trace_id"] = scope.trace_id
            entry["span_id"] = scope.parent_id
        # An access line is written after its request's scope has ended: it brings its own.
        fields = getattr(record, "access", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(
    level: str, log_format: Literal["text", "json"], *, stream: object = None
) -> logging.Handler:
    """Send every log line (uvicorn's included: it is run without a logging config of its
    own) to one handler on the root logger, in `log_format`, and return that handler.

    Args:
        level: `debug`, `info`, `warning` or `error`.
        log_format: `text` or `json`.
        stream: where lines go; standard error by default.
    """
    handler = logging.StreamHandler(stream or sys.stderr)  # type: ignore[arg-type]
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    quiet = logging.DEBUG if level.lower() == "debug" else logging.WARNING
    logging.getLogger("httpx").setLevel(quiet)
    return handler
