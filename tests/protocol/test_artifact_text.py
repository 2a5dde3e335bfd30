"""Text chunks appended to an artifact join the text they continue; an artifact's parts read
as one text per run of text parts."""

from __future__ import annotations

from hub.protocol import Artifact, Part, append_chunk, append_parts, part_runs, parts_text

DATA = Part(data={"rows": 2}, media_type="application/json")
FILE = Part(url="https://example.com/a.pdf", filename="a.pdf")


def test_a_text_chunk_joins_the_text_part_it_continues() -> None:
    doc = Artifact(artifact_id="a", name="answer", metadata={"k": 1}, parts=[Part(text="Hel")])
    chunk = Artifact(artifact_id="a", name="ignored", parts=[Part(text="lo")])
    assert append_chunk(doc, chunk) == Artifact(
        artifact_id="a", name="answer", metadata={"k": 1}, parts=[Part(text="Hello")]
    )


def test_only_the_first_part_of_a_chunk_joins_the_text_before_it() -> None:
    joined = append_parts([Part(text="a")], [Part(text="b"), DATA, Part(text="c")])
    assert joined == [Part(text="ab"), DATA, Part(text="c")]


def test_text_of_another_kind_is_kept_apart() -> None:
    markdown = Part(text="# title", media_type="text/markdown")
    marked = Part(text="x", metadata={"lang": "en"})
    named = Part(text="x", filename="notes.txt")
    for before, after in [
        (Part(text="a"), markdown),
        (markdown, Part(text="a")),
        (Part(text="a"), marked),
        (Part(text="a"), named),
        (DATA, Part(text="a")),
        (Part(text="a"), DATA),
        (FILE, Part(text="a")),
    ]:
        assert append_parts([before], [after]) == [before, after]


def test_appending_to_nothing_or_nothing_to_append_changes_nothing_else() -> None:
    assert append_parts([], [Part(text="a")]) == [Part(text="a")]
    assert append_parts([Part(text="a")], []) == [Part(text="a")]


def test_parts_kept_one_per_chunk_read_as_one_text_with_files_in_their_place() -> None:
    parts = [Part(text="Hel"), Part(text="lo"), FILE, Part(text="wor"), Part(text="ld"), DATA]
    assert part_runs(parts) == [
        (0, Part(text="Hello")),
        (2, FILE),
        (3, Part(text="world")),
        (5, DATA),
    ]
    assert parts_text(parts) == "Hello\nworld"


def test_texts_of_different_kinds_are_on_lines_of_their_own() -> None:
    parts = [Part(text="plain"), Part(text="*bold*", media_type="text/markdown"), Part(text="")]
    assert parts_text(parts) == "plain\n*bold*"
    assert parts_text([DATA]) == ""
