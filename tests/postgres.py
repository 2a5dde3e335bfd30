"""A throw-away PostgreSQL cluster for the tests: one per test session, a database per test.

The server is the real one from the Debian `postgresql` package (`make test` installs it when
its binaries are missing). PostgreSQL refuses to run as root, and CI runs as root: then the
cluster belongs to the `postgres` system user the package creates, and its commands run
through `runuser`. Durability settings are off (fsync, synchronous commit): the tests are
about the hub's behaviour, not the disk's.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PostgresCluster",
    "fresh_database",
    "fresh_database_for_processes",
    "running_cluster",
]

_USER = "hub"


def _bin_dir() -> Path:
    """The newest installed server's binaries (Debian keeps them out of PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise RuntimeError(
        "no PostgreSQL server binaries (initdb) found: install the Debian package "
        "'postgresql' (make test does this on a fresh machine)"
    )


def _version(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True, slots=True)
class PostgresCluster:
    """A running cluster: its address and an administrator's DSN."""

    port: int
    root: Path
    pg_ctl: tuple[str, ...] = ()
    """The server's control command, up to the action (`stop`, `start`)."""

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://{_USER}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server at once (open connections are cut), as a crash or a restart would."""
        subprocess.run(
            [*self.pg_ctl, "-m", "immediate", "-w", "stop"],
            check=True,
            timeout=60,
            capture_output=True,
        )

    def start(self) -> None:
        subprocess.run([*self.pg_ctl, "-w", "start"], check=True, timeout=60, capture_output=True)

    def restart(self) -> None:
        """Restart the server as an operator would (`pg_ctl restart -m fast`): open
        connections are cut, and it is back within about half a second."""
        subprocess.run(
            [*self.pg_ctl, "-m", "fast", "-w", "restart"],
            check=True,
            timeout=60,
            capture_output=True,
        )


@contextlib.contextmanager
def running_cluster() -> Iterator[PostgresCluster]:
    """Create a cluster in a temporary folder, start it on a free loopback port, and stop
    and delete it at the end."""
    bin_dir = _bin_dir()
    root = Path(tempfile.mkdtemp(prefix="a2a-hub-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise RuntimeError(
                "running as root, and PostgreSQL refuses root: the 'postgres' system user "
                "(created by the Debian package) is needed to own the test cluster"
            ) from None
        os.chown(root, owner.pw_uid, owner.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, log = root / "data", root / "server.log"

    def run(*command: str) -> None:
        subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=120)

    port = _free_port()
    options = (
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    pg_ctl = (*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options)
    try:
        run(
            str(bin_dir / "initdb"),
            "-D", str(data), "-U", _USER, "-A", "trust", "-E", "UTF8",
            "--no-locale", "--no-sync",
        )  # fmt: skip
        subprocess.run([*pg_ctl, "-w", "start"], check=True, capture_output=True, timeout=120)
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode(errors="replace").strip()
        with contextlib.suppress(OSError):
            detail += "\n" + log.read_text(errors="replace")
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"the test PostgreSQL cluster did not start: {detail}") from None
    try:
        yield PostgresCluster(port=port, root=root, pg_ctl=pg_ctl)
    finally:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


_databases = itertools.count()


async def _admin(cluster: PostgresCluster, statement: str) -> None:
    import asyncpg

    admin = await asyncpg.connect(cluster.dsn())
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


def _new_name() -> str:
    return f"test_{os.getpid()}_{next(_databases)}"


@contextlib.asynccontextmanager
async def fresh_database(cluster: PostgresCluster) -> AsyncIterator[str]:
    """A new, empty database of `cluster` (its DSN), dropped at the end; for async tests."""
    name = _new_name()
    await _admin(cluster, f"CREATE DATABASE {name}")
    try:
        yield cluster.dsn(name)
    finally:
        await _admin(cluster, f"DROP DATABASE {name} WITH (FORCE)")


@contextlib.contextmanager
def fresh_database_for_processes(
    cluster: PostgresCluster, *, migrated: bool = True
) -> Iterator[str]:
    """The same for a test that runs no event loop of its own (hub processes); `migrated`
    runs what `a2a-hub db migrate` runs first, since `a2a-hub serve` refuses a database
    without the current schema."""
    from hub.store.schema import migrate_schema

    name = _new_name()
    asyncio.run(_admin(cluster, f"CREATE DATABASE {name}"))
    try:
        if migrated:
            asyncio.run(migrate_schema("postgres", dsn=cluster.dsn(name)))
        yield cluster.dsn(name)
    finally:
        asyncio.run(_admin(cluster, f"DROP DATABASE {name} WITH (FORCE)"))
