"""Which roles each backend plays at run time: the task manager, the push notifier and the
partner sync switch to their replica behaviour on `isinstance` against a shared role, so a
store of one hub must not look like one."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.store import (
    MemoryTaskStore,
    PostgresTaskStore,
    RuntimePartnerStore,
    SharedPushConfigStore,
    SharedTaskRecords,
    SharedTaskStore,
    SqliteTaskStore,
    TaskStore,
)

SHARED_ROLES = [SharedTaskRecords, SharedPushConfigStore, RuntimePartnerStore, SharedTaskStore]


def test_every_backend_is_a_whole_task_store(tmp_path: Path) -> None:
    stores = [
        MemoryTaskStore(),
        SqliteTaskStore(tmp_path / "hub.db"),
        PostgresTaskStore("postgresql://hub@localhost/hub"),
    ]
    assert [isinstance(store, TaskStore) for store in stores] == [True, True, True]


@pytest.mark.parametrize("role", SHARED_ROLES, ids=lambda role: role.__name__)
def test_only_the_postgres_store_plays_the_shared_roles(tmp_path: Path, role: type) -> None:
    assert isinstance(PostgresTaskStore("postgresql://hub@localhost/hub"), role)
    assert not isinstance(MemoryTaskStore(), role)
    assert not isinstance(SqliteTaskStore(tmp_path / "hub.db"), role)
