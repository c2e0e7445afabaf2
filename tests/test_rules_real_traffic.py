"""The rules against live traffic (../shared/real_traffic): requests the API answered with 200
break none of the rules that can judge them, and requests it refused with a tool-pairing 400 get
our error with the API's exact message."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from simulator.rules import DEFAULT_RULES, check_request
from simulator.state import SimState

#: Rules a lone capture cannot be judged by: state from earlier responses (containers), headers
#: the recorders dropped (betas), and the request schema (checked by the validation tests).
#: ``tools.model_compatibility``: captures from 2025 run code execution on claude-sonnet-4-0,
#: which the seed's current supportedModels list no longer names (a documented-vs-live difference).
CANNOT_JUDGE = {"container.unknown_or_expired", "beta.legacy_header_required", "beta.header_known",
                "request.schema", "tools.model_compatibility",
                # the files do not say the day they were recorded: a model retired since was
                # served then (tests/test_fidelity_requests judges it where a capture says)
                "model.not_retired"}
PAIRING = re.compile(r"unexpected `tool_use_id`|`tool_use` ids were found without")


def _pairs(shared: Path) -> list[tuple[str, dict[str, Any], int, Any]]:
    root = shared / "real_traffic"
    out = []
    for p in sorted(root.glob("*_request.json")):
        data = json.loads(p.read_text(encoding="utf-8"))["data"]
        body = data.get("body") if isinstance(data, dict) and "body" in data else data
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            continue
        prefix, num, rest = p.name.split("__", 2)
        key = rest.removesuffix("_request.json")
        # The answer is the capture of the same exchange with the next counter.
        answers = sorted((int(q.name.split("__", 2)[1]), q) for q in
                         root.glob(f"{prefix}__*__{key}_*.json") if q != p)
        after = [q for n, q in answers if n > int(num)]
        m = re.search(r"_(error|response)_(\d+)\.json$", after[0].name) if after else None
        if not after or not (m or after[0].name.endswith("_sse.json")):
            continue
        status = int(m.group(2)) if m else 200
        out.append((p.name, body, status, json.loads(after[0].read_text(encoding="utf-8"))["data"]))
    return out


@pytest.mark.shared
def test_requests_the_api_accepted_break_no_rule(shared_dir: Path) -> None:
    pairs = [(n, b) for n, b, status, _ in _pairs(shared_dir) if status == 200]
    if not pairs:
        pytest.skip("no request/response pairs in ../shared/real_traffic")
    rules = [r for r in DEFAULT_RULES if r.id not in CANNOT_JUDGE]
    broken = {n: [v.rule_id for v in check_request(b, {}, SimState(), rules)] for n, b in pairs}
    broken = {n: v for n, v in broken.items() if v}
    assert not broken, broken
    assert len(pairs) > 100


@pytest.mark.shared
def test_pairing_errors_match_the_apis_messages(shared_dir: Path) -> None:
    refused = [(n, b, a) for n, b, status, a in _pairs(shared_dir) if status == 400
               and isinstance(a, dict) and PAIRING.search(str(a.get("error", {}).get("message")))]
    if not refused:
        pytest.skip("no tool-pairing 400 in ../shared/real_traffic")
    for name, body, answer in refused:
        got = check_request(body, {}, SimState(),
                            [r for r in DEFAULT_RULES if r.id != "model.not_retired"])
        assert got, f"{name}: the API refused it, no rule did"
        assert got[0].message == answer["error"]["message"], name
