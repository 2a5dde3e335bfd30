"""Text search of a task's messages, as every store answers it: what text a task is searched
by, and which searches are accepted.

A search matches the tasks whose messages (the history and the current status message)
contain the searched text, ignoring case: a substring, not words, so "voic" finds "invoice".
The SQL stores index that text by trigrams (SQLite's FTS5 `trigram` tokenizer, PostgreSQL's
`pg_trgm`), built by their own triggers from the task's wire JSON; the in-memory store compares
strings. A trigram index cannot look up fewer than three characters, so shorter searches are
refused rather than answered by reading every task.
"""

from __future__ import annotations

from hub.errors import InvalidParamsError
from hub.protocol import Task

__all__ = ["MAX_SEARCH", "MIN_SEARCH", "check_search", "message_text", "search_text"]

MIN_SEARCH = 3
"""The fewest characters a search holds (a trigram)."""

MAX_SEARCH = 200
"""The most characters a search holds."""


def message_text(task: Task) -> str:
    """The text a task is searched by: its messages' text parts, one per line, the history's
    first and the status message last (the SQL stores' triggers take the same parts)."""
    messages = [*(task.history or []), *([task.status.message] if task.status.message else [])]
    return "\n".join(
        part.text for message in messages for part in message.parts if part.text is not None
    )


def search_text(task: Task) -> str:
    """What the SQL stores keep in a task's `search_text` column and index: its
    `message_text`, each NUL as U+2400 (PostgreSQL's text holds no NUL)."""
    return message_text(task).replace("\x00", "\u2400")


def check_search(text: str) -> str:
    """`text`, if it is a search the stores answer.

    Raises:
        InvalidParamsError: the text is shorter than `MIN_SEARCH` or longer than `MAX_SEARCH`
            characters.
    """
    if len(text) < MIN_SEARCH:
        raise InvalidParamsError(
            f"a text search needs at least {MIN_SEARCH} characters (got {text!r})",
            violations=[("text", f"fewer than {MIN_SEARCH} characters")],
        )
    if len(text) > MAX_SEARCH:
        raise InvalidParamsError(
            f"a text search holds at most {MAX_SEARCH} characters (got {len(text)})",
            violations=[("text", f"more than {MAX_SEARCH} characters")],
        )
    return text
