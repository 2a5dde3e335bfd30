"""The console's SVG charts and card diffs, from real numbers: the marks, their values, the
words a screen reader hears, and nothing a CSP would refuse."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hub.console.card_diff import card_changes
from hub.console.charts import Bar, Series, bar_chart, count, dollars, line_chart, seconds
from hub.console.history_charts import traffic_charts
from hub.protocol import AgentCard, AgentSkill
from hub.telemetry.history import TrafficHistory
from tests.console.hubs import inline_partner

SVG = "{http://www.w3.org/2000/svg}"


def _svg(markup: str) -> ET.Element:
    """The chart's <svg>, parsed (the figure around it is HTML; the SVG is well formed)."""
    found = re.search(r"<svg .*</svg>", markup, re.DOTALL)
    assert found is not None
    svg = found.group(0).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    return ET.fromstring(svg)


def test_a_line_chart_draws_its_values_and_states_them_in_words() -> None:
    requests: list[float | None] = [0, 0, 3, 7, 5]
    errors: list[float | None] = [0, 0, 1, 0, 2]
    chart = str(
        line_chart(
            "Requests and errors per minute",
            [
                Series(name="requests", key="requests", values=requests),
                Series(name="errors", key="errors", values=errors),
            ],
            area=True,
        )
    )
    svg = _svg(chart)
    assert svg.get("role") == "img"
    label = svg.get("aria-label")
    assert label == (
        "Requests and errors per minute, the last 60 minutes. requests: latest 5, peak 7, "
        "total 15; errors: latest 2, peak 2, total 3."
    )
    title = svg.find(f"{SVG}title")
    assert title is not None
    assert title.text == label
    lines = {path.get("data-series"): path for path in svg.iter(f"{SVG}path")}
    assert lines["requests"].get("data-values") == "0 0 3 7 5"
    assert lines["errors"].get("data-values") == "0 0 1 0 2"
    assert "s-errors" in (lines["errors"].get("class") or "")
    # The axis runs to 10 (the next 1-2-5 step above 7): 7 is drawn at 70 % of the height.
    axis = [text.text for text in svg.iter(f"{SVG}text")]
    assert axis[:3] == ["0", "5", "10"]
    points = (lines["requests"].get("d") or "").replace("M", "").split(" L")
    ys = [float(point.split(",")[1]) for point in points]
    bottom, top = 140 - 20, 8
    assert ys[3] == round(bottom - (bottom - top) * 0.7, 1)
    assert len(list(svg.iter(f"{SVG}polygon"))) == 1  # the area under the first line
    assert "style=" not in chart
    assert "fill=" not in chart
    assert "stroke=" not in chart


def test_a_latency_line_breaks_where_a_minute_had_no_request() -> None:
    chart = str(
        line_chart(
            "Latency",
            [Series(name="p50", key="p50", values=[0.012, None, None, 0.25], total=False)],
            fmt=seconds,
        )
    )
    svg = _svg(chart)
    path = next(svg.iter(f"{SVG}path"))
    assert path.get("data-values") == "0 - - 0.2"  # the values as numbers, a gap as '-'
    assert (path.get("d") or "").count("M") == 2
    assert len(list(svg.iter(f"{SVG}circle"))) == 2  # a lone minute is a dot
    assert "p50: latest 250 ms, peak 250 ms." in (svg.get("aria-label") or "")


def test_text_in_a_chart_is_escaped() -> None:
    chart = str(
        line_chart("<script>x</script>", [Series(name="<b>", key="requests", values=[1.0])])
    )
    assert "<script>" not in chart
    assert "<b>" not in chart
    assert "&lt;script&gt;" in chart


def test_a_bar_chart_sizes_its_bars_by_value_and_names_them() -> None:
    chart = str(
        bar_chart(
            "Live tasks by state",
            [
                Bar(label="submitted", key="submitted", value=1),
                Bar(label="working", key="working", value=4),
                Bar(label="input-required", key="input-required", value=0),
            ],
        )
    )
    svg = _svg(chart)
    assert svg.get("aria-label") == (
        "Live tasks by state: submitted 1, working 4, input-required 0."
    )
    bars = {rect.get("data-label"): rect for rect in svg.iter(f"{SVG}rect")}
    widths = {label: float(rect.get("width") or 0) for label, rect in bars.items()}
    assert widths["working"] == 4 * widths["submitted"] > 0
    assert widths["input-required"] == 0
    assert bars["working"].get("class") == "bar bar-working"


def test_values_read_in_units() -> None:
    assert [count(v) for v in (0, 7, 1500, 25_000, 3_400_000)] == ["0", "7", "1.5k", "25k", "3.4M"]
    assert [seconds(v) for v in (0, 0.0008, 0.012, 1.5, 300)] == [
        "0",
        "0.8 ms",
        "12 ms",
        "1.5 s",
        "5 min",
    ]
    assert [dollars(v) for v in (0, 0.0012, 1.5)] == ["$0.00", "$0.0012", "$1.50"]


def test_traffic_charts_of_a_history_carry_its_figures() -> None:
    clock = [600_000.0]
    history = TrafficHistory(clock=lambda: clock[0])
    for _ in range(4):
        history.partner_call("fast", 0.03, error=False)
    history.partner_call("fast", 0.03, error=True)
    clock[0] += 60
    history.partner_call("fast", 0.03, error=False)

    charts = traffic_charts(history.partner("fast"), noun="Calls", small=True)

    assert (charts.requests, charts.errors) == (6, 1)
    volume = _svg(str(charts.volume))
    values = {p.get("data-series"): p.get("data-values") for p in volume.iter(f"{SVG}path")}
    assert (values["requests"] or "").split()[-2:] == ["5", "1"]
    assert (values["errors"] or "").split()[-2:] == ["1", "0"]
    assert "calls: latest 1, peak 5, total 6" in (volume.get("aria-label") or "")


def _card(**changes: object) -> AgentCard:
    card = inline_partner("weather").card
    assert card is not None
    return card.model_copy(update=changes)


def test_a_card_diff_names_added_removed_and_changed_fields() -> None:
    before = _card()
    skills = [
        before.skills[0].model_copy(update={"tags": ["rain"]}),
        AgentSkill(id="forecast", name="forecast", description="tomorrow", tags=[]),
    ]
    after = _card(version="2.0", skills=skills, description=None)

    changes = {(change.field, change.kind): change for change in card_changes(before, after)}

    assert changes[("version", "changed")].before == "1.0"
    assert changes[("version", "changed")].after == "2.0"
    assert ("skills[forecast]", "added") in changes
    tags = changes[("skills[weather].tags", "changed")]  # one field of a kept skill
    assert (tags.before, tags.after) == ("(none)", "rain")
    assert changes[("description", "removed")].before == "the weather partner"
    assert card_changes(before, before) == []
