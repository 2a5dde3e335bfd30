"""`StrictModel`: the base of every model read from a settings file."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["StrictModel"]


class StrictModel(BaseModel):
    """An unknown key is an error (reported with a suggestion), and values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)
