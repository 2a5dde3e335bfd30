"""What the console's pages share, built once by `build_console` and kept in the app's state."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from hub.console.memo import Memo
from hub.console.partner_board import PartnerBoard
from hub.console.session import Sessions
from hub.console.traffic import TrafficSource
from hub.protocol import AgentSkill, utc_now
from hub.store import TaskStore

__all__ = ["ConsoleState"]


@dataclass(slots=True, kw_only=True)
class ConsoleState:
    """The console's own state (the hub's operations are in `HubState`).

    Attributes:
        path: where the console is served (`ui.path`).
        auth_enabled: whether visitors must give a credential.
        secure_cookie: whether the session cookie is sent over HTTPS only.
        store: the task store (the delegation ledger's lines are read from it).
        skills: the local skills' card entries, by id.
        traffic: requests per second and error rate, once the hub measures them.
    """

    path: str
    auth_enabled: bool
    secure_cookie: bool
    store: TaskStore
    skills: Mapping[str, AgentSkill]
    traffic: TrafficSource | None = None
    skill_models: Mapping[str, str] = field(default_factory=dict)
    """The entry of `models:` each orchestrator skill uses, by skill id."""
    sessions: Sessions = field(default_factory=Sessions)
    board: PartnerBoard = field(default_factory=PartnerBoard)
    counts: Memo = field(default_factory=lambda: Memo(1.0))
    """What several open pages read at once (the overview's live task counts), by scope."""
    drawn: Memo = field(default_factory=lambda: Memo(60.0))
    """What several open pages draw alike (the overview's charts), by scope and version."""
    started: float = field(default_factory=time.monotonic)
    started_at: datetime = field(default_factory=utc_now)
