"""`a2a-hub db migrate | check`: the task store's schema, as an operator step.

Replicas on one PostgreSQL database never migrate it themselves (`serve` refuses a schema it
does not know): the operator runs `a2a-hub db migrate` once per upgrade, then starts them.
"""

from __future__ import annotations

import argparse

from hub.cli.outcome import FAILED, OK, Running
from hub.cli.settings import command_settings

__all__ = ["db"]


async def db(args: argparse.Namespace, running: Running) -> int:
    """Run `a2a-hub db ACTION` on the store the settings name; the exit status.

    `check` prints where the schema stands and exits 1 unless it is the current one;
    `migrate` brings it up to date and says from which version.
    """
    from hub.store.schema import migrate_schema, read_schema

    store = command_settings(args).store
    if args.action == "check":
        state = await read_schema(store.kind, path=store.path, dsn=store.dsn)
        print(state.describe())
        return OK if state.current else FAILED
    before = await migrate_schema(store.kind, path=store.path, dsn=store.dsn)
    if before.current:
        print(f"the task store {before.where} is already at schema {before.expected}")
    else:
        print(
            f"migrated the task store {before.where} from schema {before.version} "
            f"to {before.expected}"
        )
    return OK
