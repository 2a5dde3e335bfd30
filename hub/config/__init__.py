"""Settings: the models behind `config/hub.yaml`, and `load_settings()`.

Settings are strict: an unknown key or a wrong type is a start-up error that names the file,
the line and the key. Values can be overridden by `HUB_*` environment variables and by the
`a2a-hub serve` flags, in that order of precedence (flags win). `${NAME}` in a string value is
replaced by the environment variable NAME when the file is loaded.
"""

from hub.config.base import StrictModel
from hub.config.budget import BudgetSettings
from hub.config.identity import OidcGrant, OidcSettings
from hub.config.loading import (
    describe_validation_error,
    load_settings,
    load_yaml_model,
    locate,
    settle_default_skill,
)
from hub.config.models import (
    ModelPrice,
    ModelSettings,
    OrchestratorSettings,
    PlanLimits,
    PlanTools,
    TranscriptSettings,
)
from hub.config.security import (
    AuthSettings,
    CorsSettings,
    CredentialSettings,
    FederationPermission,
    FederationSettings,
    PushSettings,
)
from hub.config.settings import (
    CardSettings,
    CardSigningSettings,
    ExtensionSettings,
    GrpcSettings,
    GrpcTlsSettings,
    LimitSettings,
    McpSettings,
    ProcessSkillSettings,
    ProviderSettings,
    ServerSettings,
    Settings,
    SkillRef,
    StoreSettings,
    UiSettings,
)
from hub.config.swarm import SwarmSettings
from hub.config.telemetry import MetricsSettings, TelemetrySettings, TraceSettings
from hub.config.values import parse_duration, parse_size

__all__ = [
    "AuthSettings",
    "BudgetSettings",
    "CardSettings",
    "CardSigningSettings",
    "CorsSettings",
    "CredentialSettings",
    "ExtensionSettings",
    "FederationPermission",
    "FederationSettings",
    "GrpcSettings",
    "GrpcTlsSettings",
    "LimitSettings",
    "McpSettings",
    "MetricsSettings",
    "ModelPrice",
    "ModelSettings",
    "OidcGrant",
    "OidcSettings",
    "OrchestratorSettings",
    "PlanLimits",
    "PlanTools",
    "ProcessSkillSettings",
    "ProviderSettings",
    "PushSettings",
    "ServerSettings",
    "Settings",
    "SkillRef",
    "StoreSettings",
    "StrictModel",
    "SwarmSettings",
    "TelemetrySettings",
    "TraceSettings",
    "TranscriptSettings",
    "UiSettings",
    "describe_validation_error",
    "load_settings",
    "load_yaml_model",
    "locate",
    "parse_duration",
    "parse_size",
    "settle_default_skill",
]
