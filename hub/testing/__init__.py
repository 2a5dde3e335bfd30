"""Public helpers for testing hubs, skills and agents, over real HTTP on loopback.

- `serve_on_loopback`: serve any ASGI app on a socket bound to 127.0.0.1, in the test's own
  event loop (over HTTPS, mutual TLS too, with a `LoopbackTls`); yields its URL.
- `ScriptedAgent`: a partner agent whose answers the test scripts (`answer`, `stream`,
  `ask`, `fail`, each with a delay), served by the hub's own code.
- `serve_hub`: a hub built from skills, partners and settings, served on loopback; yields
  a `LoopbackHub` (its URL, app, settings, store and partners).
- `serve_model`: a scripted language model, an OpenAI- and Anthropic-compatible server that
  answers each request with the next `Turn` (text, `ToolCall`s, a `ModelError`, a hang);
  yields a `ModelServer` (its base URLs and the requests it was sent).
- `serve_local_model`: a real small language model (SmolLM2-135M-Instruct on llama.cpp's
  OpenAI-compatible server) in a child process; yields its base URL. Its packages are not
  the hub's dependencies (`hub.testing.local_model` says which to install).

Nothing here needs a test framework: the helpers are async context managers that run under
pytest's anyio plugin, or under `anyio.run` in a script. docs/testing.md shows them at work.
The names are imported when first used (`hub.lazy`): `python -m hub.testing.local_model`
does not load the hub's app to serve a model.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hub.testing.hub import LoopbackHub, PartnerList, serve_hub
    from hub.testing.local_model import LocalModelError, serve_local_model
    from hub.testing.loopback import LoopbackTls, serve_on_loopback
    from hub.testing.model_server import (
        ModelError,
        ModelRequest,
        ModelServer,
        ToolCall,
        Turn,
        serve_model,
    )
    from hub.testing.scripted import Reply, ScriptedAgent, answer, ask, fail, stream

__all__ = [
    "LocalModelError",
    "LoopbackHub",
    "LoopbackTls",
    "ModelError",
    "ModelRequest",
    "ModelServer",
    "PartnerList",
    "Reply",
    "ScriptedAgent",
    "ToolCall",
    "Turn",
    "answer",
    "ask",
    "fail",
    "serve_hub",
    "serve_local_model",
    "serve_model",
    "serve_on_loopback",
    "stream",
]

if not TYPE_CHECKING:
    from hub.lazy import lazy_exports

    # Hidden from type checkers: a module `__getattr__` would make every name resolve.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "hub.testing.hub": ["LoopbackHub", "PartnerList", "serve_hub"],
            "hub.testing.local_model": ["LocalModelError", "serve_local_model"],
            "hub.testing.loopback": ["LoopbackTls", "serve_on_loopback"],
            "hub.testing.model_server": [
                "ModelError",
                "ModelRequest",
                "ModelServer",
                "ToolCall",
                "Turn",
                "serve_model",
            ],
            "hub.testing.scripted": ["Reply", "ScriptedAgent", "answer", "ask", "fail", "stream"],
        },
    )
