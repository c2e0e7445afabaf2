"""Legacy code_execution_20250522: Python only, ``code_execution_result``, its error codes and its
beta header ``code-execution-2025-05-22`` (PROTOCOL.md §2, seed 000 "Upgrade ke versi alat terbaru")."""

from __future__ import annotations

from collections.abc import Iterator

from simulator.registry import TOOLS
from simulator.sources import SEED_CODE_EXECUTION, protocol, seed

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

V = "code_execution_20250522"
BETA = "code-execution-2025-05-22"
MODEL = "claude-sonnet-4-5-20250929"
S_LEGACY = protocol("2. Code execution tool: Versions")
S_SHAPE = protocol("2. Code execution tool: Legacy 20250522 server_tool_use", "I")
S_UPGRADE = seed(SEED_CODE_EXECUTION, "Upgrade ke versi alat terbaru")
S_ERR = seed(SEED_CODE_EXECUTION, "Format respons / Error")
S_STREAM = seed(SEED_CODE_EXECUTION, "Streaming")


def _cb(scenario: str, title: str, sources: list, streamed: bool,
        model: str = MODEL) -> CassetteBuilder:
    return CassetteBuilder("code_execution", V, scenario, f"{V}: {title}",
                           [*sources, S_STREAM] if streamed else sources, model=model,
                           tools=[{"type": V, "name": "code_execution"}], streamed=streamed)


def python_run(streamed: bool) -> CassetteBuilder:
    cb = _cb("python_run", "a Python run returning code_execution_result (beta header sent)",
             [S_LEGACY, S_SHAPE, S_UPGRADE], streamed)
    c = Conversation(cb, beta=BETA).user("How much is 3 * 12390?")
    sid = cb.ids.make("srvtoolu")
    c.turn([b.text("I'll calculate 3 * 12390 for you."),
            b.server_tool_use(sid, "code_execution",
                              {"code": "result = 3 * 12390\nprint(f\"3 * 12390 = {result}\")"}),
            b.code_result(sid, "3 * 12390 = 37170\n"),
            b.text("The answer is **37,170**.")], "end_turn", container=True)
    return cb


def python_output_files(streamed: bool) -> CassetteBuilder:
    """A run that writes a file: ``code_execution_output`` with its file id, on Claude Sonnet 4.6
    (``caller: direct`` on the call, ``abort_reason`` on the result) [3P: real_traffic pydai__279,
    pydai__281]."""
    cb = _cb("python_output_files", "a Python run leaving a file (code_execution_output)",
             [S_LEGACY, S_SHAPE, protocol("2. Code execution tool: Result blocks")], streamed,
             model="claude-sonnet-4-6")
    c = Conversation(cb, beta=BETA).user("Create a CSV file with two columns, name and age.")
    sid, fid = cb.ids.make("srvtoolu"), cb.ids.make("file")
    code = ("import os\nimport csv\n\npath = os.path.join(os.environ.get(\"OUTPUT_DIR\", \".\"), "
            "\"output.csv\")\nwith open(path, \"w\", newline=\"\") as f:\n"
            "    csv.writer(f).writerows([[\"name\", \"age\"], [\"Alice\", 28], [\"Bob\", 34]])\n"
            "print(f\"File saved to: {path}\")\n")
    c.turn([b.server_tool_use(sid, "code_execution", {"code": code}, caller=b.direct()),
            b.code_result(sid, "File saved to: /files/output/8235bf1e4a358cc6/output.csv",
                          file_ids=(fid,)),
            b.text("The file **output.csv** has been created with the columns `name` and `age`.")],
           "end_turn", container=True)
    return cb


def error(streamed: bool, code: str) -> CassetteBuilder:
    cb = _cb(f"error_{code}", f"code_execution_tool_result_error {code}", [S_ERR, S_SHAPE], streamed)
    c = Conversation(cb, beta=BETA).user("Compute the first 10 primes in Python.")
    sid = cb.ids.make("srvtoolu")
    code_in = "" if code == "invalid_tool_input" else (
        "while True:\n    pass" if code == "execution_time_exceeded" else "print([2, 3, 5, 7])")
    c.turn([b.server_tool_use(sid, "code_execution", {"code": code_in}), b.code_error(sid, code),
            b.text(f"The code could not run ({code}).")], "end_turn", container=True,
           error_codes=[code])
    return cb


def missing_beta_header() -> CassetteBuilder:
    cb = _cb("missing_beta_header", "refused without its beta header, accepted with it",
             [S_LEGACY, protocol("5. Error responses: Bad beta name", "I")], False)
    c = Conversation(cb, beta=None).user("How much is 2 ** 20?")
    c.reject("beta.legacy_header_required", "")
    c.beta = BETA
    sid = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(sid, "code_execution", {"code": "print(2 ** 20)"}),
            b.code_result(sid, "1048576\n"), b.text("2²⁰ = 1,048,576.")], "end_turn", container=True)
    return cb


@family("code_execution_legacy")
def build() -> Iterator[CassetteBuilder]:
    for streamed in (False, True):
        yield python_run(streamed)
        yield python_output_files(streamed)
        for code in TOOLS[V].error_codes["code_execution"]:
            yield error(streamed, code)
    yield missing_beta_header()
