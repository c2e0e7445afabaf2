"""Issue 37: the tolerant set matches every difference the live API answers the same way, and
refuses every difference that changes meaning: proved over generated rewrites of the corpus.

(a) Any rewrite of any corpus request composed at random from the inert differences of
    ``simulator.matchers.EQUIVALENCES`` (annotation and unknown schema keywords at any depth,
    key order, tool order, ``additionalProperties`` true/false, ``$schema``, the order of sets,
    ``type: "custom"``, ``eager_input_streaming``, ``cache_control``, explicit defaults,
    ``metadata``, ``caller: direct`` present or omitted, text as a string or blocks) is matched
    by the tolerant set, and the whole cassette replays under it as recorded: every response
    served, no rule broken (``messages.resent_turn.unchanged`` included).
(b) Any meaning-changing rewrite (a tool's name, type and version, ``allowed_callers``,
    description, ``strict: true``; property names, types, ``required``, ``enum``; a message's
    blocks; a resent input) is refused: by a named rule where the protocol has one, or by a
    matcher whose one-line difference names the field.

Both run in CI (a bounded example count; ``CI=true`` derandomizes them).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from simulator.cassette import Cassette, Exchange, default_fixtures_root, iter_corpus
from simulator.clock import FakeClock
from simulator.engine import Simulator
from simulator.headers import replay_headers
from simulator.http import SimRequest, SimResponse
from simulator.matchers import (
    EQUIVALENCES,
    SCHEMA_ANNOTATIONS,
    TOLERANT_MATCHERS,
    MatchRequest,
    first_failure,
)
from simulator.registry import TOOLS


def _time(ts: str | None) -> datetime | None:
    if not ts:
        return None
    t = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _corpus() -> list[Cassette]:
    root = default_fixtures_root()
    if not root.is_dir():
        return []
    return [c for c in iter_corpus(root)
            if all(str(ex.request.get("path", "")).startswith("/v1/messages")
                   and isinstance(ex.request.get("body"), dict) for ex in c.exchanges)]


CORPUS = _corpus()
#: Cassettes with a custom tool that has an input schema (the schema rewrites need one).
WITH_SCHEMA = [c for c in CORPUS if any(
    isinstance(t, dict) and isinstance(t.get("input_schema"), dict)
    for ex in c.exchanges for t in ex.request["body"].get("tools") or [])]
pytestmark = pytest.mark.skipif(not CORPUS, reason="no fixtures/ corpus in this checkout")

Rewrite = Callable[[dict[str, Any], random.Random], bool]


# --- walking a request -------------------------------------------------------------------------

def _custom_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in body.get("tools") or [] if isinstance(t, dict)
            and t.get("type") in (None, "custom") and isinstance(t.get("input_schema"), dict)]


def _schemas(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema position of ``schema`` (never a property *name*)."""
    if not isinstance(schema, dict):
        return
    yield schema
    for k in ("properties", "$defs", "definitions", "patternProperties"):
        if isinstance(schema.get(k), dict):
            for sub in schema[k].values():
                yield from _schemas(sub)
    for k in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        yield from _schemas(schema.get(k))
    for k in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(schema.get(k), list):
            for sub in schema[k]:
                yield from _schemas(sub)


def _all_schemas(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for t in _custom_tools(body) for s in _schemas(t["input_schema"])]


def _blocks(body: dict[str, Any], role: str | None = None) -> list[dict[str, Any]]:
    return [b for m in body.get("messages") or [] if isinstance(m, dict)
            and (role is None or m.get("role") == role) and isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict)]


def _cache_controls(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_cache_controls(v) for v in value.values())
    if isinstance(value, list):
        return sum(_cache_controls(v) for v in value)
    return 0


# --- (a) inert rewrites ---------------------------------------------------------------------------

ANNOTATION_VALUES = st.sampled_from(["", "Property location", "The city", 0, None, True,
                                     ["x"], {"a": 1}])
#: Keywords JSON Schema does not define (annotations, Core §6.5), as frameworks send them.
UNKNOWN_KEYWORDS = ("strict", "x-order", "nullable_hint")


def annotate(body: dict[str, Any], rnd: random.Random) -> bool:
    schemas = _all_schemas(body)
    for s in rnd.sample(schemas, k=min(len(schemas), rnd.randint(1, 4))):
        k = rnd.choice(SCHEMA_ANNOTATIONS + UNKNOWN_KEYWORDS)
        s[k] = rnd.choice(["", "Property location", "The city", 0, None, True, ["x"], {"a": 1}]) \
            if k != "$schema" else "http://json-schema.org/draft-07/schema#"
    return bool(schemas)


def strip_annotations(body: dict[str, Any], rnd: random.Random) -> bool:
    done = False
    for s in _all_schemas(body):
        for k in [k for k in s if k in SCHEMA_ANNOTATIONS and rnd.random() < 0.7]:
            del s[k]
            done = True
    return done


def additional_properties(body: dict[str, Any], rnd: random.Random) -> bool:
    objects = [s for s in _all_schemas(body) if s.get("type") == "object"
               and not isinstance(s.get("additionalProperties"), dict)]
    for s in objects:
        choice = rnd.choice([True, False, None])
        if choice is None:
            s.pop("additionalProperties", None)
        else:
            s["additionalProperties"] = choice
    return bool(objects)


def shuffle_sets(body: dict[str, Any], rnd: random.Random) -> bool:
    done = False
    for s in _all_schemas(body):
        for k in ("required", "enum", "type"):
            if isinstance(s.get(k), list) and len(s[k]) > 1:
                rnd.shuffle(s[k])
                done = True
    for t in body.get("tools") or []:
        if isinstance(t, dict) and isinstance(t.get("allowed_callers"), list):
            rnd.shuffle(t["allowed_callers"])
            done = True
    return done


def tool_order(body: dict[str, Any], rnd: random.Random) -> bool:
    tools = body.get("tools")
    if not isinstance(tools, list) or len(tools) < 2:
        return False
    rnd.shuffle(tools)
    return True


def _shuffled(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _shuffled(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


def key_order(body: dict[str, Any], rnd: random.Random) -> bool:
    shuffled = _shuffled(body, rnd)
    body.clear()
    body.update(shuffled)
    return True


def type_custom(body: dict[str, Any], rnd: random.Random) -> bool:
    tools = [t for t in _custom_tools(body) if "type" not in t]
    for t in tools:
        t["type"] = "custom"
    return bool(tools)


def tool_options(body: dict[str, Any], rnd: random.Random) -> bool:
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    for t in tools:
        if t.get("type") in (None, "custom") and rnd.random() < 0.7:
            t["eager_input_streaming"] = rnd.choice([True, False])
    if tools and _cache_controls(body) < 4:
        rnd.choice(tools)["cache_control"] = {"type": "ephemeral"}
    return bool(tools)


def explicit_defaults(body: dict[str, Any], rnd: random.Random) -> bool:
    tools = _custom_tools(body)
    for t in tools:
        if "allowed_callers" not in t and rnd.random() < 0.5:
            t["allowed_callers"] = ["direct"]
        if "defer_loading" not in t and rnd.random() < 0.5:
            t["defer_loading"] = False
    return bool(tools)


def metadata(body: dict[str, Any], rnd: random.Random) -> bool:
    body["metadata"] = {"user_id": f"user-{rnd.randint(0, 999)}"}
    return True


def caller_direct(body: dict[str, Any], rnd: random.Random) -> bool:
    calls = [b for b in _blocks(body, "assistant") if b.get("type") in ("tool_use",
                                                                        "server_tool_use")]
    for b in calls:
        if b.get("caller") == {"type": "direct"}:
            del b["caller"]
        elif "caller" not in b:
            b["caller"] = {"type": "direct"}
    return bool(calls)


def cache_control_blocks(body: dict[str, Any], rnd: random.Random) -> bool:
    room = 4 - _cache_controls(body)
    blocks = [b for b in _blocks(body) if b.get("type") in ("text", "tool_use", "tool_result")
              and (b.get("type") != "text" or b.get("text"))]
    for b in rnd.sample(blocks, k=max(0, min(room, len(blocks), 2))):
        b["cache_control"] = {"type": "ephemeral"}
    return bool(blocks) and room > 0


def text_blocks(body: dict[str, Any], rnd: random.Random) -> bool:
    done = False
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        c = m.get("content")
        if isinstance(c, str) and c and rnd.random() < 0.7:
            cut = rnd.randint(1, len(c))
            m["content"] = [{"type": "text", "text": c[:cut]}] + (
                [{"type": "text", "text": c[cut:]}] if c[cut:] else [])
            done = True
    return done


INERT: dict[str, Rewrite] = {f.__name__: f for f in (
    annotate, strip_annotations, additional_properties, shuffle_sets, tool_order, key_order,
    type_custom, tool_options, explicit_defaults, metadata, caller_direct, cache_control_blocks,
    text_blocks)}


def test_every_inert_equivalence_has_a_rewrite() -> None:
    """The table and the generator stay in step: each inert kind is generated (the body-level
    ones the matchers never compare are represented by ``metadata`` and text blocks)."""
    covered = {
        "schema": {"annotate", "strip_annotations", "additional_properties", "shuffle_sets"},
        "json": {"key_order"}, "tools": {"tool_order"},
        "tool": {"type_custom", "tool_options", "explicit_defaults"},
        "messages": {"caller_direct", "text_blocks", "cache_control_blocks"},
        "body": {"metadata"},
    }
    for e in EQUIVALENCES:
        if e.inert:
            assert covered[e.where] <= set(INERT), e.what


def _send(sim: Simulator, clock: FakeClock, ex: Exchange, body: dict[str, Any]) -> SimResponse:
    at = _time(ex.at)
    if at is not None and at > clock.now():
        clock.advance((at - clock.now()).total_seconds())
    req = ex.request
    return sim(SimRequest(req["method"], req["path"], replay_headers(req.get("headers")),
                          {k: str(v) for k, v in (req.get("query") or {}).items()},
                          json.dumps(body).encode()))


def _engine(c: Cassette, **options: Any) -> tuple[Simulator, FakeClock]:
    clock = FakeClock(_time(c.clock_start))
    return Simulator(c, clock=clock, **options), clock


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.sampled_from(CORPUS or [None]),
       plan=st.lists(st.sampled_from(sorted(INERT)), min_size=1, max_size=8),
       seed=st.integers(0, 2**32 - 1))
def test_any_api_equivalent_rewrite_is_matched_and_served(c: Cassette, plan: list[str],
                                                          seed: int) -> None:
    rnd = random.Random(seed)
    sim, clock = _engine(c, matchers="tolerant")
    for ex in c.exchanges:
        body = copy.deepcopy(ex.request["body"])
        for name in plan:  # a request broken on purpose stays broken, by the same rule
            INERT[name](body, rnd)
        if not ex.expect_rule:
            recorded = MatchRequest.from_recorded(ex.request)
            failure = first_failure(TOLERANT_MATCHERS, recorded,
                                    MatchRequest(recorded.method, recorded.path, body))
            assert failure is None, (plan, failure.line if failure else None)
        got = _send(sim, clock, ex, body)
        assert got.status == ex.response["status"], (ex.index, plan, got.body)
    assert sim.done and not sim.mismatches and not sim.unmet, plan
    assert all(v.expected for v in sim.violations if v.answered), plan


# --- (b) meaning-changing rewrites ----------------------------------------------------------------

#: (name, rewrite, the field the refusal names: a fragment of the mismatch's path).
Change = tuple[str, Rewrite, str]


def _pick_tool(body: dict[str, Any], rnd: random.Random, custom: bool = True
               ) -> dict[str, Any] | None:
    tools = _custom_tools(body) if custom else [t for t in body.get("tools") or []
                                                if isinstance(t, dict)]
    return rnd.choice(tools) if tools else None


def rename_tool(body: dict[str, Any], rnd: random.Random) -> bool:
    t = _pick_tool(body, rnd, custom=False)
    if t is None:
        return False
    t["name"] = f"{t.get('name')}_renamed"
    return True


def tool_version(body: dict[str, Any], rnd: random.Random) -> bool:
    versioned = [t for t in body.get("tools") or [] if isinstance(t, dict)
                 and str(t.get("type")) in TOOLS]
    if not versioned:
        return False
    t = rnd.choice(versioned)
    family = TOOLS[str(t["type"])].family
    others = sorted(v for v, tv in TOOLS.items() if tv.family == family and v != t["type"])
    if not others:
        return False
    t["type"] = rnd.choice(others)
    return True


def allowed_callers(body: dict[str, Any], rnd: random.Random) -> bool:
    t = _pick_tool(body, rnd)
    if t is None:
        return False
    now = set(t.get("allowed_callers") or ["direct"])
    t["allowed_callers"] = sorted(now ^ {"code_execution_20260120"}) or ["direct"]
    return set(t["allowed_callers"]) != now


def tool_description(body: dict[str, Any], rnd: random.Random) -> bool:
    t = _pick_tool(body, rnd)
    if t is None:
        return False
    t["description"] = f"{t.get('description', '')} Returns nothing useful."
    return True


def strict_true(body: dict[str, Any], rnd: random.Random) -> bool:
    t = _pick_tool(body, rnd)
    if t is None or t.get("strict") is True:
        return False
    t["strict"] = True
    return True


def _properties(body: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    return [(s, n) for s in _all_schemas(body) if isinstance(s.get("properties"), dict)
            for n in s["properties"]]


def rename_property(body: dict[str, Any], rnd: random.Random) -> bool:
    props = _properties(body)
    if not props:
        return False
    s, n = rnd.choice(props)
    s["properties"][f"{n}_renamed"] = s["properties"].pop(n)
    if isinstance(s.get("required"), list):
        s["required"] = [f"{r}_renamed" if r == n else r for r in s["required"]]
    return True


def property_type(body: dict[str, Any], rnd: random.Random) -> bool:
    props = [(s, n) for s, n in _properties(body) if isinstance(s["properties"][n], dict)]
    if not props:
        return False
    s, n = rnd.choice(props)
    p = s["properties"][n]
    p["type"] = "integer" if p.get("type") != "integer" else "string"
    return True


def required_names(body: dict[str, Any], rnd: random.Random) -> bool:
    props = _properties(body)
    if not props:
        return False
    s, n = rnd.choice(props)
    req = list(s.get("required") or [])
    s["required"] = [r for r in req if r != n] if n in req else [*req, n]
    return True


def enum_values(body: dict[str, Any], rnd: random.Random) -> bool:
    props = [(s, n) for s, n in _properties(body) if isinstance(s["properties"][n], dict)]
    if not props:
        return False
    s, n = rnd.choice(props)
    p = s["properties"][n]
    p["enum"] = [*(p.get("enum") or []), "another value"]
    return True


TOOL_CHANGES: list[Change] = [
    ("rename_tool", rename_tool, "tools["), ("tool_version", tool_version, ".type"),
    ("allowed_callers", allowed_callers, ".allowed_callers"),
    ("tool_description", tool_description, ".description"),
    ("strict_true", strict_true, ".strict"), ("rename_property", rename_property, ".properties."),
    ("property_type", property_type, ".type"), ("required_names", required_names, ".required"),
    ("enum_values", enum_values, ".enum"),
]


def drop_block(body: dict[str, Any], rnd: random.Random) -> bool:
    msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)
            and isinstance(m.get("content"), list)
            and any(b.get("type") != "text" for b in m["content"] if isinstance(b, dict))]
    if not msgs:
        return False
    m = rnd.choice(msgs)
    blocks = [b for b in m["content"] if isinstance(b, dict) and b.get("type") != "text"]
    m["content"].remove(rnd.choice(blocks))
    return True


#: The blocks the simulation served before the request being rewritten (set per example).
SERVED: set[tuple[str, ...]] = set()


def resent_input(body: dict[str, Any], rnd: random.Random) -> bool:
    """Empty the input of a call the simulation served (a turn it did not pause)."""
    calls = [b for b in _blocks(body, "assistant") if b.get("type") in ("tool_use",
                                                                        "server_tool_use")
             and b.get("input") and ("call", str(b.get("id"))) in SERVED]
    if not calls:
        return False
    rnd.choice(calls)["input"] = {}
    return True


MESSAGE_CHANGES: list[Change] = [("drop_block", drop_block, "messages["),
                                 ("resent_input", resent_input, "messages[")]


def _refused_naming(sim: Simulator, got: SimResponse, field: str) -> str:
    """How the request was refused: ``rule <id>`` or ``matcher <name>: <line>`` naming
    ``field``; fails otherwise."""
    assert got.status == 400, got.body
    answered = [v for v in sim.violations if v.answered and not v.expected]
    if answered:
        return f"rule {answered[0].rule_id}"
    [m] = sim.mismatches
    assert m.difference is not None and field in m.difference.path, (field, m.line)
    return f"matcher {m.matcher}: {m.line}"


def _at(c: Cassette, rnd: random.Random) -> int | None:
    """An exchange of ``c`` a correct client reaches (not a deliberate violation)."""
    ok = [i for i, ex in enumerate(c.exchanges) if not ex.expect_rule]
    return rnd.choice(ok) if ok else None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.sampled_from(WITH_SCHEMA or [None]), change=st.sampled_from(TOOL_CHANGES),
       noise=st.lists(st.sampled_from(sorted(INERT)), max_size=4),
       seed=st.integers(0, 2**32 - 1))
def test_a_meaning_changing_tool_rewrite_is_refused_naming_the_field(
        c: Cassette, change: Change, noise: list[str], seed: int) -> None:
    _meaning_changing(c, change, noise, seed)


# Most (cassette, change) pairs do not apply (a resent-input change needs a served tool input,
# ...): the draws are filtered on purpose; Hypothesis' CI profile (derandomize) tripped its
# filter_too_much health check with 9 kept of 59.
@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(c=st.sampled_from(CORPUS or [None]), change=st.sampled_from(MESSAGE_CHANGES),
       noise=st.lists(st.sampled_from(sorted(INERT)), max_size=4),
       seed=st.integers(0, 2**32 - 1))
def test_a_meaning_changing_message_rewrite_is_refused(
        c: Cassette, change: Change, noise: list[str], seed: int) -> None:
    _meaning_changing(c, change, noise, seed)


def _meaning_changing(c: Cassette, change: Change, noise: list[str], seed: int) -> None:
    rnd = random.Random(seed)
    at = _at(c, rnd)
    assume(at is not None)
    assert at is not None
    ex = c.exchanges[at]
    sim, clock = _engine(c, matchers="tolerant")
    for earlier in c.exchanges[:at]:
        assert _send(sim, clock, earlier, earlier.request["body"]).status == \
            earlier.response["status"]
    SERVED.clear()
    SERVED.update(sim.state.served_turns)
    body = copy.deepcopy(ex.request["body"])
    name, rewrite, field = change
    assume(rewrite(body, rnd))
    for n in noise:
        INERT[n](body, rnd)
    got = _send(sim, clock, ex, body)
    how = _refused_naming(sim, got, field)
    event(f"{name}: {how.split(':')[0]}")
    if name == "resent_input":  # a served input is judged by the rule that names the block
        assert how == "rule messages.resent_turn.unchanged", how


# --- the table itself, and the two frameworks of issue 37 ---------------------------------------

def test_every_equivalence_says_why_and_where_from() -> None:
    assert {e.inert for e in EQUIVALENCES} == {True, False}
    for e in EQUIVALENCES:
        assert e.what and e.why and e.source and e.judged_by, e


@pytest.mark.parametrize("describe", [lambda n: f"Property {n}", lambda n: ""],
                         ids=["Property <name>", "empty"])
def test_a_description_on_every_property_is_matched(describe: Callable[[str], str]) -> None:
    """The two frameworks of issue 37, and a property literally called ``description`` or
    ``title``: an annotation is left out only in a schema position, never as a property name."""
    recorded = {"tools": [{"name": "get_weather", "description": "Weather.", "input_schema": {
        "type": "object", "properties": {"location": {"type": "string"},
                                         "description": {"type": "string"},
                                         "title": {"type": "object", "properties": {
                                             "unit": {"type": "string"}}}},
        "required": ["location", "description"]}}], "messages": []}
    received = copy.deepcopy(recorded)

    def describe_all(schema: dict[str, Any]) -> None:
        for n, p in schema.get("properties", {}).items():
            p["description"] = describe(n)
            describe_all(p)
    describe_all(received["tools"][0]["input_schema"])
    rec, got = (MatchRequest("POST", "/v1/messages", b) for b in (recorded, received))
    assert first_failure(TOLERANT_MATCHERS, rec, got) is None
    del received["tools"][0]["input_schema"]["properties"]["description"]
    failure = first_failure(TOLERANT_MATCHERS, rec, got)
    assert failure is not None and failure.line.startswith(
        "tools[get_weather].input_schema.properties.description: recorded {\"type\": \"string\"}, "
        "received absent")
    received = copy.deepcopy(recorded)
    received["tools"][0]["input_schema"]["properties"]["title"]["properties"]["unit"]["type"] = \
        "number"
    failure = first_failure(TOLERANT_MATCHERS, rec, MatchRequest("POST", "/v1/messages", received))
    assert failure is not None and failure.line == (
        'tools[get_weather].input_schema.properties.title.properties.unit.type: recorded '
        '"string", received "number"')
