"""The `identity` extra: what signing and verifying cards import, checked once with the pip
command to run when it is absent."""

from __future__ import annotations

from importlib import import_module

from hub.errors import ConfigError

__all__ = ["IDENTITY_PIP", "missing_identity_modules", "require_identity_extra"]

IDENTITY_PIP = "pip install 'a2a-hub[identity]'"
"""The command that installs the extra."""

_MODULES = ("joserfc", "rfc8785")


def require_identity_extra(feature: str) -> None:
    """Stop with the pip command when the `identity` extra is not installed.

    Args:
        feature: the setting that needs it, for the message (`card.signing`, ...).

    Raises:
        ConfigError: joserfc or rfc8785 cannot be imported.
    """
    missing = missing_identity_modules()
    if missing:
        raise ConfigError(
            f"{feature} needs the identity extra ({', '.join(missing)} missing): {IDENTITY_PIP}"
        )


def missing_identity_modules() -> list[str]:
    """The extra's modules that cannot be imported (none when it is installed); those that
    can are imported, as what needs them will."""
    missing = []
    for name in _MODULES:
        try:
            import_module(name)
        except ImportError:
            missing.append(name)
    return missing
