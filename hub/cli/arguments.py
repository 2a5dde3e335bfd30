"""The values the `a2a-hub` parser checks: bounded numbers, agent URLs (and the older
positional spelling of `--url`), `KEY=VALUE` pairs and HTTP headers."""

from __future__ import annotations

import argparse
from typing import Any

from hub.protocol.requests import MAX_PAGE_SIZE

__all__ = [
    "HUB_URL_HELP",
    "PAGE_SIZE",
    "PORT",
    "POSITIVE",
    "SECONDS",
    "UrlWord",
    "agent_url",
    "bounded",
    "header",
    "key_value",
    "url_word",
]


def bounded(kind: type[int] | type[float], low: float, high: float | None = None) -> Any:
    """An argparse type: a number of `kind` between `low` and `high` (no upper bound if None)."""
    allowed = f"from {low:g} to {high:g}" if high is not None else f"{low:g} or more"
    name = "an integer" if kind is int else "a number"

    def convert(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {name} ({allowed})") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range ({allowed})")
        return value

    convert.__name__ = kind.__name__
    return convert


class UrlWord(argparse.Action):
    """The URL given as a positional word, the older spelling of `--url URL`: sets `url`
    when given, and leaves it alone when not (so an absent word keeps the option's value)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values is None:
            return
        if getattr(namespace, "url", None) is not None:
            parser.error(f"the URL is given twice ({namespace.url} and {values}); give it once")
        namespace.url = values


def url_word(command: argparse.ArgumentParser, help: str) -> None:
    """The positional spelling of --url (`send URL TEXT`, `status URL`), kept as an alias."""
    command.add_argument(
        "url_word",
        nargs="?",
        type=agent_url,
        metavar="URL",
        action=UrlWord,
        help=help,
    )


HUB_URL_HELP = "the hub's URL (default: server.public_url)"


def agent_url(text: str) -> str:
    """An argparse type: an http(s) URL; a bare `host:port` gets a "did you mean" hint."""
    if text.startswith(("http://", "https://")):
        return text
    if "://" in text:
        raise argparse.ArgumentTypeError(f"{text!r}: only http:// and https:// URLs are served")
    raise argparse.ArgumentTypeError(f"{text!r} has no scheme; did you mean http://{text}?")


def key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not 'Name: value'")
    return name.strip(), value.strip()


PORT = bounded(int, 0, 65535)
PAGE_SIZE = bounded(int, 1, MAX_PAGE_SIZE)
POSITIVE = bounded(int, 1)
SECONDS = bounded(float, 0.001)
