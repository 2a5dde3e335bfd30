"""The PostgreSQL task store's schema: numbered migration steps, run under an advisory lock.

Step n brings the schema from version n to n + 1; the `schema_version` table records how many
steps a database has had. Several hubs may start on one database at once: each step runs in a
transaction holding a transaction-scoped advisory lock, so exactly one of them applies it and
the others find it applied. Never edit a released step: add one.

The tables mirror the SQLite store's (`hub.store.sqlite.schema`), so both stores answer every
query the same way: ids compare byte by byte (`COLLATE "C"`, as SQLite does), bodies are the
wire JSON as bytes, and rows that list in the order they were first written carry a sequence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub.errors import StoreError
from hub.store.columns import LIVE_CHILD, UNSETTLED_TASK

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "NOTICE_CHANNEL",
    "PARTNERS_CHANNEL",
    "PUSH_CHANNEL",
    "RUNNING_TASK",
    "SCHEMA_VERSION",
    "migrate",
    "schema_version",
]

NOTICE_CHANNEL = "a2a_hub_tasks"
"""The LISTEN/NOTIFY channel of task changes: "task_id version replica" per change."""

PARTNERS_CHANNEL = "a2a_hub_partners"
"""The LISTEN/NOTIFY channel of changes to the partners added at run time."""

PUSH_CHANNEL = "a2a_hub_push_configs"
"""The LISTEN/NOTIFY channel of push config changes: the task id per change."""

RUNNING_TASK = "state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')"
"""A task some replica is running (and holds a lease on)."""

# Any constant shared by every hub on the database: the lock that orders migrations.
_MIGRATION_LOCK = 0x61326168

# The messages' text of a stored task's wire JSON (`body`), as `hub.store.search.search_text`
# gives it, for the tasks stored before the column was. jsonb cannot hold a NUL: each
# `\u0000` escape becomes `\u2400` (␀), which keeps the JSON valid whether or not its
# backslash was escaped.
_TEXT = r"""
SELECT coalesce(string_agg(text, E'\n'), '')
FROM (SELECT replace(convert_from(body, 'UTF8'), '\u0000', '\u2400')::jsonb AS doc) AS task,
LATERAL (
    SELECT jsonb_path_query(doc, '$.history[*].parts[*].text') #>> '{}' AS text
    UNION ALL
    SELECT jsonb_path_query(doc, '$.status.message.parts[*].text') #>> '{}'
) AS texts
"""

_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE tasks (
            task_id    TEXT COLLATE "C" PRIMARY KEY,
            context_id TEXT COLLATE "C" NOT NULL,
            state      TEXT NOT NULL,
            status_us  BIGINT NOT NULL,
            owner      TEXT NOT NULL,
            skill      TEXT NOT NULL,
            body       BYTEA NOT NULL
        )""",
        "CREATE INDEX tasks_by_status_time ON tasks (status_us DESC, task_id DESC) "
        "INCLUDE (owner, state)",
        "CREATE INDEX tasks_by_context_time ON tasks (context_id, status_us DESC, task_id DESC)",
        f"CREATE INDEX tasks_unsettled ON tasks (status_us DESC, task_id DESC) "
        f"WHERE {UNSETTLED_TASK}",
        # totalSize in one look-up, kept by a trigger in the writing transaction.
        """CREATE TABLE task_counts (
            owner TEXT NOT NULL,
            state TEXT NOT NULL,
            n     BIGINT NOT NULL,
            PRIMARY KEY (owner, state)
        )""",
        """CREATE FUNCTION task_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                UPDATE task_counts SET n = n - 1 WHERE owner = OLD.owner AND state = OLD.state;
            END IF;
            IF TG_OP IN ('UPDATE', 'INSERT') THEN
                INSERT INTO task_counts (owner, state, n) VALUES (NEW.owner, NEW.state, 1)
                ON CONFLICT (owner, state) DO UPDATE SET n = task_counts.n + 1;
            END IF;
            RETURN NULL;
        END $$""",
        "CREATE TRIGGER task_counts_insert_delete AFTER INSERT OR DELETE ON tasks "
        "FOR EACH ROW EXECUTE FUNCTION task_counts_follow()",
        "CREATE TRIGGER task_counts_update AFTER UPDATE OF owner, state ON tasks FOR EACH ROW "
        "WHEN (OLD.owner IS DISTINCT FROM NEW.owner OR OLD.state IS DISTINCT FROM NEW.state) "
        "EXECUTE FUNCTION task_counts_follow()",
        """CREATE TABLE push_configs (
            seq       BIGSERIAL,
            task_id   TEXT COLLATE "C" NOT NULL,
            config_id TEXT COLLATE "C" NOT NULL,
            owner     TEXT NOT NULL,
            protocol  TEXT NOT NULL,
            body      BYTEA NOT NULL,
            PRIMARY KEY (task_id, config_id)
        )""",
        """CREATE TABLE children (
            seq        BIGSERIAL,
            parent_id  TEXT COLLATE "C" NOT NULL,
            agent      TEXT NOT NULL,
            child_id   TEXT NOT NULL,
            state      TEXT NOT NULL,
            note       TEXT NOT NULL,
            PRIMARY KEY (parent_id, agent, child_id)
        )""",
        f"CREATE INDEX children_live ON children (seq) WHERE {LIVE_CHILD}",
        """CREATE TABLE partner_tasks (
            agent      TEXT NOT NULL,
            task_id    TEXT NOT NULL,
            owner      TEXT NOT NULL,
            created_us BIGINT NOT NULL,
            PRIMARY KEY (agent, task_id)
        )""",
        "CREATE INDEX partner_tasks_by_time ON partner_tasks (created_us)",
    ),
    (
        # Replicas: a version per task (optimistic concurrency: a write names the version it
        # read), the replica holding a running task and until when, and the ordered events
        # that moved each task, for subscribers on every replica.
        "ALTER TABLE tasks ADD COLUMN version BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE tasks ADD COLUMN replica TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE tasks ADD COLUMN lease_us BIGINT NOT NULL DEFAULT 0",
        f"CREATE INDEX tasks_held ON tasks (lease_us) WHERE {RUNNING_TASK}",
        """CREATE TABLE task_events (
            task_id TEXT COLLATE "C" NOT NULL,
            seq     BIGINT NOT NULL,
            body    BYTEA NOT NULL,
            PRIMARY KEY (task_id, seq)
        )""",
        # Every versioned write wakes the replicas, in the writing transaction's commit.
        f"""CREATE FUNCTION task_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('{NOTICE_CHANNEL}',
                              NEW.task_id || ' ' || NEW.version || ' ' || NEW.replica);
            RETURN NULL;
        END $$""",
        "CREATE TRIGGER task_changed AFTER INSERT OR UPDATE OF version ON tasks "
        "FOR EACH ROW EXECUTE FUNCTION task_changed()",
        # Partners added at run time (spawn_agent, sync_state), known to every replica.
        """CREATE TABLE runtime_partners (
            seq  BIGSERIAL,
            name TEXT PRIMARY KEY,
            body BYTEA NOT NULL
        )""",
        f"""CREATE FUNCTION runtime_partners_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('{PARTNERS_CHANNEL}', '');
            RETURN NULL;
        END $$""",
        "CREATE TRIGGER runtime_partners_changed AFTER INSERT OR UPDATE OR DELETE "
        "ON runtime_partners FOR EACH STATEMENT EXECUTE FUNCTION runtime_partners_changed()",
        # Push configs are made on any replica and delivered by whichever writes the task.
        f"""CREATE FUNCTION push_configs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('{PUSH_CHANNEL}', coalesce(NEW.task_id, OLD.task_id));
            RETURN NULL;
        END $$""",
        "CREATE TRIGGER push_configs_changed AFTER INSERT OR UPDATE OR DELETE "
        "ON push_configs FOR EACH ROW EXECUTE FUNCTION push_configs_changed()",
    ),
    (
        # Skills' own state (the orchestrator's plans and transcripts), a value per key that
        # every replica reads; only the values that expire are indexed, for the sweep.
        """CREATE TABLE skill_state (
            key        TEXT COLLATE "C" PRIMARY KEY,
            value      BYTEA NOT NULL,
            updated_us BIGINT NOT NULL,
            expires_us BIGINT
        )""",
        "CREATE INDEX skill_state_expiring ON skill_state (expires_us) "
        "WHERE expires_us IS NOT NULL",
    ),
    (
        # The trace of the request that created each task, for the console's link to the
        # operator's tracing UI; tasks stored before have none ('').
        "ALTER TABLE tasks ADD COLUMN trace_id TEXT NOT NULL DEFAULT ''",
    ),
    (
        # The console's task list. When each task was first stored (NULL for the tasks
        # stored before this step: their start is not known), written by the insert.
        "ALTER TABLE tasks ADD COLUMN created_us BIGINT",
        # The skill filter reads its tasks in list order; the partner filter finds a
        # partner's parent tasks in the ledger.
        "CREATE INDEX tasks_by_skill_time ON tasks (skill, status_us DESC, task_id DESC)",
        "CREATE INDEX children_by_agent ON children (agent, parent_id)",
        # Text search: the messages' text of each task (`hub.store.search`), a column the
        # store writes with the task (here filled from the stored bodies once), indexed by
        # trigrams (pg_trgm, shipped with the server; a trusted extension, so the
        # database's owner may create it).
        "CREATE EXTENSION IF NOT EXISTS pg_trgm",
        "ALTER TABLE tasks ADD COLUMN search_text TEXT NOT NULL DEFAULT ''",
        f"UPDATE tasks SET search_text = ({_TEXT})",
        "CREATE INDEX tasks_by_text ON tasks USING gin (search_text gin_trgm_ops)",
    ),
    (
        # The kill switch finds the partner tasks a caller started through the gateway, the
        # most recent first, in this index alone.
        "CREATE INDEX partner_tasks_by_owner "
        "ON partner_tasks (owner, created_us DESC, agent, task_id)",
    ),
)
SCHEMA_VERSION = len(_MIGRATIONS)


async def schema_version(db: asyncpg.Connection) -> int:
    """How many steps the database has had (0 for an empty one)."""
    exists = await db.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    version = await db.fetchval("SELECT version FROM schema_version")
    return int(version or 0)


async def migrate(db: asyncpg.Connection, where: str) -> None:
    """Run the steps the database has not had yet, each in its own locked transaction.

    Raises:
        StoreError: the database was migrated by a newer a2a-hub.
    """
    while True:
        async with db.transaction():
            await db.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            await db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            await db.execute(
                "INSERT INTO schema_version (version) "
                "SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM schema_version)"
            )
            version = await schema_version(db)
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"the task store {where} was migrated by a newer a2a-hub (schema "
                    f"{version}, this one knows up to {SCHEMA_VERSION}); upgrade a2a-hub"
                )
            if version == SCHEMA_VERSION:
                return
            for statement in _MIGRATIONS[version]:
                await db.execute(statement)
            await db.execute("UPDATE schema_version SET version = $1", version + 1)
