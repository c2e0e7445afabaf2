"""Write the two cassette sets standing for two models: ``python -m conformance.probe.demo DIR``
writes ``DIR/model_a`` and ``DIR/model_b`` (the walk-through of docs/model-upgrade.md works from
an installed wheel with them); ``tests/data/probe/`` holds the same, written by
``python tests/data/probe/generate.py``.

``model_a/`` and ``model_b/`` hold the same six scenarios (ids ``probe_demo/<tool type>/<name>``)
and differ on purpose in exactly four, one difference each:

- ``insert_line``: A inserts with ``new_str``, B with ``insert_text`` (tool_calls);
- ``fix_typo``: B views the file before replacing (one turn more: turns, tokens, tool_calls);
- ``list_files``: B's final text block carries a field the registry does not know (drift);
- ``weather``: B's first answer is a 529 (``retry-after: 0``), then the same reply (retried).

``greeting`` (no tools) and ``count_lines`` (bash, streamed) are the same on both sides.
Usage figures are equal wherever the scenario does not differ in turns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODELS = {"model_a": "claude-sonnet-4-6", "model_b": "claude-opus-4-7"}
EDITOR = [{"name": "str_replace_based_edit_tool", "type": "text_editor_20250728"}]
BASH = [{"name": "bash", "type": "bash_20250124"}]
WEATHER = [{"name": "get_weather", "description": "Current weather in a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                             "required": ["city"]}}]
SOURCE = {"document": "tests/data/probe", "section": "two models that differ on purpose",
          "tag": "I"}


def usage(tokens_in: int, tokens_out: int) -> dict[str, Any]:
    return {"input_tokens": tokens_in, "output_tokens": tokens_out,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def message(model: str, n: int, content: list[dict[str, Any]], stop: str,
            use: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"msg_probe{n:04d}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": use}


def tool_use(uid: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": name, "input": tool_input}


def text(t: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": t, **extra}


def conversation(model: str, scenario: str, opening: dict[str, Any],
                 turns: list[tuple[list[dict[str, Any]], str, dict[str, Any], list[str]]],
                 *, overloaded_first: bool = False) -> list[dict[str, Any]]:
    """Exchanges: each turn is (content, stop reason, usage, recorded tool_result texts)."""
    messages = list(opening["messages"])
    exchanges = []
    headers = {"anthropic-version": "2023-06-01", "content-type": "application/json"}
    if overloaded_first:
        exchanges.append({"request": {"method": "POST", "path": "/v1/messages", "headers": headers,
                                      "body": {**opening, "messages": list(messages)}},
                          "response": {"status": 529, "headers": {
                              "content-type": "application/json", "retry-after": "0",
                              "x-should-retry": "true"},
                              "body": {"type": "error", "error": {
                                  "type": "overloaded_error", "message": "Overloaded"},
                                  "request_id": "req_probe_overloaded"}}})
    for n, (content, stop, use, results) in enumerate(turns):
        body = {**opening, "messages": list(messages)}
        exchanges.append({"request": {"method": "POST", "path": "/v1/messages", "headers": headers,
                                      "body": body},
                          "response": {"status": 200, "headers": {
                              "content-type": "application/json",
                              "request-id": f"req_probe_{scenario}_{n}"},
                              "body": message(model, n, content, stop, use)}})
        messages = [*messages, {"role": "assistant", "content": content}]
        uses = [b for b in content if b["type"] == "tool_use"]
        if uses:
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": u["id"], "content": r}
                for u, r in zip(uses, results, strict=True)]})
    return exchanges


def scenarios(side: str) -> dict[str, tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    model = MODELS[side]
    b = side == "model_b"
    out: dict[str, tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = {}

    opening = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "tools": EDITOR,
               "messages": [{"role": "user", "content": "Put a title line '# Notes' at the top of "
                                                        "notes.md."}]}
    field = "insert_text" if b else "new_str"
    out["insert_line"] = ("text_editor_20250728", EDITOR, conversation(model, "insert_line", opening, [
        ([tool_use("toolu_probe_ins1", "str_replace_based_edit_tool",
                   {"command": "insert", "path": "notes.md", "insert_line": 0,
                    field: "# Notes"})], "tool_use", usage(400, 60), ["Inserted."]),
        ([text("Added the title line.")], "end_turn", usage(480, 12), []),
    ]))

    opening = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "tools": EDITOR,
               "messages": [{"role": "user", "content": "Fix the typo 'teh' in readme.txt."}]}
    replace = ([tool_use("toolu_probe_fix2", "str_replace_based_edit_tool",
                         {"command": "str_replace", "path": "readme.txt", "old_str": "teh cat",
                          "new_str": "the cat"})], "tool_use", usage(420, 70),
               ["The file readme.txt has been edited."])
    done: tuple[Any, ...] = ([text("Fixed the typo.")], "end_turn", usage(520, 10), [])
    view = ([tool_use("toolu_probe_fix1", "str_replace_based_edit_tool",
                      {"command": "view", "path": "readme.txt"})], "tool_use", usage(410, 40),
            ["1: teh cat sat"])
    out["fix_typo"] = ("text_editor_20250728", EDITOR, conversation(
        model, "fix_typo", opening, [view, replace, done] if b else [replace, done]))

    opening = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "tools": BASH,
               "messages": [{"role": "user", "content": "How many files are in the working "
                                                        "directory?"}]}
    final = text("There are no files.", **({"confidence_note": "high"} if b else {}))
    out["list_files"] = ("bash_20250124", BASH, conversation(model, "list_files", opening, [
        ([tool_use("toolu_probe_ls1", "bash", {"command": "ls -1 | wc -l"})], "tool_use",
         usage(380, 50), ["0"]),
        ([final], "end_turn", usage(450, 9), []),
    ]))

    opening = {"model": "claude-sonnet-4-6", "max_tokens": 512, "tools": WEATHER,
               "messages": [{"role": "user", "content": "What's the weather in Lisbon?"}]}
    out["weather"] = ("custom", WEATHER, conversation(model, "weather", opening, [
        ([tool_use("toolu_probe_w1", "get_weather", {"city": "Lisbon"})], "tool_use",
         usage(300, 30), ["21°C, sunny"]),
        ([text("It is 21°C and sunny in Lisbon.")], "end_turn", usage(350, 14), []),
    ], overloaded_first=b))

    opening = {"model": "claude-sonnet-4-6", "max_tokens": 256,
               "messages": [{"role": "user", "content": "Say hello."}]}
    out["greeting"] = ("messages", [], conversation(model, "greeting", opening, [
        ([text("Hello!")], "end_turn", usage(10, 3), []),
    ]))

    opening = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "tools": BASH, "stream": True,
               "messages": [{"role": "user", "content": "Count the lines of /etc/hostname."}]}
    out["count_lines"] = ("bash_20250124", BASH, conversation(model, "count_lines", opening, [
        ([tool_use("toolu_probe_wc1", "bash", {"command": "wc -l < /etc/hostname"})], "tool_use",
         usage(390, 45), ["1"]),
        ([text("It has one line.")], "end_turn", usage(440, 8), []),
    ]))
    return out


def write(out: Path) -> list[Path]:
    """Write ``out/model_a`` and ``out/model_b``; returns the files written."""
    written = []
    for side in MODELS:
        for name, (tool_type, tools, exchanges) in scenarios(side).items():
            cid = f"probe_demo/{tool_type}/{name}"
            doc = {"version": 1, "id": cid, "title": f"{name} as {MODELS[side]} answers it",
                   "source": SOURCE, "model": MODELS[side], "tools": tools,
                   "streamed": False, "tags": {"family": "probe_demo", "tool_type": tool_type,
                                               "scenario": name},
                   "exchanges": exchanges}
            target = out / side / "probe_demo" / tool_type / f"{name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m conformance.probe.demo",
                                description="write two cassette sets standing for two models "
                                            "(DIR/model_a, DIR/model_b) for `tooluse serve "
                                            "--model-mode` and `tooluse probe`")
    p.add_argument("out", nargs="?", default="probe-demo", type=Path, metavar="DIR",
                   help="where to write them (default: ./probe-demo)")
    args = p.parse_args(argv)
    files = write(args.out)
    print(f"wrote {len(files)} cassettes: {args.out / 'model_a'}, {args.out / 'model_b'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
