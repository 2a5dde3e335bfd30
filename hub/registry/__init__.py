"""The partner registry: `agents.yaml`, its models, its loader and its hot-reloading watcher.

```python
registry = load_registry("agents.yaml")
entry = registry["research"]          # UnknownAgentError names the known agents
headers = entry.auth.http_headers()   # the only place secrets come out
```

The format is described in docs/agents-yaml.md.
"""

from hub.registry.loader import DEFAULT_AGENTS, load_registry, registry_for
from hub.registry.models import (
    AgentEntry,
    AgentsFile,
    AuthSettings,
    ProtocolSettings,
    TimeoutSettings,
    same_name_key,
)
from hub.registry.registry import Registry, RegistryDiff
from hub.registry.watch import RegistryListener, RegistryWatcher

__all__ = [
    "DEFAULT_AGENTS",
    "AgentEntry",
    "AgentsFile",
    "AuthSettings",
    "ProtocolSettings",
    "Registry",
    "RegistryDiff",
    "RegistryListener",
    "RegistryWatcher",
    "TimeoutSettings",
    "load_registry",
    "registry_for",
    "same_name_key",
]
