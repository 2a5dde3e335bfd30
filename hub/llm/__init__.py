"""The model wire: a language model of `models:` in hub.yaml, called one step at a time.

The providers' HTTP APIs are spoken by pydantic-ai (the optional `llm` extra); this package
turns the hub's transcript and tools into its requests, its streamed answer back into text
deltas, tool calls and token counts, and its failures into `ModelError`s that name the model's
entry and never its key. Nothing here imports pydantic-ai until a model is first called.
"""

from hub.llm.chat import ChatModel, ModelError, Step, require_llm_extra
from hub.llm.transcript import Entry, ToolCall, ToolSpec, Transcript

__all__ = [
    "ChatModel",
    "Entry",
    "ModelError",
    "Step",
    "ToolCall",
    "ToolSpec",
    "Transcript",
    "require_llm_extra",
]
