"""`a2a-hub db check | migrate`, and `serve` refusing a PostgreSQL schema it does not know."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.cli import main
from hub.store.postgres.schema import SCHEMA_VERSION as POSTGRES_SCHEMA
from hub.store.sqlite.schema import SCHEMA_VERSION as SQLITE_SCHEMA
from tests.postgres import PostgresCluster, fresh_database_for_processes

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> int:
    with pytest.raises(SystemExit) as ended:
        main(list(argv))
    return int(ended.value.code or 0)


@pytest.fixture
def postgres_config(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> Iterator[tuple[Path, str]]:
    with fresh_database_for_processes(postgres_cluster, migrated=False) as dsn:
        path = tmp_path / "hub.yaml"
        path.write_text(
            f"server: {{log_level: warning}}\nstore: {{kind: postgres, dsn: '{dsn}'}}\n"
        )
        yield path, dsn


def serve_refusal(config: Path) -> tuple[int, str]:
    """Start `a2a-hub serve` and return its exit status and stderr (it must not start)."""
    done = subprocess.run(
        [sys.executable, "-m", "hub", "serve", "--config", str(config), "--port", "0"],
        cwd=ROOT,
        capture_output=True,
        timeout=30,
    )
    return done.returncode, done.stderr.decode()


def test_db_check_and_migrate_bring_a_sqlite_file_to_the_current_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "hub.yaml"
    config.write_text(f"store: {{kind: sqlite, path: {tmp_path / 'hub.db'}}}\n")

    assert run("db", "check", "--config", str(config)) == 1
    assert "has no schema yet" in capsys.readouterr().out
    assert run("db", "migrate", "--config", str(config)) == 0
    assert f"from schema 0 to {SQLITE_SCHEMA}" in capsys.readouterr().out
    assert run("db", "check", "--config", str(config)) == 0
    assert f"schema {SQLITE_SCHEMA}, the current one" in capsys.readouterr().out


def test_db_on_the_memory_store_is_a_configuration_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "hub.yaml"
    config.write_text("store: {kind: memory}\n")
    assert run("db", "migrate", "--config", str(config)) == 2
    assert "memory" in capsys.readouterr().err


def test_serve_refuses_an_unmigrated_postgres_database_until_db_migrate_ran(
    postgres_config: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    config, _ = postgres_config
    assert run("db", "check", "--config", str(config)) == 1
    assert "a2a-hub db migrate" in capsys.readouterr().out

    status, said = serve_refusal(config)
    assert status == 2  # a configuration error: nothing was served
    assert "has no schema yet" in said
    assert "a2a-hub db migrate" in said
    assert "Traceback" not in said

    assert run("db", "migrate", "--config", str(config)) == 0
    assert f"from schema 0 to {POSTGRES_SCHEMA}" in capsys.readouterr().out
    assert run("db", "migrate", "--config", str(config)) == 0
    assert f"already at schema {POSTGRES_SCHEMA}" in capsys.readouterr().out
    assert run("db", "check", "--config", str(config)) == 0


def test_serve_and_db_refuse_a_postgres_schema_newer_than_they_know(
    postgres_config: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    config, dsn = postgres_config
    assert run("db", "migrate", "--config", str(config)) == 0

    async def from_the_future() -> None:
        import asyncpg

        db = await asyncpg.connect(dsn)
        try:
            await db.execute("UPDATE schema_version SET version = $1", POSTGRES_SCHEMA + 1)
        finally:
            await db.close()

    asyncio.run(from_the_future())
    capsys.readouterr()
    assert run("db", "check", "--config", str(config)) == 1
    assert "upgrade a2a-hub" in capsys.readouterr().out
    assert run("db", "migrate", "--config", str(config)) == 1
    assert "upgrade a2a-hub" in capsys.readouterr().err
    status, said = serve_refusal(config)
    assert status == 2
    assert "upgrade a2a-hub" in said
