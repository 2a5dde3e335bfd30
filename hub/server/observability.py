"""The operator's endpoints: `/healthz` (liveness) and `/readyz` (readiness), public even
with auth on; `/metrics` (Prometheus; behind a credential with auth on unless
`telemetry.metrics.public`); `/status` (the running hub for `a2a-hub status`, behind a
credential with auth on). A credential scoped to some partners (`agents`) sees only those in
`/status` and `/metrics`, as everywhere else."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from litestar import Request, get
from litestar.response import Response

from hub.errors import MethodNotFoundError, ProtocolError
from hub.partners import Partners, StatsBook
from hub.server.errors import rest_error_response
from hub.server.gate import Gate
from hub.store import TaskStore
from hub.tasks import TaskManager
from hub.telemetry import Telemetry
from hub.telemetry.health import check_readiness
from hub.telemetry.metrics import CONTENT_TYPE, LiveFigures
from hub.telemetry.status import BreakerStatus, HubStatus, PartnerStatus

__all__ = ["OBSERVABILITY_ROUTES", "QUIET_PATHS", "Observability"]

AnyRequest = Request[Any, Any, Any]
JSON = "application/json"
NO_STORE = {"Cache-Control": "no-store"}

QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
"""Probes and scrapes: logged at DEBUG, neither counted nor traced."""


@dataclass(slots=True, kw_only=True)
class Observability:
    """What the operator's endpoints read."""

    name: str
    store: TaskStore
    manager: TaskManager
    partners: Partners
    stats: StatsBook
    """The hub's call statistics per partner (the console's partner board reads them too)."""
    gate: Gate
    telemetry: Telemetry
    metrics_public: bool
    started: bool = False
    """Set once the app's start-up has finished, cleared when it stops."""

    def figures(self) -> LiveFigures:
        """The scrape-time sources of the metrics."""
        partners = self.partners
        return LiveFigures(
            tasks=self.manager.live_counts,
            streams=self.gate.streams_open,
            breakers=lambda: [
                (name, partners.breaker(name).state.value) for name in partners.names()
            ],
        )

    def status(self, agents: Collection[str] | None = None) -> HubStatus:
        """The running hub's figures, no secret among them.

        Args:
            agents: the partners to show (the caller's credential scope); None for all.
        """
        live, parked = self.manager.live_counts()
        metrics = self.telemetry.metrics
        overview = metrics.overview() if metrics is not None else None
        partners = []
        for name in self.partners.names():
            if agents is not None and name not in agents:
                continue
            snapshot = self.partners.breaker(name).snapshot()
            stats = self.stats.get(name)
            partners.append(
                PartnerStatus(
                    name=name,
                    origin="runtime" if self.partners.origin(name) is not None else "registry",
                    breaker=BreakerStatus(
                        state=snapshot.state.value,
                        consecutive_failures=snapshot.consecutive_failures,
                        retry_in=round(snapshot.retry_in, 3),
                    ),
                    card_error=self.partners.card_error(name),
                    calls=stats.calls if stats else 0,
                    latency_ms=(
                        round(stats.latency * 1000, 3) if stats and stats.latency else None
                    ),
                    error_rate=round(stats.error_rate, 4) if stats else 0.0,
                )
            )
        return HubStatus(
            name=self.name,
            version=_version(),
            uptime=round(overview.uptime, 3) if overview else 0.0,
            requests_per_second=round(overview.requests_per_second, 3) if overview else 0.0,
            error_rate=round(overview.error_rate, 4) if overview else 0.0,
            live_tasks=live,
            parked_tasks=parked,
            open_streams=self.gate.streams_open(),
            partners=partners,
        )


def _version() -> str:
    try:
        return version("a2a-hub")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"


def _observability(request: AnyRequest) -> Observability:
    observability: Observability = request.app.state.hub.observability
    return observability


async def _admit(request: AnyRequest, gate: Gate) -> frozenset[str] | None:
    """Admit the request; the partners its credential may reach (None: all)."""
    client = request.client
    return (await gate.admit(request.headers, address=client.host if client else "")).agents


@get("/healthz")
async def health(request: AnyRequest) -> Response[bytes]:
    """Liveness: the process answers."""
    return Response(content=b'{"status":"ok"}', media_type=JSON, headers=NO_STORE)


@get("/readyz")
async def readiness(request: AnyRequest) -> Response[bytes]:
    """Readiness: 200 when the store answers and the registry is loaded, else 503."""
    observability = _observability(request)
    ready = await check_readiness(
        observability.store,
        started=observability.started,
        partners=len(observability.partners.names()),
    )
    return Response(
        content=ready.to_json(),
        status_code=200 if ready.ready else 503,
        media_type=JSON,
        headers=NO_STORE,
    )


@get("/metrics")
async def metrics(request: AnyRequest) -> Response[bytes]:
    """The Prometheus exposition."""
    observability = _observability(request)
    # Public metrics are for a scraper without a credential: every partner is in them.
    agents = None
    try:
        if not observability.metrics_public:
            agents = await _admit(request, observability.gate)
        exposition = observability.telemetry.metrics
        if exposition is None:
            raise MethodNotFoundError(
                "metrics are off on this hub (telemetry.metrics.enabled is false)"
            )
    except ProtocolError as error:
        return rest_error_response(error)
    return Response(
        content=exposition.exposition(agents), media_type=CONTENT_TYPE, headers=NO_STORE
    )


@get("/status")
async def status(request: AnyRequest) -> Response[bytes]:
    """The running hub's partners, breakers, figures and load (`a2a-hub status`)."""
    observability = _observability(request)
    try:
        agents = await _admit(request, observability.gate)
    except ProtocolError as error:
        return rest_error_response(error)
    return Response(
        content=observability.status(agents).to_json(), media_type=JSON, headers=NO_STORE
    )


OBSERVABILITY_ROUTES = [health, readiness, metrics, status]
