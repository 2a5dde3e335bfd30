"""The hub's log format: `text` (one readable line) or `json` (one object per line), both
for the hub's own loggers and uvicorn's, with the trace of the work that logged.

JSON lines carry `time`, `level`, `logger`, `message`, `trace_id` and `span_id` (of the
current call scope: the hub's own span when tracing is on, else the caller's), the access
log's fields, and `exception` when there is one. httpx's line per request is dropped below
DEBUG: a call to a partner is logged by the hub at DEBUG (`hub.client`).

`a2a-hub serve` sets this up for the whole process (`configure_logging`). An app run by
another server that sets up no logging of its own (plain `uvicorn my_app:app` configures
only uvicorn's loggers; `Hub.serve()`) shows the hub's lines through `hub_logs_shown`.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Literal, TextIO

from hub.protocol.trace import current_scope

__all__ = ["JsonFormatter", "TextFormatter", "configure_logging", "hub_logs_shown"]

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
    handler = _handler(log_format, stream or sys.stderr)  # type: ignore[arg-type]
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    quiet = logging.DEBUG if level.lower() == "debug" else logging.WARNING
    logging.getLogger("httpx").setLevel(quiet)
    return handler


def _handler(log_format: Literal["text", "json"], stream: TextIO) -> logging.Handler:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    return handler


@contextmanager
def hub_logs_shown(level: str, log_format: Literal["text", "json"]) -> Iterator[None]:
    """While the block runs, show the hub's own log lines (`hub.*`) on standard error, in
    `log_format` from `level` up, if the process has set up no logging: no handler on the
    root logger nor on `hub`. Without one, Python drops every line below WARNING and prints
    the rest bare. A process that has set logging up (`a2a-hub serve`, a test runner, the
    user's own program) keeps it as it is.
    """
    hub_logger = logging.getLogger("hub")
    if logging.getLogger().handlers or hub_logger.handlers:
        yield
        return
    handler = _handler(log_format, sys.stderr)
    previous = hub_logger.level
    hub_logger.addHandler(handler)
    hub_logger.setLevel(level.upper())
    try:
        yield
    finally:
        hub_logger.removeHandler(handler)
        hub_logger.setLevel(previous)
