"""One process per SQLite store: an exclusive lock on a file beside the database.

A hub that opens its store takes the tasks it finds unsettled there for the leftovers of its
own crash: it fails them and cancels their partner tasks. A second process on the same file
would do that to the live tasks of the first, so a SQLite store is owned by one process at a
time. The owner holds an exclusive `flock` on `<database>.lock` from `open` to `close`; the
kernel drops it when the process ends however it ends (`kill -9` included), so a crash never
leaves a stale lock behind. The lock file holds the owner's pid and command line, for the
message that refuses the next one. Several processes on one store is what PostgreSQL is for.
"""

from __future__ import annotations

import errno
import logging
import os
import shlex
import sys
from pathlib import Path

from hub.errors import StoreError, StoreInUseError

__all__ = ["StoreLock", "lock_path"]

log = logging.getLogger("hub.store")

_COMMAND_CHARS = 300
"""The longest command line the lock file keeps: enough to tell one hub from another."""

_UNSUPPORTED = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)
"""`flock` errors that mean the file system cannot lock, not that someone holds the lock."""


def lock_path(database: Path) -> Path:
    """The lock file of the SQLite file `database`: `hub.db` → `hub.db.lock`."""
    return database.with_name(database.name + ".lock")


class StoreLock:
    """The exclusive hold of one process on the SQLite file `database`.

    Args:
        database: the SQLite file (its folder must exist).
    """

    def __init__(self, database: Path) -> None:
        self.database = database
        self.path = lock_path(database)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or fail at once if another process holds it.

        Raises:
            StoreInUseError: another process (or another store of this one) holds it.
            StoreError: the lock file cannot be created.
        """
        if self._fd is not None:
            return
        try:
            # Python's descriptors are not inherited across exec: a skill's program never
            # holds the lock after the hub is gone.
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot create the lock file {self.path} of the task store ({exc.strerror}); "
                "point store.path at a writable place"
            ) from None
        try:
            _lock_exclusively(fd)
        except BlockingIOError:
            owner = _read_owner(fd)
            os.close(fd)
            raise StoreInUseError(_in_use(self.database.absolute(), owner)) from None
        except OSError as exc:
            if exc.errno not in _UNSUPPORTED:
                os.close(fd)
                raise StoreError(
                    f"cannot lock the task store {self.database} ({exc.strerror})"
                ) from None
            # A file system without locks (some network mounts): the store still works,
            # without the guard against a second process.
            log.warning(
                "the file system of %s cannot lock files (%s): make sure no other process "
                "opens this task store",
                self.path,
                exc.strerror,
            )
        _write_owner(fd)
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (closing the file drops it); a lock not held is left alone."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


if sys.platform == "win32":

    def _lock_exclusively(fd: int) -> None:
        raise OSError(errno.ENOSYS, "no flock on Windows")

else:
    import fcntl

    def _lock_exclusively(fd: int) -> None:
        """An exclusive `flock`, or BlockingIOError at once if another holds one. Not
        `fcntl` record locks: those are the process's, so any close of the file in this
        process would drop them, and two stores of one process would not exclude each
        other."""
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _write_owner(fd: int) -> None:
    command = shlex.join(sys.orig_argv)[:_COMMAND_CHARS]
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{command}\n".encode(), 0)
    except OSError:
        # Only the refusal message of a second process reads it.
        pass


def _read_owner(fd: int) -> tuple[int | None, str]:
    """The pid and command line the owner wrote, as far as they can be read."""
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
    except OSError:
        return None, ""
    first, _, rest = text.partition("\n")
    pid = int(first) if first.strip().isdigit() else None
    return pid, rest.strip()


def _in_use(database: Path, owner: tuple[int | None, str]) -> str:
    pid, command = owner
    if pid == os.getpid():
        who = "another store object of this same process"
    elif pid is None:
        who = "another process"
    else:
        who = f"another process (pid {pid}{': ' + command if command else ''})"
    return (
        f"the task store {database} is in use by {who}; a SQLite store belongs to one process "
        "(a second one would fail the first one's running tasks as if they had crashed). "
        "Stop that process, or give this one a store of its own: in memory (--store memory, "
        "or store.kind: memory), another file (--store PATH, or store.path), or PostgreSQL, "
        "which several processes can share (store.kind: postgres, see docs/deployment.md)"
    )
