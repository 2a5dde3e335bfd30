"""How tracing is switched on (the OTEL_* variables and `telemetry.traces`), the overview
a console reads in process, and the text log format."""

from __future__ import annotations

import io
import logging

import pytest

from hub.config import TraceSettings
from hub.errors import ConfigError
from hub.protocol.trace import CallScope, use_scope
from hub.telemetry.logs import configure_logging
from hub.telemetry.metrics import HubMetrics
from hub.telemetry.setup import traces_enabled

ON, OFF = TraceSettings(enabled=True), TraceSettings()


@pytest.mark.parametrize(
    ("settings", "environ", "expected"),
    [
        (OFF, {}, False),
        (ON, {}, True),
        (OFF, {"OTEL_TRACES_EXPORTER": "otlp"}, True),
        (ON, {"OTEL_TRACES_EXPORTER": "none"}, False),
        (ON, {"OTEL_SDK_DISABLED": "true"}, False),
        (OFF, {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "TRUE"}, False),
        (ON, {"OTEL_TRACES_EXPORTER": ""}, True),
    ],
)
def test_the_environment_decides_before_the_settings(
    settings: TraceSettings, environ: dict[str, str], expected: bool
) -> None:
    assert traces_enabled(settings, environ) is expected


def test_an_exporter_the_hub_does_not_have_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="OTEL_TRACES_EXPORTER='zipkin'"):
        traces_enabled(OFF, {"OTEL_TRACES_EXPORTER": "zipkin"})


def test_the_overview_counts_the_last_minute() -> None:
    now = [1000.0]
    metrics = HubMetrics(clock=lambda: now[0])
    for second in range(10):
        now[0] = 1000.0 + second
        metrics.request("SendMessage", binding="jsonrpc", version="1.0", outcome="ok", seconds=0.01)
        metrics.request(
            "GetTask", binding="jsonrpc", version="1.0", outcome="TaskNotFoundError", seconds=0.01
        )
    now[0] = 1020.0
    early = metrics.overview()
    now[0] = 1065.0  # the minute now starts at 1006: four of the ten seconds are left
    later = metrics.overview()

    assert (early.requests_per_second, early.error_rate) == (1.0, 0.5)
    assert early.uptime == 20.0
    assert (early.live_tasks, early.open_streams) == (0, 0)
    assert later.requests_per_second == pytest.approx(8 / 60)
    assert later.error_rate == 0.5


def test_text_lines_carry_the_trace_of_the_work_that_logged() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        configure_logging("info", "text", stream=stream)
        scope = CallScope(trace_id="ab" * 16, parent_id="cd" * 8)
        logging.getLogger("hub.test").info("outside")
        with use_scope(scope):
            logging.getLogger("hub.test").info("inside")
        logging.getLogger("httpx").info("HTTP Request: POST http://partner/")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    outside, inside = stream.getvalue().splitlines()
    assert outside.endswith(" INFO hub.test: outside")
    assert inside.endswith(f" INFO hub.test: inside trace_id={'ab' * 16} span_id={'cd' * 8}")
