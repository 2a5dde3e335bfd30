"""Settings: the models behind `config/hub.yaml`, and `load_settings()`.

Settings are strict: an unknown key or a wrong type is a start-up error that names the file,
the line and the key. Values can be overridden by `HUB_*` environment variables and by the
`a2a-hub serve` flags, in that order of precedence (flags win). `${NAME}` in a string value is
replaced by the environment variable NAME when the file is loaded.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hub.errors import ConfigError

__all__ = [
    "CardSettings",
    "LimitSettings",
    "ServerSettings",
    "Settings",
    "SkillRef",
    "StoreSettings",
    "load_settings",
    "load_yaml_model",
    "parse_duration",
    "parse_size",
]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
_SIZE = re.compile(r"^\s*(\d+)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "b": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
}
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def parse_duration(value: object) -> float:
    """Seconds from a number or a string such as `90`, `1.5s`, `30m`, `1h`, `2d`."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a string like '30s', '1h'")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if match is None:
            raise ValueError(f"{value!r} is not a duration; write e.g. 30s, 10m, 1h or 2d")
        seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if seconds <= 0:
        raise ValueError("a duration must be greater than zero")
    return seconds


def parse_size(value: object) -> int:
    """Bytes from a number or a string such as `65536`, `512KiB`, `1MiB`."""
    if isinstance(value, bool):
        raise ValueError("a size is a number of bytes or a string like '1MiB'")
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(str(value))
        if match is None:
            raise ValueError(f"{value!r} is not a size; write e.g. 65536, 512KiB or 1MiB")
        size = int(match.group(1)) * _SIZE_UNITS[(match.group(2) or "b").lower()]
    if size <= 0:
        raise ValueError("a size must be greater than zero")
    return size


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSettings(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    public_url: str | None = None
    """The URL clients use to reach the hub; defaults to http://host:port."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    accept_missing_version: bool = False
    """Treat a request with no A2A-Version on a 1.0 method name as 1.0 (the spec reads it as
    0.3 and refuses it with -32009)."""
    keepalive: float = 15.0
    """Seconds between keep-alive comments on an idle SSE stream."""

    @field_validator("keepalive", mode="before")
    @classmethod
    def _keepalive(cls, value: object) -> float:
        return parse_duration(value)

    def base_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")


class StoreSettings(_Strict):
    kind: Literal["sqlite", "memory"] = "sqlite"
    path: str = "var/hub.db"


class LimitSettings(_Strict):
    max_tasks: int = Field(default=1000, ge=1)
    """Live (not terminal) tasks at once."""
    max_contexts: int = Field(default=500, ge=1)
    """Distinct contexts among live tasks."""
    task_ttl: float = 3600.0
    """How long a terminal task is kept before it is deleted (seconds, or '1h')."""
    max_body: int = 1024 * 1024
    """Largest request body accepted (bytes, or '1MiB')."""
    max_parts: int = Field(default=64, ge=1)
    """Most parts in one message."""

    @field_validator("task_ttl", mode="before")
    @classmethod
    def _ttl(cls, value: object) -> float:
        return parse_duration(value)

    @field_validator("max_body", mode="before")
    @classmethod
    def _body(cls, value: object) -> int:
        return parse_size(value)


class ProviderSettings(_Strict):
    organization: str
    url: str


class CardSettings(_Strict):
    name: str = "a2a-hub"
    description: str = "An A2A hub: local skills, partner agents as tools, delegation and swarms."
    version: str = "0.1.0"
    provider: ProviderSettings | None = None
    documentation_url: str | None = None
    icon_url: str | None = None
    streaming: bool = True
    """Advertise and serve SendStreamingMessage and SubscribeToTask."""
    push_notifications: bool = False
    """Advertise push notifications (the hub refuses to start if it cannot serve them)."""
    extended_card: bool = False
    """Advertise an extended card (needs authentication; refused at start-up until configured)."""
    cache_max_age: int = Field(default=300, ge=0)
    """Seconds clients may cache the card (`Cache-Control: max-age`)."""


class SkillRef(_Strict):
    """One entry of `skills:`: exactly one of `builtin` or `module` (`package.module:function`)."""

    builtin: str | None = None
    module: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SkillRef:
        if (self.builtin is None) == (self.module is None):
            raise ValueError("a skill entry needs exactly one of 'builtin' or 'module'")
        if self.module is not None and ":" not in self.module:
            raise ValueError(
                f"module skill {self.module!r} must be written 'package.module:function'"
            )
        return self


class Settings(_Strict):
    server: ServerSettings = ServerSettings()
    store: StoreSettings = StoreSettings()
    agents: str = "agents.yaml"
    skills: list[SkillRef] = Field(default_factory=lambda: [SkillRef(builtin="echo")])
    default_skill: str = "echo"
    limits: LimitSettings = LimitSettings()
    card: CardSettings = CardSettings()


M = TypeVar("M", bound=BaseModel)


def _expand_env(node: Any, env: Mapping[str, str], where: str) -> Any:
    if isinstance(node, str):

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise ConfigError(f"{where}: environment variable {name} is not set")
            return env[name]

        return _ENV_REF.sub(replace, node)
    if isinstance(node, list):
        return [_expand_env(item, env, where) for item in node]
    if isinstance(node, dict):
        return {key: _expand_env(value, env, where) for key, value in node.items()}
    return node


def _line_of(root: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the key at `loc`, or of its nearest parent that exists."""
    node, line = root, None
    for step in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            pairs = [pair for pair in node.value if getattr(pair[0], "value", None) == step]
            if not pairs:
                break
            key_node, node = pairs[0]
            line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            node = node.value[step] if step < len(node.value) else None
            if node is not None:
                line = node.start_mark.line + 1
        else:
            break
    return line


def _known_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    current: Any = model
    for step in loc[:-1]:
        if isinstance(step, int):
            continue
        field = getattr(current, "model_fields", {}).get(step)
        if field is None:
            return []
        annotation = field.annotation
        for candidate in (annotation, *getattr(annotation, "__args__", ())):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                current = candidate
                break
    return list(getattr(current, "model_fields", {}))


def describe_validation_error(
    error: ValidationError, *, source: str, model: type[BaseModel], root: yaml.Node | None
) -> str:
    """One line per problem: `file:line: key: what is wrong (did you mean ...?)`."""
    lines = []
    for problem in error.errors():
        loc = tuple(problem["loc"])
        key = ".".join(str(step) for step in loc) or "(top level)"
        line = _line_of(root, loc)
        where = f"{source}:{line}" if line else source
        if problem["type"] == "extra_forbidden" and loc:
            known = _known_keys(model, loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            lines.append(f"{where}: unknown key '{key}'{hint} (known: {', '.join(known)})")
        else:
            lines.append(f"{where}: {key}: {problem['msg']}")
    return "\n".join(lines)


def load_yaml_model(
    path: Path, model: type[M], *, env: Mapping[str, str], overrides: Mapping[str, Any] = {}
) -> M:
    """Read a YAML file into a strict model, with `${ENV}` expansion and line-accurate errors.

    Args:
        path: the YAML file.
        model: the pydantic model the document must match.
        env: where `${NAME}` references are looked up.
        overrides: dotted keys (`server.port`) set after the file is read.

    Raises:
        ConfigError: the file is missing, is not YAML, or does not match the model.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc.strerror})") from None
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys to values")
    data = _expand_env(data, env, str(path))
    for dotted, value in overrides.items():
        _set_dotted(data, dotted, value)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        message = describe_validation_error(exc, source=str(path), model=model, root=root)
        raise ConfigError(message) from None


def _set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = data
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[leaf] = value


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    """`HUB_SECTION__KEY=value` becomes `section.key`; a few short names are kept for ease."""
    short = {
        "HUB_HOST": "server.host",
        "HUB_PORT": "server.port",
        "HUB_PUBLIC_URL": "server.public_url",
        "HUB_LOG_LEVEL": "server.log_level",
        "HUB_STORE": "store.path",
        "HUB_STORE_KIND": "store.kind",
        "HUB_AGENTS": "agents",
    }
    overrides: dict[str, Any] = {}
    for name, value in env.items():
        if name in short:
            overrides[short[name]] = value
        elif name.startswith("HUB_") and "__" in name:
            overrides[name[4:].lower().replace("__", ".")] = value
    return overrides


def load_settings(
    path: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings from `path` (default `config/hub.yaml`, or `$HUB_CONFIG`), env and flags.

    A missing default file gives the embedded defaults; a missing named file is an error.

    Raises:
        ConfigError: the file or an override is wrong; the message names file, line and key.
    """
    env = os.environ if env is None else env
    combined = {**_env_overrides(env), **(overrides or {})}
    if path is None:
        path = env.get("HUB_CONFIG")
    if path is None and not Path("config/hub.yaml").exists():
        data: dict[str, Any] = {}
        for dotted, value in combined.items():
            _set_dotted(data, dotted, value)
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            message = describe_validation_error(exc, source="settings", model=Settings, root=None)
            raise ConfigError(message) from None
    return load_yaml_model(Path(path or "config/hub.yaml"), Settings, env=env, overrides=combined)
