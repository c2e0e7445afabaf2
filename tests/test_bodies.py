"""simulator.bodies: the incremental request-body parser gives exactly what ``json.loads`` gives.

1. arbitrary JSON bodies (random members, whitespace, escapes, numbers, duplicate keys);
2. agent loops: one parser fed appended, resent, edited, shortened, foreign and broken bodies;
3. broken bodies raise what :meth:`SimRequest.json` / ``json.loads`` raise (deep nesting: RecursionError);
4. the engine refuses an edit hidden in the resent prefix of a conversation;
5. live traffic (../shared/real_traffic): every request body, and each recording's requests in order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _simkit import (
    API_HEADERS,
    WEATHER,
    assistant,
    body,
    cassette,
    error_of,
    exchange,
    message,
    text,
    tool_result,
    tool_use,
    user,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.bodies import BodyParser, Parsed, parse_messages_body
from simulator.engine import Simulator
from simulator.history import clear_facts
from simulator.http import SimRequest, SimResponse
from simulator.validation import unwrap_capture

RULE = "messages.tool_result.answers_previous_tool_use"
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def req(raw: bytes) -> SimRequest:
    return SimRequest.lowered("POST", "/v1/messages", {}, {}, raw)


def outcome(fn: Any, raw: bytes) -> tuple[str, str]:
    """``("ok", repr(value))`` or ``(exception type name, message)``."""
    try:
        return "ok", repr(fn(raw))
    except (ValueError, RecursionError, StopIteration, IndexError) as e:
        return type(e).__name__, str(e)


def reference(raw: bytes) -> tuple[str, str]:
    """What the engine did before the incremental parser: SimRequest.json()."""
    return outcome(lambda r: req(r).json(), raw)


def loads(raw: bytes) -> tuple[str, str]:
    return outcome(lambda r: json.loads(r.decode("utf-8")), raw)


def check_parsed(p: Parsed, raw: bytes) -> None:
    """``p`` is json.loads(raw), and each message text is that message's exact text in raw."""
    want = json.loads(raw.decode("utf-8"))
    assert repr(p.body) == repr(want), raw
    if p.texts is not None:
        decoded = raw.decode("utf-8")
        assert isinstance(want, dict) and isinstance(want.get("messages"), list)
        assert len(p.texts) == len(want["messages"])
        for t, m in zip(p.texts, want["messages"], strict=True):
            assert repr(json.loads(t)) == repr(m), (t, raw)
            assert t in decoded
    assert 0 <= p.reused <= (len(p.texts) if p.texts is not None else 0)


# --- 1. arbitrary JSON bodies -------------------------------------------------------------------

WS = st.text(alphabet=" \t\n\r", max_size=2)
_ESCAPES = ["\\ud800", "\\udfff", "\\ud83d\\ude00", "\\/", "\\u00e9", "\\n", "\\\\", '\\"',
            "\\u0000", "\\t", "\\b\\f\\r", "\\u2028", "é", "😀", "\u2028"]
STRING = st.lists(st.one_of(st.text(max_size=5).map(lambda s: json.dumps(s)[1:-1]),
                            st.text(max_size=5).map(lambda s: json.dumps(s, ensure_ascii=False)[1:-1]),
                            st.sampled_from(_ESCAPES)), max_size=4).map(lambda xs: '"' + "".join(xs) + '"')
NUMBER = st.one_of(
    st.integers().map(str),
    st.integers(min_value=-(10 ** 60), max_value=10 ** 60).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(json.dumps),
    st.sampled_from(["-0", "0.0", "-0.0", "1e400", "-1E-400", "1.5e+3", "2E-2", "1.0", "10",
                     "123456789012345678901234567890.5e-10", "NaN", "Infinity", "-Infinity"]))
KEY = st.one_of(STRING, st.sampled_from(['"a"', '"b"', '"messages"', '"model"', '"\\u0061"']))
LEAF = st.one_of(STRING, NUMBER, st.sampled_from(["true", "false", "null"]))


def _array(items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(WS, st.lists(st.tuples(WS, items, WS).map("".join), max_size=4)).map(
        lambda t: "[" + (",".join(t[1]) if t[1] else t[0]) + "]")


def _object(items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    member = st.tuples(WS, KEY, WS, WS, items, WS).map(lambda t: f"{t[0]}{t[1]}{t[2]}:{t[3]}{t[4]}{t[5]}")
    return st.tuples(WS, st.lists(member, max_size=4)).map(
        lambda t: "{" + (",".join(t[1]) if t[1] else t[0]) + "}")


VALUE = st.recursive(LEAF, lambda kids: st.one_of(_array(kids), _object(kids)), max_leaves=12)
MEMBER = st.tuples(WS, KEY, WS, WS, VALUE, WS).map(lambda t: f"{t[0]}{t[1]}{t[2]}:{t[3]}{t[4]}{t[5]}")
MESSAGES = st.tuples(WS, WS, st.one_of(_array(VALUE), VALUE), WS).map(
    lambda t: f'{t[0]}"messages"{t[1]}:{t[2]}{t[3]}')


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    before = draw(st.lists(MEMBER, max_size=3))
    after = draw(st.lists(MEMBER, max_size=3))
    messages = draw(st.lists(MESSAGES, min_size=1, max_size=2))  # 2: a duplicate "messages"
    members = before + messages + after
    if draw(st.booleans()):
        members = draw(st.permutations(members))
    lead = draw(st.sampled_from(["", "", "", " ", "\n"]))
    return (lead + "{" + ",".join(members) + "}" + draw(WS)).encode()


@FAST
@given(bodies())
def test_a_body_is_what_json_loads_gives(raw: bytes) -> None:
    parser = BodyParser()
    first = parser.parse(req(raw))
    check_parsed(first, raw)
    assert repr(parse_messages_body(raw)) == repr(first.body)
    again = parser.parse(req(raw))  # the same body resent: every message reused
    check_parsed(again, raw)
    if first.texts:
        assert again.texts == first.texts
        assert again.reused == len(first.texts)


@FAST
@given(st.lists(st.one_of(_array(VALUE).map(lambda a: '{"messages":' + a + "}"), bodies().map(bytes.decode)),
                min_size=2, max_size=5))
def test_a_sequence_of_unrelated_bodies_is_what_json_loads_gives(texts: list[str]) -> None:
    parser = BodyParser()
    for t in texts:
        raw = t.encode()
        check_parsed(parser.parse(req(raw)), raw)


@FAST
@given(_array(VALUE), _array(VALUE), WS, st.lists(MEMBER, max_size=2))
def test_a_body_extending_the_previous_text_is_what_json_loads_gives(
        first: str, second: str, ws: str, after: list[str]) -> None:
    """The second body begins with the whole text of the first one's messages (a number can
    continue: ``[1`` then ``[12``), then anything."""
    a = '{"messages":' + first + "}"
    parser = BodyParser()
    p1 = parser.parse(req(a.encode()))
    check_parsed(p1, a.encode())
    head = a[: len(a) - 2]  # up to the end of the last message (or "[")
    for tail in ("," + second[1:], second[1:], "0]", ".5]", "e1]", ws + "]", "]" + ws + ",".join([""] + after)
                 + "}", "," + ws + second + "]"):
        raw = (head + tail + ("}" if not tail.endswith("}") else "")).encode()
        if loads(raw)[0] != "ok":
            assert outcome(lambda r: parser.parse(req(r)).body, raw) == reference(raw)
            assert reference(raw)[0] != "ok"
            p1 = parser.parse(req(a.encode()))
            continue
        got = parser.parse(req(raw))
        check_parsed(got, raw)
        p1 = parser.parse(req(a.encode()))
        check_parsed(p1, a.encode())


# --- 2. agent loops ----------------------------------------------------------------------------

BLOCK_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)


@st.composite
def a_message(draw: st.DrawFn, n: int) -> dict[str, Any]:
    role = "user" if n % 2 == 0 else "assistant"
    kind = draw(st.sampled_from(["text", "blocks", "tool"]))
    m: dict[str, Any]
    if kind == "text":
        m = {"role": role, "content": draw(BLOCK_TEXT)}
    elif kind == "blocks":
        m = {"role": role, "content": [{"type": "text", "text": draw(BLOCK_TEXT)}]}
    elif role == "assistant":
        m = {"role": role, "content": [{"type": "tool_use", "id": f"toolu_{n:04d}", "name": "w",
                                        "input": {"x": draw(st.integers()), "f": draw(st.floats())}}]}
    else:
        m = {"role": role, "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n - 1:04d}",
                                        "content": draw(BLOCK_TEXT)}]}
    if draw(st.booleans()):
        m["n"] = draw(st.sampled_from([1, 1.0, True]))
    return m


LAYOUTS = [  # members before / after "messages"
    (["model", "max_tokens"], []),
    (["model", "max_tokens"], ["tools", "stream"]),
    ([], ["model", "max_tokens", "system"]),
    (["max_tokens"], ["model"]),
]
EXTRA = {"model": "claude-opus-4-6", "max_tokens": 1024, "tools": [WEATHER], "stream": False,
         "system": "You are terse. \u00e9\U0001f600"}
SEPARATORS = [(",", ":"), (", ", ": ")]  # compact (the SDKs' choice) and json.dumps' default


def serialize(messages: list[Any], layout: int, seps: int, system: str = "s") -> tuple[bytes, str]:
    """The body's bytes as json.dumps writes them, and its text up to the end of the last message
    (None-like "" when there is no message)."""
    item, key = SEPARATORS[seps]
    before, after = LAYOUTS[layout]
    extra = {**EXTRA, "system": system}

    def member(k: str, v: Any) -> str:
        return json.dumps(k) + key + json.dumps(v, separators=(item, key))

    head_members = [member(k, extra[k]) for k in before]
    msgs = [json.dumps(m, separators=(item, key)) for m in messages]
    head = "{" + "".join(x + item for x in head_members) + json.dumps("messages") + key + "[" + item.join(msgs)
    whole = head + "]" + "".join(item + member(k, extra[k]) for k in after) + "}"
    as_dict = {**{k: extra[k] for k in before}, "messages": messages, **{k: extra[k] for k in after}}
    assert whole == json.dumps(as_dict, separators=(item, key))
    return whole.encode(), head if messages else ""


OPS = st.sampled_from(["append", "append", "append", "edit_text", "edit_type", "edit_id", "remove",
                       "resend", "other", "invalid", "relayout", "after_members"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_an_agent_loop_reuses_the_resent_messages_and_sees_every_edit(data: st.DataObject) -> None:
    parser = BodyParser()
    layout = data.draw(st.integers(0, len(LAYOUTS) - 1), "layout")
    seps = data.draw(st.integers(0, 1), "separators")
    conv: list[Any] = [data.draw(a_message(0))]
    system = "s"
    prev_head: str | None = None  # the text up to the end of the last parsed body's last message
    prev_n = 0
    prev_texts: list[str] = []
    for _ in range(data.draw(st.integers(3, 12), "steps")):
        op = data.draw(OPS)
        edited: int | None = None
        if op == "append":
            for _ in range(data.draw(st.integers(1, 3))):
                conv.append(data.draw(a_message(len(conv))))
        elif op in ("edit_text", "edit_type", "edit_id") and conv:
            edited = data.draw(st.integers(0, len(conv) - 1))
            m = conv[edited] = json.loads(json.dumps(conv[edited]))  # a copy: the parser shares values
            if op == "edit_type":
                # 1 -> 1.0 -> true -> 1: equal in Python, different JSON values (repr tells)
                m["n"] = {int: 1.0, float: True, bool: 1}.get(type(m.get("n")), 1)
            elif op == "edit_id" and isinstance(m["content"], list) and "id" in m["content"][0]:
                m["content"][0]["id"] += "x"
            elif op == "edit_id" and isinstance(m["content"], list) and "tool_use_id" in m["content"][0]:
                m["content"][0]["tool_use_id"] += "x"
            elif isinstance(m["content"], str):
                m["content"] += "x"
            else:
                m["content"].append({"type": "text", "text": "x"})
        elif op == "remove" and conv:
            del conv[data.draw(st.integers(0, len(conv) - 1))]
        elif op == "relayout":
            layout = (layout + 1) % len(LAYOUTS)
        elif op == "after_members":
            system += "!"  # a member after "messages" changes in layout 2; before it in 0/1/3
        if op == "other":
            other = [data.draw(a_message(i)) for i in range(data.draw(st.integers(0, 3)))]
            raw, head = serialize(other, data.draw(st.integers(0, len(LAYOUTS) - 1)), seps)
        else:
            raw, head = serialize(conv, layout, seps, system)
        if op == "invalid":
            cut = data.draw(st.integers(0, len(raw)))
            raw = data.draw(st.sampled_from([raw[:cut] if cut < len(raw) else raw[:-1], raw + b"x",
                                             raw[:-1] + b",}", raw.replace(b"[", b"[,", 1)]))
            assert loads(raw)[0] != "ok"
            assert outcome(lambda r: parser.parse(req(r)).body, raw) == reference(raw) == loads(raw)
            prev_head, prev_n = None, 0
            continue
        got = parser.parse(req(raw))
        check_parsed(got, raw)
        text_ = raw.decode()
        expect = prev_n if prev_head and text_.startswith(prev_head) else 0
        assert got.reused == expect, (op, got.reused, expect)
        if op in ("append", "resend") and prev_head and head.startswith(prev_head):
            assert got.reused == prev_n > 0
        if edited is not None:
            # An edit can make the message equal to what the previous body sent there (after an
            # "other" body, 1.0 -> true can match it byte for byte): then reusing it is right.
            assert got.reused <= edited or got.texts[edited] == prev_texts[edited], (got.reused, edited)
            assert repr(got.body["messages"][edited]) == repr(conv[edited])
        prev_head, prev_n = (head, len(got.texts)) if head and got.texts else (None, 0)
        prev_texts = list(got.texts)


def test_an_agent_loop_reuses_every_resent_message() -> None:
    """Deterministic: 20 turns appended one by one, each parse reusing all earlier messages."""
    parser = BodyParser()
    conv: list[Any] = [user("What is the weather?")]
    for n in range(1, 20):
        raw = json.dumps(body(conv, tools=[WEATHER]), separators=(",", ":")).encode()
        got = parser.parse(req(raw))
        check_parsed(got, raw)
        assert got.reused == (n - 1 if n > 1 else 0)
        assert got.texts is not None and len(got.texts) == n
        conv.append(assistant(tool_use(f"toolu_{n}")) if n % 2 else user(tool_result(f"toolu_{n - 1}")))
    # an edit in the first message: nothing reused, the new value parsed
    conv[0] = user("What is the weather? ")
    raw = json.dumps(body(conv, tools=[WEATHER]), separators=(",", ":")).encode()
    got = parser.parse(req(raw))
    assert got.reused == 0 and got.body["messages"][0]["content"] == "What is the weather? "


@pytest.mark.parametrize("values", [
    [1, 2, 3, 1], ["a", "b", "a"], [{"a": 1}, {"a": 2}], [[1], [2]], [True, None, False, 10, 1],
    [1.5, 1.25, 1.5, -1.5], ["\u00e9", "\u00e8"], [{"a": "x"}, {"a": "y"}, {"b": "y"}],
])
def test_a_resent_conversation_whose_last_message_changed_at_its_end_is_parsed_again(
        values: list[Any]) -> None:
    """The previous last message and the new one differ in their last characters only."""
    for seps in SEPARATORS:
        parser = BodyParser()
        for n, v in enumerate(values):
            raw = json.dumps({"model": "m", "messages": [0, v], "stream": n % 2 == 0},
                             separators=seps).encode()
            got = parser.parse(req(raw))
            check_parsed(got, raw)
            assert got.body["messages"][1] == v and repr(got.body["messages"][1]) == repr(v)


def test_a_changed_type_in_the_last_resent_message_is_not_reused() -> None:
    parser = BodyParser()
    for n in (1, 1.0, True, 1, 10, 1e1, 1):
        raw = json.dumps({"model": "m", "messages": [{"a": 0}, n]}).encode()
        got = parser.parse(req(raw))
        check_parsed(got, raw)
        assert repr(got.body["messages"][1]) == repr(n)


# --- 3. broken bodies ---------------------------------------------------------------------------

VALID = json.dumps(body([user("héllo \U0001f600"), assistant(tool_use("toolu_1", input={"n": 1.5})),
                         user(tool_result("toolu_1", "18\u00b0C"))], tools=[WEATHER],
                        stream=True), separators=(",", ":")).encode()
DEEP = 100_000
BROKEN: list[bytes] = [
    VALID + b"x", VALID + b" }", VALID + b",", b" " + VALID + b"x", b"\xef\xbb\xbf" + VALID,
    VALID.replace(b"h\xc3\xa9llo", b"h\xffllo"), VALID.replace(b"h\xc3\xa9llo", b"h\xed\xa0\x80llo"),
    b'{"messages":["\\ud800"]}', b'{"messages":[{"a":"\\udfff\\ud800"}],"m":"\\ud83d"}',
    b'{"messages":[NaN,Infinity,-Infinity],"t":NaN}', b'{"messages":[nan]}', b'{"messages":[1,]}',
    b'{"messages":[01]}', b'{"messages":[1] "a":1}', b'{"messages":[1],}', b'{"messages":[1]}}',
    b'{"messages":[1]', b'{"messages":["\t"]}', b'{"messages":["\\x"]}', b'{"messages" [1]}',
    b'{"messages":[' + b"9" * 4301 + b"]}", b'{"messages":[1e999999]}', b'{messages:[1]}',
    b"{}", b"{ }", b"[]", b"", b" ", b"null", b'{"a":1}', b'{"messages":1}', b'{"messages":{}}',
    b'{"messages":[1],"messages":[2]}', b'{"messages":1,"messages":[2]}',
    b'{"messages":[1],"a":1,"messages":[2]}', b'{"a":1,"a":2,"messages":[],"a":3}',
    b'{"messages":[' + b"[" * DEEP + b"]" * DEEP + b"]}",
    b"[" * DEEP, b'{"messages":' + b"[" * DEEP, b'{"a":' + b"{" * DEEP,
    b'{"m":1,"messages":[{"a":' + b"[" * DEEP + b"]}",
]


@pytest.mark.parametrize("raw", BROKEN, ids=[f"{i}:{r[:30]!r}" for i, r in enumerate(BROKEN)])
def test_a_broken_or_odd_body_gives_what_it_gave_before(raw: bytes) -> None:
    want = reference(raw)
    assert outcome(lambda r: BodyParser().parse(req(r)).body, raw) == want
    primed = BodyParser()
    primed.parse(req(b'{"messages":[1]}'))  # a parser with a previous body (another conversation)
    assert outcome(lambda r: primed.parse(req(r)).body, raw) == want
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        assert want[0] == "UnicodeDecodeError"
        return
    assert loads(raw) == want  # and the same as json.loads on the text


def test_the_lone_surrogate_escape_parses_like_json_loads() -> None:
    raw = b'{"model":"m","messages":[{"role":"user","content":"\\ud800x"}]}'
    got = BodyParser().parse(req(raw))
    assert got.body == json.loads(raw) and got.body["messages"][0]["content"] == "\ud800x"
    assert got.texts == ['{"role":"user","content":"\\ud800x"}']


@pytest.mark.parametrize("raw", [
    b"[" * DEEP, b'{"messages":' + b"[" * DEEP, b'{"messages":[' + b"[" * DEEP + b"]" * DEEP + b"]}",
    b'{"x":' + b"[" * DEEP + b"]" * DEEP + b',"messages":[]}', b'{"messages":[],"x":' + b"[" * DEEP + b"]" * DEEP + b"}",
], ids=["bare", "messages-open", "messages-closed", "before", "after"])
def test_deep_nesting_raises_recursion_error(raw: bytes) -> None:
    for parser in (BodyParser(), _primed(raw)):
        with pytest.raises(RecursionError):
            parser.parse(req(raw))


def _primed(raw: bytes) -> BodyParser:
    """A parser whose previous body is a prefix of ``raw``'s messages, when it has one."""
    parser = BodyParser()
    parser.parse(req(b'{"messages":[1]}'))
    return parser


def test_deep_nesting_after_a_reused_prefix_raises_recursion_error() -> None:
    first = b'{"model":"m","messages":[{"a":1}'
    parser = BodyParser()
    assert parser.parse(req(first + b"]}")).texts == ['{"a":1}']
    with pytest.raises(RecursionError):
        parser.parse(req(first + b"," + b"[" * DEEP + b"]" * DEEP + b"]}"))
    # and the parser still works afterwards
    got = parser.parse(req(first + b",2]}"))
    assert got.body == {"model": "m", "messages": [{"a": 1}, 2]} and got.reused == 0


@pytest.mark.parametrize("primed", [False, True])
def test_every_truncation_of_a_valid_body_raises_what_json_loads_raises(primed: bool) -> None:
    for cut in range(len(VALID)):
        parser = BodyParser()
        if primed:  # the previous body: the first two messages (a truncation may begin with them)
            prev = json.loads(VALID)
            prev["messages"] = prev["messages"][:2]
            parser.parse(req(json.dumps(prev, separators=(",", ":"), ensure_ascii=False).encode()))
        raw = VALID[:cut]
        got = outcome(lambda r, p=parser: p.parse(req(r)).body, raw)
        assert got == reference(raw), cut
        assert got[0] != "ok"
        if got[0] != "UnicodeDecodeError":
            assert got == loads(raw), cut


# --- 4. the engine ------------------------------------------------------------------------------


@pytest.fixture
def _fresh_facts() -> Iterator[None]:
    clear_facts()
    yield
    clear_facts()


def _three_turns() -> tuple[Any, list[list[Any]]]:
    q = user("Weather in Paris, then Lyon?")
    a1 = assistant(text("Paris first."), tool_use("toolu_01Paris"))
    r1 = user(tool_result("toolu_01Paris", "18C"))
    a2 = assistant(tool_use("toolu_02Lyon", input={"city": "Lyon"}))
    r2 = user(tool_result("toolu_02Lyon", "20C"))
    turns = [[q], [q, a1, r1], [q, a1, r1, a2, r2]]
    c = cassette(
        exchange(body(turns[0], tools=[WEATHER]),
                 message([text("Paris first."), tool_use("toolu_01Paris")], "tool_use", id="msg_01A")),
        exchange(body(turns[1], tools=[WEATHER]),
                 message([tool_use("toolu_02Lyon", input={"city": "Lyon"})], "tool_use", id="msg_01B")),
        exchange(body(turns[2], tools=[WEATHER]),
                 message([text("18C and 20C.")], id="msg_01C")),
        id="tests/bodies-three-turns")
    return c, turns


def _send(sim: Simulator, messages: list[Any], seps: tuple[str, str]) -> SimResponse:
    raw = json.dumps(body(messages, tools=[WEATHER]), separators=seps).encode()
    return sim(SimRequest.lowered("POST", "/v1/messages", {"content-type": "application/json",
                                                         **API_HEADERS}, {}, raw))


@pytest.mark.usefixtures("_fresh_facts")
@pytest.mark.parametrize("seps", SEPARATORS, ids=["compact", "default"])
def test_the_engine_refuses_an_edit_in_the_resent_prefix(seps: tuple[str, str]) -> None:
    c, turns = _three_turns()
    sim = Simulator(c)
    for t in turns:
        resp = _send(sim, t, seps)
        assert resp.status == 200, resp.body
    assert not sim.violations and not sim.remaining()
    # the same bytes through a parser reuse the resent messages (the edit below is in that prefix)
    parser = BodyParser()
    reused = [parser.parse(req(json.dumps(body(t, tools=[WEATHER]), separators=seps).encode())).reused
              for t in turns]
    assert reused == [0, 1, 3]

    clear_facts()
    sim = Simulator(c)
    assert _send(sim, turns[0], seps).status == 200
    assert _send(sim, turns[1], seps).status == 200
    edited = json.loads(json.dumps(turns[2]))
    # an id of the same length: the edited body has the previous body's length up to its end
    edited[2]["content"][0]["tool_use_id"] = "toolu_01Lille"
    assert len(json.dumps(edited, separators=seps)) == len(json.dumps(turns[2], separators=seps))
    resp = _send(sim, edited, seps)
    assert error_of(resp)[:2] == (400, "invalid_request_error"), resp.body
    assert "toolu_01Lille" in error_of(resp)[2]
    assert sim.violations and sim.violations[0].rule_id == RULE


# --- 5. live traffic ----------------------------------------------------------------------------


def _requests(shared: Path) -> dict[str, list[tuple[str, Any]]]:
    """Request bodies of POST /v1/messages, by recording (capture ``source``), in capture order."""
    root = shared / "real_traffic"
    if not root.is_dir():
        pytest.skip(f"{root} is absent (captures of live traffic live outside the project)")
    out: dict[str, list[tuple[str, Any]]] = {}
    for path in sorted(root.glob("*_request.json")):
        capture = json.loads(path.read_text(encoding="utf-8"))
        unwrapped = unwrap_capture(capture)
        if unwrapped is None or unwrapped[0] != "request":
            continue
        out.setdefault(str(capture["source"]), []).append((path.name, unwrapped[1]))
    return out


def _encodings(value: Any) -> list[bytes]:
    return [json.dumps(value, separators=(",", ":")).encode(), json.dumps(value).encode(),
            json.dumps(value, ensure_ascii=False, indent=1).encode()]


@pytest.mark.shared
def test_every_live_request_body_parses_like_json_loads(shared_dir: Path) -> None:
    recordings = _requests(shared_dir)
    n = 0
    for captures in recordings.values():
        for name, value in captures:
            for raw in _encodings(value):
                got = BodyParser().parse(req(raw))
                assert repr(got.body) == repr(json.loads(raw)), name
                check_parsed(got, raw)
                n += 1
    assert n > 300 * 3


@pytest.mark.shared
def test_each_live_recording_fed_in_order_parses_like_json_loads(shared_dir: Path) -> None:
    reused = 0
    for captures in _requests(shared_dir).values():
        for enc in range(3):
            parser = BodyParser()
            for name, value in captures:
                raw = _encodings(value)[enc]
                got = parser.parse(req(raw))
                check_parsed(got, raw)
                assert repr(got.body) == repr(json.loads(raw)), name
                reused += got.reused
    assert reused > 0  # the recorded agent loops do resend their conversations
