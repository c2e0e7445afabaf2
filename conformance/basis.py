"""What each check rests on: the sentence of its source, quoted, with its English translation.

A check's :class:`~simulator.sources.Source` names the page and the section; its :class:`Basis`
is the sentence there the check asserts, quoted exactly from the cited document (Indonesian,
French or Korean for the seeds, English for ``PROTOCOL.md``) with a faithful English translation
beside it. Where no sentence states what the check asserts (a convention the docs leave open, a
level set by the calibration rule of docs/checks.md: data loss, input executed as code, hangs, a
wrong ``is_error``), ``rule`` says so, and a quote, when there is one, is only the nearest
sentence the check builds on. Nothing here is invented: ``tests/test_basis.py`` finds every
``original`` in the seed file or ``PROTOCOL.md`` it cites (whitespace normalised).

The data lives in the package (the seeds do not travel with the wheel), keyed by check id, in
one place: :data:`BASES`. ``Check.basis`` reads it; the reports and ``docs/checks.md`` show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator.sources import PAGES


@dataclass(frozen=True)
class Basis:
    """``original``: the cited document's words, exactly (empty when no sentence states the
    check); ``english``: their translation (empty when the document is English already);
    ``rule``: what the check rests on beyond a sentence (the calibration rule or convention)."""

    original: str = ""
    english: str = ""
    rule: str = ""

    def __post_init__(self) -> None:
        if not (self.original or self.rule):
            raise ValueError("a basis needs a quoted sentence or a rule")
        if self.english and not self.original:
            raise ValueError("a translation needs the original beside it")

    def to_json(self, document: str) -> dict[str, Any]:
        """``{"original", "language", "original_url", "english", "rule"}`` (keys without a value
        left out); ``english`` is the quote itself for an English document, and the project's
        own translation otherwise (``original_url``: the translated page the original is on)."""
        out: dict[str, Any] = {}
        if self.original:
            out["original"] = self.original
            out["language"] = language(document)
            if document in PAGES:
                out["original_url"] = PAGES[document][2]
            out["english"] = self.english or self.original
        if self.rule:
            out["rule"] = self.rule
        return out


def language(document: str) -> str:
    """The language a cited document is written in (the seeds are translations)."""
    return PAGES[document][1] if document in PAGES else "English"


#: How a translated sentence is marked wherever it is shown: the English is the project's own
#: translation of the quoted page, not the vendor's words.
TRANSLATION_MARK = "(our translation)"


def translated(basis: dict[str, Any] | None) -> bool:
    """Whether the basis's English sentence is the project's translation of its original."""
    return bool(basis and basis.get("original")
                and basis.get("language", "English") != "English")


def original_line(basis: dict[str, Any]) -> str:
    """``Korean original: “…” — https://…/ko/…`` (the quote as the page says it, and the page)."""
    url = f" \u2014 {basis['original_url']}" if basis.get("original_url") else ""
    return f"{basis['language']} original: \u201c{basis['original']}\u201d{url}"


def basis_lines(basis: dict[str, Any] | None) -> list[str]:
    """The basis as plain lines (terminal, JUnit, ``tooluse checks``): the English sentence
    (marked as the project's translation when it is one), the original beside it with its page,
    and the rule."""
    if not basis:
        return []
    out: list[str] = []
    if basis.get("original"):
        mark = f" {TRANSLATION_MARK}" if translated(basis) else ""
        out.append(f"rests on: \u201c{basis['english']}\u201d{mark}")
        if translated(basis):
            out.append(f"  ({original_line(basis)})")
    if basis.get("rule"):
        head = "beyond the sentence" if out else "rests on no sentence"
        out.append(f"{head}: {basis['rule']}")
    return out


_DATA = ("the calibration rule (docs/checks.md): breaking it loses or corrupts the user's data; "
         "no sentence of the page states it")
_CODE = ("the calibration rule (docs/checks.md): breaking it executes input as code; no sentence "
         "of the page states it")
_HANG = "the calibration rule (docs/checks.md): breaking it hangs the session"
_RECOVERS = ("SHOULD: judged by what the session does, not by the words of the answers: the next "
             "command works (the state kept, or a fresh session that replaced a shell that "
             "ended, as the bash tool docs' own design does), or it is answered at once with an error "
             "and a restart brings the session back")

# Sentences quoted more than once.
_VIEW = Basis(
    "Perintah view memungkinkan Claude untuk memeriksa konten file atau mendaftar konten "
    "direktori.",
    "The view command lets Claude examine the contents of a file or list the contents of a "
    "directory.")
_STR_REPLACE = (
    "Perintah str_replace memungkinkan Claude untuk mengganti string tertentu dalam file dengan "
    "string baru. Ini digunakan untuk membuat pengeditan yang tepat.",
    "The str_replace command lets Claude replace a specific string in a file with a new string. "
    "It is used to make precise edits.")
_INSERT_LINE = (
    "insert_line: Nomor baris setelah mana teks akan disisipkan (0 untuk awal file)",
    "insert_line: The line number after which the text is inserted (0 for the start of the file)")
_EXACTLY_ONE = Basis(
    "Aplikasi Anda harus memastikan bahwa ada tepat satu kecocokan untuk teks lama atau "
    "memberikan pesan kesalahan yang sesuai.",
    "Your application must make sure that there is exactly one match for the old text, or give "
    "an appropriate error message.")
_MISSING_FILE = (
    "Jika Claude mencoba melihat atau memodifikasi file yang tidak ada, kembalikan pesan "
    "kesalahan yang sesuai dalam tool_result:",
    "If Claude tries to view or modify a file that does not exist, return an appropriate error "
    "message in the tool_result:")
_SECURITY_001 = (
    "Keamanan: Tool memiliki akses ke sistem file lokal Anda, jadi implementasikan "
    "langkah-langkah keamanan yang tepat.",
    "Security: The tool has access to your local file system, so implement appropriate security "
    "measures.")
_VALIDATE_001 = (
    "Validasi: Validasi semua input untuk mencegah perubahan yang tidak diinginkan.",
    "Validation: Validate all input to prevent unintended changes.")
_PERSIST = Basis(
    "작업 디렉터리, 환경 변수, 명령이 만든 어떤 파일도 다음 명령을 위해 그대로 남아 있어요.",
    "The working directory, environment variables and any file a command created stay in place "
    "for the next command.")
_OUTPUT_RETURNED = (
    "여러분의 애플리케이션이 명령의 출력(stdout과 stderr를 함께)을 tool_result 블록으로 "
    "Claude에 반환해요.",
    "Your application returns the command's output (stdout and stderr together) to Claude as a "
    "tool_result block.")
_SENTINEL = (
    "라이브 프로세스로의 파이프는 파일 끝을 보고하지 않으므로, 세션은 각 명령 후에 고유한 "
    "센티널 줄을 출력해 그 명령의 출력이 어디서 끝나는지 표시해요",
    "A pipe to a live process does not report end of file, so the session prints a unique "
    "sentinel line after each command to mark where that command's output ends")
_TELL_CLAUDE = (
    "명령이 실패하거나 세션이 깨지면 Claude에 무슨 일이 있었는지 알려주세요.",
    "When a command fails or the session breaks, tell Claude what happened.")
_ISOLATE = Basis(
    "컨테이너나 가상 머신 같은 격리된 환경에서 최소 권한 사용자로 세션을 실행하세요.",
    "Run the session as a least-privileged user in an isolated environment such as a container "
    "or a virtual machine.",
    "SHOULD, a recommended safeguard: the tool cannot be held to isolation it does not provide, "
    "but what it does on its own outside its case is reported")
_PAUSE_TURN = Basis(
    "Anda dapat memberikan respons tersebut kembali apa adanya dalam permintaan berikutnya agar "
    "Claude melanjutkan gilirannya, atau memodifikasi kontennya jika Anda ingin menginterupsi "
    "percakapan.",
    "You can pass the response back as-is in the next request to let Claude continue its turn, "
    "or modify its content if you want to interrupt the conversation.")
_PTC_CONTAINER = Basis(
    "L'ID du conteneur est OBLIGATOIRE sur cette requête de suivi, pas optionnel — l'API rejette "
    "la requête sans lui, car elle doit retrouver l'interpréteur en pause.",
    "The container ID is REQUIRED on this follow-up request, not optional — the API rejects the "
    "request without it, because it has to find the paused interpreter again.")
_MCP_ERROR = Basis(
    "Ketika server MCP melaporkan error alat, worker mengirimkan hasil alat error yang dapat "
    "ditanggapi oleh model.",
    "When the MCP server reports a tool error, the worker sends an error tool result the model "
    "can respond to.")
_MIXED = Basis(
    "Continue with a user message of only `tool_result` blocks and the same tools.")
_BYTES = Basis(*_STR_REPLACE, rule=_DATA + " (the page says what each command changes; "
               "changing anything else, such as line endings, tabs or bytes, is the loss)")

#: Check id -> what it rests on. Every check in the catalog has an entry (a test holds it so).
BASES: dict[str, Basis] = {
    # --- seed 000: code execution (Indonesian) ---
    "loop.pause_turn.resend": _PAUSE_TURN,
    "loop.pause_turn.streamed": _PAUSE_TURN,
    "loop.container.expired": Basis(
        "Container yang sudah kedaluwarsa tidak dapat digunakan kembali. Kirim ulang permintaan "
        "tanpa parameter `container` untuk mendapatkan container baru.",
        "An expired container cannot be reused. Send the request again without the `container` "
        "parameter to get a new container.",
        rule="SHOULD (recalibrated in issue 23): the sentence gives the developer's remedy; it "
        "does not say a client must resend by itself, and a loop that hands the 400 to its "
        "application reports the failure as it is"),
    "loop.container.kept_on_continuation": Basis(
        "Anda dapat menggunakan kembali container yang sudah ada di beberapa permintaan API dengan "
        "memberikan ID container dari respons sebelumnya. Ini memungkinkan Anda mempertahankan "
        "file yang telah dibuat di antara permintaan.",
        "You can reuse an existing container across several API requests by giving the "
        "container ID from the previous response. This lets you keep the files created between "
        "requests.",
        rule="SHOULD: a recommendation; no live capture shows the API refusing a continuation "
        "without it (11 of 11 live continuations after code execution send it); a drop the API "
        "refuses is ptc.container.required's"),
    # --- seed 001: text editor (Indonesian) ---
    "editor.paths.never_executed_by_directory_view": Basis(*_SECURITY_001, rule=_CODE),
    "editor.paths.never_executed_by_file_commands": Basis(*_SECURITY_001, rule=_CODE),
    "editor.paths.relative_paths": Basis(
        "path: Path ke file atau direktori yang akan dilihat",
        "path: The path to the file or directory to view",
        "a convention the docs leave open (INFO): the page's own examples use relative paths "
        "(\"primes.py\", \"src/\", \"test_primes.py\") and no sentence requires absolute "
        "ones; a tool that takes only absolute paths refuses them with an error, which loses "
        "nothing"),
    "editor.paths.outside_workdir_refused": Basis(
        "Validasi path file untuk mencegah directory traversal",
        "Validate file paths to prevent directory traversal"),
    "editor.errors.invalid_input_answered": Basis(
        *_VALIDATE_001, rule="MUST because accepting it may change the user's files in ways "
        "nobody asked for (the calibration rule: data)"),
    "editor.undo_edit.refused_without_undo": Basis(
        "Versi ini menghapus perintah `undo_edit` tetapi mempertahankan semua kemampuan "
        "lainnya.",
        "This version removes the `undo_edit` command but keeps every other capability.",
        "SHOULD: refusing it is what the page's sample handler does (a recommendation); "
        "accepting it loses nothing"),
    "editor.view.line_numbers": Basis(
        "Nomor baris tidak diperlukan, tetapi sangat penting untuk berhasil menggunakan "
        "parameter view_range untuk memeriksa bagian tertentu dari file dan parameter "
        "insert_line untuk menambahkan konten pada lokasi yang tepat.",
        "Line numbers are not required, but they are essential for successfully using the "
        "view_range parameter to examine specific parts of the file and the insert_line "
        "parameter to add content at the right place."),
    "editor.model.agrees_with_reference_model": Basis(
        "Tool editor teks mendukung beberapa perintah untuk melihat dan memodifikasi file:",
        "The text editor tool supports several commands for viewing and modifying files:",
        "each command's semantics as the sentences of its own checks quote them (view, "
        "str_replace, create, insert, undo_edit), applied step by step"),
    "editor.paths.special_characters_are_plain": Basis(
        "path: Path ke file atau direktori yang akan dilihat",
        "path: The path to the file or directory to view",
        "a path is a name, taken as it is written; running or reinterpreting it executes input "
        "as code or writes elsewhere (the calibration rule)"),
    "editor.errors.flagged_is_error": Basis(
        '"content": "Error: File tidak ditemukan", "is_error": true',
        '"content": "Error: File not found", "is_error": true',
        "every error example of the page carries is_error: true; a refusal reported as success "
        "lies (the calibration rule)"),
    "editor.errors.missing_file": Basis(*_MISSING_FILE),
    "editor.errors.returned_not_raised": Basis(*_MISSING_FILE),
    "editor.str_replace.rejects_multiple_matches": _EXACTLY_ONE,
    "editor.str_replace.rejects_no_match": _EXACTLY_ONE,
    "editor.create.writes_file_text": Basis(
        "Perintah create memungkinkan Claude untuk membuat file baru dengan konten yang "
        "ditentukan.",
        "The create command lets Claude create a new file with the specified content."),
    "editor.insert.at_end": Basis(*_INSERT_LINE),
    "editor.insert.at_start": Basis(*_INSERT_LINE),
    "editor.insert.in_middle": Basis(*_INSERT_LINE),
    "editor.insert.newline_convention": Basis(
        "new_str: Teks yang akan disisipkan", "new_str: The text to insert",
        "a convention the docs leave open (INFO): the page's own example new_str ends in \\n and "
        "says nothing of how it is split; only a result that is neither convention corrupts"),
    "editor.insert.rejects_past_end": Basis(
        *_INSERT_LINE, rule="the page gives no upper bound: a line clearly past the end (or "
        "negative) names no place, and inserting anywhere else corrupts the file (the "
        "calibration rule: data); line count + 1 on a file ending in \\n is accepted"),
    "editor.bytes.crlf_preserved": _BYTES,
    "editor.bytes.large_file_preserved": _BYTES,
    "editor.bytes.long_lines_preserved": _BYTES,
    "editor.bytes.non_utf8_preserved": _BYTES,
    "editor.bytes.tabs_preserved": _BYTES,
    "editor.bytes.trailing_newline_preserved": _BYTES,
    "editor.str_replace.replaces_exactly_one_match": Basis(*_STR_REPLACE),
    "editor.str_replace.whitespace_exact": Basis(
        "old_str: Teks yang akan diganti (harus cocok persis, termasuk whitespace dan "
        "indentasi)",
        "old_str: The text to replace (must match exactly, including whitespace and "
        "indentation)"),
    "editor.undo_edit.restores_crlf": Basis(
        "Perintah undo_edit memungkinkan Claude untuk mengembalikan pengeditan terakhir yang "
        "dibuat pada file.",
        "The undo_edit command lets Claude revert the last edit made to the file.",
        _DATA + " (an undo that gives the file back with its line ends translated reverts "
        "the edit and changes every other line)"),
    "editor.undo_edit.restores_tabs": Basis(
        "Perintah undo_edit memungkinkan Claude untuk mengembalikan pengeditan terakhir yang "
        "dibuat pada file.",
        "The undo_edit command lets Claude revert the last edit made to the file.",
        _DATA + " (an undo that gives the file back with its tabs expanded reverts the edit "
        "and changes every indented line)"),
    "editor.undo_edit.restores_previous_content": Basis(
        "Perintah undo_edit memungkinkan Claude untuk mengembalikan pengeditan terakhir yang "
        "dibuat pada file.",
        "The undo_edit command lets Claude revert the last edit made to the file."),
    "editor.view.binary_file_answered": Basis(
        _VIEW.original, _VIEW.english,
        "the page says nothing of binary files; crashing, hanging or changing the file is "
        "what the calibration rule forbids (hangs, data), so content or an error both pass"),
    "editor.view.directory_lists_entries": _VIEW,
    "editor.view.returns_file_content": Basis(
        "Ini dapat membaca seluruh file atau rentang baris tertentu.",
        "It can read the whole file or a specific range of lines."),
    "editor.view.view_range_minus_one_reads_to_end": Basis(
        "Nomor baris dimulai dari 1, dan -1 untuk baris akhir berarti baca sampai akhir file.",
        "Line numbers start at 1, and -1 for the end line means read to the end of the file."),
    "editor.view.view_range_one_based_inclusive": Basis(
        "view_range (opsional): Array dari dua integer yang menentukan nomor baris awal dan "
        "akhir untuk dilihat. Nomor baris dimulai dari 1,",
        "view_range (optional): An array of two integers giving the start and end line numbers "
        "to view. Line numbers start at 1,"),
    "editor.view.view_range_out_of_range_is_error": Basis(
        *_VALIDATE_001, rule="inferred (SHOULD): the page defines a range inside the file and "
        "says nothing of one outside it; refusing a clearly invalid range is the validation it "
        "recommends"),
    # --- seed 002: programmatic tool calling (French) ---
    "loop.ptc.parallel_calls": Basis(
        "Parce que les fonctions sont async, Claude peut se déployer en éventail avec "
        "asyncio.gather et solliciter dix outils simultanément",
        "Because the functions are async, Claude can fan out with asyncio.gather and call ten "
        "tools at once",
        "calls made at once are pending at once, and the reply to pending programmatic calls "
        "holds only their tool_result blocks (the programmatic tool calling page, The five ways it breaks)"),
    "loop.ptc.pause_resume": _PTC_CONTAINER,
    "loop.ptc.pause_resume_streamed": _PTC_CONTAINER,
    "loop.ptc.several_pauses": Basis(
        "Votre résultat devient la valeur de retour de cette expression await. La boucle "
        "continue.",
        "Your result becomes the return value of that await expression. The loop continues.",
        "each pause is a follow-up request like the first, so each needs the container id"),
    # --- seed 003: bash (Korean) ---
    "loop.client_tools.one_per_turn": Basis(
        "여러분의 애플리케이션은 자체 bash 세션에서 그 명령을 실행하고 출력을 tool_result 블록으로 "
        "반환해요.",
        "Your application runs the command in its own bash session and returns the output as a "
        "tool_result block."),
    "loop.client_tools.several_per_turn": Basis(
        "Claude는 한 응답에서 여러 tool_use 블록을 반환할 수도 있어요. 같은 세션에서 순서대로 "
        "실행하고 모든 결과를 하나의 user 메시지로 반환하세요.",
        "Claude may also return several tool_use blocks in one response. Run them in order in "
        "the same session and return every result in one user message."),
    "loop.client_tools.streamed": Basis(
        "결과를 Claude에 반환하기 — tool_result를 같은 대화를 계속하는 user 메시지로 보내요.",
        "Return the result to Claude — send the tool_result as a user message that continues "
        "the same conversation.",
        "a streamed response asks for the same answer as a plain one"),
    "bash.model.agrees_with_session_model": Basis(
        "여러분의 애플리케이션은 도구 호출 간에 하나의 bash 프로세스를 살려두므로 명령 사이에 "
        "상태가 지속돼요.",
        "Your application keeps one bash process alive across tool calls, so state persists "
        "between commands.",
        "with the restart sentence of bash.restart.clears_state, applied to generated "
        "sequences"),
    "bash.session.cwd_persists": _PERSIST,
    "bash.session.env_persists": _PERSIST,
    "bash.session.files_persist": _PERSIST,
    "bash.output.interleaved_in_order": Basis(
        "세션은 stderr를 stdout과 함께 인터리브해서 오류 메시지가 발생한 곳에 나타나게 해요.",
        "The session interleaves stderr with stdout so that error messages appear where they "
        "occurred."),
    "bash.session.background_job_does_not_hang": Basis(
        *_SENTINEL, rule=_HANG + " (a job holding the output pipe open keeps end of file from "
        "ever arriving; a command ending in `&` that the tool's own suffix turns into a syntax "
        "error ends the shell); no sentence names background jobs"),
    "bash.session.sentinel_lookalike_output": Basis(
        *_SENTINEL, rule="the marker is the harness's business: output that merely looks like "
        "one is the command's output (cutting it short loses it; the calibration rule: data)"),
    "bash.session.no_processes_left_after_close": Basis(
        "kill은 멈춘 명령과 그것이 시작한 모든 것을 중지해요.",
        "kill stops the stuck command and everything it started."),
    "bash.stdin.does_not_hang": Basis(
        "결코 끝나지 않는 명령(입력을 기다리는 명령 등)은 센티널 줄이 도착하지 않으므로 세션을 영원히 "
        "막아요. 모든 명령에 마감 시간을 주세요.",
        "A command that never ends (such as one waiting for input) blocks the session forever, "
        "because the sentinel line never arrives. Give every command a deadline.",
        "with “Limitations”: the session cannot run a command that waits for input on stdin; in "
        "the page's own design such a command reads the tool's next line and the deadline ends "
        "it with an error, which is conformant; a command fed input nobody sent and answered as "
        "a success is a lie (the calibration rule)"),
    "bash.timeout.returns_error_in_time": Basis(
        "메시지를 오류 tool_result로 반환하세요 (오류 처리하기 참고). 그러면 도구 호출이 실패로 "
        "표시돼요.",
        "Return the message as an error tool_result (see Handle errors). The tool call is then "
        "marked as failed."),
    "bash.timeout.session_usable_after": Basis(
        "마감 시간이 지나면 셸과 명령이 시작한 모든 것을 중지한 다음 세션을 재시작해요",
        "When the deadline passes, the shell and everything the command started are stopped, "
        "then the session is restarted"),
    "bash.sandbox.stays_in_its_case": _ISOLATE,
    "editor.sandbox.stays_in_its_case": _ISOLATE,
    "bash.errors.exit_recovers": Basis(*_TELL_CLAUDE, rule=_RECOVERS),
    "bash.errors.failure_flagged": Basis(
        "메시지를 tool_result 콘텐츠로 반환하고 is_error를 true로 설정해 도구 호출이 실패했음을 "
        "표시해요.",
        "Return the message as the tool_result content and set is_error to true to mark that "
        "the tool call failed."),
    "bash.errors.syntax_error_recovers": Basis(*_TELL_CLAUDE, rule=_RECOVERS),
    "bash.input.empty_or_comment_answered": Basis(
        _PERSIST.original, _PERSIST.english,
        "an empty or comment-only command is input the page does not name; a hang, or a session "
        "lost for it, is what the calibration rule forbids (hangs, data); how it is answered "
        "(no output, a placeholder, an error) is left open"),
    "bash.output.non_utf8_answered": Basis(
        *_OUTPUT_RETURNED, rule="the page says nothing of output that is not UTF-8; a crash, a "
        "hang or the valid text around the bytes lost is what the calibration rule forbids "
        "(hangs, data); how the invalid bytes are shown is left open (reported)"),
    "bash.output.control_characters": Basis(
        *_OUTPUT_RETURNED, rule="a convention the docs leave open (INFO): the page asks for "
        "the output, not for a byte format; the check reports which form it saw"),
    "bash.output.partial_last_line": Basis(*_OUTPUT_RETURNED),
    "bash.output.roundtrip": Basis(*_OUTPUT_RETURNED),
    "bash.output.written_over_time": Basis(
        *_OUTPUT_RETURNED,
        "output written in bursts over time is the command's output too: it comes back whole, "
        "once and in order (losing or repeating part of it corrupts what the model reads)"),
    "bash.output.cut_short_says_so": Basis(
        "토큰 한도 문제를 막으려면 큰 출력을 자릅니다",
        "To avoid token limit problems, truncate large outputs",
        "SHOULD: the docs' own helper marks a cut (\"... Output truncated (N total lines) ...\"); "
        "an output cut without a word reads as the whole output"),
    "bash.output.large_output_returns": Basis(
        "출력 한도: API는 도구 결과를 자르지 않아요 (과도하게 큰 요청은 거부돼요).",
        "Output limit: the API does not truncate tool results (an oversized request is "
        "rejected).",
        "the output must come back (in time, without an error); which part is kept is left "
        "open"),
    "bash.output.large_output_truncated": Basis(
        "토큰 한도 문제를 막으려면 큰 출력을 자릅니다",
        "To avoid token limit problems, truncate large outputs"),
    "bash.input.invalid_rejected": Basis(
        "*restart 사용을 제외하고 필수", "*Required except when using restart",
        "SHOULD: refusing malformed input is a recommendation; accepting it loses nothing"),
    "bash.restart.clears_state": Basis(
        "재시작된 세션은 깨끗하게 시작돼요. 작업 디렉터리, 환경 변수, 실행 중인 프로세스가 모두 "
        "사라져요.",
        "The restarted session starts clean. The working directory, environment variables and "
        "running processes are all gone."),
    "bash.restart.confirms": Basis(
        "restart: true를 처리하려면 셸 프로세스를 죽이고 새로 시작한 다음 재시작을 확인하는 "
        "tool_result를 반환하세요.",
        "To handle restart: true, kill the shell process, start a new one, then return a "
        "tool_result confirming the restart."),
    # --- seed 004: custom tools of self-hosted sandboxes (Indonesian) ---
    "worker.custom_tool_result.error_explains_failure": _MCP_ERROR,
    "worker.custom_tool_result.failure_is_error": _MCP_ERROR,
    "worker.custom_tool_use.timeout_becomes_error": Basis(
        "Tetapkan timeout pada klien MCP untuk kegagalan yang lebih cepat dan lebih jelas, "
        "seperti yang dilakukan contoh worker Python dengan `read_timeout_seconds`.",
        "Set a timeout on the MCP client for faster, clearer failures, as the Python worker "
        "example does with `read_timeout_seconds`."),
    "worker.custom_tool_use.answered_once": Basis(
        "agen memancarkan event `agent.custom_tool_use` dan menunggu `user.custom_tool_result` "
        "yang sesuai.",
        "the agent emits an `agent.custom_tool_use` event and waits for the matching "
        "`user.custom_tool_result`."),
    "worker.custom_tool_use.unserved_left_pending": Basis(
        "Worker hanya menjawab alat yang didaftarkan padanya. Jika sebuah alat dideklarasikan "
        "pada agen tetapi tidak ada worker atau klien yang melayaninya, sesi akan dijeda dengan "
        "alasan berhenti `requires_action`.",
        "A worker answers only the tools registered with it. If a tool is declared on the agent "
        "but no worker or client serves it, the session pauses with stop reason "
        "`requires_action`."),
    # --- PROTOCOL.md (English) ---
    "loop.corpus.drives_every_conversation": Basis(
        rule="every recorded conversation is continued by the loop and "
        "judged by the simulator's rules, each citing its own source (the error texts of the "
        "cited section are what a broken continuation meets)"),
    "loop.mixed.client_and_server_tools": _MIXED,
    "loop.mixed.streamed": _MIXED,
    "editor.insert.accepts_insert_text": Basis(
        "`insert{path,insert_line (0 = start of file),insert_text}`."),
    "editor.errors.documented_texts": Basis(
        'Errors, as `tool_result` with `"is_error":true`',
        rule="a convention (INFO): the texts are examples (the text editor page asks for \u201can "
        "appropriate error message\u201d); the check reports which are used and fails only an "
        "empty error"),
    "editor.view.max_characters_truncates": Basis(
        "Docs: `max_characters` works only with 20250728+; your handler truncates `view` output "
        "to that length"),
    "bash.output.stdout_and_stderr": Basis(
        "Return stdout and stderr combined in one `tool_result`."),
    "loop.ptc.caller_resent": Basis(
        "Send the full history plus a user message of **only** `tool_result` blocks, one for "
        "every pending programmatic call.",
        rule="SHOULD: the full history holds each programmatic tool_use with the caller it was "
        "served with; no live capture shows the API refusing one without it (the one live "
        "resend, pysdk__119, keeps it); a direct caller is optional"),
    "loop.errors.retry_after_respected": Basis(
        "`retry-after` in seconds",
        rule="SHOULD: the header gives the wait; nothing says the API refuses an early retry "
        "beyond another 429"),
    "loop.errors.transient_retried": Basis(
        "It retries 408, 409, 429 and ≥500, twice by default",
        rule="SHOULD: what the SDK does [S]; the docs do not require it, and a loop that gives "
        "up loses nothing"),
    "worker.lease.heartbeat_keeps_lease": Basis(
        "Heartbeat every `min(ttl/2, 30)` s; lease TTL assumed 90 s until the server reports "
        "one."),
    "worker.lease.lost_lease_stops_work": Basis(
        "A 412 means the lease is lost; `state` stopping/stopped or `lease_extended:false` "
        "means shut down."),
    "worker.sessions.served_in_turn": Basis(
        "Poll with `block_ms=999`, jitter 1–3 s between empty polls; ack each item; a fatal "
        "ack 4xx force-stops it.",
        rule="the SDK worker's behaviour [S]; the order of sessions is not prescribed"),
}
