"""The hub's own agent: an orchestrator skill, a language model that uses the hub's tools.

`skill.py` is the skill (`Orchestrator`, `orchestrator(...)`); `plan.py` one turn of its work,
step by step; `calls.py` the tool calls of a step; `toolset.py` the tools a plan may call,
within its caller's reach; `journal.py` what a plan has done, kept in the store so it
survives its hub, and the conversation kept per context. The model itself is reached through
`hub.llm`.
"""

from hub.orchestrator.journal import Journal, StepRecord, plan_record
from hub.orchestrator.plan import PLAN_KEY, LimitReached, Plan
from hub.orchestrator.skill import Orchestrator, from_settings, orchestrator
from hub.orchestrator.toolset import ASK_USER, Toolset

__all__ = [
    "ASK_USER",
    "PLAN_KEY",
    "Journal",
    "LimitReached",
    "Orchestrator",
    "Plan",
    "StepRecord",
    "Toolset",
    "from_settings",
    "orchestrator",
    "plan_record",
]
