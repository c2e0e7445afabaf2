"""Code execution 20250825 / 20260120 / 20260521: sub-tool runs, every error code, pause_turn,
container reuse and expiry, container_upload; each non-streamed and streamed (seed 000)."""

from __future__ import annotations

from collections.abc import Iterator

from simulator.registry import TOOLS
from simulator.sources import SEED_CODE_EXECUTION, protocol, seed

from .. import blocks as b
from ..core import CassetteBuilder, Conversation, family

VERSIONS = ("code_execution_20250825", "code_execution_20260120", "code_execution_20260521")
MODEL = "claude-opus-4-7"

S_BASH = seed(SEED_CODE_EXECUTION, "Format respons / Respons perintah Bash")
S_FILE = seed(SEED_CODE_EXECUTION, "Format respons / Respons operasi file")
S_ERR = seed(SEED_CODE_EXECUTION, "Format respons / Error")
S_OUT = seed(SEED_CODE_EXECUTION, "Cara file yang dihasilkan ditangkap")
S_PAUSE = seed(SEED_CODE_EXECUTION, "Alasan berhenti pause_turn")
S_PAUSE_P = protocol("2. Code execution tool: pause_turn")
S_REUSE = seed(SEED_CODE_EXECUTION, "Penggunaan ulang container")
S_EXPIRED = protocol("2. Code execution tool: Expired container", "?")
S_UPLOAD = seed(SEED_CODE_EXECUTION, "Unggah dan analisis file")
S_STREAM = seed(SEED_CODE_EXECUTION, "Streaming")

CONFIG = '{\n  "setting": "value",\n  "debug": true\n}'

#: The input that provokes each error code (the error itself is what the seed documents).
BASH_ERROR_INPUTS = {
    "unavailable": "python3 analyze.py",
    "execution_time_exceeded": "python3 -c 'while True: pass'",
    "invalid_tool_input": "",
    "too_many_requests": "python3 analyze.py",
    "output_file_too_large": "head -c 2000000000 /dev/urandom > \"$OUTPUT_DIR/blob.bin\"",
}
EDITOR_ERROR_INPUTS = {
    "unavailable": {"command": "view", "path": "config.json"},
    "execution_time_exceeded": {"command": "view", "path": "huge.log"},
    "invalid_tool_input": {"command": "str_replace", "path": "config.json"},
    "too_many_requests": {"command": "view", "path": "config.json"},
    "file_not_found": {"command": "view", "path": "missing.txt"},
}


CE_20260120 = "code_execution_20260120"
#: ``error_message`` the API adds to some editor errors (code_execution_20260120 and later; the
#: one live example is ``unavailable``, real_traffic pydai__423, pydai__425).
EDITOR_ERROR_MESSAGES = {
    "unavailable": "Tool response parsing error for view: Failed to parse tool response as JSON: "
                   "unexpected character: line 1 column 1 (char 0)",
}


def _cb(version: str, scenario: str, title: str, sources: list, streamed: bool,
        tools: list | None = None) -> CassetteBuilder:
    srcs = [*sources, S_STREAM] if streamed else sources
    return CassetteBuilder("code_execution", version, scenario, f"{version}: {title}", srcs,
                           model=MODEL, tools=tools or [{"type": version, "name": "code_execution"}],
                           streamed=streamed)


def bash_run(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "bash_run", "a bash command run in the container", [S_BASH], streamed)
    c = Conversation(cb).user("List the files in the working directory.")
    sid = cb.ids.make("srvtoolu")
    c.turn([b.text("I'll list the files."),
            b.server_tool_use(sid, "bash_code_execution", {"command": "ls -la | head -5"}),
            b.bash_result(sid, "total 24\ndrwxr-xr-x 2 user user 4096 Jan 1 12:00 .\n"
                               "drwxr-xr-x 3 user user 4096 Jan 1 11:00 ..\n"
                               "-rw-r--r-- 1 user user  220 Jan 1 12:00 data.csv\n"
                               "-rw-r--r-- 1 user user  180 Jan 1 12:00 config.json"),
            b.text("The directory holds `data.csv` and `config.json`.")], "end_turn", container=True)
    return cb


def bash_output_files(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "bash_output_files", "a bash run leaving files in $OUTPUT_DIR", [S_OUT, S_BASH], streamed)
    c = Conversation(cb).user("Create a matplotlib visualization and save it as output.png, "
                              "plus the data as data.csv.")
    sid = cb.ids.make("srvtoolu")
    f1, f2 = cb.ids.make("file"), cb.ids.make("file")
    cmd = ("python /tmp/plot.py && cp /tmp/output.png /tmp/data.csv \"$OUTPUT_DIR/\" && "
           "ls \"$OUTPUT_DIR\"")
    c.turn([b.server_tool_use(sid, "bash_code_execution", {"command": cmd}),
            b.bash_result(sid, "data.csv\noutput.png\n", file_ids=(f1, f2)),
            b.text("I saved `output.png` and `data.csv`; both are attached as files.")],
           "end_turn", container=True)
    return cb


def editor_view(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "editor_view", "text editor view of a file", [S_FILE], streamed)
    c = Conversation(cb).user("Show me config.json.")
    s1, s2 = cb.ids.make("srvtoolu"), cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(s1, "bash_code_execution",
                              {"command": "printf '%s' '" + CONFIG + "' > config.json"}),
            b.bash_result(s1, ""),
            b.server_tool_use(s2, "text_editor_code_execution", {"command": "view", "path": "config.json"}),
            b.editor_view(s2, CONFIG),
            b.text("`config.json` sets `setting` to `value` and enables `debug`.")],
           "end_turn", container=True)
    return cb


def editor_create(v: str, streamed: bool, update: bool) -> CassetteBuilder:
    scen = "editor_create_update" if update else "editor_create_new"
    what = "overwriting an existing file (is_file_update: true)" if update else "a new file"
    cb = _cb(v, scen, f"text editor create of {what}", [S_FILE], streamed)
    c = Conversation(cb).user("Write Hello, World! to new_file.txt" + (" twice, then fix it." if update else "."))
    s1 = cb.ids.make("srvtoolu")
    content = [b.server_tool_use(s1, "text_editor_code_execution",
                                 {"command": "create", "path": "new_file.txt", "file_text": "Hello, World!"}),
               b.editor_create(s1, False)]
    if update:
        s2 = cb.ids.make("srvtoolu")
        content += [b.server_tool_use(s2, "text_editor_code_execution",
                                      {"command": "create", "path": "new_file.txt",
                                       "file_text": "Hello, World!\n"}),
                    b.editor_create(s2, True)]
    c.turn([*content, b.text("`new_file.txt` is written.")], "end_turn", container=True)
    return cb


def editor_str_replace(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "editor_str_replace", "text editor str_replace", [S_FILE], streamed)
    c = Conversation(cb).user("Turn debug off in config.json.")
    s1, s2 = cb.ids.make("srvtoolu"), cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(s1, "text_editor_code_execution",
                              {"command": "create", "path": "config.json", "file_text": CONFIG}),
            b.editor_create(s1, False),
            b.server_tool_use(s2, "text_editor_code_execution",
                              {"command": "str_replace", "path": "config.json",
                               "old_str": "\"debug\": true", "new_str": "\"debug\": false"}),
            b.editor_str_replace(s2, 3, ["-  \"debug\": true", "+  \"debug\": false"]),
            b.text("Debug is now off.")], "end_turn", container=True)
    return cb


def bash_error(v: str, streamed: bool, code: str) -> CassetteBuilder:
    cb = _cb(v, f"bash_error_{code}", f"bash_code_execution error {code}", [S_ERR], streamed)
    c = Conversation(cb).user("Run the analysis script.")
    sid = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(sid, "bash_code_execution", {"command": BASH_ERROR_INPUTS[code]}),
            b.bash_error(sid, code),
            b.text(f"The command could not run ({code}).")], "end_turn", container=True,
           error_codes=[code])
    return cb


def editor_error(v: str, streamed: bool, code: str) -> CassetteBuilder:
    cb = _cb(v, f"editor_error_{code}", f"text_editor_code_execution error {code}", [S_ERR], streamed)
    c = Conversation(cb).user("Look at the file.")
    sid = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(sid, "text_editor_code_execution", EDITOR_ERROR_INPUTS[code]),
            b.editor_error(sid, code, EDITOR_ERROR_MESSAGES.get(code) if v >= CE_20260120 else None),
            b.text(f"The file operation failed ({code}).")], "end_turn", container=True,
           error_codes=[code])
    return cb


def code_error(v: str, streamed: bool, code: str) -> CassetteBuilder:
    """The ``code_execution`` sub-tool (a Python run, 20260120+): code_execution_tool_result_error."""
    cb = _cb(v, f"code_error_{code}", f"code_execution (Python) error {code}", [S_ERR,
             protocol("2. Code execution tool: Result blocks")], streamed)
    c = Conversation(cb).user("Compute the first ten primes in Python.")
    sid = cb.ids.make("srvtoolu")
    code_in = "" if code == "invalid_tool_input" else (
        "while True:\n    pass" if code == "execution_time_exceeded" else "print([2, 3, 5, 7, 11])")
    c.turn([b.server_tool_use(sid, "code_execution", {"code": code_in}), b.code_error(sid, code),
            b.text(f"The Python run failed ({code}).")], "end_turn", container=True, error_codes=[code])
    return cb


def pause_turn(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "pause_turn", "pause_turn and its continuation (assistant content resent as-is)",
             [S_PAUSE, S_PAUSE_P], streamed)
    c = Conversation(cb).user("Run the ten analysis steps in steps/ one by one.")
    content = []
    for i in range(1, 4):
        sid = cb.ids.make("srvtoolu")
        content += [b.server_tool_use(sid, "bash_code_execution", {"command": f"python steps/step{i}.py"}),
                    b.bash_result(sid, f"step {i} done\n")]
    c.turn(content, "pause_turn", container=True)
    sid = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(sid, "bash_code_execution", {"command": "python steps/step4.py"}),
            b.bash_result(sid, "step 4 done\n"),
            b.text("All steps finished.")], "end_turn", container=True)
    return cb


def pause_turn_not_resent(v: str) -> CassetteBuilder:
    cb = _cb(v, "reject_pause_turn_not_resent", "a continuation that drops the paused assistant content "
             "is refused; resending it as-is continues", [S_PAUSE, S_PAUSE_P], False)
    c = Conversation(cb).user("Run the ten analysis steps in steps/ one by one.")
    sid = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(sid, "bash_code_execution", {"command": "python steps/step1.py"}),
            b.bash_result(sid, "step 1 done\n")], "pause_turn", container=True)
    c.reject("pause_turn.resend_assistant_content", "",
             mutate=lambda body: body.update(messages=body["messages"][:1]))
    s2 = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(s2, "bash_code_execution", {"command": "python steps/step2.py"}),
            b.bash_result(s2, "step 2 done\n"), b.text("All steps finished.")], "end_turn", container=True)
    return cb


def container_reuse(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "container_reuse", "container reuse: a file written, then read back in a new request",
             [S_REUSE], streamed)
    c1 = Conversation(cb).user('Write a file with a random number and save it to "/tmp/number.txt"')
    s1 = cb.ids.make("srvtoolu")
    c1.turn([b.server_tool_use(s1, "bash_code_execution",
                               {"command": "echo $RANDOM > /tmp/number.txt && cat /tmp/number.txt"}),
             b.bash_result(s1, "4217\n"), b.text("Saved 4217 to /tmp/number.txt.")],
            "end_turn", container=True)
    c2 = Conversation(cb).user('Read the number from "/tmp/number.txt" and calculate its square')
    c2.container_id = c2.send_container = c1.container_id
    s2 = cb.ids.make("srvtoolu")
    c2.turn([b.server_tool_use(s2, "bash_code_execution",
                               {"command": "n=$(cat /tmp/number.txt); echo $((n*n))"}),
             b.bash_result(s2, "17783089\n"), b.text("4217² = 17783089.")], "end_turn", container=True)
    return cb


EXPIRED_MESSAGE = ("container `{cid}` has expired and can no longer be used. Send the request "
                   "again without the `container` parameter to get a new container.")


def container_expired(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "container_expired", "a request on an expired container, then the retry without it",
             [S_REUSE, S_ERR, S_EXPIRED], streamed)
    c1 = Conversation(cb).user("Save the report to /tmp/report.txt")
    s1 = cb.ids.make("srvtoolu")
    c1.turn([b.server_tool_use(s1, "bash_code_execution", {"command": "echo ok > /tmp/report.txt"}),
             b.bash_result(s1, ""), b.text("Saved.")], "end_turn", container=True)
    old = c1.container_id
    c2 = Conversation(cb).user("Read /tmp/report.txt")
    c2.send_container = old
    cb.clock.advance(days=31)
    c2.reject("container.unknown_or_expired", EXPIRED_MESSAGE.format(cid=old))
    c2.send_container = None
    s2 = cb.ids.make("srvtoolu")
    c2.turn([b.server_tool_use(s2, "bash_code_execution", {"command": "cat /tmp/report.txt"}),
             b.bash_result(s2, "", "cat: /tmp/report.txt: No such file or directory", 1),
             b.text("This is a new container, so the earlier report is gone.")], "end_turn",
            container=True)
    return cb


def container_upload(v: str, streamed: bool) -> CassetteBuilder:
    cb = _cb(v, "container_upload", "a container_upload block analysed by bash", [S_UPLOAD,
             protocol("2. Code execution tool: Limits and pricing")], streamed)
    fid = cb.ids.make("file")
    c = Conversation(cb, beta="files-api-2025-04-14").user(
        [b.text("Analyze this CSV data"), b.container_upload(fid)])
    sid = cb.ids.make("srvtoolu")
    c.turn([b.server_tool_use(sid, "bash_code_execution",
                              {"command": "python3 -c \"import pandas as pd, os; "
                                          "print(pd.read_csv(os.path.join(os.environ['INPUT_DIR'], "
                                          "'data.csv')).describe())\""}),
            b.bash_result(sid, "       value\ncount    4.0\nmean    25.0\n"),
            b.text("The `value` column has 4 rows with a mean of 25.")], "end_turn", container=True)
    return cb


def reject_unsupported_model(v: str) -> CassetteBuilder:
    cb = _cb(v, "reject_unsupported_model", "a model that does not accept code execution is refused",
             [seed(SEED_CODE_EXECUTION, "featureMetadata.supportedModels"),
              seed(SEED_CODE_EXECUTION, "Versi alat")], False)
    cb.model = "claude-3-7-sonnet-20250219"
    c = Conversation(cb).user("List the files in the working directory.")
    c.reject("tools.model_compatibility", "")
    return cb


@family("code_execution")
def build() -> Iterator[CassetteBuilder]:
    for v in VERSIONS:
        tv = TOOLS[v]
        for streamed in (False, True):
            yield bash_run(v, streamed)
            yield bash_output_files(v, streamed)
            yield editor_view(v, streamed)
            yield editor_create(v, streamed, update=False)
            yield editor_create(v, streamed, update=True)
            yield editor_str_replace(v, streamed)
            for code in tv.error_codes["bash_code_execution"]:
                yield bash_error(v, streamed, code)
            for code in tv.error_codes["text_editor_code_execution"]:
                yield editor_error(v, streamed, code)
            if "code_execution" in tv.sub_tools:
                for code in tv.error_codes["code_execution"]:
                    yield code_error(v, streamed, code)
            yield pause_turn(v, streamed)
            yield container_reuse(v, streamed)
            yield container_expired(v, streamed)
            yield container_upload(v, streamed)
        yield reject_unsupported_model(v)
        yield pause_turn_not_resent(v)
