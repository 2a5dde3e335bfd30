"""The SQLite task store's schema: numbered migration steps and the connection settings.

Step n brings the schema from version n to n + 1; the `schema_version` table records how many
steps a file has had. Never edit a released step: add one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hub.errors import StoreError
from hub.store.columns import LIVE_CHILD, UNSETTLED_TASK

__all__ = ["SCHEMA_VERSION", "configure", "migrate", "schema_version"]


def _text(body: str) -> str:
    """The messages' text of the task whose wire JSON is `body`, as `search_text` gives it:
    the history's text parts, then the status message's, one per line (each NUL as U+2400);
    for the tasks stored before the column was."""
    return (
        "(SELECT replace(coalesce(group_concat(text, char(10)), ''), char(0), char(9216)) FROM ("
        "SELECT json_extract(part.value, '$.text') AS text "
        f"FROM json_each(CAST({body} AS TEXT), '$.history') AS message, "
        "json_each(message.value, '$.parts') AS part "
        "UNION ALL SELECT json_extract(part.value, '$.text') "
        f"FROM json_each(CAST({body} AS TEXT), '$.status.message.parts') AS part"
        ") WHERE text IS NOT NULL)"
    )


_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE tasks (
            task_id    TEXT PRIMARY KEY,
            context_id TEXT NOT NULL,
            state      TEXT NOT NULL,
            status_us  INTEGER NOT NULL,
            owner      TEXT NOT NULL,
            skill      TEXT NOT NULL,
            body       BLOB NOT NULL
        )""",
        "CREATE INDEX tasks_by_time ON tasks (status_us DESC, task_id DESC)",
        "CREATE INDEX tasks_by_context ON tasks (context_id, status_us DESC)",
        "CREATE INDEX tasks_by_state ON tasks (state)",
    ),
    (
        # Owner and state ride in the time index, so filtering and counting by them reads
        # no task body, and a separate state index no longer costs a page per write.
        "DROP INDEX tasks_by_time",
        "DROP INDEX tasks_by_context",
        "DROP INDEX tasks_by_state",
        "CREATE INDEX tasks_by_status_time ON tasks (status_us DESC, task_id DESC, owner, state)",
        "CREATE INDEX tasks_by_context_time ON tasks (context_id, status_us DESC, task_id DESC)",
    ),
    (
        # Listed in rowid order, which an upsert keeps: a replaced config keeps its place.
        """CREATE TABLE push_configs (
            task_id   TEXT NOT NULL,
            config_id TEXT NOT NULL,
            owner     TEXT NOT NULL,
            protocol  TEXT NOT NULL,
            body      BLOB NOT NULL,
            PRIMARY KEY (task_id, config_id)
        )""",
    ),
    (
        # The delegation ledger: tasks started on partners for the hub's own tasks.
        """CREATE TABLE children (
            parent_id  TEXT NOT NULL,
            agent      TEXT NOT NULL,
            child_id   TEXT NOT NULL,
            state      TEXT NOT NULL,
            note       TEXT NOT NULL,
            PRIMARY KEY (parent_id, agent, child_id)
        )""",
        "CREATE INDEX children_by_state ON children (state)",
    ),
    (
        # Who started each partner task reached through the gateway (auth on).
        """CREATE TABLE partner_tasks (
            agent      TEXT NOT NULL,
            task_id    TEXT NOT NULL,
            owner      TEXT NOT NULL,
            created_us INTEGER NOT NULL,
            PRIMARY KEY (agent, task_id)
        )""",
        "CREATE INDEX partner_tasks_by_time ON partner_tasks (created_us)",
    ),
    (
        # Costs that stay flat as the store grows. ListTasks reports totalSize: counting
        # the matching rows reads the whole index (51 ms at a million tasks), so the count
        # per owner and state is kept by triggers and read in one lookup.
        """CREATE TABLE task_counts (
            owner TEXT NOT NULL,
            state TEXT NOT NULL,
            n     INTEGER NOT NULL,
            PRIMARY KEY (owner, state)
        ) WITHOUT ROWID""",
        "INSERT INTO task_counts (owner, state, n) "
        "SELECT owner, state, count(*) FROM tasks GROUP BY owner, state",
        """CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN
            INSERT INTO task_counts (owner, state, n) VALUES (NEW.owner, NEW.state, 1)
            ON CONFLICT (owner, state) DO UPDATE SET n = n + 1;
        END""",
        """CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN
            UPDATE task_counts SET n = n - 1 WHERE owner = OLD.owner AND state = OLD.state;
        END""",
        """CREATE TRIGGER task_counts_update AFTER UPDATE OF owner, state ON tasks
        WHEN OLD.owner IS NOT NEW.owner OR OLD.state IS NOT NEW.state BEGIN
            UPDATE task_counts SET n = n - 1 WHERE owner = OLD.owner AND state = OLD.state;
            INSERT INTO task_counts (owner, state, n) VALUES (NEW.owner, NEW.state, 1)
            ON CONFLICT (owner, state) DO UPDATE SET n = n + 1;
        END""",
        # Start-up looks for the tasks a stopped hub left running and the partner tasks
        # still live: partial indexes hold only those, so the look-up does not read the
        # finished ones.
        f"CREATE INDEX tasks_unsettled ON tasks (status_us DESC, task_id DESC) "
        f"WHERE {UNSETTLED_TASK}",
        "DROP INDEX children_by_state",
        f"CREATE INDEX children_live ON children (parent_id) WHERE {LIVE_CHILD}",
    ),
    (
        # Skills' own state (the orchestrator's plans and transcripts), a value per key; only
        # the values that expire are indexed, for the sweep.
        """CREATE TABLE skill_state (
            key        TEXT PRIMARY KEY,
            value      BLOB NOT NULL,
            updated_us INTEGER NOT NULL,
            expires_us INTEGER
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
        "ALTER TABLE tasks ADD COLUMN created_us INTEGER",
        # The skill filter reads its tasks in list order; the partner filter finds a
        # partner's parent tasks in the ledger.
        "CREATE INDEX tasks_by_skill_time ON tasks (skill, status_us DESC, task_id DESC)",
        "CREATE INDEX children_by_agent ON children (agent, parent_id)",
        # Text search: the messages' text of each task (`hub.store.search`), a column the
        # store writes with the task (here filled from the stored bodies once), indexed by
        # trigrams in an FTS5 table over it, which the triggers keep: a task is indexed again
        # only when its text changed.
        "ALTER TABLE tasks ADD COLUMN search_text TEXT NOT NULL DEFAULT ''",
        f"UPDATE tasks SET search_text = {_text('body')}",
        "CREATE VIRTUAL TABLE task_text USING fts5 (search_text, content = 'tasks', "
        "content_rowid = 'rowid', tokenize = 'trigram')",
        "INSERT INTO task_text (task_text) VALUES ('rebuild')",
        """CREATE TRIGGER task_text_insert AFTER INSERT ON tasks BEGIN
            INSERT INTO task_text (rowid, search_text) VALUES (NEW.rowid, NEW.search_text);
        END""",
        """CREATE TRIGGER task_text_update AFTER UPDATE OF search_text ON tasks
        WHEN OLD.search_text IS NOT NEW.search_text BEGIN
            INSERT INTO task_text (task_text, rowid, search_text)
                VALUES ('delete', OLD.rowid, OLD.search_text);
            INSERT INTO task_text (rowid, search_text) VALUES (NEW.rowid, NEW.search_text);
        END""",
        """CREATE TRIGGER task_text_delete AFTER DELETE ON tasks BEGIN
            INSERT INTO task_text (task_text, rowid, search_text)
                VALUES ('delete', OLD.rowid, OLD.search_text);
        END""",
    ),
    (
        # The kill switch finds the partner tasks a caller started through the gateway, the
        # most recent first, in this index alone.
        "CREATE INDEX partner_tasks_by_owner "
        "ON partner_tasks (owner, created_us DESC, agent, task_id)",
    ),
)
SCHEMA_VERSION = len(_MIGRATIONS)


def configure(db: sqlite3.Connection, path: Path) -> None:
    (mode,) = db.execute("PRAGMA journal_mode=WAL").fetchone()
    if mode != "wal":
        raise StoreError(
            f"the task store {path} cannot use WAL mode (journal mode stays '{mode}'); "
            "put store.path on a local file system"
        )
    db.execute("PRAGMA synchronous=NORMAL")
    # Waits (on the event loop) only when another process writes the same file.
    db.execute("PRAGMA busy_timeout=2000")


def schema_version(db: sqlite3.Connection) -> int:
    """How many steps the file has had (0 for a new one); reads only."""
    table = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    row = db.execute("SELECT version FROM schema_version").fetchone() if table else None
    return 0 if row is None else int(row[0])


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Run the migration steps the file has not had yet, each in its own transaction."""
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    if db.execute("SELECT version FROM schema_version").fetchone() is None:
        db.execute("INSERT INTO schema_version (version) VALUES (0)")
    version = schema_version(db)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the task store {path} was written by a newer a2a-hub (schema {version}, this one "
            f"knows up to {SCHEMA_VERSION}); upgrade a2a-hub or point store.path elsewhere"
        )
    for step in range(version, SCHEMA_VERSION):
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _MIGRATIONS[step]:
                db.execute(statement)
            db.execute("UPDATE schema_version SET version = ?", (step + 1,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
