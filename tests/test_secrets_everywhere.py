"""Issue 9: planted credentials never reach a cassette, a report or a log line.

Secrets are planted where they occur for real: the environment (``ANTHROPIC_API_KEY`` and any
variable named like a credential), a subject's output and stderr, a command line, request headers,
query strings and bodies. Every writer is checked: ``results.json``, JUnit, Markdown and HTML
reports, the stdout/stderr of ``tooluse run`` (summary and ``--json``), ``serve``, ``replay`` and
``record``, and recorded cassettes; ``tooluse lint-fixtures`` refuses a cassette holding one,
without printing it. (The recorder's redaction itself is tested in ``tests/test_record.py``.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hostile import TOOLUSE

from conformance.cli import main
from conformance.reports import load_results
from simulator.cassette import iter_corpus
from simulator.secrets import REDACTED, find_secrets

HOSTILE = Path(__file__).resolve().parent / "hostile" / "subjects.py"
ENV_KEY = "sk-ant-api03-PLANTEDenvKEY-0123456789abcdefABCDEF"
ARGV_KEY = "sk-ant-api03-PLANTEDargvKEY-0123456789"
ENV_TOKEN = "plantedTokenValue-987654321"          # no known shape: found as an env value
BEARER = "plantedBearer-XYZ-12345678"
HEADER_KEY = "sk-ant-api03-PLANTEDheaderKEY-000111"
QUERY_TOKEN = "plantedQuery-555666777"
BODY_KEY = "sk-ant-api03-PLANTEDbodyKEY-222333"
PLANTED = (ENV_KEY, ARGV_KEY, ENV_TOKEN, BEARER, HEADER_KEY, QUERY_TOKEN, BODY_KEY)


def planted_env() -> dict[str, str]:
    return {**os.environ, "ANTHROPIC_API_KEY": ENV_KEY, "TOOLUSE_TEST_SECRET_TOKEN": ENV_TOKEN,
            "TOOLUSE_TEST_BEARER": BEARER, "MY_SERVICE_AUTH": QUERY_TOKEN}


def assert_clean(what: str, data: bytes | str) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    leaked = [s for s in PLANTED if s in text]
    assert not leaked, f"{what} holds planted secret(s) {leaked}"


@pytest.fixture(scope="module")
def leaky_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    base = tmp_path_factory.mktemp("leaky")
    runs = {}
    for mode in ("reports", "json"):
        out = base / mode
        argv = [*TOOLUSE, "run", "--timeout", "1", "--bash", f"{HOSTILE}:leaks_secrets",
                "--bash-cmd", f"ANTHROPIC_API_KEY={ARGV_KEY} sh -c 'exit 3'",
                "--check", "bash.session.cwd_persists", "bash.session.env_persists",
                "--out", str(out)] + (["--json"] if mode == "json" else [])
        runs[mode] = subprocess.run(argv, env=planted_env(), capture_output=True, timeout=120,
                                    cwd=base)
    return {"base": base, **runs}


def test_run_reports_hold_no_secret(leaky_run: dict[str, object]) -> None:
    out = Path(str(leaky_run["base"])) / "reports"
    written = sorted(p for p in out.rglob("*") if p.is_file())
    names = {p.name for p in written}
    assert {"results.json", "junit.xml", "report.md", "report.html"} <= names, names
    for path in written:
        assert_clean(str(path), path.read_bytes())
    run = load_results(out / "results.json")  # still valid against its schema
    failed = [r for r in run.results if r.outcome.value == "fail"]
    assert failed, "the leaky subject should fail its checks"
    # The secrets were there, and replaced: the reader still sees where.
    assert REDACTED in (out / "results.json").read_text()
    assert find_secrets(json.loads((out / "results.json").read_text())) == []


@pytest.mark.parametrize("mode", ["reports", "json"])
def test_run_stdout_and_stderr_hold_no_secret(leaky_run: dict[str, object], mode: str) -> None:
    proc = leaky_run[mode]
    assert isinstance(proc, subprocess.CompletedProcess)
    # exit 2: the `sh -c 'exit 3'` command never starts (issue 26: one line, exit 2); the
    # leaky subject's failures are still reported on stdout.
    assert proc.returncode == 2, proc.stderr.decode()[-1500:]
    assert_clean(f"tooluse run stdout ({mode})", proc.stdout)
    assert_clean(f"tooluse run stderr ({mode})", proc.stderr)
    assert REDACTED.encode() in proc.stdout


def test_usage_errors_do_not_echo_a_secret(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--bash-cmd", f"ANTHROPIC_API_KEY={ARGV_KEY} 'unclosed"]) == 2
    err = capsys.readouterr().err
    assert_clean("usage error", err)
    assert "does not parse" in err


def _serve(*args: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    proc = subprocess.Popen([*TOOLUSE, *args, "--port", "0"], env=planted_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().decode().strip(), proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)


def _send_secrets(url: str) -> None:
    headers = {"x-api-key": HEADER_KEY, "authorization": f"Bearer {BEARER}",
               "anthropic-version": "2023-06-01", "content-type": "application/json"}
    body = {"model": "claude-opus-5-5", "max_tokens": 16, "messages": [
        {"role": "user", "content": f"my key is {BODY_KEY}, token {ENV_TOKEN}"}]}
    with httpx.Client(timeout=20) as client:
        for path in ("/v1/messages", "/v1/messages/count_tokens", "/v1/files", "/v1/nowhere"):
            r = client.post(f"{url}{path}", params={"key": QUERY_TOKEN}, headers=headers,
                            json=body)
            assert r.status_code < 500
        r = client.post(f"{url}/v1/messages", headers=headers,
                        content=f'{{"model": "{BODY_KEY}"'.encode())  # broken JSON quoting it
        assert r.status_code == 400
        # An answer quotes what it received (a model the API does not serve is named in its
        # 404): the secret is in it (for the client).
        r = client.post(f"{url}/v1/messages", headers=headers, json={**body, "model": BODY_KEY})
        assert r.status_code == 404 and BODY_KEY in r.text


@pytest.mark.parametrize("command", ["serve", "replay"])
def test_serve_and_replay_logs_hold_no_secret(command: str) -> None:
    cassette = next(c.path for c in iter_corpus() if c.family == "bash" and c.path is not None)
    gen = _serve(command, str(cassette))
    url, proc = next(gen)
    try:
        _send_secrets(url)
    finally:
        next(gen, None)
    out, err = proc.communicate(timeout=20)
    assert_clean(f"tooluse {command} stdout", out)
    assert_clean(f"tooluse {command} stderr", err)
    if command == "replay":
        assert b"/v1/messages -> 400" in err  # it did narrate the requests
        assert REDACTED.encode() in err  # including the one quoting a secret


def test_record_logs_and_cassettes_hold_no_secret(tmp_path: Path) -> None:
    from simulator import routes
    from simulator.server import start_server

    upstream, stop = start_server(routes.build([c for c in iter_corpus() if c.family == "bash"]))
    gen = _serve("record", "--upstream", upstream, "--out", str(tmp_path / "rec"))
    try:
        url, proc = next(gen)
        _send_secrets(url)
    finally:
        next(gen, None)
        stop()
    out, err = proc.communicate(timeout=20)
    assert_clean("tooluse record stdout", out)
    assert_clean("tooluse record stderr", err)
    cassettes = list((tmp_path / "rec").rglob("*.json"))
    assert cassettes, err.decode()[-1000:]
    for path in cassettes:
        assert_clean(str(path), path.read_bytes())
        assert find_secrets(json.loads(path.read_text())) == []


def test_lint_fixtures_refuses_a_cassette_with_a_secret_without_printing_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = next(c for c in iter_corpus() if c.family == "bash" and c.path is not None)
    raw = json.loads(Path(str(source.path)).read_text())
    raw["exchanges"][0]["request"].setdefault("headers", {})["x-api-key"] = HEADER_KEY
    raw["exchanges"][0]["request"]["body"]["metadata"] = {"note": f"key {BODY_KEY}"}
    path = tmp_path / Path(str(source.path)).name
    path.write_text(json.dumps(raw))
    assert main(["lint-fixtures", str(path)]) == 1
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "secret" in text.lower() or "credential" in text.lower(), text[-1500:]
    assert_clean("lint-fixtures output", text)
