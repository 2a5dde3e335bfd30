"""The settings of a hub with auth on and the given credentials, for the identity tests."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from hub.config import AuthSettings, CredentialSettings, Settings, StoreSettings


def credential(name: str, api_key: str, **options: Any) -> CredentialSettings:
    """A credential sent as an API key, with `options` (operator, budget, scopes)."""
    return CredentialSettings(name=name, api_key=SecretStr(api_key), **options)


def with_credentials(*credentials: CredentialSettings) -> Settings:
    """A hub's settings: tasks in memory, auth on with `credentials`."""
    return Settings(
        store=StoreSettings(kind="memory"),
        auth=AuthSettings(enabled=True, credentials=credentials),
    )
