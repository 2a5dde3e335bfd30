"""An artifact's text: chunks appended to it, and its parts read back as text.

A2A streams an artifact in chunks: a `TaskArtifactUpdateEvent` with `append: true` adds its
parts to the artifact of the same id. An agent relaying a language model sends every few
tokens as such a chunk ("Hel", "lo", ", wor", "ld!"), each one text part. Those parts are
pieces of one text, not paragraphs: whoever keeps the artifact joins a text chunk into the
text part it continues (`append_chunk`), and whoever shows it reads a run of text parts as
one text (`parts_text`), so an artifact assembled elsewhere, one part per chunk (the a2a-sdk
keeps it so), reads the same. The events themselves are left as they were sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from hub.protocol.task import Artifact, Part

__all__ = [
    "append_chunk",
    "append_parts",
    "continues_text",
    "joined_parts",
    "part_runs",
    "parts_text",
]


def continues_text(part: Part, more: Part) -> bool:
    """True when `more` is text that continues the text of `part`: both are text parts
    with the same media type, file name and metadata."""
    return (
        part.text is not None
        and more.text is not None
        and part.media_type == more.media_type
        and part.filename == more.filename
        and part.metadata == more.metadata
    )


def _joined(part: Part, text: str) -> Part:
    # model_copy: the part was validated once; joining text keeps it valid.
    return part.model_copy(update={"text": text})


def append_parts(parts: Sequence[Part], more: Sequence[Part]) -> list[Part]:
    """`parts` followed by `more`, the first of `more` joined into the last of `parts` when
    its text continues it. The parts of `more` are left apart: they were sent apart."""
    if parts and more and continues_text(parts[-1], more[0]):
        last, first = parts[-1], more[0]
        return [*parts[:-1], _joined(last, f"{last.text}{first.text}"), *more[1:]]
    return [*parts, *more]


def append_chunk(artifact: Artifact, chunk: Artifact) -> Artifact:
    """`artifact` with the parts of `chunk` (an `append: true` update of it) added, text
    joined into the text it continues; the artifact keeps its name, description and
    metadata."""
    return artifact.model_copy(update={"parts": append_parts(artifact.parts, chunk.parts)})


def part_runs(parts: Sequence[Part]) -> list[tuple[int, Part]]:
    """The parts to show, each with its position in `parts`: a run of text parts that
    continue one another as one text part, at the position of the run's first part."""
    runs: list[tuple[int, Part]] = []
    texts: list[str] = []
    for number, part in enumerate(parts):
        if runs and texts and continues_text(runs[-1][1], part):
            texts.append(part.text or "")
            continue
        _close(runs, texts)
        runs.append((number, part))
        texts = [part.text] if part.text is not None else []
    _close(runs, texts)
    return runs


def _close(runs: list[tuple[int, Part]], texts: list[str]) -> None:
    """Join the texts gathered for the last run into its part (one join for the whole run)."""
    if len(texts) > 1:
        number, part = runs[-1]
        runs[-1] = (number, _joined(part, "".join(texts)))


def joined_parts(parts: Sequence[Part]) -> list[Part]:
    """`parts` with each run of text parts that continue one another joined into one."""
    return [part for _, part in part_runs(parts)]


def parts_text(parts: Sequence[Part]) -> str:
    """The text of an artifact's (or a chunk's) parts: a run of text parts that continue one
    another is one text; separate texts (around a data or file part, or of another media
    type) are on lines of their own."""
    return "\n".join(part.text for part in joined_parts(parts) if part.text)
