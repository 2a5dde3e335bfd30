"""The SQLite file a store works on: opened (created or migrated) by one process at a time,
closed, pinged, and the connection and transactions the store's parts share.

Speed: the calls run on the event loop's thread. A write takes tens of microseconds, less than
handing it to a worker thread and back would cost.

One process owns the file from `open` to `close` (`hub.store.sqlite.lock`): a second store
on it, in another process or this one, is refused with `StoreInUseError`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hub.errors import StoreError
from hub.store.sqlite.lock import StoreLock
from hub.store.sqlite.schema import configure, migrate

__all__ = ["SqliteDatabase"]


class SqliteDatabase:
    """One SQLite file, created with its folder on `open` (the `Storage` role).

    Args:
        path: the database file (its `-wal` and `-shm` companions, and the `.lock` file of
            the process that owns it, sit beside it).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._lock = StoreLock(self.path)

    async def open(self) -> None:
        """Open the file, creating it or bringing its schema up to date.

        Raises:
            StoreInUseError: another process (or another store in this one) has it open.
            StoreError: the file cannot be created or read, is not a task store, or was
                written by a newer a2a-hub.
        """
        if self._db is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder of the task store {self.path} ({exc.strerror}); "
                "point store.path at a writable place"
            ) from None
        # Before the file is read: migrating it under a running hub is no better.
        self._lock.acquire()
        try:
            self._db = self._connect()
        except BaseException:
            self._lock.release()
            raise

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open the task store {self.path} ({exc}); "
                "point store.path at a writable file"
            ) from None
        try:
            configure(db, self.path)
            migrate(db, self.path)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise StoreError(
                f"cannot read the task store {self.path} ({exc}); if the file is damaged, "
                "move it (with its -wal file) aside and the hub will start a new one"
            ) from None
        except BaseException:
            db.close()
            raise
        return db

    async def close(self) -> None:
        """Checkpoint the WAL into the database file, close it and let another process
        have it; later calls raise."""
        db, self._db = self._db, None
        if db is not None:
            db.close()
        self._lock.release()

    async def ping(self) -> None:
        """Run `SELECT 1` on the connection (raises `StoreError` when closed or failing)."""
        db = self._conn()
        try:
            db.execute("SELECT 1").fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"the task store {self.path} does not answer ({exc})") from None

    @contextmanager
    def _transaction(self, failure: str) -> Iterator[None]:
        """One transaction: committed when the block ends, rolled back if it raises; an
        SQLite error becomes a `StoreError` saying `failure` and why."""
        db = self._conn()
        try:
            db.execute("BEGIN")
            try:
                yield
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StoreError(f"{failure} ({exc})") from None

    def _conn(self) -> sqlite3.Connection:
        db = self._db
        if db is None:
            raise StoreError(f"the task store {self.path} is closed; open() it before use")
        return db

    def _fetch(self, query: str, args: Sequence[object], failure: str) -> list[Any]:
        """The rows `query` selects; an SQLite error becomes a `StoreError` saying `failure`
        and why."""
        db = self._conn()
        try:
            return db.execute(query, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{failure} ({exc})") from None
