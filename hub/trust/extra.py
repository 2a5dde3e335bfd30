"""The `identity` extra: what signing and verifying cards import, checked once with the pip
command to run when it is absent."""

from __future__ import annotations

from importlib.util import find_spec

from hub.errors import ConfigError

__all__ = ["require_identity_extra"]

_MODULES = ("joserfc", "rfc8785")


def require_identity_extra(feature: str) -> None:
    """Stop with the pip command when the `identity` extra is not installed.

    Args:
        feature: the setting that needs it, for the message (`card.signing`, ...).

    Raises:
        ConfigError: joserfc or rfc8785 cannot be imported.
    """
    missing = [name for name in _MODULES if find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"{feature} needs the identity extra ({', '.join(missing)} missing): "
            "pip install 'a2a-hub[identity]'"
        )
