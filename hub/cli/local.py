"""`a2a-hub card` and `a2a-hub skills`: what these settings would serve, read without a
server."""

from __future__ import annotations

import argparse
import json
import sys

from hub.cli.outcome import OK, Running
from hub.cli.settings import command_settings
from hub.config import settle_default_skill
from hub.server.card import CardDocument, build_card, sign_card
from hub.skills import configured_skills

__all__ = ["card", "skills"]


def card(args: argparse.Namespace, running: Running) -> int:
    """Print the agent card the hub would serve with these settings, as JSON; with --url,
    the card the agent running there serves."""
    if args.url is not None:
        import anyio

        from hub.cli.direct import print_card

        running.url = args.url
        return anyio.run(print_card, args.url)
    if sys.stderr.isatty():
        # Whoever reads it at a terminal may take it for the running hub's.
        print(
            "a2a-hub: the card these settings would serve (a running hub's: "
            "`a2a-hub card --url URL`)",
            file=sys.stderr,
        )
    settings = command_settings(args)
    loaded = configured_skills(settings)
    settings = settle_default_skill(settings, list(loaded))
    built = sign_card(build_card(settings, [local.card for local in loaded.values()]), settings)
    print(json.dumps(json.loads(CardDocument.render(built).hybrid.body), indent=2))
    return OK


def skills(args: argparse.Namespace, running: Running) -> int:
    """List the skills the settings load, marking the default one."""
    settings = command_settings(args)
    loaded = configured_skills(settings)
    settings = settle_default_skill(settings, list(loaded))
    if args.json:
        listed = [
            {
                "id": local.skill_id,
                "name": local.card.name,
                "description": local.card.description,
                "tags": list(local.card.tags),
                "default": local.skill_id == settings.default_skill,
            }
            for local in loaded.values()
        ]
        print(json.dumps(listed, indent=2))
        return OK
    for local in loaded.values():
        tags = ", ".join(local.card.tags) or "-"
        default = "  (default)" if local.skill_id == settings.default_skill else ""
        print(f"{local.skill_id}{default}\n  {local.card.description}\n  tags: {tags}")
    return OK
