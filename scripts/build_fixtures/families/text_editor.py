"""Text editor client tool, all four versions (seed 001, PROTOCOL.md §3): every command,
undo_edit where it exists and its refusal where it does not, view_range with -1, directory view,
insert at 0, insert_text (20250728), max_characters (20250728), and each documented error result."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simulator.registry import TOOLS
from simulator.sources import SEED_TEXT_EDITOR, protocol, seed

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

VERSIONS = {
    "text_editor_20241022": ("claude-3-5-sonnet-20241022", "computer-use-2024-10-22"),
    "text_editor_20250124": ("claude-3-7-sonnet-20250219", None),
    "text_editor_20250429": ("claude-opus-4-20250514", None),
    "text_editor_20250728": ("claude-sonnet-4-6", None),
}
S_CMD = seed(SEED_TEXT_EDITOR, "Perintah tool editor teks")
S_EX = seed(SEED_TEXT_EDITOR, "Contoh: Memperbaiki kesalahan sintaks dengan tool editor teks")
S_UNDO = seed(SEED_TEXT_EDITOR, "undo_edit")
S_HANDLE = seed(SEED_TEXT_EDITOR, "Tangani panggilan tool editor", "I")
S_ERR = seed(SEED_TEXT_EDITOR, "Tangani kesalahan")
S_ERR_EN = protocol("3. Text editor tool: Documented example texts")
S_MAXC = protocol("3. Text editor tool: Type/name pairs")
S_INSERT = protocol("3. Text editor tool: Commands")
S_MODELS = seed(SEED_TEXT_EDITOR, "Gunakan model yang kompatibel")
S_STREAM = protocol("6. Streaming (SSE): Grammar")

PRIMES = ["def is_prime(n):", '    """Check whether a number is prime."""', "    if n <= 1:",
          "        return False", "    for i in range(2, int(n ** 0.5) + 1):",
          "        if n % i == 0:", "            return False", "    return True", "",
          "def get_primes(limit):", "    primes = []", "    for num in range(2, limit + 1)",
          "        if is_prime(num):", "            primes.append(num)", "    return primes"]
ERRORS = {
    "file_not_found": ({"command": "view", "path": "missing.py"}, "Error: File not found"),
    "multiple_matches": ({"command": "str_replace", "path": "primes.py", "old_str": "return False",
                          "new_str": "return False  # not prime"},
                         "Error: Found 3 matches for replacement text. Please provide more context to "
                         "make a unique match."),
    "no_match": ({"command": "str_replace", "path": "primes.py", "old_str": "def is_prime(num):",
                  "new_str": "def is_prime(number):"},
                 "Error: No match found for replacement. Please check your text and try again."),
    "permission_denied": ({"command": "create", "path": "/etc/primes.py", "file_text": "# primes\n"},
                          "Error: Permission denied. Cannot write to file."),
}


def numbered(lines: list[str], start: int = 1) -> str:
    return "\n".join(f"{i}: {line}" for i, line in enumerate(lines, start))


class Editor:
    """One cassette: a conversation with the editor tool of version ``v``."""

    def __init__(self, v: str, scenario: str, title: str, sources: list, streamed: bool = False,
                 tool_extra: dict[str, Any] | None = None) -> None:
        model, beta = VERSIONS[v]
        self.name = TOOLS[v].name or ""
        srcs = [*sources, S_MODELS] if beta else list(sources)
        self.cb = CassetteBuilder("text_editor", v, scenario, f"{v}: {title}",
                                  [*srcs, S_STREAM] if streamed else srcs, model=model,
                                  tools=[{"type": v, "name": self.name, **(tool_extra or {})}],
                                  streamed=streamed)
        self.c = Conversation(self.cb, max_tokens=1024, beta=beta)

    def call(self, input_: dict[str, Any], result: str, *, is_error: bool | None = None,
             say: str | None = None) -> None:
        tid = self.cb.ids.make("toolu")
        self.c.turn(([b.text(say)] if say else []) + [b.tool_use(tid, self.name, input_)], "tool_use")
        self.c.tool_results(b.tool_result(tid, result, is_error=is_error))

    def done(self, text: str) -> CassetteBuilder:
        self.c.turn([b.text(text)], "end_turn")
        return self.cb


def view(v: str, streamed: bool) -> CassetteBuilder:
    e = Editor(v, "view", "view a file (line-numbered result)", [S_CMD, S_EX], streamed)
    e.c.user("There's a syntax error in my primes.py file. Can you find it?")
    e.call({"command": "view", "path": "primes.py"}, numbered(PRIMES),
           say="Let me look at the file first.")
    return e.done("Line 12 is missing a colon after `for num in range(2, limit + 1)`.")


def str_replace(v: str) -> CassetteBuilder:
    e = Editor(v, "str_replace", "view then str_replace (the seed's syntax-error fix)", [S_CMD, S_EX, S_ERR_EN])
    e.c.user("There's a syntax error in my primes.py file. Can you help me fix it?")
    e.call({"command": "view", "path": "primes.py"}, numbered(PRIMES))
    e.call({"command": "str_replace", "path": "primes.py", "old_str": "    for num in range(2, limit + 1)",
            "new_str": "    for num in range(2, limit + 1):"},
           "Successfully replaced text at exactly one location.", say="I found the missing colon.")
    return e.done("Fixed: the `for` loop in `get_primes` now ends with a colon.")


def view_range(v: str) -> CassetteBuilder:
    e = Editor(v, "view_range_to_end", "view_range [10, -1] reads to the end of the file", [S_CMD])
    e.c.user("Show me get_primes in primes.py.")
    e.call({"command": "view", "path": "primes.py", "view_range": [10, -1]}, numbered(PRIMES[9:], 10))
    return e.done("`get_primes` spans lines 10-15.")


def view_directory(v: str) -> CassetteBuilder:
    e = Editor(v, "view_directory", "view of a directory lists its entries", [S_CMD])
    e.c.user("What is in src/?")
    e.call({"command": "view", "path": "src/"}, "src/\nsrc/app.py\nsrc/primes.py\nsrc/utils/\nsrc/utils/io.py")
    return e.done("`src/` holds app.py, primes.py and a utils package.")


def create(v: str) -> CassetteBuilder:
    e = Editor(v, "create", "create a new file", [S_CMD])
    e.c.user("Write unit tests for primes.py.")
    e.call({"command": "create", "path": "test_primes.py", "file_text":
            "import unittest\nimport primes\n\nclass TestPrimes(unittest.TestCase):\n    def test_is_prime(self):\n"
            "        self.assertTrue(primes.is_prime(2))\n        self.assertFalse(primes.is_prime(4))\n\n"
            "if __name__ == '__main__':\n    unittest.main()"}, "File created successfully at: test_primes.py")
    return e.done("I created `test_primes.py` with tests for `is_prime`.")


def insert(v: str, field: str) -> CassetteBuilder:
    scen = "insert_at_0" if field == "new_str" else "insert_text_at_0"
    e = Editor(v, scen, f"insert at line 0 with {field}", [S_CMD, S_INSERT])
    e.c.user("Add a module docstring to primes.py.")
    e.call({"command": "insert", "path": "primes.py", "insert_line": 0,
            field: '"""Utilities for working with prime numbers."""\n'},
           "The file primes.py has been edited: text inserted at line 0.")
    return e.done("I added a module docstring at the top of `primes.py`.")


def undo_edit(v: str) -> CassetteBuilder:
    e = Editor(v, "undo_edit", "undo_edit reverts the last edit", [S_UNDO, S_CMD])
    e.c.user("Rename is_prime to check_prime in primes.py, then undo that.")
    e.call({"command": "str_replace", "path": "primes.py", "old_str": "def is_prime(n):",
            "new_str": "def check_prime(n):"}, "Successfully replaced text at exactly one location.")
    e.call({"command": "undo_edit", "path": "primes.py"}, "Last edit to primes.py undone successfully.")
    return e.done("The rename is undone; `is_prime` is back.")


def undo_unavailable(v: str) -> CassetteBuilder:
    """No undo_edit in 20250429+: the model reverts with str_replace. (The seed's handler also
    refuses an undo_edit call on these versions; the schemas treat such a call as one the model
    never makes, so the corpus shows the documented way round it instead.)"""
    e = Editor(v, "undo_edit_unavailable", "undo_edit does not exist in this version: the revert is "
               "a str_replace", [S_UNDO, S_HANDLE, protocol("3. Text editor tool: Change log")])
    e.c.user("Rename is_prime to check_prime in primes.py, then undo that.")
    e.call({"command": "str_replace", "path": "primes.py", "old_str": "def is_prime(n):",
            "new_str": "def check_prime(n):"}, "Successfully replaced text at exactly one location.")
    e.call({"command": "str_replace", "path": "primes.py", "old_str": "def check_prime(n):",
            "new_str": "def is_prime(n):"}, "Successfully replaced text at exactly one location.",
           say="This editor version has no undo_edit, so I'll revert the rename with str_replace.")
    return e.done("The rename is reverted; `is_prime` is back.")


def max_characters(v: str) -> CassetteBuilder:
    e = Editor(v, "max_characters", "max_characters: the handler truncates view output",
               [S_MAXC, seed(SEED_TEXT_EDITOR, "Perintah tool editor teks")], tool_extra={"max_characters": 120})
    e.c.user("Show me primes.py.")
    e.call({"command": "view", "path": "primes.py"}, numbered(PRIMES)[:120])
    return e.done("The view was truncated to 120 characters; `is_prime` starts on line 1.")


def error(v: str, kind: str) -> CassetteBuilder:
    input_, message = ERRORS[kind]
    e = Editor(v, f"error_{kind}", f"error result: {kind.replace('_', ' ')}", [S_ERR, S_ERR_EN])
    e.c.user("Make the change to primes.py.")
    e.call(input_, message, is_error=True)
    e.cb.extra_tags["client_errors"] = [kind]
    return e.done("That did not work: " + message.removeprefix("Error: "))


@family("text_editor")
def build() -> Iterator[CassetteBuilder]:
    for v in VERSIONS:
        tv = TOOLS[v]
        yield view(v, False)
        yield view(v, True)
        yield str_replace(v)
        yield view_range(v)
        yield view_directory(v)
        yield create(v)
        yield insert(v, "new_str")
        if "insert_text" in tv.insert_text_fields:
            yield insert(v, "insert_text")
        if "undo_edit" in tv.command_names:
            yield undo_edit(v)
        else:
            yield undo_unavailable(v)
        if "max_characters" in tv.definition_fields:
            yield max_characters(v)
        for kind in ERRORS:
            yield error(v, kind)
