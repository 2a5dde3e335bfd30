"""A hub on loopback: the hub's app built from settings, skills and partners, served on a real
socket, with the objects a test reads."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass

from litestar import Litestar

from hub.app import create_app
from hub.client import BreakerConfig
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.registry import AgentEntry, Registry
from hub.skills import LocalSkill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore, TaskStore
from hub.telemetry import Telemetry
from hub.testing.loopback import reserved_port, serve_on_loopback

__all__ = ["LoopbackHub", "PartnerList", "serve_hub"]

PartnerList = Registry | Mapping[str, str] | Sequence[AgentEntry]
"""A hub's partners: a registry, their URLs by name, or agents.yaml entries."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopbackHub:
    """A hub `serve_hub` runs, and what a test reads of it."""

    url: str
    """Where it is served (its card's URL)."""
    app: Litestar
    settings: Settings
    """Its settings, `server.public_url` set to `url`."""
    store: TaskStore
    partners: Partners
    grpc_address: str | None = None
    """Where its gRPC door is served (`host:port`), when `server.grpc.enabled`."""


def _registry(partners: PartnerList) -> Registry:
    if isinstance(partners, Registry):
        return partners
    if isinstance(partners, Mapping):
        return Registry(AgentEntry(name=name, url=url) for name, url in partners.items())
    return Registry(partners)


@asynccontextmanager
async def serve_hub(
    *,
    skills: Sequence[LocalSkill] = (echo,),
    partners: PartnerList | Callable[[str], PartnerList] = (),
    settings: Settings | None = None,
    store: TaskStore | None = None,
    breaker: BreakerConfig | None = None,
    telemetry: Telemetry | None = None,
) -> AsyncIterator[LoopbackHub]:
    """Build a hub's app and serve it on 127.0.0.1 in the current event loop, until the
    block exits.

    Args:
        skills: its local skills; the first is the default skill unless `settings` names one.
        partners: its partners (the agents.yaml it would read), or a function of the hub's
            own URL that gives them (for a hub that lists itself).
        settings: its settings (the defaults when None; the store kind is not read).
            `server.public_url` is set to the URL it is served at, and the `server`
            connection limits apply to the loopback server. With `server.grpc.enabled`
            the gRPC door is served on a free loopback port too (the settings' host and
            port are not used).
        store: where it keeps tasks; in memory when None.
        breaker: its partners' circuit breaker (the default one when None).
        telemetry: its recorders; built from `settings.telemetry` when None.

    Yields:
        The running hub: its URL, app, settings, store and partners.
    """
    base = settings or Settings(store=StoreSettings(kind="memory"))
    built: list[LoopbackHub] = []
    with ExitStack() as held:
        grpc = base.server.grpc
        if grpc.enabled:
            port = held.enter_context(reserved_port())
            grpc = grpc.model_copy(update={"host": "127.0.0.1", "port": port})
        server = base.server.model_copy(update={"grpc": grpc})
        async with _serve(base, server, built, skills, partners, store, breaker, telemetry):
            yield built[0]


@asynccontextmanager
async def _serve(
    base: Settings,
    server: ServerSettings,
    built: list[LoopbackHub],
    skills: Sequence[LocalSkill],
    partners: PartnerList | Callable[[str], PartnerList],
    store: TaskStore | None,
    breaker: BreakerConfig | None,
    telemetry: Telemetry | None,
) -> AsyncIterator[None]:
    def build(url: str) -> Litestar:
        served = base.model_copy(update={"server": server.model_copy(update={"public_url": url})})
        listed = partners(url) if callable(partners) else partners
        directory = Partners(_registry(listed), breaker=breaker)
        tasks = store if store is not None else MemoryTaskStore()
        app = create_app(
            served,
            store=tasks,
            skills={local.card.id: local for local in skills},
            partners=directory,
            telemetry=telemetry,
        )
        grpc_address = served.server.grpc_address() if served.server.grpc.enabled else None
        built.append(
            LoopbackHub(
                url=url,
                app=app,
                settings=served,
                store=tasks,
                partners=directory,
                grpc_address=grpc_address,
            )
        )
        return app

    async with serve_on_loopback(build, settings=base.server):
        yield
