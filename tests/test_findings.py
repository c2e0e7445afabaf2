"""`tooluse findings` (issue 39): a small matrix of the suite's own broken subjects, with the
reference beside them, gives one folder per failing cell whose repro.py exits 1 against the
broken subject and 0 against the reference; ISSUE.md is rendered from a finding; the committed
findings' reproducers are valid standalone Python."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.cli import main
from conformance.findings.model import Finding
from conformance.findings.sources import cause_of, source_lines
from conformance.findings.write import render_issue

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "broken"
CHECKS = ["bash.errors.failure_flagged", "editor.bytes.crlf_preserved"]
#: (column, check, the reference spec the same steps pass on)
CELLS = [("never-flags", "bash.errors.failure_flagged", "conformance.reference.bash:factory"),
         ("text-mode-io", "editor.bytes.crlf_preserved",
          "conformance.reference.editor:text_editor_20250728")]


def _config(tmp: Path) -> Path:
    cfg = tmp / "matrix.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [matrix]
        timeout = 3.0

        [[subject]]
        name = "reference-bash"
        tool_type = "bash_20250124"
        factory = "conformance.reference.bash:factory"

        [[subject]]
        name = "never-flags"
        tool_type = "bash_20250124"
        factory = "{BROKEN}/bash_never_flags.py:factory"

        [[subject]]
        name = "reference-editor"
        tool_type = "text_editor_20250728"
        factory = "conformance.reference.editor:text_editor_20250728"

        [[subject]]
        name = "text-mode-io"
        tool_type = "text_editor_20250728"
        factory = "{BROKEN}/editor_broken_bytes.py:TextModeIO.factory"
        """))
    return cfg


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("findings")
    out = tmp / "matrix"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["matrix", str(_config(tmp)), "--out", str(out), "--envs", str(tmp / "envs"),
                     "--check", *CHECKS]) == 0
        assert main(["findings", str(out)]) == 0
    return out / "findings"


def _run(repro: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, repro.name, *args], cwd=repro.parent, text=True,
                          capture_output=True, timeout=120, check=False)


def test_one_folder_per_failing_cell(findings: Path) -> None:
    folders = sorted(p.parent.relative_to(findings).as_posix()
                     for p in findings.glob("*/*/finding.json"))
    assert folders == sorted(f"{col}/{check}" for col, check, _ in CELLS)
    index = (findings / "README.md").read_text()
    assert "| never-flags | this suite | 1 | 1 | 0 | 1 |" in index


@pytest.mark.parametrize(("column", "check", "reference"), CELLS)
def test_repro_exits_1_on_the_broken_subject_and_0_on_the_reference(
        findings: Path, column: str, check: str, reference: str) -> None:
    repro = findings / column / check / "repro.py"
    source = repro.read_text()
    imported = {n.names[0].name.split(".")[0] for n in ast.walk(ast.parse(source))
                if isinstance(n, ast.Import)}
    imported |= {n.module.split(".")[0] for n in ast.walk(ast.parse(source))
                 if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= set(sys.stdlib_module_names), imported  # the suite is not imported
    broken = _run(repro)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "defect present" in broken.stdout and "https://platform.claude.com/" in broken.stdout
    fixed = _run(repro, reference)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "not reproduced" in fixed.stdout


def test_verify_records_the_exit_codes(findings: Path) -> None:
    matrix_dir = findings.parent
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["findings", str(matrix_dir), "--verify", "--no-write"]) == 0
    for column, check, _ in CELLS:
        record = json.loads((findings / column / check / "finding.json").read_text())
        assert [e["exit_code"] for e in record["exit_codes"]] == [1]
        assert record["level"] == "MUST" and record["fingerprint"]
    assert "reproduces at" in (findings / "README.md").read_text()
    with contextlib.redirect_stdout(io.StringIO()):  # written again: what was verified stays
        assert main(["findings", str(matrix_dir)]) == 0
    record = json.loads((findings / CELLS[0][0] / CELLS[0][1] / "finding.json").read_text())
    assert [e["exit_code"] for e in record["exit_codes"]] == [1]


def test_issue_md_from_the_matrix(findings: Path) -> None:
    issue = (findings / "text-mode-io" / "editor.bytes.crlf_preserved" / "ISSUE.md").read_text()
    assert issue.startswith("# text-mode-io: after str_replace, bytes outside the edited span")
    for part in ("## What the docs say", "## Expected", "## Actual", "## Reproduce",
                 "python repro.py", "**Level**: MUST", "text-editor-tool"):
        assert part in issue, part


def _finding(**over: object) -> Finding:
    values: dict[str, object] = dict(
        check_id="editor.bytes.crlf_preserved", column="openhands-aci", level="MUST",
        package="openhands-aci", version="0.3.3", check_fingerprint="abc",
        statement="CRLF line endings survive every command: no newline translation.",
        sentence="The str_replace command lets Claude replace a specific string in a file.",
        url="https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool",
        section="str_replace", cite="str_replace", why_level="it loses the user's data",
        message="after str_replace, bytes outside the edited span changed",
        received="b'first\\nEDITED\\n'", documented="b'first\\r\\nEDITED\\r\\n'",
        reproducer=[{"command": "str_replace", "path": "$TOOLUSE_WORKDIR/dos.txt",
                     "old_str": "TOKEN", "new_str": "EDITED"}],
        setup=[{"before_input": 1, "path": "$TOOLUSE_WORKDIR/dos.txt",
                "text": "first\r\nTOKEN\r\n"}],
        rerun="tooluse run ...", implementation={"requirements": ["openhands-aci==0.3.3"]},
        timeout=3.0, source_lines="`editor.py:653`: text mode", repro="repro.py")
    values.update(over)
    return Finding(**values)  # type: ignore[arg-type]


def test_issue_md_rendered_from_a_finding() -> None:
    text = render_issue(_finding())
    lines = text.splitlines()
    assert lines[0] == "# openhands-aci 0.3.3: after str_replace, bytes outside the edited span changed"
    assert "- **Implementation**: `openhands-aci` (openhands-aci 0.3.3)" in lines
    assert "- **Level**: MUST: it loses the user's data" in lines
    assert "> The str_replace command lets Claude replace a specific string in a file." in lines
    assert ("str_replace: https://platform.claude.com/docs/en/agents-and-tools/tool-use/"
            "text-editor-tool") in lines
    assert "`editor.py:653`: text mode" in lines
    assert "pip install openhands-aci==0.3.3" in lines
    assert '"text": "first\\r\\nTOKEN\\r\\n"' in text  # the planted file, as JSON
    none = render_issue(_finding(repro=None, repro_reason="no oracle"))
    assert "No standalone reproducer: no oracle." in none and "tooluse run ..." in none


def test_source_lines_come_from_the_docs() -> None:
    table = source_lines(ROOT)
    assert "editor.py:653" in (cause_of(table, "openhands-aci", "editor.bytes.crlf_preserved")
                               or "")
    assert cause_of(table, "langchain-anthropic", "loop.ptc.pause_resume")  # a pattern section
    assert cause_of(table, "openhands-tools-terminal-tmux", "bash.timeout.session_usable_after") \
        is None  # a subprocess-only row


@pytest.mark.parametrize("matrix", ["matrix", "frameworks"])
def test_committed_reproducers_are_standalone_python(matrix: str) -> None:
    folder = ROOT / "reports" / matrix / "findings"
    if not folder.exists():
        pytest.skip(f"reports/{matrix}/findings not generated")
    for repro in folder.glob("*/*/repro.py"):
        tree = ast.parse(repro.read_text(), str(repro))
        mods = {n.names[0].name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)}
        mods |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module}
        assert "conformance" not in mods and "simulator" not in mods, repro
    for record in folder.glob("*/*/finding.json"):
        data = json.loads(record.read_text())
        assert data["repro"] or data["repro_reason"], record


def _committed_tool_findings() -> list[Finding]:
    from conformance.findings.model import collect

    matrix_dir = ROOT / "reports" / "matrix"
    return collect(matrix_dir) if (matrix_dir / "matrix.json").exists() else []


#: The reference subject of each tool type (every check passes on it).
REFERENCE = {"bash_20250124": "conformance.reference.bash:factory",
             "text_editor_20250124": "conformance.reference.editor:text_editor_20250124",
             "text_editor_20250728": "conformance.reference.editor:text_editor_20250728"}


@pytest.mark.parametrize("finding", _committed_tool_findings(),
                         ids=lambda f: f"{f.column}/{f.check_id}")
def test_each_committed_counterexample_passes_on_the_reference(finding: Finding,
                                                               tmp_path: Path) -> None:
    """The oracle of every committed tool-matrix finding, on the same steps sent to the
    reference instead of the implementation, says "not reproduced": a reproducer exits 1 for the
    implementation's behaviour, not whatever the subject does."""
    import dataclasses

    from conformance.findings.write import write_findings

    impl = dict(finding.implementation, kind="factory",
                spec=REFERENCE[finding.implementation["tool_type"]])
    [record] = write_findings([dataclasses.replace(finding, implementation=impl)],
                              tmp_path / "out", root=ROOT, title="reference")
    assert record["repro"], record["repro_reason"]
    done = _run(tmp_path / "out" / finding.column / finding.check_id / "repro.py")
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]


def test_newest_version_from_pip_and_npm() -> None:
    from conformance.findings.upgrade import newest_version

    pip_out = "openhands-aci (0.3.5)\nAvailable versions: 0.3.5, 0.3.4, 0.3.3\n"
    assert newest_version("openhands-aci", run=lambda argv: pip_out) == "0.3.5"
    seen: list[list[str]] = []
    assert newest_version("@ai-sdk/anthropic", npm=True,
                          run=lambda argv: seen.append(argv) or "3.0.200\n") == "3.0.200"
    assert seen == [["npm", "view", "@ai-sdk/anthropic", "version"]]


def test_rewrite_pin_moves_only_the_columns_own_pin() -> None:
    from conformance.findings.upgrade import rewrite_pin

    text = textwrap.dedent("""\
        [[subject]]
        name = "a"
        requirements = ["--use-deprecated=legacy-resolver", "openhands-tools==1.58.2"]

        [[subject]]
        name = "b"
        requirements = ["openhands-tools==1.58.2"]
        npm = ["ai@6.0.325", "@ai-sdk/anthropic@3.0.140"]
        """)
    moved, count = rewrite_pin(text, "b", "openhands-tools", "1.58.2", "1.60.0")
    assert count == 1
    assert moved.count("openhands-tools==1.58.2") == 1 and "openhands-tools==1.60.0" in moved
    assert moved.index("1.60.0") > moved.index('name = "b"')
    npm, n = rewrite_pin(text, "b", "@ai-sdk/anthropic", "3.0.140", "3.0.200")
    assert n == 1 and '"@ai-sdk/anthropic@3.0.200"' in npm and '"ai@6.0.325"' in npm


def test_upgrade_writes_fixed_still_there_and_new(findings: Path, tmp_path: Path) -> None:
    """--upgrade with the release lookup and the column's run stood in for (no network, no
    environment built): the "new release" of never-flags is the reference, so its finding is
    fixed upstream; the config's pin moved in that column's block only."""
    import shutil

    from conformance.findings.upgrade import upgrade

    out = tmp_path / "matrix"
    shutil.copytree(findings.parent, out)
    cfg = tmp_path / "matrix.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [[subject]]
        name = "never-flags"
        tool_type = "bash_20250124"
        factory = "{BROKEN}/bash_never_flags.py:factory"
        version_of = "demo-pkg"
        requirements = ["demo-pkg==1.0"]

        [[subject]]
        name = "text-mode-io"
        tool_type = "text_editor_20250728"
        factory = "{BROKEN}/editor_broken_bytes.py:TextModeIO.factory"
        requirements = ["demo-pkg==1.0"]
        """))
    fixed = tmp_path / "fixed.toml"
    fixed.write_text(textwrap.dedent("""\
        [[subject]]
        name = "never-flags"
        tool_type = "bash_20250124"
        factory = "conformance.reference.bash:factory"
        """))

    def run_column(config: Path, column: str, matrix_dir: Path, checks: object) -> int:
        assert "demo-pkg==2.0" in config.read_text() and column == "never-flags"
        return main(["matrix", str(fixed), "--out", str(matrix_dir), "--check", *CHECKS])

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        doc = upgrade(cfg, "never-flags", out, lookup=lambda package, npm: "2.0",
                      run_column=run_column, say=lambda _: None)
    assert doc is not None
    assert doc["diff"] == {"fixed upstream": ["bash.errors.failure_flagged"], "still there": [],
                           "new": []}
    text = cfg.read_text()
    assert text.count("demo-pkg==2.0") == 1 and text.count("demo-pkg==1.0") == 1
    report = (out / "upgrade" / "never-flags-2.0" / "UPGRADE.md").read_text()
    assert report.startswith("# never-flags: demo-pkg 1.0 -> 2.0")
    assert "## fixed upstream (1)\n\n- `bash.errors.failure_flagged`" in report
    same = upgrade(cfg, "never-flags", out, lookup=lambda package, npm: "2.0",
                   run_column=run_column, say=lambda _: None)
    assert same is None  # at the newest already: nothing run


_STDLIB_LOOP = '''
def conversation(doc, params):
    """A minimal loop on the standard library: resends after pause_turn (RESEND) or stops."""
    import urllib.request

    body = {k: v for k, v in params.items() if k not in ("extra_headers", "extra_body")}
    headers = {"content-type": "application/json", "x-api-key": os.environ["ANTHROPIC_API_KEY"],
               "anthropic-version": "2023-06-01", **(params.get("extra_headers") or {})}
    while True:
        request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
                                         data=json.dumps(body).encode(), headers=headers)
        with urllib.request.urlopen(request) as r:
            response = json.load(r)
        if response.get("stop_reason") != "pause_turn" or not RESEND:
            return response
        body = dict(body, messages=[*body["messages"],
                                    {"role": "assistant", "content": response["content"]}])
'''


@pytest.mark.parametrize("resend", [True, False])
def test_loop_repro_judges_by_what_the_server_served(tmp_path: Path, resend: bool) -> None:
    """A loop reproducer (tooluse serve + the framework's loop): with the framework's loop
    swapped for a stdlib one that resends after pause_turn it exits 0; one that stops, 1."""
    import re

    from conformance.findings.loops import render_loop_repro

    impl = {"spec": "cmd:python -m conformance.adapters.litellm_loop", "env": {}}
    why = render_loop_repro(tmp_path, "loop.pause_turn.resend", impl, title="t", header="h",
                            sentence="s", statement="r", url="u")
    assert why == ""
    source = (tmp_path / "repro.py").read_text()
    assert "import litellm" in source and "from conformance" not in source
    loop = re.compile(r"\ndef conversation\(.*?(?=\n\n\n)", re.DOTALL)
    source = loop.sub(lambda _: f"\nRESEND = {resend!r}\n" + _STDLIB_LOOP.rstrip(), source)
    (tmp_path / "repro.py").write_text(source)
    tooluse = Path(sys.executable).parent / "tooluse"
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120, check=False,
                          env={**__import__("os").environ, "TOOLUSE": str(tooluse)})
    assert done.returncode == (0 if resend else 1), done.stdout + done.stderr


_STDLIB_RECOVERING_LOOP = '''
def conversation(doc, params):
    """A minimal loop on the standard library: answers client tools with the recorded results;
    with RECOVER it sends a 429/529 again and drops an expired container, else it raises; with
    KEEP a continuation sends the container the previous response named, else none."""
    import urllib.error
    import urllib.request

    body = {k: v for k, v in params.items() if k not in ("extra_headers", "extra_body")}
    headers = {"content-type": "application/json", "x-api-key": os.environ["ANTHROPIC_API_KEY"],
               "anthropic-version": "2023-06-01", **(params.get("extra_headers") or {})}
    while True:
        request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
                                         data=json.dumps(body).encode(), headers=headers)
        try:
            with urllib.request.urlopen(request) as r:
                response = json.load(r)
        except urllib.error.HTTPError as e:
            error = json.load(e).get("error") or {}
            if RECOVER and e.code in (429, 529):
                continue
            if RECOVER and e.code == 400 and "container" in body \\
                    and "expired" in str(error.get("message")):
                body = {k: v for k, v in body.items() if k != "container"}
                continue
            raise
        calls = [b for b in response["content"] if b.get("type") == "tool_use"]
        if response.get("stop_reason") != "tool_use" or not calls:
            return response
        results = [{"type": "tool_result", "tool_use_id": b["id"],
                    "content": doc["tool_results"].get(b["id"], "ok")} for b in calls]
        body = dict(body, messages=[*body["messages"],
                                    {"role": "assistant", "content": response["content"]},
                                    {"role": "user", "content": results}])
        body.pop("container", None)
        if KEEP and isinstance(response.get("container"), dict):
            body["container"] = response["container"]["id"]
'''


@pytest.mark.parametrize("check_id", ["loop.errors.transient_retried", "loop.container.expired"])
@pytest.mark.parametrize("recover", [True, False])
def test_fault_repro_judges_the_answer_to_a_planned_fault(tmp_path: Path, check_id: str,
                                                          recover: bool) -> None:
    """A reproducer whose scenario plans faults (a 429 then a 529) or plays an earlier
    conversation (the container that has expired since): ``tooluse serve --fault KIND@N`` /
    ``--setup 1 --recorded-time`` play them; a stdlib loop that sends the request again (without
    the container) exits 0, one that raises to its application exits 1."""
    import re

    from conformance.findings.loops import render_loop_repro

    impl = {"spec": "cmd:python -m conformance.adapters.litellm_loop", "env": {}}
    why = render_loop_repro(tmp_path, check_id, impl, title="t", header="h",
                            sentence="s", statement="r", url="u")
    assert why == ""
    source = (tmp_path / "repro.py").read_text()
    planned = {"loop.errors.transient_retried":
               "SERVE = ['--fault', 'rate_limit@0:0.01', '--fault', 'overloaded@1:0.01']",
               "loop.container.expired": "SERVE = ['--setup', '1', '--recorded-time']"}
    assert planned[check_id] in source
    loop = re.compile(r"\ndef conversation\(.*?(?=\n\n\n)", re.DOTALL)
    source = loop.sub(lambda _: f"\nRECOVER = {recover!r}\nKEEP = True\n"
                      + _STDLIB_RECOVERING_LOOP.rstrip(), source)
    (tmp_path / "repro.py").write_text(source)
    tooluse = Path(sys.executable).parent / "tooluse"
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120, check=False,
                          env={**__import__("os").environ, "TOOLUSE": str(tooluse)})
    assert done.returncode == (0 if recover else 1), done.stdout + done.stderr


@pytest.mark.parametrize("keep", [True, False])
def test_container_repro_reads_the_requests(tmp_path: Path, keep: bool) -> None:
    """``loop.container.kept_on_continuation``: the API accepts a continuation without the
    container, so the reproducer reads the requests (a recording pass-through in front of
    serve): a stdlib loop that sends the container back exits 0, one that drops it 1."""
    import re

    from conformance.findings.loops import render_loop_repro

    impl = {"spec": "cmd:python -m conformance.adapters.litellm_loop", "env": {}}
    why = render_loop_repro(tmp_path, "loop.container.kept_on_continuation", impl, title="t",
                            header="h", sentence="s", statement="r", url="u")
    assert why == ""
    source = (tmp_path / "repro.py").read_text()
    assert "def recording_proxy" in source and "from conformance" not in source
    loop = re.compile(r"\ndef conversation\(.*?(?=\n\n\n)", re.DOTALL)
    source = loop.sub(lambda _: f"\nRECOVER = False\nKEEP = {keep!r}\n"
                      + _STDLIB_RECOVERING_LOOP.rstrip(), source)
    (tmp_path / "repro.py").write_text(source)
    tooluse = Path(sys.executable).parent / "tooluse"
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120, check=False,
                          env={**__import__("os").environ, "TOOLUSE": str(tooluse)})
    assert done.returncode == (0 if keep else 1), done.stdout + done.stderr


@pytest.mark.parametrize("module", ["litellm_loop", "langchain_agent", "llm_anthropic"])
def test_loop_adapter_sources_are_standalone(module: str) -> None:
    import importlib

    from conformance.findings.loops import _adapter_source

    src = _adapter_source(importlib.import_module(f"conformance.adapters.{module}"))
    tree = ast.parse(src)
    mods = {n.names[0].name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)}
    mods |= {n.module.split(".")[0] for n in ast.walk(tree)
             if isinstance(n, ast.ImportFrom) and n.module}
    assert "conformance" not in mods and "simulator" not in mods
    assert "def conversation" in src


@given(st.lists(st.tuples(st.sampled_from(["success", "error"]),
                          st.one_of(st.none(), st.binary(max_size=40),
                                    st.text(max_size=40).map(lambda t: t.encode()))),
                min_size=1, max_size=4))
def test_the_documented_files_of_a_model_check_read_back_exactly(
        alternatives: list[tuple[str, bytes | None]]) -> None:
    """A reproducer's oracle reads the documented contents from the words the model check prints
    (conformance.wording), so what a report shows and what a reproducer asserts are one thing; a
    content cut short gives no oracle rather than a guessed one."""
    from conformance.findings.oracles import documented_files
    from conformance.wording import one_of, shown_bytes

    unique = list(dict.fromkeys(alternatives))
    words = one_of([f"{status}, file {shown_bytes(data)}" for status, data in unique])
    assert documented_files(words) == [data for _, data in unique]
    assert documented_files(words.replace('"', '"x', 1) + "… (3 more characters)") is None

