"""The agent-loop scenarios: conversations from the fixture corpus that a loop drives to the end.

Each scenario names a cassette (``fixtures/<family>/<tool type>/<scenario>.json``). The loop gets
the first request's body as ``params`` and must produce the rest of the recorded conversation: the
simulator replays the recorded responses and judges every request the loop sends by the protocol
rules. ``setup`` exchanges are played by the harness first (an earlier conversation that created
the container an expired-container scenario then reuses); ``faults`` inject transient errors;
``dropped`` exchanges are left out of the engine's expectation and ``then`` starts further
conversations the loop is called for, in order (both used by :mod:`conformance.loops.corpus`).
When the recorded request sent an ``anthropic-beta`` header, ``params`` carry it as
``extra_headers`` (which ``messages.create`` and the tool runner accept).

**Variants.** A framework declares a client tool it cannot express (no bash client tool) or the
one code execution version it pins; a scenario that has a recording of the same conversation
for that variant runs it instead (:meth:`LoopScenario.for_variants`): the client-tool scenarios
with a custom function tool (``fixtures/functions/custom/``), the code execution ones with
20250825, 20260120 or 20260521. A scenario without a recording for the declared variant is not
applicable to that loop (skipped with the reason), never a failure. A loop declares variants as
``tooluse_variants = {"client_tool": "custom", "code_execution": "code_execution_20250825"}``
(``--loop``) or in its ``TOOLUSE_LOOP_DESCRIBE`` answer (``--loop-cmd``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from simulator.cassette import Cassette, default_fixtures_root, load_cassette
from simulator.faults import Fault, FaultPlan
from simulator.sources import (
    SEED_BASH,
    SEED_CODE_EXECUTION,
    SEED_PTC,
    Source,
    protocol,
    seed,
)


@dataclass(frozen=True)
class LoopScenario:
    #: The check id (``loop.<what>``).
    id: str
    #: Cassette path under the fixtures root.
    cassette: str
    statement: str
    source: Source
    #: Exchanges the harness plays before handing over to the loop.
    setup: int = 0
    #: Transient faults, by exchange index (a list is used up one attempt at a time).
    faults: dict[int, list[Fault]] = field(default_factory=dict)
    #: Exchanges (indices in the file) left out of the engine's expectation: requests a correct
    #: loop never sends. ``setup``, ``then`` and ``faults`` index the cassette without them.
    dropped: tuple[int, ...] = ()
    #: Exchanges starting a further conversation: the loop is called again with each one's body.
    then: tuple[int, ...] = ()
    #: MUST unless the docs only recommend the behaviour (docs/checks.md).
    severity: str = "MUST"
    #: The kind of variant this scenario has recordings of (``client_tool``, ``code_execution``).
    variant_kind: str | None = None
    #: Variant -> cassette path of the same conversation recorded with it.
    variants: tuple[tuple[str, str], ...] = ()

    def for_variants(self, declared: dict[str, str]) -> LoopScenario | str:
        """This scenario as a loop declaring ``declared`` runs it (the cassette of its variant),
        or why it is not applicable to that loop."""
        if self.variant_kind is None or self.variant_kind not in declared:
            return self
        want = declared[self.variant_kind]
        found = dict(self.variants).get(want)
        if found is None:
            known = ", ".join(v for v, _ in self.variants)
            why = VARIANT_GAPS.get((self.variant_kind, want))
            return (f"the loop declares {self.variant_kind} {want!r}; this scenario is recorded "
                    f"for {known} only" + (f" ({why})" if why else ""))
        return self if found == self.cassette else replace(self, cassette=found)

    def load(self) -> Cassette:
        cassette = load_cassette(default_fixtures_root() / self.cassette)
        if not self.dropped:
            return cassette
        kept = [ex for ex in cassette.exchanges if ex.index not in self.dropped]
        return replace(cassette, exchanges=[replace(ex, index=i) for i, ex in enumerate(kept)])

    def fault_plan(self) -> FaultPlan | None:
        return FaultPlan(at=dict(self.faults)) if self.faults else None

    def params(self, cassette: Cassette) -> dict[str, Any]:
        """What the loop starts from: the body of the first request it must send."""
        return request_params(cassette, self.setup)

    def conversations(self, cassette: Cassette) -> list[dict[str, Any]]:
        """``params`` for each call of the loop, in order: the first conversation, then ``then``."""
        return [self.params(cassette), *(request_params(cassette, i) for i in self.then)]


def _create_parameters() -> frozenset[str] | None:
    """The keyword parameters of the SDK's ``messages.create`` (None without the SDK)."""
    try:
        import inspect

        from anthropic.resources.messages import Messages
    except ImportError:
        return None
    return frozenset(inspect.signature(Messages.create).parameters) - {"self"}


def request_params(cassette: Cassette, index: int) -> dict[str, Any]:
    """The Messages create parameters of one recorded request (its ``anthropic-beta`` header as
    ``extra_headers``)."""
    request = cassette.exchanges[index].request
    body = request.get("body")
    params = dict(body) if isinstance(body, dict) else {}
    # A body field the SDK's messages.create has no parameter for (output_format,
    # context_management: beta fields) goes in ``extra_body``, as a client sends it.
    accepted = _create_parameters()
    extra = {k: params.pop(k) for k in list(params) if accepted is not None and k not in accepted}
    if extra:
        params["extra_body"] = extra
    headers = request.get("headers") or {}
    beta = headers.get("anthropic-beta") if isinstance(headers, dict) else None
    if beta:
        params["extra_headers"] = {"anthropic-beta": str(beta)}
    return params


def recorded_results(cassette: Cassette) -> dict[str, Any]:
    """tool_use id -> the content the recorded client answered it with."""
    out: dict[str, Any] = {}
    for ex in cassette.exchanges:
        body = ex.request.get("body") or {}
        for m in body.get("messages") or []:
            if m.get("role") != "user" or not isinstance(m.get("content"), list):
                continue
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out[str(b.get("tool_use_id"))] = b.get("content", "")
    return out


_BASH = seed(SEED_BASH, "Bash 도구")
_CE = seed(SEED_CODE_EXECUTION, "Alasan berhenti `pause_turn`")
_MIXED = protocol("2. Code execution tool: Client tool alongside code execution")
_PTC = seed(SEED_PTC, "Ce qui se passe réellement")
_TRANSIENT = protocol("5. Error responses: Headers (retry-after)", "S")
_FAST = 0.01
_CE_VERSIONS = ("code_execution_20250825", "code_execution_20260120", "code_execution_20260521")
_PTC_VERSIONS = ("code_execution_20260120", "code_execution_20260521")
#: Why a variant has no recording of a scenario.
VARIANT_GAPS = {("code_execution", "code_execution_20250825"):
                "programmatic tool calling needs code_execution_20260120 or later (programmatic tool calling "
                "page, The version strings, decoded)"}


_CODE_EXECUTION = "code_execution"
_CLIENT_TOOL = "client_tool"


def _ce(path: str, versions: tuple[str, ...] = _CE_VERSIONS) -> tuple[tuple[str, str], ...]:
    """``path`` (with ``{v}`` for the version) recorded for each code execution version."""
    return tuple((v, path.format(v=v)) for v in versions)


def _fn(bash: str, custom: str) -> tuple[tuple[str, str], ...]:
    """A client-tool scenario recorded with bash and with a custom function tool."""
    return (("bash", bash), ("custom", custom))

SCENARIOS: tuple[LoopScenario, ...] = (
    LoopScenario("loop.client_tools.one_per_turn", "bash/bash_20250124/one_command.json",
                 "a client tool_use is answered by a tool_result in the next user message",
                 _BASH, variant_kind=_CLIENT_TOOL, variants=_fn("bash/bash_20250124/one_command.json",
                              "functions/custom/one_call.json")),
    LoopScenario("loop.client_tools.several_per_turn", "bash/bash_20250124/several_tool_uses.json",
                 "several tool_use blocks of one turn are all answered in one user message, "
                 "results first", _BASH, variant_kind=_CLIENT_TOOL, variants=_fn("bash/bash_20250124/several_tool_uses.json",
                                               "functions/custom/several_calls.json")),
    LoopScenario("loop.client_tools.streamed", "bash/bash_20250124/one_command_streamed.json",
                 "a client tool_use of a streamed response is answered in the next user message",
                 _BASH, variant_kind=_CLIENT_TOOL, variants=_fn("bash/bash_20250124/one_command_streamed.json",
                              "functions/custom/one_call_streamed.json")),
    LoopScenario("loop.pause_turn.resend", "code_execution/code_execution_20260120/pause_turn.json",
                 "after stop_reason pause_turn the assistant content is sent back as-is to "
                 "continue the turn", _CE,
                 variant_kind=_CODE_EXECUTION, variants=_ce("code_execution/{v}/pause_turn.json")),
    LoopScenario("loop.pause_turn.streamed",
                 "code_execution/code_execution_20260120/pause_turn_streamed.json",
                 "a streamed pause_turn response is sent back as-is to continue the turn", _CE,
                 variant_kind=_CODE_EXECUTION, variants=_ce("code_execution/{v}/pause_turn_streamed.json")),
    LoopScenario("loop.mixed.client_and_server_tools",
                 "mixed/code_execution_20250825/deferred_server_result.json",
                 "a client tool next to a pending server tool is answered with only tool_result "
                 "blocks and the same tools", _MIXED, variant_kind=_CODE_EXECUTION,
                 variants=_ce("mixed/{v}/deferred_server_result.json", _CE_VERSIONS[:1])),
    LoopScenario("loop.mixed.streamed",
                 "mixed/code_execution_20250825/deferred_server_result_streamed.json",
                 "a client tool next to a pending server tool, streamed, is answered with only "
                 "tool_result blocks", _MIXED, variant_kind=_CODE_EXECUTION,
                 variants=_ce("mixed/{v}/deferred_server_result_streamed.json", _CE_VERSIONS[:1])),
    LoopScenario("loop.ptc.pause_resume", "ptc/code_execution_20260120/pause_resume.json",
                 "a programmatic call is answered with only tool_result blocks and the container "
                 "id", _PTC, variant_kind=_CODE_EXECUTION, variants=_ce("ptc/{v}/pause_resume.json", _PTC_VERSIONS)),
    LoopScenario("loop.ptc.pause_resume_streamed",
                 "ptc/code_execution_20260120/pause_resume_streamed.json",
                 "a programmatic call of a streamed response is answered with only tool_result "
                 "blocks and the container id", _PTC,
                 variant_kind=_CODE_EXECUTION, variants=_ce("ptc/{v}/pause_resume_streamed.json", _PTC_VERSIONS)),
    LoopScenario("loop.ptc.parallel_calls", "ptc/code_execution_20260120/parallel_calls.json",
                 "parallel programmatic calls are all answered in one message", _PTC,
                 variant_kind=_CODE_EXECUTION, variants=_ce("ptc/{v}/parallel_calls.json", _PTC_VERSIONS)),
    LoopScenario("loop.ptc.several_pauses", "ptc/code_execution_20260120/several_pauses.json",
                 "code that pauses several times is resumed each time with the container", _PTC,
                 variant_kind=_CODE_EXECUTION, variants=_ce("ptc/{v}/several_pauses.json", _PTC_VERSIONS)),
    LoopScenario("loop.container.expired",
                 "code_execution/code_execution_20260120/container_expired.json",
                 "a request refused for an expired container is sent again without `container`",
                 seed(SEED_CODE_EXECUTION, "Penggunaan ulang container"), setup=1,
                 # SHOULD, not MUST (recalibrated in issue 23): the seed says a request naming an
                 # expired container "returns an error instead of restoring it" and tells the
                 # developer to "send the request again without the `container` parameter to get
                 # a new container" -- the remedy, not that a client must apply it by itself. A
                 # loop that hands the API's 400 to the application reports the failure as it
                 # is (no data loss, no success reported for a failure); one that recovers on
                 # its own follows the documented remedy.
                 severity="SHOULD",
                 variant_kind=_CODE_EXECUTION, variants=_ce("code_execution/{v}/container_expired.json")),
    LoopScenario("loop.errors.transient_retried", "bash/bash_20250124/one_command.json",
                 "transient 429 and 529 answers are retried and the conversation completes",
                 _TRANSIENT, severity="SHOULD", faults={
                     0: [Fault("rate_limit", retry_after=_FAST)],
                     1: [Fault("overloaded", retry_after=_FAST)]},
                 variant_kind=_CLIENT_TOOL, variants=_fn("bash/bash_20250124/one_command.json",
                       "functions/custom/one_call.json")),
)

BY_ID = {s.id: s for s in SCENARIOS}

#: The scenario of the warning check ``loop.errors.retry_after_respected``
#: (:mod:`conformance.checks.loop_warnings`): the first request is answered 429 with
#: ``retry-after: 1`` (the API's unit, seconds), then served as recorded.
RETRY_AFTER = LoopScenario(
    "loop.errors.retry_after_respected", "bash/bash_20250124/one_command.json",
    "a request answered 429 with retry-after is not sent again before that many seconds",
    protocol("5. Error responses: Headers (retry-after)"), severity="SHOULD",
    faults={0: [Fault("rate_limit", retry_after=1)]}, variant_kind=_CLIENT_TOOL,
    variants=_fn("bash/bash_20250124/one_command.json", "functions/custom/one_call.json"))
