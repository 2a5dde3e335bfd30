"""The models behind `config/hub.yaml`: strict (an unknown key is an error) and frozen."""

from __future__ import annotations

import re
from typing import ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, JsonValue, field_validator, model_validator

from hub.config.base import SkillEntrySettings, StrictModel
from hub.config.models import ModelSettings, OrchestratorSettings
from hub.config.security import AuthSettings, CorsSettings, FederationSettings, PushSettings
from hub.config.swarm import SwarmSettings
from hub.config.telemetry import TelemetrySettings
from hub.config.values import parse_duration, parse_size

__all__ = [
    "CardSettings",
    "CardSigningSettings",
    "ExtensionSettings",
    "GrpcSettings",
    "GrpcTlsSettings",
    "LimitSettings",
    "McpSettings",
    "ProcessSkillSettings",
    "ProviderSettings",
    "ServerSettings",
    "Settings",
    "SkillRef",
    "StoreSettings",
    "UiSettings",
]


class GrpcTlsSettings(StrictModel):
    """TLS on the gRPC door: the server's certificate chain and key (PEM files), and with
    `client_ca_file` mutual TLS (a client must present a certificate that CA signed)."""

    cert_file: str
    key_file: str
    client_ca_file: str | None = None


class GrpcSettings(StrictModel):
    """The gRPC door (`server.grpc`): A2A 1.0's `lf.a2a.v1.A2AService`, served beside the
    HTTP doors in the same process (docs/grpc.md). Needs the `grpc` extra."""

    enabled: bool = False
    host: str | None = None
    """The address to listen on; `server.host` when left out."""
    port: int = Field(default=50051, ge=1, le=65535)
    public_address: str | None = None
    """The `host:port` the card gives gRPC clients; defaults to the host of
    `server.public_url` (or the listening host) with `port`."""
    tls: GrpcTlsSettings | None = None
    """Serve over TLS (production); plaintext when left out."""


class ServerSettings(StrictModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    public_url: str | None = None
    """The URL clients use to reach the hub; defaults to http://host:port."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["text", "json"] = "text"
    """`json`: one JSON object per line, with the `trace_id` and `span_id` of the work that
    logged it (uvicorn's own lines too)."""
    accept_missing_version: bool = False
    """Treat a request with no A2A-Version on a 1.0 method name as 1.0 (the spec reads it as
    0.3 and refuses it with -32009)."""
    keepalive: float = 15.0
    """Seconds between keep-alive comments on an idle SSE stream."""
    max_hops: int = Field(default=8, ge=1)
    """Most hubs a request may have gone through before this one (longer trails are
    refused, as are loops)."""
    header_timeout: float = Field(default=10.0, le=300.0)
    """Seconds a connection has to deliver a request's headers (from when it opens, or from
    the first byte of a further request on a kept-alive connection); then it is closed."""
    idle_timeout: float = Field(default=5.0, le=3600.0)
    """Seconds a kept-alive connection may sit idle between requests before it is closed."""
    max_connections: int = Field(default=1000, ge=1, le=1_000_000)
    """Connections served at once, counted once a connection's first request headers are in;
    one more is answered 503 and closed."""
    max_pending_connections: int = Field(default=1000, ge=1, le=1_000_000)
    """Connections still sending their first request's headers, every address together;
    past it a new one closes the one that has waited longest (of its own address first)."""
    max_pending_per_address: int = Field(default=100, ge=1, le=1_000_000)
    """The same, from one client address (an IPv6 /64); past it a new one closes that
    address's longest-waiting one."""
    grpc: GrpcSettings = GrpcSettings()
    """The gRPC door: off unless enabled."""

    @field_validator("keepalive", "header_timeout", "idle_timeout", mode="before")
    @classmethod
    def _duration(cls, value: object) -> float:
        return parse_duration(value)

    def base_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    def grpc_listen(self) -> str:
        """The `host:port` the gRPC door listens on."""
        return _host_port(self.grpc.host or self.host, self.grpc.port)

    def grpc_address(self) -> str:
        """The `host:port` the card names for the gRPC door (§5.8: no scheme)."""
        if self.grpc.public_address:
            return self.grpc.public_address
        host = urlsplit(self.public_url).hostname if self.public_url else None
        return _host_port(host or self.grpc.host or self.host, self.grpc.port)


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


class StoreSettings(StrictModel):
    kind: Literal["sqlite", "postgres", "memory"] = "sqlite"
    path: str = "var/hub.db"
    """The SQLite file (kind sqlite)."""
    dsn: str = ""
    """The PostgreSQL connection URI (kind postgres), e.g. "${HUB_DATABASE_URL}"."""
    pool_size: int = Field(default=10, ge=1, le=1000)
    """Most connections to PostgreSQL the hub keeps open."""
    lease: float = Field(default=15.0, gt=0)
    """PostgreSQL: how long a replica's hold on a running task lasts unless renewed (a third
    of it apart); a replica silent for longer has its running tasks taken over (seconds, or
    '15s')."""

    @field_validator("lease", mode="before")
    @classmethod
    def _lease(cls, value: object) -> float:
        return parse_duration(value)


class LimitSettings(StrictModel):
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
    max_part_bytes: int = 512 * 1024
    """Largest single part: its text, data (as JSON) or inline file bytes (bytes, or '512KiB')."""
    max_history: int = Field(default=200, ge=1)
    """Most messages in one task's history (a task that would grow past it is refused more)."""
    max_streams_per_caller: int = Field(default=32, ge=1)
    """Open SSE streams (SendStreamingMessage, SubscribeToTask) per caller at once."""
    requests_per_second: float = Field(default=100.0, ge=0)
    """Sustained requests per second per credential (a token bucket); 0 for no limit."""
    burst: int = Field(default=200, ge=1)
    """Requests a caller may send at once above the sustained rate."""
    per_address: bool = False
    """With auth off, hold each client address to `requests_per_second` too (off by default:
    one address may be a proxy, a load balancer or another hub speaking for many)."""

    @field_validator("task_ttl", mode="before")
    @classmethod
    def _ttl(cls, value: object) -> float:
        return parse_duration(value)

    @field_validator("max_body", "max_part_bytes", mode="before")
    @classmethod
    def _size(cls, value: object) -> int:
        return parse_size(value)


class ProviderSettings(StrictModel):
    organization: str
    url: str


class ExtensionSettings(StrictModel):
    """An A2A extension the hub declares in its card's `capabilities.extensions`.

    See docs/configuration.md ("Extensions") for how `required` and `skills` are enforced.
    """

    _URI: ClassVar[re.Pattern[str]] = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s,]+$")

    uri: str
    """The extension's URI, which clients list in their `A2A-Extensions` header."""
    description: str | None = None
    """How this hub uses the extension, shown in the card."""
    required: bool = False
    """Refuse requests that do not list the extension (ExtensionSupportRequiredError)."""
    params: dict[str, JsonValue] | None = None
    """The extension's own settings, a JSON object carried in the card as they are."""
    skills: tuple[str, ...] = ()
    """Skill ids: when given, `required` holds only for messages to these skills."""

    @field_validator("uri")
    @classmethod
    def _uri(cls, uri: str) -> str:
        if not cls._URI.match(uri):
            raise ValueError(
                f"extension uri {uri!r} must be an absolute URI with no spaces or commas "
                "(clients list it in the comma-separated A2A-Extensions header), e.g. "
                "https://example.com/extensions/citations/v1"
            )
        return uri


class CardSigningSettings(StrictModel):
    """The key the hub signs its card with (A2A 1.0 `signatures`; needs the `identity` extra)."""

    key_file: str
    """A private key: PEM (PKCS#8 or the traditional form, unencrypted) or a JWK in JSON."""
    kid: str | None = None
    """The key id in the signature's header; default: the JWK's own `kid`, else its RFC 7638
    thumbprint."""
    alg: (
        Literal[
            "ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"
        ]
        | None
    ) = None
    """The JWS algorithm; default: from the key (ES256 for P-256, ES384, ES512, RS256 for RSA,
    EdDSA for Ed25519)."""


class CardSettings(StrictModel):
    name: str = "a2a-hub"
    description: str = "An A2A hub: local skills, partner agents as tools, delegation and swarms."
    version: str = "0.1.0"
    provider: ProviderSettings | None = None
    documentation_url: str | None = None
    icon_url: str | None = None
    streaming: bool = True
    """Advertise and serve SendStreamingMessage and SubscribeToTask."""
    push_notifications: bool = True
    """Advertise and serve push notifications (the `push` settings shape their delivery)."""
    extended_card: bool = False
    """Advertise an extended card (needs authentication; refused at start-up until configured)."""
    cache_max_age: int = Field(default=300, ge=0)
    """Seconds clients may cache the card (`Cache-Control: max-age`)."""
    hybrid: bool = True
    """Add the 0.3 top-level fields to the card for requests that do not ask for 1.0
    (`A2A-Version: 1.x`); false serves the pure 1.0 card to every request."""
    extensions: tuple[ExtensionSettings, ...] = ()
    """The A2A extensions the hub declares (and may require)."""
    signing: CardSigningSettings | None = None
    """Sign the card (a detached JWS over its RFC 8785 canonical form) with this key."""

    @field_validator("extensions")
    @classmethod
    def _distinct_uris(
        cls, extensions: tuple[ExtensionSettings, ...]
    ) -> tuple[ExtensionSettings, ...]:
        seen: set[str] = set()
        for extension in extensions:
            if extension.uri in seen:
                raise ValueError(
                    f"extension {extension.uri!r} is declared twice; declare each uri once "
                    "(list every skill that requires it under its 'skills')"
                )
            seen.add(extension.uri)
        return extensions


class ProcessSkillSettings(SkillEntrySettings):
    """A command-line program served as a skill: one run of `command` per task.

    See docs/skills.md ("Process skills") for the output line format and the stdin protocol.
    """

    PLACEHOLDERS: ClassVar[tuple[str, ...]] = ("text", "task_id", "context_id", "data")
    _PLACEHOLDER: ClassVar[re.Pattern[str]] = re.compile(r"\{([a-z_]+)\}")

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


class SkillRef(StrictModel):
    """One entry of `skills:`: exactly one of `builtin`, `module` (`package.module:function`),
    `process` (a command-line program) or `orchestrator` (a language model with tools)."""

    builtin: str | None = None
    module: str | None = None
    process: ProcessSkillSettings | None = None
    orchestrator: OrchestratorSettings | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SkillRef:
        given = [self.builtin, self.module, self.process, self.orchestrator]
        if sum(value is not None for value in given) != 1:
            raise ValueError(
                "a skill entry needs exactly one of 'builtin', 'module', 'process' or "
                "'orchestrator'"
            )
        if self.module is not None and ":" not in self.module:
            raise ValueError(
                f"module skill {self.module!r} must be written 'package.module:function'"
            )
        return self


class UiSettings(StrictModel):
    """The console: web pages served by the hub on its own port (docs/console.md)."""

    _RESERVED: ClassVar[tuple[str, ...]] = (
        "/tasks",
        "/agents",
        "/message:send",
        "/message:stream",
        "/extendedAgentCard",
        "/healthz",
        "/readyz",
        "/metrics",
        "/status",
        "/admin",
        "/mcp",
        "/.well-known",
    )

    enabled: bool = True
    """Serve the console."""
    path: str = "/ui"
    """Where it is served: a path of its own, e.g. /ui or /console."""
    trace_url: str = ""
    """A task's trace in the operator's tracing UI: an http or https URL with `{trace_id}`
    where the trace id goes (Jaeger: `http://jaeger:16686/trace/{trace_id}`). "" shows no
    link."""

    @field_validator("path")
    @classmethod
    def _path(cls, path: str) -> str:
        if not re.fullmatch(r"(/[A-Za-z0-9_.~-]+)+", path):
            raise ValueError(
                f"ui.path {path!r} must be an absolute path of plain segments with no "
                "trailing slash, e.g. /ui"
            )
        taken = [route for route in cls._RESERVED if path == route or path.startswith(route + "/")]
        if taken:
            raise ValueError(f"ui.path {path!r} is where the hub serves {taken[0]}; choose another")
        return path

    @field_validator("trace_url")
    @classmethod
    def _trace_url(cls, url: str) -> str:
        if not url:
            return url
        if "{trace_id}" not in url:
            raise ValueError(
                f"ui.trace_url {url!r} must hold {{trace_id}} where the trace id goes, e.g. "
                "http://jaeger:16686/trace/{trace_id}"
            )
        if not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"ui.trace_url {url!r} must be an http:// or https:// URL")
        return url

    def trace_link(self, trace_id: str) -> str:
        """The link to the trace `trace_id` ("" when no `trace_url` is set or no trace id is
        known)."""
        if not (self.trace_url and trace_id):
            return ""
        return self.trace_url.replace("{trace_id}", trace_id)


class McpSettings(StrictModel):
    enabled: bool = True
    """Serve the hub's tools over MCP at `/mcp` (needs the `mcp` extra installed)."""
    allowed_hosts: tuple[str, ...] = ()
    """More `Host` header values `/mcp` accepts (`name` or `name:port`, `name:*` for any
    port), besides the server's own host and public URL: DNS-rebinding protection refuses
    the others."""


class Settings(StrictModel):
    server: ServerSettings = ServerSettings()
    store: StoreSettings = StoreSettings()
    agents: str = "agents.yaml"
    models: dict[str, ModelSettings] = Field(default_factory=dict)
    """Language models by name, for the orchestrator skills (docs/orchestrator.md)."""
    skills: list[SkillRef] = Field(default_factory=lambda: [SkillRef(builtin="echo")])
    default_skill: str = "echo"
    limits: LimitSettings = LimitSettings()
    card: CardSettings = CardSettings()
    auth: AuthSettings = AuthSettings()
    push: PushSettings = PushSettings()
    cors: CorsSettings = CorsSettings()
    federation: FederationSettings = FederationSettings()
    swarm: SwarmSettings = SwarmSettings()
    ui: UiSettings = UiSettings()
    mcp: McpSettings = McpSettings()
    telemetry: TelemetrySettings = TelemetrySettings()
