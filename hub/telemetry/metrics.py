"""`HubMetrics`: the hub's Prometheus metrics, in a registry of its own (two hubs in one
process never share one), served at `GET /metrics`.

Every name starts with `a2a_hub_`; label values are bounded: A2A method names, bindings,
versions, skill ids, partner names from agents.yaml, strategies, task states and error type
names, never task ids or free text. The figures of the running hub that are not counted as
they happen (live and parked tasks, open streams, breaker states) are read when scraped,
from the sources `watch()` is given. The full list is in docs/observability.md.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass

from prometheus_client import (
    CollectorRegistry,
    Counter,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

from hub.telemetry.history import LATENCY_BUCKETS, TrafficHistory, is_error
from hub.telemetry.overview import Overview, RequestWindow

__all__ = ["BREAKER_VALUES", "CONTENT_TYPE", "HubMetrics", "LiveFigures"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

BREAKER_VALUES = {"closed": 0, "half-open": 1, "open": 2}
"""`a2a_hub_partner_breaker_state`'s values."""

_BOUNDS = (*(repr(float(bound)) for bound in LATENCY_BUCKETS), "+Inf")  # as the `le` label reads


class _Timing:
    """One histogram series: observations per bucket (not cumulative), their sum, when it
    was first observed."""

    __slots__ = ("created", "per_bucket", "total")

    def __init__(self, created: float) -> None:
        self.created = created
        self.per_bucket = [0] * len(_BOUNDS)
        self.total = 0.0


class _Timings(Collector):
    """A histogram of durations by `labels`, kept in plain numbers as they happen and turned
    into a Prometheus family only when scraped: the exposition prometheus_client's
    `Histogram` gives, without its per-update lock and bucket walk."""

    __slots__ = ("_documentation", "_labels", "_name", "_series")

    def __init__(self, name: str, documentation: str, labels: tuple[str, ...] = ()) -> None:
        self._name = name
        self._documentation = documentation
        self._labels = labels
        self._series: dict[tuple[str, ...], _Timing] = {}

    def observe(self, seconds: float, labels: tuple[str, ...] = ()) -> None:
        timing = self._series.get(labels)
        if timing is None:
            timing = self._series[labels] = _Timing(time.time())
        timing.per_bucket[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        timing.total += seconds

    def family(self) -> HistogramMetricFamily:
        histogram = HistogramMetricFamily(self._name, self._documentation, labels=self._labels)
        for labels, timing in list(self._series.items()):
            cumulative, buckets = 0, []
            for bound, count in zip(_BOUNDS, timing.per_bucket, strict=True):
                cumulative += count
                buckets.append((bound, float(cumulative)))
            histogram.add_metric(labels, buckets, timing.total)
            named = dict(zip(self._labels, labels, strict=True))
            histogram.add_sample(f"{self._name}_created", named, timing.created)
        return histogram

    def collect(self) -> Iterator[Metric]:
        yield self.family()


class _CountedAndTimed(Collector):
    """A counter and a histogram of the same events (`<name>_total` by all `labels`,
    `<timed name>` by the first `timed` of them), both in plain numbers until scraped."""

    def __init__(
        self,
        counted: tuple[str, str],
        timed_as: tuple[str, str],
        labels: tuple[str, ...],
        *,
        timed: int,
    ) -> None:
        self._counted = counted
        self._labels = labels
        self._timed = timed
        self._counts: dict[tuple[str, ...], list[float]] = {}
        self._timings = _Timings(*timed_as, labels[:timed])

    def add(self, labels: tuple[str, ...], seconds: float) -> None:
        """One event labelled with `labels` that took `seconds`."""
        counted = self._counts.get(labels)
        if counted is None:
            counted = self._counts[labels] = [0, time.time()]
        counted[0] += 1
        self._timings.observe(seconds, labels[: self._timed])

    def collect(self) -> Iterator[Metric]:
        counter = CounterMetricFamily(*self._counted, labels=self._labels)
        for labels, (count, created) in list(self._counts.items()):
            counter.add_metric(labels, count, created=created)
        yield counter
        yield self._timings.family()


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveFigures:
    """Where the scrape-time figures come from (each a cheap call on the running hub).

    Attributes:
        tasks: (live tasks, parked among them) held by the task manager now.
        streams: streams open now.
        breakers: (partner, breaker state value) for each partner.
    """

    tasks: Callable[[], tuple[int, int]]
    streams: Callable[[], int]
    breakers: Callable[[], Iterable[tuple[str, str]]]


class _LiveCollector(Collector):
    def __init__(self, metrics: HubMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        figures = self._metrics.figures
        if figures is None:
            return
        live, parked = figures.tasks()
        yield GaugeMetricFamily("a2a_hub_live_tasks", "Tasks held in memory (not final)", live)
        yield GaugeMetricFamily(
            "a2a_hub_parked_tasks", "Live tasks waiting for input (input- or auth-required)", parked
        )
        yield GaugeMetricFamily("a2a_hub_open_streams", "SSE streams open now", figures.streams())
        breakers = GaugeMetricFamily(
            "a2a_hub_partner_breaker_state",
            "Circuit breaker per partner: 0 closed, 1 half-open, 2 open",
            labels=["partner"],
        )
        for partner, state in figures.breakers():
            breakers.add_metric([partner], BREAKER_VALUES.get(state, 0))
        yield breakers


class HubMetrics:
    """The counters and histograms instrumented code updates, and the scrape-time gauges.

    Args:
        clock: wall-clock seconds (the start time and the overview's window).
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.figures: LiveFigures | None = None
        self.window = RequestWindow(clock=clock)
        self.history = TrafficHistory(clock=clock)
        self.started = clock()
        self._clock = clock
        registry = self.registry
        self._requests = _CountedAndTimed(
            (
                "a2a_hub_requests",
                "A2A requests served, by method, binding, protocol version and outcome",
            ),
            (
                "a2a_hub_request_duration_seconds",
                "Time to answer an A2A request (a stream: until it closed)",
            ),
            ("method", "binding", "version", "outcome"),
            timed=3,
        )
        self._tasks = _CountedAndTimed(
            (
                "a2a_hub_tasks",
                "Tasks whose skill run ended, by skill and the state it left the task in",
            ),
            ("a2a_hub_task_duration_seconds", "Time from a skill run's start to its end, by skill"),
            ("skill", "state"),
            timed=1,
        )
        self._partner_calls = _CountedAndTimed(
            (
                "a2a_hub_partner_calls",
                "Calls to partner agents, by partner, A2A method and outcome",
            ),
            (
                "a2a_hub_partner_call_duration_seconds",
                "Time a partner call took (a stream: until it ended)",
            ),
            ("partner", "method", "outcome"),
            timed=2,
        )
        for counted in (self._requests, self._tasks, self._partner_calls):
            registry.register(counted)
        self.swarm_runs = Counter(
            "a2a_hub_swarm_runs",
            "Swarms run, by strategy and outcome (ok: at least one branch answered)",
            ["strategy", "outcome"],
            registry=registry,
        )
        self.swarm_branches = Counter(
            "a2a_hub_swarm_branches",
            "Swarm branches, by strategy and how they ended",
            ["strategy", "outcome"],
            registry=registry,
        )
        self.model_tokens = Counter(
            "a2a_hub_model_tokens",
            "Tokens the orchestrators' model calls spent, by model entry and type (input, output)",
            ["model", "type"],
            registry=registry,
        )
        self.model_cost = Counter(
            "a2a_hub_model_cost_usd",
            "US dollars the orchestrators' model calls cost, by model entry (its price table)",
            ["model"],
            registry=registry,
        )
        self.plan_tool_calls = Counter(
            "a2a_hub_plan_tool_calls",
            "Tool calls orchestrators made, by tool, partner (or '' for other tools) and outcome",
            ["tool", "partner", "outcome"],
            registry=registry,
        )
        self.push_deliveries = Counter(
            "a2a_hub_push_deliveries",
            "Push notification deliveries, by outcome (delivered or undelivered)",
            ["outcome"],
            registry=registry,
        )
        self._store_commits = _Timings(
            "a2a_hub_store_commit_duration_seconds",
            "Time to write one batch of task changes to the store",
        )
        registry.register(self._store_commits)
        self.rate_limited = Counter(
            "a2a_hub_rate_limited_requests",
            "Requests refused for a caller over its rate limit (HTTP 429)",
            registry=registry,
        )
        self.refusals = Counter(
            "a2a_hub_refusals",
            "Requests and partner calls refused for their caller, by reason (UNAUTHENTICATED, "
            "RATE_LIMITED, BUDGET_EXHAUSTED, SKILL_NOT_ALLOWED, OPERATOR_ONLY, ...)",
            ["reason"],
            registry=registry,
        )
        start = GaugeMetricFamily("a2a_hub_start_time_seconds", "When the hub started (Unix)")
        start.add_metric([], self.started)
        registry.register(_Constant(start))
        registry.register(_LiveCollector(self))
        ProcessCollector(registry=registry)

    def watch(self, figures: LiveFigures) -> None:
        """Read the scrape-time figures from `figures` from now on."""
        self.figures = figures

    def request(
        self, method: str, *, binding: str, version: str, outcome: str, seconds: float
    ) -> None:
        """Count one A2A request (`outcome`: `ok` or the error's type name)."""
        self._requests.add((method, binding, version, outcome), seconds)
        self.window.add(error=outcome != "ok")
        self.history.request(seconds, error=outcome != "ok")

    def partner_call(self, partner: str, method: str, *, outcome: str, seconds: float) -> None:
        """Count one call to a partner."""
        self._partner_calls.add((partner, method, outcome), seconds)
        self.history.partner_call(partner, seconds, error=is_error(outcome))

    def store_commit(self, seconds: float) -> None:
        """One batch of task changes written to the store in `seconds`."""
        self._store_commits.observe(seconds)

    def task(self, skill: str, *, state: str, seconds: float) -> None:
        """Count one skill run that ended, with the state it left its task in."""
        self._tasks.add((skill, state), seconds)

    def swarm(self, strategy: str, *, ok: bool, branches: Iterable[str]) -> None:
        """Count one swarm run and how each of its branches ended."""
        self.swarm_runs.labels(strategy, "ok" if ok else "failed").inc()
        for state in branches:
            self.swarm_branches.labels(strategy, state).inc()

    def model_call(self, model: str, *, input_tokens: int, output_tokens: int, cost: float) -> None:
        """Count one model call of an orchestrator: its tokens and its cost."""
        self.model_tokens.labels(model, "input").inc(input_tokens)
        self.model_tokens.labels(model, "output").inc(output_tokens)
        if cost:
            self.model_cost.labels(model).inc(cost)
        self.history.model_call(
            model, input_tokens=input_tokens, output_tokens=output_tokens, cost=cost
        )

    def refusal(self, reason: str) -> None:
        """Count one refusal of a caller (`reason`: the error's reason)."""
        self.refusals.labels(reason).inc()

    def plan_tool_call(self, tool: str, partner: str, *, outcome: str) -> None:
        """Count one tool call of an orchestrator."""
        self.plan_tool_calls.labels(tool, partner, outcome).inc()

    def requests_per_second(self) -> float:
        """Requests per second over the last minute (the console's overview reads it)."""
        return self.window.rates()[0]

    def error_rate(self) -> float:
        """Share of the last minute's requests that failed, 0 to 1."""
        return self.window.rates()[1]

    def overview(self) -> Overview:
        """The few figures a dashboard's front page shows (see `Overview`)."""
        live, _ = self.figures.tasks() if self.figures else (0, 0)
        streams = self.figures.streams() if self.figures else 0
        per_second, error_rate = self.window.rates()
        return Overview(
            requests_per_second=per_second,
            error_rate=error_rate,
            live_tasks=live,
            open_streams=streams,
            uptime=max(0.0, self._clock() - self.started),
        )

    def exposition(self, partners: Collection[str] | None = None) -> bytes:
        """The metrics in Prometheus' text format.

        Args:
            partners: the partners whose series are shown (a scraper's credential scope);
                None for all.
        """
        if partners is None:
            return generate_latest(self.registry)
        scoped = CollectorRegistry(auto_describe=False)
        scoped.register(_PartnerScope(self.registry, frozenset(partners)))
        return generate_latest(scoped)


class _PartnerScope(Collector):
    """`registry`'s metrics without the series of partners outside `allowed`: a scraper
    scoped to some partners learns nothing of the others, not even their names."""

    def __init__(self, registry: CollectorRegistry, allowed: frozenset[str]) -> None:
        self._registry = registry
        self._allowed = allowed

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            kept = [
                sample
                for sample in metric.samples
                if "partner" not in sample.labels or sample.labels["partner"] in self._allowed
            ]
            if len(kept) != len(metric.samples):
                metric = _copy(metric, kept)
            yield metric


def _copy(metric: Metric, samples: list[Sample]) -> Metric:
    copied = Metric(metric.name, metric.documentation, metric.type, metric.unit)
    copied.samples = samples
    return copied


class _Constant(Collector):
    def __init__(self, metric: Metric) -> None:
        self._metric = metric

    def collect(self) -> Iterator[Metric]:
        yield self._metric
