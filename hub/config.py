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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hub.errors import ConfigError

__all__ = [
    "CardSettings",
    "LimitSettings",
    "ProcessSkillSettings",
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
    if not seconds > 0:  # also refuses NaN (YAML .nan)
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


class ProcessSkillSettings(_Strict):
    """A command-line program served as a skill: one run of `command` per task.

    See docs/skills.md ("Process skills") for the output line format and the stdin protocol.
    """

    PLACEHOLDERS: ClassVar[tuple[str, ...]] = ("text", "task_id", "context_id", "data")
    _PLACEHOLDER: ClassVar[re.Pattern[str]] = re.compile(r"\{([a-z_]+)\}")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """The skill id in the card and in `metadata.skill`."""
    name: str | None = None
    """A human name (default: the id)."""
    description: str
    """What the skill does, shown in the card."""
    tags: tuple[str, ...] = ()
    """Keywords for routing."""
    examples: tuple[str, ...] = ()
    """Example prompts."""
    command: tuple[str, ...] = Field(min_length=1)
    """The program and its arguments, run without a shell. `{text}`, `{task_id}`,
    `{context_id}` and `{data}` in an argument are replaced by the message text, the ids and
    the JSON array of the message's data values; the result is always that one argument."""
    cwd: str | None = None
    """Working directory of the program (relative to the hub's); default: the hub's."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the hub's environment for the program (`${NAME}` is expanded)."""
    output: Literal["jsonl", "text"] = "jsonl"
    """`jsonl`: one JSON event per stdout line; `text`: every line is response text."""
    timeout: float = 600.0
    """Longest run, in seconds or as '10m' (time parked in input-required does not count)."""
    idle_timeout: float | None = None
    """Longest time without a line of output (default: no limit)."""
    approval: Literal["input-required", "auto-approve", "deny"] = "input-required"
    """What an `approval_required` event does: ask the caller, answer yes, or answer no."""
    max_concurrent: int = Field(default=1, ge=1)
    """Runs of this skill at once; more tasks wait in TASK_STATE_SUBMITTED."""
    max_queue: int = Field(default=16, ge=0)
    """Tasks that may wait for a run; one more is rejected."""
    grace: float = 5.0
    """Seconds between SIGTERM and SIGKILL when a run is stopped."""

    @field_validator("timeout", "grace", mode="before")
    @classmethod
    def _duration(cls, value: object) -> float:
        return parse_duration(value)

    @field_validator("idle_timeout", mode="before")
    @classmethod
    def _optional_duration(cls, value: object) -> float | None:
        return None if value is None else parse_duration(value)

    @field_validator("command")
    @classmethod
    def _command(cls, command: tuple[str, ...]) -> tuple[str, ...]:
        if not command[0]:
            raise ValueError("the program (the first element of command) is empty")
        if cls._PLACEHOLDER.search(command[0]):
            # A templated program name would let a message choose what runs.
            raise ValueError("the program (the first element of command) cannot be templated")
        for argument in command[1:]:
            for name in cls._PLACEHOLDER.findall(argument):
                if name not in cls.PLACEHOLDERS:
                    known = ", ".join(f"{{{known}}}" for known in cls.PLACEHOLDERS)
                    raise ValueError(f"unknown placeholder {{{name}}} (known: {known})")
        return command


class SkillRef(_Strict):
    """One entry of `skills:`: exactly one of `builtin`, `module` (`package.module:function`)
    or `process` (a command-line program)."""

    builtin: str | None = None
    module: str | None = None
    process: ProcessSkillSettings | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SkillRef:
        given = [self.builtin, self.module, self.process]
        if sum(value is not None for value in given) != 1:
            raise ValueError("a skill entry needs exactly one of 'builtin', 'module' or 'process'")
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
    error: ValidationError,
    *,
    source: str,
    model: type[BaseModel],
    root: yaml.Node | None,
    origins: Mapping[str, str] = {},
) -> str:
    """One line per problem: `file:line: key: what is wrong (did you mean ...?)`.

    A key set by an override is reported under the override's name (`origins` maps a dotted
    key to it, e.g. `server.port` -> `HUB_PORT`), not under a line of the file.
    """
    lines = []
    for problem in error.errors():
        loc = tuple(problem["loc"])
        key = ".".join(str(step) for step in loc) or "(top level)"
        origin = next(
            (
                name
                for dotted, name in origins.items()
                if key == dotted or key.startswith(dotted + ".")
            ),
            None,
        )
        line = _line_of(root, loc)
        where = origin or (f"{source}:{line}" if line else source)
        if problem["type"] == "extra_forbidden" and loc:
            known = _known_keys(model, loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            lines.append(f"{where}: unknown key '{key}'{hint} (known: {', '.join(known)})")
        else:
            lines.append(f"{where}: {key}: {problem['msg']}")
    return "\n".join(lines)


def load_yaml_model(
    path: Path,
    model: type[M],
    *,
    env: Mapping[str, str],
    overrides: Mapping[str, Any] = {},
    origins: Mapping[str, str] = {},
    check_raw: Callable[[dict[str, Any], yaml.Node | None], None] | None = None,
) -> M:
    """Read a YAML file into a strict model, with `${ENV}` expansion and line-accurate errors.

    Args:
        path: the YAML file.
        model: the pydantic model the document must match.
        env: where `${NAME}` references are looked up.
        overrides: dotted keys (`server.port`) set after the file is read.
        origins: where each override came from, for error messages (`HUB_PORT`, `--port`).
        check_raw: called with the document as written (before `${NAME}` expansion) and its
            YAML node tree, for rules about the text itself (such as secrets written only as
            references); it raises ConfigError.

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
    if check_raw is not None:
        check_raw(data, root)
    data = _expand_env(data, env, str(path))
    for dotted, value in overrides.items():
        _set_dotted(data, dotted, value)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        message = describe_validation_error(
            exc, source=str(path), model=model, root=root, origins=origins
        )
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


def _env_overrides(env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """`HUB_SECTION__KEY=value` becomes `section.key`; a few short names are kept for ease.

    Returns:
        The overrides by dotted key, and the variable each came from.
    """
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
    origins: dict[str, str] = {}
    for name, value in env.items():
        if name in short:
            dotted = short[name]
        elif name.startswith("HUB_") and "__" in name:
            dotted = name[4:].lower().replace("__", ".")
        else:
            continue
        overrides[dotted] = value
        origins[dotted] = f"environment variable {name}"
    return overrides, origins


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
    from_env, origins = _env_overrides(env)
    combined = {**from_env, **(overrides or {})}
    origins.update({dotted: f"the override of {dotted}" for dotted in overrides or {}})
    if path is None:
        path = env.get("HUB_CONFIG")
    if path is None and not Path("config/hub.yaml").exists():
        data: dict[str, Any] = {}
        for dotted, value in combined.items():
            _set_dotted(data, dotted, value)
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            message = describe_validation_error(
                exc, source="settings", model=Settings, root=None, origins=origins
            )
            raise ConfigError(message) from None
    return load_yaml_model(
        Path(path or "config/hub.yaml"), Settings, env=env, overrides=combined, origins=origins
    )
