"""`load_registry()`: `agents.yaml` into a `Registry`, every mistake named by file, line and key.

Besides the models' own rules, two are checked on the file as written, before `${NAME}`
references are expanded: secrets must be references (a literal token in a file tends to end
up in version control), and agent names must be unique (the message gives both lines).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from hub.config import Settings, describe_validation_error, load_yaml_model
from hub.errors import ConfigError
from hub.registry.models import AgentsFile, same_name_key
from hub.registry.registry import Registry

__all__ = ["DEFAULT_AGENTS", "load_registry", "registry_for"]

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NON_ENV_CHARS = re.compile(r"[^A-Z0-9]+")

_Loc = tuple[int | str, ...]


def load_registry(
    path: str | Path, *, env: Mapping[str, str] | None = None, missing_ok: bool = False
) -> Registry:
    """Read and validate an `agents.yaml` file.

    Args:
        path: the file.
        env: where `${NAME}` references are looked up (default: the process environment).
        missing_ok: a missing file gives an empty registry instead of an error.

    Raises:
        ConfigError: the file cannot be read, is not YAML, or breaks a rule; the message has
            one `FILE:LINE: key: what is wrong` line per problem, and never a secret.
    """
    path = Path(path)
    env = os.environ if env is None else env
    if missing_ok and not path.exists():
        return Registry(source=path)
    check = partial(_check_as_written, source=str(path), env=env)
    try:
        document = load_yaml_model(path, AgentsFile, env=env, check_raw=check)
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text") from None
    return Registry(document.agents, source=path)


def _check_as_written(
    data: dict[str, Any], root: yaml.Node | None, *, source: str, env: Mapping[str, str]
) -> None:
    problems: list[InitErrorDetails] = []

    def report(loc: _Loc, kind: str, message: str) -> None:
        problems.append({"type": PydanticCustomError(kind, message), "loc": loc, "input": None})

    if "version" not in data:
        report(("version",), "missing", "missing; start the file with 'version: 1'")
    agents = data.get("agents")
    entries = list(enumerate(agents)) if isinstance(agents, list) else []
    where: dict[str, list[tuple[int, str]]] = {}
    for index, entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            where.setdefault(same_name_key(entry["name"]), []).append((index, entry["name"]))
    for named in where.values():
        for index, name in named if len(named) > 1 else ():
            others = " and ".join(
                f"agents.{other}" + ("" if other_name == name else f" ('{other_name}')")
                for other, other_name in named
                if other != index
            )
            alike = any(other_name != name for _, other_name in named)
            report(
                ("agents", index, "name"),
                "agent_name_twice",
                f"the agent name '{name}' is also used by {others}; names must be unique"
                + (" ('-' and '_' count as the same: both are '_' in tool names)" if alike else ""),
            )
    for index, entry in entries:
        if not isinstance(entry, dict):
            continue
        for key, value, suggestion in _secrets(entry):
            loc: _Loc = ("agents", index, *key)
            match = _REFERENCE.fullmatch(value) if isinstance(value, str) else None
            if match is None:
                report(
                    loc,
                    "secret_literal",
                    f'write the secret as an environment reference such as "${{{suggestion}}}", '
                    "not literally",
                )
            elif match.group(1) not in env:
                report(loc, "env_missing", f"environment variable {match.group(1)} is not set")
    if problems:
        error = ValidationError.from_exception_data(AgentsFile.__name__, problems)
        message = describe_validation_error(error, source=source, model=AgentsFile, root=root)
        raise ConfigError(message)


def _secrets(entry: dict[Any, Any]) -> Iterator[tuple[_Loc, object, str]]:
    """Each secret of an entry (its `auth`, and its token endpoints' client secrets): where
    it is, its value as written, and an environment variable name to suggest for it."""
    agent = entry.get("name")
    prefix = _env_name(agent) if isinstance(agent, str) else "AGENT"
    auth = entry.get("auth")
    if isinstance(auth, dict):
        for key, suffix in (("bearer", "TOKEN"), ("api_key", "API_KEY")):
            if auth.get(key) is not None:
                yield ("auth", key), auth[key], f"{prefix}_{suffix}"
        headers = auth.get("headers")
        if isinstance(headers, dict):
            for name, value in headers.items():
                if value is not None:
                    yield ("auth", "headers", str(name)), value, f"{prefix}_{_env_name(str(name))}"
    on_behalf = entry.get("on_behalf")
    clients = (
        (("auth", "oauth2"), auth.get("oauth2") if isinstance(auth, dict) else None, "CLIENT"),
        (
            ("on_behalf", "token_exchange"),
            on_behalf.get("token_exchange") if isinstance(on_behalf, dict) else None,
            "EXCHANGE",
        ),
    )
    for where, client, suffix in clients:
        if isinstance(client, dict) and client.get("client_secret") is not None:
            yield (*where, "client_secret"), client["client_secret"], f"{prefix}_{suffix}_SECRET"


def _env_name(text: str) -> str:
    return _NON_ENV_CHARS.sub("_", text.upper()).strip("_") or "AGENT"


DEFAULT_AGENTS = "agents.yaml"


def registry_for(
    settings: Settings, agents: str | Path | None = None, *, env: Mapping[str, str] | None = None
) -> Registry:
    """The registry of `agents` (a path), or of the file the settings name.

    A missing `agents.yaml` at its default place is an empty registry; a file named on
    purpose that is missing is an error.

    Raises:
        ConfigError: the file is wrong (the message names file, line and key).
    """
    path = Path(agents) if agents is not None else Path(settings.agents)
    default = agents is None and settings.agents == DEFAULT_AGENTS
    return load_registry(path, env=env, missing_ok=default)
