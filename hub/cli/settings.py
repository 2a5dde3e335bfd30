"""The settings a command reads: the file (`--config`, `$HUB_CONFIG` or config/hub.yaml) with
the command's own flags over it."""

from __future__ import annotations

import argparse
from typing import Any

from hub.config import Settings, load_settings

__all__ = ["command_settings"]


def command_settings(args: argparse.Namespace) -> Settings:
    """The settings for this command line: its flags win over the file's keys.

    Raises:
        ConfigError: the file, or a flag's value, is wrong.
    """
    overrides: dict[str, Any] = {}
    if getattr(args, "host", None):
        overrides["server.host"] = args.host
    if getattr(args, "port", None) is not None:
        overrides["server.port"] = args.port
    if getattr(args, "store", None):
        if args.store == "memory":
            overrides["store.kind"] = "memory"
        else:
            overrides["store.kind"] = "sqlite"
            overrides["store.path"] = args.store
    if getattr(args, "agents", None):
        overrides["agents"] = args.agents
    if getattr(args, "log_level", None):
        overrides["server.log_level"] = args.log_level
    return load_settings(args.config, overrides=overrides)
