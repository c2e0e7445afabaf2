"""The simulator measured on a directory of live captures: what ``tooluse fidelity DIR`` prints.

    report = fidelity(Path("captures"))          # FidelityReport
    print(report.markdown())                      # or report.to_json()

Requests (:mod:`simulator.fidelity`): each captured request judged by the default rules with the
state of its recording, against the API's real answer: **false refusals** (the API answered 2xx,
the simulator refuses), **false accepts** (the API answered 400/404, the simulator accepts),
**message agreement** (both refuse: same status and type; same message verbatim). 401 and 429
answers say nothing about the request and are shown, not judged. ``count_tokens``: status
agreement and the estimate against the live count; and the same estimate against the live
``usage`` of every answered Messages request whose usage counts the request as sent
(:func:`usage_counts`). Streams (:mod:`simulator.fidelity_streams`):
the envelope of the live streams beside the simulator's streams of the same messages.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from .captures import load_captures
from .envelope import StreamShape, shape_rows, shape_table
from .fidelity import COUNT_TOKENS, MESSAGES, UNDATED, Replay, Verdict, agreement_table, judge


@dataclass
class FidelityReport:
    root: str
    verdicts: list[Verdict]
    live: StreamShape
    simulated: StreamShape
    #: (capture id, live count, estimate) of every count_tokens request the API answered 200.
    counts: list[tuple[str, int, int]] = field(default_factory=list)
    #: (capture id, live input tokens, estimate) of answered Messages requests (usage_counts).
    usage: list[tuple[str, int, int]] = field(default_factory=list)

    def _messages(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.exchange.path == MESSAGES]

    @property
    def false_refusals(self) -> list[Verdict]:
        return [v for v in self._messages() if v.real_status is not None
                and v.real_status < 300 and not v.accepted and not v.headers_unknown]

    @property
    def unjudged_for_headers(self) -> list[Verdict]:
        """Live 2xx refused by a rule a beta header satisfies, recorded without headers."""
        return [v for v in self._messages() if v.real_status is not None
                and v.real_status < 300 and v.headers_unknown]

    @property
    def false_accepts(self) -> list[Verdict]:
        return [v for v in self._messages() if v.real_status in (400, 404) and v.accepted
                and not v.account_state]

    @property
    def both_refused(self) -> list[Verdict]:
        return [v for v in self._messages() if v.real_status in (400, 404) and not v.accepted
                and not v.account_state]

    @property
    def account_answers(self) -> list[Verdict]:
        """Live answers about the account (billing, authentication, rate limits), not the
        request: reported apart, never counted as refusals."""
        return [v for v in self._messages() if v.account_state]

    def agreement(self) -> dict[str, Any]:
        both = self.both_refused
        same_kind = [v for v in both if v.first is not None and v.real_error is not None
                     and (v.first.status, v.first.error_type)
                     == (v.real_status, v.real_error.get("type"))]
        verbatim = [v for v in same_kind if v.first is not None and v.real_error is not None
                    and v.first.message == v.real_error.get("message")]
        real_2xx = [v for v in self._messages() if v.real_status is not None and v.real_status < 300]
        real_4xx = [v for v in self._messages() if v.real_status in (400, 404)
                    and not v.account_state]
        ratios = [est / live for _, live, est in self.counts if live > 0]
        used = [est / live for _, live, est in self.usage if live > 0]
        return {
            "requests": len(self._messages()),
            "real_2xx": len(real_2xx), "false_refusals": len(self.false_refusals),
            "real_400_404": len(real_4xx), "false_accepts": len(self.false_accepts),
            "both_refused": len(both), "same_status_and_type": len(same_kind),
            "same_message": len(verbatim),
            "undated": sum(UNDATED in v.notes for v in self._messages()),
            "account_state": len(self.account_answers),
            "refused_for_a_header_not_recorded": len(self.unjudged_for_headers),
            "count_tokens": len(self.counts),
            "count_tokens_within_25pct": sum(abs(r - 1) <= 0.25 for r in ratios),
            "count_tokens_worst_ratio": max(ratios, key=lambda r: abs(r - 1)) if ratios else None,
            "usage_counts": len(self.usage),
            "usage_within_25pct": sum(abs(r - 1) <= 0.25 for r in used),
            "usage_median_ratio": statistics.median(used) if used else None,
        }

    def markdown(self) -> str:
        a = self.agreement()
        out = [f"# Fidelity of the simulator on {self.root}", "",
               f"## Requests (POST {MESSAGES})", "",
               "The simulator (rows) against the live API's answer (columns):", "",
               agreement_table(self._messages()), "",
               f"- false refusals (live 2xx, refused here): **{a['false_refusals']}** of "
               f"{a['real_2xx']}",
               f"- false accepts (live 400/404, accepted here): **{a['false_accepts']}** of "
               f"{a['real_400_404']}",
               f"- message agreement (both refused): same status and type {a['same_status_and_type']}"
               f" of {a['both_refused']}, same message verbatim {a['same_message']}"]
        if self.unjudged_for_headers:
            rules = sorted({v.first.rule_id for v in self.unjudged_for_headers if v.first})
            out.append(f"- not counted: {len(self.unjudged_for_headers)} live 2xx refused by a rule "
                       f"a beta header satisfies ({', '.join(rules)}), on requests recorded "
                       "without their headers")
        if self.account_answers:
            kinds = sorted({f"{v.real_status} {(v.real_error or {}).get('type', '')}".strip()
                            for v in self.account_answers})
            out.append(f"- not counted: {len(self.account_answers)} live answer(s) about the "
                       f"account, not the request (billing, authentication, rate limits: "
                       f"{', '.join(kinds)})")
        if a["undated"]:
            out.append(f"- {a['undated']} request(s) from recordings that do not say their day: "
                       "model retirement not judged (--as-of DAY judges them on a day)")
        for title, vs in (("False refusals", self.false_refusals),
                          ("False accepts", self.false_accepts)):
            if vs:
                out += ["", f"### {title}", ""]
                for v in vs:
                    real = (v.real_error or {}).get("message", "")
                    got = f"{v.first.rule_id}: {v.first.message}" if v.first else "accepted"
                    out.append(f"- `{v.id}` (live {v.real_status} {str(real)[:120]!r}): {got[:200]}")
        mism = [v for v in self.both_refused if v.first is not None and v.real_error is not None
                and v.first.message != v.real_error.get("message")]
        if mism:
            out += ["", "### Refused by both, in other words", ""]
            out += [f"- `{v.id}`: live {v.real_status} {v.real_error.get('message')!r}; here "
                    f"{v.first.status} {v.first.message!r}" for v in mism
                    if v.first is not None and v.real_error is not None]
        ct = [v for v in self.verdicts if v.exchange.path == COUNT_TOKENS]
        if ct:
            out += ["", f"## POST {COUNT_TOKENS}", "", agreement_table(ct)]
            if self.counts:
                out += ["", "| capture | live | estimate | estimate / live |", "|---|---|---|---|"]
                out += [f"| `{i}` | {live} | {est} | {est / live:.2f} |"
                        for i, live, est in self.counts if live]
                out.append(f"\n{a['count_tokens_within_25pct']} of {len(self.counts)} estimates "
                           "within 25 % of the live count")
        if self.usage:
            far = sorted(self.usage, key=lambda c: -abs(c[2] / c[1] - 1))[:5]
            out += ["", "## Token estimate against live usage", "",
                    f"{a['usage_within_25pct']} of {a['usage_counts']} "
                    f"({a['usage_within_25pct'] / a['usage_counts']:.0%}) answered Messages requests "
                    "whose usage counts the request as sent (no server tools, compaction, MCP "
                    "servers or container) estimated within 25 % of the live input tokens (input "
                    f"and cache); median estimate / live {a['usage_median_ratio']:.2f}. Furthest:",
                    "", "| capture | live | estimate | estimate / live |", "|---|---|---|---|"]
            out += [f"| `{i}` | {live} | {est} | {est / live:.2f} |" for i, live, est in far]
        out += ["", "## Stream envelope", ""]
        out += (["Live streams beside the simulator's streams of the same messages "
                 "(simulator.envelope):", "",
                 shape_table({"live": self.live, "simulator": self.simulated})]
                if self.live.streams else ["No streams measured."])
        return "\n".join(out) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root, "agreement": self.agreement(),
            "false_refusals": [{"id": v.id, "real_status": v.real_status,
                                "rule": v.first.rule_id if v.first else None,
                                "message": v.first.message if v.first else None}
                               for v in self.false_refusals],
            "false_accepts": [{"id": v.id, "real_status": v.real_status,
                               "real_error": v.real_error} for v in self.false_accepts],
            "count_tokens": [{"id": i, "live": live, "estimate": est} for i, live, est in self.counts],
            "usage": [{"id": i, "live": live, "estimate": est} for i, live, est in self.usage],
            "streams": {"live": shape_rows(self.live), "simulator": shape_rows(self.simulated)},
        }


def _counts(verdicts: list[Verdict]) -> list[tuple[str, int, int]]:
    from .count_tokens import estimate_tokens
    out = []
    for v in verdicts:
        ex = v.exchange
        data = ex.answer.data if ex.answer is not None else None
        if ex.path != COUNT_TOKENS or not isinstance(data, dict) or not isinstance(ex.body, dict):
            continue
        live = data.get("input_tokens")
        if isinstance(live, int) and not isinstance(live, bool):
            out.append((v.id, live, estimate_tokens(ex.body)))
    return out


#: Answer blocks whose presence means the usage counts more than the request as sent.
_READ_BACK = ("server_tool_use", "mcp_tool_use", "mcp_tool_result", "compaction")


def _counts_as_sent(body: dict[str, Any], message: dict[str, Any]) -> bool:
    """Whether a live answer's usage counts the request as sent: no server tool (its results are
    read into the count, each iteration's), no compaction (the count is of the compacted prompt),
    no MCP servers or container; custom tools and the client tools of the estimate only."""
    from .count_tokens import BUILTIN_TOOL_TOKENS
    from .registry import TOOLS
    if any(k in body for k in ("mcp_servers", "container", "context_management")):
        return False
    for t in body.get("tools") or []:
        kind = t.get("type") if isinstance(t, dict) else None
        if kind in (None, "custom"):
            continue
        tv = TOOLS.get(str(kind))
        if tv is None or tv.family not in BUILTIN_TOOL_TOKENS:
            return False
    usage = message.get("usage")
    if not isinstance(usage, dict) or usage.get("server_tool_use") or usage.get("iterations"):
        return False
    return not any(isinstance(b, dict) and (b.get("type") in _READ_BACK
                                            or str(b.get("type", "")).endswith("_tool_result"))
                   for b in message.get("content") or [])


def usage_counts(verdicts: list[Verdict]) -> list[tuple[str, int, int]]:
    """(capture id, live input tokens, estimate) of every Messages request the API answered 2xx
    whose usage counts the request as sent (:func:`_counts_as_sent`): the live input tokens are
    ``input_tokens`` plus the cache's (``cache_creation_input_tokens``,
    ``cache_read_input_tokens``), the count ``count_tokens`` gives for the same request."""
    from .count_tokens import estimate_tokens
    out = []
    for v in verdicts:
        ex = v.exchange
        if ex.path != MESSAGES or not isinstance(ex.body, dict) or (ex.status or 200) >= 300:
            continue
        m = ex.message
        if m is None or not _counts_as_sent(ex.body, m):
            continue
        u = m["usage"]
        live = sum(u.get(k) or 0 for k in ("input_tokens", "cache_creation_input_tokens",
                                           "cache_read_input_tokens")
                   if isinstance(u.get(k) or 0, int))
        if live > 0:
            out.append((v.id, live, estimate_tokens(ex.body)))
    return out


def fidelity(root: Path, *, as_of: date | None = None, models: frozenset[str] = frozenset(),
             streams: bool = True) -> FidelityReport:
    """The report for the captures under ``root`` (:class:`simulator.captures.CaptureError` when
    it is not a directory of captures)."""
    from .fidelity_streams import live_and_simulated
    verdicts = judge(load_captures(root), Replay(as_of=as_of, models=models))
    live, sim = live_and_simulated(root) if streams else (StreamShape(), StreamShape())
    return FidelityReport(str(root), verdicts, live, sim, _counts(verdicts),
                          usage_counts(verdicts))


def median_abs_error(counts: list[tuple[str, int, int]]) -> float | None:
    errs = [abs(est / live - 1) for _, live, est in counts if live]
    return statistics.median(errs) if errs else None


__all__ = ["FidelityReport", "fidelity", "median_abs_error", "usage_counts"]
