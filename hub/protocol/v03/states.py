"""The 0.3 role and task state names: a module of their own, light enough for the
translation tables to be built without loading the 0.3 models."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Role", "TaskState"]


class Role(StrEnum):
    USER = "user"
    AGENT = "agent"


class TaskState(StrEnum):
    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    REJECTED = "rejected"
    AUTH_REQUIRED = "auth-required"
    UNKNOWN = "unknown"
