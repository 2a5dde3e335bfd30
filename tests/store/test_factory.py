"""Building the store the settings name."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.errors import ConfigError
from hub.store import MemoryTaskStore, PostgresTaskStore, SqliteTaskStore, build_store


def test_build_store_makes_the_store_its_kind_names(tmp_path: Path) -> None:
    assert isinstance(build_store("memory", None), MemoryTaskStore)
    built = build_store("sqlite", str(tmp_path / "tasks.db"))
    assert isinstance(built, SqliteTaskStore)
    assert built.path == tmp_path / "tasks.db"
    shared = build_store("postgres", dsn="postgresql://hub:secret@db:5432/hub", pool_size=4)
    assert isinstance(shared, PostgresTaskStore)
    assert shared.where == "postgresql://hub:***@db:5432/hub"


@pytest.mark.parametrize(
    ("kind", "path"), [("redis", "x"), ("sqlite", None), ("sqlite", ""), ("postgres", "x")]
)
def test_build_store_refuses_an_unknown_kind_or_a_missing_path_or_dsn(
    kind: str, path: str | None
) -> None:
    with pytest.raises(ConfigError):
        build_store(kind, path)
