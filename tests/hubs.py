"""Hub apps the tests serve on loopback (`serve_on_loopback(builder)`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from litestar import Litestar

from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.registry import Registry
from hub.server import create_app
from hub.skills import LocalSkill
from hub.store import MemoryTaskStore

__all__ = ["memory_hub"]


def memory_hub(
    skills: Mapping[str, LocalSkill], registry: Registry, *, default_skill: str
) -> Callable[[str], Litestar]:
    """A builder of the hub served at the URL it is given: `skills`, the partners of
    `registry`, tasks in memory."""

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            default_skill=default_skill,
        )
        return create_app(
            settings, store=MemoryTaskStore(), skills=skills, partners=Partners(registry)
        )

    return build
