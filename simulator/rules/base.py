"""The rule registry: each request-level protocol rule, registered once, with its source.

A rule is a function ``(ctx: RuleContext) -> str | None`` registered with :func:`rule`; it returns
the error message the API gives for a violation (None when the request passes). The registry
refuses a duplicate id or a missing source at import time. A violation is answered with HTTP 400
``invalid_request_error`` (see :mod:`simulator.errors`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, overload

from ..history import RequestHistory
from ..matchers import blocks_of
from ..registry import ALLOWED_CALLERS, TOOLS, ToolVersion
from ..sources import Source
from ..state import SimState

Level = Literal["MUST", "SHOULD", "INFO"]
Check = Callable[["RuleContext"], str | None]

_ID = re.compile(r"^[a-z_]+(\.[a-z0-9_]+)+$")


@dataclass(frozen=True)
class Rule:
    id: str
    level: Level
    source: Source
    statement: str
    check: Check
    #: The documented (or inferred) message, with ``{placeholders}``: for docs and reports.
    message: str
    #: HTTP status and error type of a violation.
    status: int = 400
    error_type: str = "invalid_request_error"
    #: In :data:`DEFAULT_RULES` (the engine's default). Off for a rule live traffic contradicts.
    default: bool = True

    @property
    def inferred(self) -> bool:
        """True when the exact error text is not documented (source tag ``I`` or ``?``)."""
        return self.source.inferred

    def to_json(self) -> dict[str, Any]:
        """The rule as data (for docs and reports)."""
        return {"id": self.id, "level": self.level, "source": self.source.to_json(),
                "statement": self.statement, "message": self.message, "status": self.status,
                "error_type": self.error_type, "inferred": self.inferred, "default": self.default}


@dataclass(frozen=True)
class Violation:
    rule_id: str
    message: str
    status: int = 400
    error_type: str = "invalid_request_error"


RULES: dict[str, Rule] = {}


def rule(id: str, *, source: Source, statement: str, message: str,
         level: Level = "MUST", default: bool = True, status: int = 400,
         error_type: str = "invalid_request_error") -> Callable[[Check], Check]:
    """Register ``fn`` as the check of rule ``id`` (a duplicate id fails at import); a violation
    is answered with ``status`` and ``error_type`` (400 ``invalid_request_error`` by default)."""
    if not _ID.match(id):
        raise ValueError(f"rule id {id!r} must be dotted lower_snake_case, e.g. 'ptc.container.required'")
    if not isinstance(source, Source):
        raise TypeError(f"rule {id!r} needs a simulator.sources.Source")

    def deco(fn: Check) -> Check:
        if id in RULES:
            raise ValueError(f"rule {id!r} registered twice")
        RULES[id] = Rule(id, level, source, statement, fn, message, status=status,
                         error_type=error_type, default=default)
        return fn

    return deco


# --- the request as rules see it ---------------------------------------------------------------

_T = TypeVar("_T")


class cached_property(Generic[_T]):  # noqa: N801 - functools.cached_property's name and use
    """``functools.cached_property`` without its lock (Python 3.11 takes an RLock on every first
    access, a measurable cost per request): the value is computed on first access and stored in
    the instance ``__dict__``, which later accesses read directly. A context is used by one
    thread."""

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> cached_property[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


#: The ``allowed_callers`` values that let code call a tool (the registry's, minus ``direct``).
CODE_EXEC_CALLERS = frozenset(c for c in ALLOWED_CALLERS if c != "direct")


@dataclass
class RuleContext:
    body: Mapping[str, Any]
    headers: Mapping[str, str]
    state: SimState
    notes: list[str] = field(default_factory=list)
    #: What the engine already knows about the resent messages (:mod:`simulator.history`).
    history: RequestHistory | None = None

    @property
    def model(self) -> str:
        return str(self.body.get("model") or "")

    @cached_property
    def raw_messages(self) -> list[dict[str, Any]]:
        """``messages`` as sent."""
        ms = self.body.get("messages")
        if not isinstance(ms, list):
            return []
        if set(map(type, ms)) <= {dict}:  # the usual case, checked in C: the list as sent
            return ms
        return [m for m in ms if isinstance(m, dict)]

    @cached_property
    def messages(self) -> list[dict[str, Any]]:
        """``messages`` as the API reads them: consecutive turns of one role combined into one,
        content as a list of blocks. Error paths (``messages.N.content.M``) index this list, as
        the API's do (real_traffic pysdk__111/112: two user turns answered as ``messages.0``)."""
        out: list[dict[str, Any]] = []
        combined_of: list[int] = []  # raw index (of a dict message) -> combined index
        raw = self.raw_messages
        start = 0
        h = self.history
        if h is not None and h.prev_combined is not None and h.prev_combined_of is not None \
                and len(raw) == len(h.messages):
            # The combined messages made only of the shared prefix are the last request's.
            c = h.prev_combined_of[h.shared - 1]
            out = h.prev_combined[:c]
            start = h.prev_combined_of.index(c)
            combined_of = h.prev_combined_of[:start]
        for m in raw[start:]:
            blocks = blocks_of(m.get("content"))
            if out and out[-1].get("role") == m.get("role"):
                out[-1]["content"].extend(blocks)
            else:
                out.append({**m, "content": blocks})
            combined_of.append(len(out) - 1)
        self._combined_of = combined_of
        return out

    def pair_start(self, *, same_tools: bool = False) -> int:
        """The first index ``i`` from which a rule judging pairs of combined messages
        ``(i - 1, i)`` or ``(i, i + 1)`` must look: the pairs before it were judged, identical, in
        the last request that passed every rule (:mod:`simulator.history`). ``same_tools``: the
        verdict also depends on ``tools``. 0 when nothing is known."""
        h = self.history
        if h is None or h.shared == 0 or (same_tools and not h.same_tools):
            return 0
        ms = h.messages
        if len(self.raw_messages) != len(ms) or h.shared > len(ms):
            return 0  # some message is not an object: no shortcut
        self.messages  # noqa: B018  (computes the raw -> combined index map)
        return max(0, self._combined_of[h.shared - 1] - 1)

    @cached_property
    def tools(self) -> list[dict[str, Any]]:
        ts = self.body.get("tools") or []
        return [t for t in ts if isinstance(t, dict)] if isinstance(ts, list) else []

    @cached_property
    def betas(self) -> set[str]:
        raw = self.headers.get("anthropic-beta", "")
        out = {b.strip() for b in raw.split(",") if b.strip()}
        extra = self.body.get("betas")  # the SDK's beta namespace also sends them as headers
        if isinstance(extra, list):
            out |= {str(b) for b in extra}
        return out

    def from_tools(self, name: str, compute: Callable[[RuleContext], _T]) -> _T:
        """``compute(self)``, a pure function of ``tools`` (and the registry), kept with the facts
        of these exact tools (:mod:`simulator.history`) so each tool list pays it once."""
        h = self.history
        tf = h.tools_facts if h is not None else None
        if tf is None:
            return compute(self)
        derived = tf.derived
        if derived is None:
            derived = tf.derived = {}
        if name not in derived:
            derived[name] = compute(self)
        return derived[name]

    def tool_use_ids(self, i: int) -> list[str]:
        """The ids of the ``tool_use`` blocks of combined message ``i`` (computed once)."""
        memo = self.__dict__.setdefault("_tool_use_ids", {})
        ids = memo.get(i)
        if ids is None:
            ids = memo[i] = [str(b.get("id")) for b in self.content(i) if b.get("type") == "tool_use"]
        return ids

    def content(self, i: int) -> list[dict[str, Any]]:
        """The blocks of combined message ``i`` (the list itself: do not modify it)."""
        return self.messages[i]["content"]

    def tool_version(self, tool: Mapping[str, Any]) -> ToolVersion | None:
        t = tool.get("type")
        return TOOLS.get(str(t)) if t and t != "custom" else None

    def tool_by_name(self, name: str) -> dict[str, Any] | None:
        return next((t for t in self.tools if t.get("name") == name), None)

    def code_execution_tools(self) -> list[tuple[int, dict[str, Any], ToolVersion]]:
        out = []
        for i, t in enumerate(self.tools):
            tv = self.tool_version(t)
            if tv is not None and tv.family == "code_execution":
                out.append((i, t, tv))
        return out

    def last_assistant_index(self) -> int | None:
        for i in range(len(self.messages) - 1, -1, -1):
            if self.messages[i].get("role") == "assistant":
                return i
        return None


def allowed_callers(tool: Mapping[str, Any]) -> list[str]:
    ac = tool.get("allowed_callers")
    return [str(a) for a in ac] if isinstance(ac, list) else []


def code_callable(tool: Mapping[str, Any]) -> bool:
    """The definition lets code call it (``allowed_callers`` names a code execution version)."""
    return any(a in CODE_EXEC_CALLERS for a in allowed_callers(tool))


def tool_label(i: int, tool: Mapping[str, Any]) -> str:
    """``tools.N.<type>`` as the API's validation messages name a definition."""
    return f"tools.{i}.{tool.get('type') or 'custom'}"


def run_rules(ctx: RuleContext, rules: Iterable[Rule]) -> list[Violation]:
    """Every violation of ``rules`` by the request in ``ctx``, in rule order."""
    out = []
    for r in rules:
        try:
            msg = r.check(ctx)
        except Exception as e:  # noqa: BLE001  never a traceback for client input
            # A malformed request the schema rule already reports can trip a later rule; say so
            # in the notes (a simulator bug when the request is otherwise valid) and go on.
            ctx.notes.append(f"rule {r.id} could not judge this request: "
                             f"{type(e).__name__}: {e}")
            continue
        if msg is not None:
            out.append(Violation(r.id, msg, r.status, r.error_type))
    return out
