"""Public helpers for testing hubs, skills and agents, over real HTTP on loopback.

- `serve_on_loopback`: serve any ASGI app on a socket bound to 127.0.0.1, in the test's own
  event loop; yields its URL.
- `ScriptedAgent`: a partner agent whose answers the test scripts (`answer`, `stream`,
  `ask`, `fail`, each with a delay), served by the hub's own code.
- `serve_hub`: a hub built from skills, partners and settings, served on loopback; yields
  a `LoopbackHub` (its URL, app, settings, store and partners).
- `serve_model`: a scripted language model, an OpenAI- and Anthropic-compatible server that
  answers each request with the next `Turn` (text, `ToolCall`s, a `ModelError`, a hang);
  yields a `ModelServer` (its base URLs and the requests it was sent).

Nothing here needs a test framework: the helpers are async context managers that run under
pytest's anyio plugin, or under `anyio.run` in a script. docs/testing.md shows them at work.
"""

from hub.testing.hub import LoopbackHub, PartnerList, serve_hub
from hub.testing.loopback import serve_on_loopback
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
    "LoopbackHub",
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
    "serve_model",
    "serve_on_loopback",
    "stream",
]
