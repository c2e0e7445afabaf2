"""Reproducers of loop (framework) findings: the framework driven against ``tooluse serve``.

A loop's counterexample is a conversation: the simulated API serves a recorded cassette and the
framework must send the rest of it. The reproducer ships the one cassette (``cassette.json``) and
what the loop starts from (``params.json``: the first request's parameters and the recorded tool
results), starts ``tooluse serve cassette.json --port 0`` (the only use of the suite it makes:
``$TOOLUSE`` or ``tooluse`` on ``PATH``), runs the framework's own loop as the column's adapter
wires it (the adapter module's source: the framework and the standard library), and reads the
server's ``--log``: the defect is there while the API refused a request (a protocol rule, 400) or
an exchange of the recording was never requested (the loop stopped early).

Rendered for Python adapters (``python -m conformance.adapters.<module>``) and for the checks the
server alone can judge: ``loop.pause_turn.*`` (the resend is never requested), ``loop.ptc.*``
(the API's 400 on a resumption without the container), ``loop.container.expired`` (served with
``--setup 1 --recorded-time``: the earlier conversation that made the container, then the
recorded 400 for it; the retry without ``container`` is never requested) and
``loop.errors.transient_retried`` (served with ``--fault rate_limit@0:0.01 --fault
overloaded@1:0.01``: the retry is never requested). As the matrix's judge
(:func:`conformance.checks.loop.judge`), a planned fault and a refusal the recording expects
(``expect_rule``) are not the loop's fault; an unexpected refusal or an exchange never reached
is. ``loop.container.kept_on_continuation`` is a request the API accepts, so its reproducer
reads the requests themselves through a recording pass-through (standard library) in front of
the server and restates the check's judge (:func:`conformance.loops.warnings.container_drops`:
a continuation after a response naming a container must send that container; exit 2 when the
loop sent no continuation, as the check SKIPs). Other loop cells keep ``repro: null`` with the
reason (an in-process loop; a Node framework: :mod:`conformance.findings.loops_node`).
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import json
import re
import shutil
from pathlib import Path
from typing import Any

__all__ = ["LOOP_CHECKS", "render_loop_repro"]

#: Loop checks whose failure ``tooluse serve`` itself shows (a refusal or an unrequested exchange).
LOOP_CHECKS = ("loop.pause_turn.*", "loop.ptc.*", "loop.container.expired",
               "loop.errors.transient_retried", "loop.container.kept_on_continuation")
#: The scenario a ``loop.container.kept_on_continuation`` reproducer plays: the first of the
#: check's scenarios the loop runs (the client tool next to code execution first: a loop that
#: stops at pause_turn sends no continuation there).
CONTAINER_SCENARIOS = ("loop.mixed.client_and_server_tools", "loop.pause_turn.resend")
_COMMAND = re.compile(r"^python -m (conformance\.adapters\.[a-z_]+)$")

_MAIN = '''\
def serve(cassette, matching, log):
    tooluse = os.environ.get("TOOLUSE") or shutil.which("tooluse")
    if not tooluse:
        print("cannot run: tooluse (the simulated API: pip install 'tooluse-conformance[serve]') "
              "is not on PATH; set TOOLUSE")
        sys.exit(2)
    proc = subprocess.Popen([tooluse, "serve", cassette, "--port", "0", "--matching", matching,
                             "--quiet", "--log", log, *SERVE], stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    base = proc.stdout.readline().decode().strip()
    if not base.startswith("http"):
        proc.kill()
        print("cannot run: tooluse serve did not start")
        sys.exit(2)
    return proc, base


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "params.json")) as f:
        doc = json.load(f)
    with open(os.path.join(here, "cassette.json")) as f:
        recorded = json.load(f)["exchanges"]
    exchanges = len(recorded)
    # the exchanges the loop must reach: after the setup conversation, not the recorded refusals
    required = [i for i in range(SETUP, exchanges) if not recorded[i].get("expect_rule")]
    expected = sum(1 for ex in recorded[SETUP:] if ex.get("expect_rule"))
    for name, value in ENV:
        os.environ.setdefault(name, value)
    box = tempfile.mkdtemp(prefix="repro-")
    log = os.path.join(box, "served.jsonl")
    proc, base = serve(os.path.join(here, "cassette.json"), MATCHING, log)
    os.environ["ANTHROPIC_BASE_URL"] = base
    os.environ["ANTHROPIC_API_KEY"] = "sk-tooluse-simulator"
    raised = None
    try:
        for params in doc["conversations"]:
            conversation(doc, params)
    except Exception as exc:  # what the framework raised to its application
        raised = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        proc.terminate()
        proc.wait(10)
    with open(log) as f:
        served = [json.loads(line) for line in f if line.strip()]
    shutil.rmtree(box, ignore_errors=True)
    # a planned fault (429, 529) is not a refusal; the recording's own refusals (an expired
    # container) are expected, once each
    refused = [s for s in served if int(s.get("status") or 0) >= 400
               and s.get("outcome") != "fault"][expected:]
    faults = [s for s in served if s.get("outcome") == "fault"]
    answered = {s.get("exchange") for s in served
                if int(s.get("status") or 0) < 400 and s.get("exchange") is not None}
    missing = [i for i in required if i not in answered]
    for s in served:
        print(f"request: {s.get('status')} {str(s.get('outcome'))[:100]} {str(s.get('detail') or '')[:160]}")
    happened = [f"the API answered {len(faults)} request(s) with a planned "
                f"{'/'.join(str(s.get('status')) for s in faults)} (transient)"] if faults else []
    if refused:
        first = refused[0]
        happened.append(f"the API refused a request: {first.get('status')} "
                        f"{str(first.get('outcome'))[:200]} {str(first.get('detail') or '')[:300]}")
    if missing:
        happened.append(f"exchanges {missing} of the {exchanges} recorded were never requested"
                        + (f" (the first {SETUP} played as the earlier conversation)" if SETUP else ""))
    if raised:
        happened.append(f"the framework raised {raised}")
    defect = bool(refused or missing)
    print()
    print(f"the docs ({URL}): {DOCS}")
    print(f"the rule: {RULE}")
    print(f"happened: {'; '.join(happened) or 'every recorded exchange was requested and served'}")
    print("defect present: exit 1" if defect else "not reproduced (fixed?): exit 0")
    return 1 if defect else 0


if __name__ == "__main__":
    try:
        code = main()
    except SystemExit:
        raise
    except Exception as exc:
        import traceback
        traceback.print_exc()
        print(f"cannot run: {type(exc).__name__}: {exc}")
        code = 2
    sys.stdout.flush()
    os._exit(code)
'''


#: ``loop.container.kept_on_continuation``: the API accepts a continuation without ``container``,
#: so the server's log does not show the drop; the reproducer reads the requests themselves,
#: through a recording pass-through in front of ``tooluse serve``, and restates the check's
#: judge (conformance/loops/warnings.py ``container_drops``).
_CONTAINER_MAIN = """\
def recording_proxy(upstream, bodies):
    import http.server
    import threading
    import urllib.error
    import urllib.request

    class Pass(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            data = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                bodies.append(json.loads(data))
            except ValueError:
                bodies.append(None)
            skip = ("host", "content-length", "connection", "accept-encoding")
            request = urllib.request.Request(upstream + self.path, data=data, method="POST",
                                             headers={k: v for k, v in self.headers.items()
                                                      if k.lower() not in skip})
            try:
                with urllib.request.urlopen(request) as r:
                    status, headers, payload = r.status, r.headers, r.read()
            except urllib.error.HTTPError as e:
                status, headers, payload = e.code, e.headers, e.read()
            self.send_response(status)
            for k, v in headers.items():
                if k.lower() not in ("content-length", "transfer-encoding", "connection",
                                     "date", "server"):
                    self.send_header(k, v)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pass)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def recorded_container(response):
    found = None
    body = response.get("body")
    if isinstance(body, dict):
        found = body.get("container")
    for event in response.get("events") or []:
        data = event.get("data") if isinstance(event, dict) else None
        if not isinstance(data, dict):
            continue
        if data.get("type") == "message_start" and isinstance(data.get("message"), dict):
            found = data["message"].get("container") or found
        elif data.get("type") == "message_delta" and isinstance(data.get("delta"), dict):
            found = data["delta"].get("container") or found
    if isinstance(found, dict) and isinstance(found.get("id"), str):
        return found["id"]
    return found if isinstance(found, str) else None


def container_of(body):
    c = body.get("container") if isinstance(body, dict) else None
    if isinstance(c, dict):
        c = c.get("id")
    return c if isinstance(c, str) else None


def continues(body, previous):
    now = body.get("messages") if isinstance(body, dict) else None
    before = previous.get("messages") if isinstance(previous, dict) else None
    return (isinstance(now, list) and isinstance(before, list) and bool(before)
            and len(now) > len(before) and now[0] == before[0])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "params.json")) as f:
        doc = json.load(f)
    with open(os.path.join(here, "cassette.json")) as f:
        recorded = json.load(f)["exchanges"]
    for name, value in ENV:
        os.environ.setdefault(name, value)
    box = tempfile.mkdtemp(prefix="repro-")
    log = os.path.join(box, "served.jsonl")
    proc, base = serve(os.path.join(here, "cassette.json"), MATCHING, log)
    bodies = []
    proxy, front = recording_proxy(base, bodies)
    os.environ["ANTHROPIC_BASE_URL"] = front
    os.environ["ANTHROPIC_API_KEY"] = "sk-tooluse-simulator"
    raised = None
    try:
        for params in doc["conversations"]:
            conversation(doc, params)
    except Exception as exc:  # what the framework raised to its application
        raised = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        proxy.shutdown()
        proc.terminate()
        proc.wait(10)
    with open(log) as f:
        served = [json.loads(line) for line in f if line.strip()]
    shutil.rmtree(box, ignore_errors=True)
    # the loop sends one request at a time: the i-th request it sent is the i-th the server logged
    checked, drops, previous = 0, [], None
    for i, (body, s) in enumerate(zip(bodies, served)):
        print(f"request {i}: container {container_of(body)!r}; {s.get('status')} "
              f"{str(s.get('outcome'))[:40]} {str(s.get('detail') or '')[:120]}")
        if previous is not None and continues(body, previous[0]):
            checked += 1
            sent = container_of(body)
            if sent != previous[1] and not str(s.get("detail") or "").startswith(
                    "ptc.container.required"):
                what = f"container {sent!r}" if sent else "no container"
                drops.append(f"request {i} continues the conversation with {what}; the "
                             f"previous response named container {previous[1]!r}")
        exchange = s.get("exchange")
        if exchange is not None and 200 <= int(s.get("status") or 0) < 300:
            container = recorded_container(recorded[exchange]["response"])
            previous = (body, container) if container else None
    print()
    print(f"the docs ({URL}): {DOCS}")
    print(f"the rule: {RULE}")
    if not checked:
        print("happened: the loop sent no continuation after a response naming a container"
              + (f"; the framework raised {raised}" if raised else ""))
        print("not judged: exit 2")
        return 2
    print(f"happened: {drops[0] if drops else 'every continuation sent the container'}"
          + (f" (+{len(drops) - 1} more)" if len(drops) > 1 else ""))
    print("defect present: exit 1" if drops else "not reproduced (fixed?): exit 0")
    return 1 if drops else 0
"""


def _adapter_source(module: Any) -> str:
    """The adapter module's loop, without the suite: its ``_loop_params`` import becomes the
    helpers' own source (standard library only), its ``main`` is left out."""
    from conformance.adapters import _loop_params

    src = inspect.getsource(module)
    src = src.split('\nif __name__ == "__main__":')[0]
    src = re.sub(r"\ndef main\(\) -> int:\n(    .*\n)+", "\n", src)
    helpers = "\n\n".join(inspect.getsource(getattr(_loop_params, name))
                          for name in ("opening_prompt", "recorded_result", "recorded_call"))
    src = re.sub(r"^from conformance\.adapters\._loop_params import .*$",
                 "# the adapter's shared helpers (conformance/adapters/_loop_params.py)\n"
                 "from collections.abc import Callable\n\n\n" + helpers.replace("\\", "\\\\"),
                 src, count=1, flags=re.MULTILINE)
    src = src.replace("from __future__ import annotations\n", "")
    return src


def loop_repro(check_id: str, impl: dict[str, Any]) -> tuple[Any, str]:
    """``(scenario, module)`` for a reproducible loop cell, or ``(None, why not)``."""
    from conformance.loops.scenarios import SCENARIOS

    if not any(fnmatch.fnmatchcase(check_id, p) for p in LOOP_CHECKS):
        return None, ("its verdict is the suite's judge of the requests the loop sent (what "
                      "the API accepts, so `tooluse serve` alone does not show it): replay it "
                      "with the rerun command")
    m = _COMMAND.match(str(impl.get("spec") or "").removeprefix("cmd:"))
    if impl.get("npm") or "vercel" in str(impl.get("spec")):
        return None, ("a Node framework: its reproducer (repro.mjs) is not rendered yet; replay "
                      "it with the rerun command")
    if m is None:
        return None, ("an in-process loop (a factory, not a `python -m` program): its "
                      "reproducer is not rendered yet; replay it with the rerun command")
    module = importlib.import_module(m.group(1))
    by_id = {s.id: s for s in SCENARIOS}
    declared = dict(getattr(module, "DESCRIBE", {}).get("variants") or {})
    if check_id == "loop.container.kept_on_continuation":
        for name in CONTAINER_SCENARIOS:
            found = by_id[name].for_variants(declared)
            if not isinstance(found, str):
                return (found, module), ""
        return None, "none of its scenarios is recorded for the loop's variants"
    if check_id not in by_id:
        return None, f"no scenario named {check_id}"
    scenario = by_id[check_id]
    if scenario.dropped or scenario.then:
        return None, "its scenario drops exchanges or starts further conversations"
    resolved = scenario.for_variants(declared)
    if isinstance(resolved, str):
        return None, resolved
    return (resolved, module), ""


def _main_of(check_id: str) -> str:
    """The reproducer's ``serve`` and ``main``: judged from the server's log, or (the container
    a continuation drops, which the API accepts) from the requests themselves."""
    if check_id != "loop.container.kept_on_continuation":
        return _MAIN
    head, tail = _MAIN.split("\n\ndef main():", 1)
    ending = tail[tail.index('\nif __name__ == "__main__":'):]
    return head + "\n\n" + _CONTAINER_MAIN + "\n" + ending


def serve_arguments(scenario: Any) -> list[str]:
    """The ``tooluse serve`` options that play ``scenario`` as the matrix does: its setup
    exchanges (``--setup N --recorded-time``) and its planned faults (``--fault KIND@N:SECONDS``)."""
    args = ["--setup", str(scenario.setup), "--recorded-time"] if scenario.setup else []
    for index, faults in sorted(scenario.faults.items()):
        for fault in faults:
            when = "" if fault.retry_after is None else f":{fault.retry_after:g}"
            args += ["--fault", f"{fault.kind}@{index}{when}"]
    return args


def render_loop_repro(folder: Path, check_id: str, impl: dict[str, Any], *, title: str,
                      header: str, sentence: str, statement: str, url: str) -> str:
    """Write ``repro.py``, ``cassette.json`` and ``params.json`` into ``folder``; returns ""
    (written) or why there is no reproducer."""
    from conformance.loops.command import params_document
    from conformance.loops.run import Harness
    from simulator.cassette import default_fixtures_root

    found, why = loop_repro(check_id, impl)
    if found is None:
        return why
    scenario, module = found
    matching = str(getattr(module, "DESCRIBE", {}).get("matching") or "exact")
    harness = Harness(scenario, matching=matching)
    params = params_document(harness)
    shutil.copyfile(default_fixtures_root() / scenario.cassette, folder / "cassette.json")
    (folder / "params.json").write_text(json.dumps(params, indent=1, ensure_ascii=False) + "\n")
    env = sorted((str(k), str(v)) for k, v in (impl.get("env") or {}).items())
    serve_args = serve_arguments(scenario)
    parts = [
        "#!/usr/bin/env python3",
        '"""' + title.replace('"""', "'''") + "\n\n" + header.replace('"""', "'''").rstrip()
        + f"\nThe recording: cassette.json ({scenario.cassette}); the loop's start: params.json."
        + '\n"""',
        "",
        "import json",
        "import os",
        "import shutil",
        "import subprocess",
        "import sys",
        "import tempfile",
        "",
        f"DOCS = {sentence!r}",
        f"RULE = {statement!r}",
        f"URL = {url!r}",
        f"MATCHING = {matching!r}",
        "#: what `tooluse serve` plays besides the recording: the earlier conversation (--setup,",
        "#: on the recording's clock) and the planned transient faults (--fault KIND@EXCHANGE)",
        f"SERVE = {serve_args!r}",
        f"SETUP = {scenario.setup!r}",
        "#: the column's settings (its integration's options)",
        f"ENV = {env!r}",
        "",
        "# --- the framework's loop, as the column wires it "
        f"({module.__name__.replace('.', '/')}.py) ---",
        _adapter_source(module).strip(),
        "",
        "",
        "# --- the reproducer ---",
        "",
        _main_of(check_id),
    ]
    (folder / "repro.py").write_text("\n".join(parts))
    return ""
