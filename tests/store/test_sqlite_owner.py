"""One process owns a SQLite store: a second is refused while the first lives, with a message
naming it, and the file is free again once the owner closes it or dies, even by `kill -9`."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import anyio
import pytest

from hub.errors import ConfigError, StoreError, StoreInUseError
from hub.store import SqliteTaskStore, TaskQuery

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("put_until_killed.py")


async def test_a_second_process_is_refused_the_file_until_the_owner_is_killed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(60):
        async with await anyio.open_process(
            [sys.executable, str(WRITER), str(path)], cwd=REPO
        ) as owner:
            assert owner.stdout is not None
            lines = b""
            async for chunk in owner.stdout:
                lines += chunk
                if b"\n" in lines:
                    break  # the owner has opened the store and written to it
            with pytest.raises(StoreInUseError) as refused:
                await SqliteTaskStore(path).open()
            # A configuration error for the command line (exit 2), and a store error.
            assert isinstance(refused.value, ConfigError)
            assert isinstance(refused.value, StoreError)
            message = str(refused.value)
            assert f"pid {owner.pid}" in message
            assert "put_until_killed.py" in message
            assert "--store memory" in message
            assert "postgres" in message
            # The owner was not disturbed: it goes on writing.
            before = lines.count(b"\n")
            async for chunk in owner.stdout:
                lines += chunk
                if lines.count(b"\n") > before + 10:
                    break
            owner.send_signal(signal.SIGKILL)
            assert await owner.wait() == -signal.SIGKILL

    # The kernel dropped the dead owner's lock: no stale lock to clear by hand.
    store = SqliteTaskStore(path)
    await store.open()
    assert (await store.list(TaskQuery())).total_size > 0
    await store.close()


async def test_a_second_store_in_the_same_process_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.db"
    first = SqliteTaskStore(path)
    await first.open()
    second = SqliteTaskStore(path)
    with pytest.raises(StoreInUseError) as refused:
        await second.open()
    assert "this same process" in str(refused.value)
    await first.close()
    await second.open()
    await second.close()


async def test_a_store_that_fails_to_open_leaves_the_file_free(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    path.write_bytes(b"this is not a SQLite database, just some text " * 100)
    with pytest.raises(StoreError):
        await SqliteTaskStore(path).open()
    with pytest.raises(StoreError) as again:
        await SqliteTaskStore(path).open()
    assert not isinstance(again.value, StoreInUseError)
