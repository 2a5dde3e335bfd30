"""A tiny command-line "agent" that speaks the process-skill line format (docs/skills.md).

Served by config/examples/process-skills.yaml. It shows each kind of event a program can
print, and how it reads the answer to an approval prompt from stdin. Use it as the starting
point of an adapter for a real command-line agent.
"""

import json
import sys


def emit(**event: object) -> None:
    # One JSON object per line, flushed at once so the hub streams it as it happens.
    print(json.dumps(event), flush=True)


def main() -> int:
    prompt = sys.argv[1] if len(sys.argv) > 1 else ""
    emit(type="init", agent="process_agent", prompt_chars=len(prompt))
    emit(type="thinking", text="The task is to count the words of the prompt. ")
    emit(type="tool_use", name="count_words", input={"text": prompt})
    words = len(prompt.split())
    emit(type="tool_result", name="count_words", output=str(words))
    emit(type="approval_required", prompt=f"Report {words} word(s)? (yes/no)")
    answer = sys.stdin.readline().strip().lower()
    if answer != "yes":
        emit(type="error", message=f"the report was not approved (answer: {answer or 'none'})")
        return 1
    emit(type="text", text=f"The prompt has {words} word(s).")
    emit(type="done", summary="counted the words", stats={"words": words})
    return 0


if __name__ == "__main__":
    sys.exit(main())
