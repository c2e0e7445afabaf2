"""The engine's caches (commit d87f462) keep every answer the uncached engine gives.

- ``load_cassette``: one parse per unchanged file (path, device, inode, size, mtime), with a byte
  comparison while the file is racily clean (modified in the last two seconds);
- encoded responses: each exchange's response is encoded once (``Exchange.memo``), every response
  parses its own copy of the body, events are immutable, request ids stay per request;
- whole-request verdicts: remembered only under a blank state, by rule set and request;
- request ids: reproducible by seed, unique, shaped like the API's, unique across threads.
"""

from __future__ import annotations

import copy
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _simkit import (
    PTC_CE,
    WEATHER,
    assistant,
    body,
    cassette,
    error_of,
    exchange,
    message,
    post,
    text,
    tool_result,
    tool_use,
    user,
)

import simulator.engine
from simulator.cassette import Cassette, CassetteError, clear_loaded, load_cassette
from simulator.clock import FakeClock
from simulator.engine import Simulator
from simulator.errors import RequestIds
from simulator.history import VERDICTS, History, clear_facts, verdict_key
from simulator.http import EncodedEvent, EncodedResponse, SSEEvent
from simulator.sse import synthesize_events

MODEL = "claude-opus-4-6"
QUESTION = "What is the weather in Paris?"
OLD = 60.0  # seconds in the past: well outside the racy window
RULE = "messages.tool_result.answers_previous_tool_use"


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    clear_loaded()
    clear_facts()
    yield
    clear_loaded()
    clear_facts()


# --- builders ---------------------------------------------------------------------------------


def _request_body(question: str = QUESTION) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": question}]}


def _message(answer: str, msg_id: str = "msg_01") -> dict[str, Any]:
    return {"id": msg_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": answer}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 20}}


def _cassette_dict(answer: str = "Sunny, 18C.", *, cid: str = "tests/caches",
                   question: str = QUESTION,
                   headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"version": 1, "id": cid, "title": cid, "model": MODEL,
            "source": {"document": "PROTOCOL.md", "section": "tests"},
            "exchanges": [{"request": {"method": "POST", "path": "/v1/messages",
                                       "body": _request_body(question)},
                           "response": {"status": 200, "headers": headers or {},
                                        "body": _message(answer)}}]}


def _write(p: Path, data: dict[str, Any], *, age: float | None = OLD) -> Path:
    p.write_text(json.dumps(data), encoding="utf-8")
    if age is not None:
        _set_mtime(p, time.time() - age)
    return p


def _set_mtime(p: Path, when: float) -> None:
    os.utime(p, (when, when))


def _answer(c: Cassette) -> str:
    return str(c.exchanges[0].response["body"]["content"][0]["text"])


def _ask(sim: Simulator, question: str = QUESTION, **extra: Any) -> Any:
    return sim(post({**_request_body(question), **extra}))


# --- 1. load_cassette ---------------------------------------------------------------------------


def test_unchanged_old_file_is_parsed_once(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    first = load_cassette(p)
    assert load_cassette(p) is first
    assert load_cassette(str(p)) is first  # the same path as str
    assert _answer(first) == "Sunny, 18C."


def test_racy_file_rewritten_with_same_size_and_mtime_is_parsed_again(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict("AAAA"), age=None)  # just written: racy
    st = p.stat()
    first = load_cassette(p)
    assert _answer(first) == "AAAA"
    assert load_cassette(p) is first  # unchanged bytes: still the same parse
    p.write_text(json.dumps(_cassette_dict("BBBB")), encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same tick: same stat identity
    st2 = p.stat()
    assert (st2.st_size, st2.st_mtime_ns, st2.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    second = load_cassette(p)
    assert second is not first
    assert _answer(second) == "BBBB"
    assert load_cassette(p) is second


def test_racy_file_rewritten_immediately_is_parsed_again(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict("AAAA"), age=None)
    assert _answer(load_cassette(p)) == "AAAA"
    p.write_text(json.dumps(_cassette_dict("BBBB")), encoding="utf-8")  # mtime may not move
    assert _answer(load_cassette(p)) == "BBBB"


def test_changed_file_with_an_old_but_different_mtime_is_parsed_again(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict("AAAA"))
    first = load_cassette(p)
    size = p.stat().st_size
    p.write_text(json.dumps(_cassette_dict("BBBB")), encoding="utf-8")
    assert p.stat().st_size == size
    _set_mtime(p, time.time() - 2 * OLD)
    second = load_cassette(p)
    assert second is not first and _answer(second) == "BBBB"
    # a different size is a different identity too
    p.write_text(json.dumps(_cassette_dict("CCCCCC")), encoding="utf-8")
    _set_mtime(p, time.time() - 3 * OLD)
    assert _answer(load_cassette(p)) == "CCCCCC"


def test_cache_false_parses_every_time(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    cached = load_cassette(p)
    a, b = load_cassette(p, cache=False), load_cassette(p, cache=False)
    assert a is not b and a is not cached and b is not cached
    assert a == b == cached
    a.exchanges[0].response["body"]["content"][0]["text"] = "edited in memory"
    assert _answer(load_cassette(p)) == "Sunny, 18C."
    assert load_cassette(p) is cached


def test_clear_loaded_forgets(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    first = load_cassette(p)
    clear_loaded()
    second = load_cassette(p)
    assert second is not first and second == first
    assert load_cassette(p) is second


def test_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    for cache in (True, False):
        with pytest.raises(CassetteError) as e:
            load_cassette(missing, cache=cache)
        assert e.value.message == "file not found" and e.value.path == str(missing)
        assert str(missing) in str(e.value)
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 1, "id": ', encoding="utf-8")
    _set_mtime(broken, time.time() - OLD)
    for cache in (True, False, True):
        with pytest.raises(CassetteError) as e:
            load_cassette(broken, cache=cache)
        assert "broken JSON" in e.value.message and e.value.path == str(broken)


def test_a_cached_file_that_is_deleted_or_broken_later_is_not_served(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    load_cassette(p)
    text_before = p.read_text(encoding="utf-8")
    p.write_text(text_before[:-1] + " ", encoding="utf-8")  # same size, broken JSON, racy
    with pytest.raises(CassetteError, match="broken JSON"):
        load_cassette(p)
    p.unlink()
    with pytest.raises(CassetteError, match="file not found"):
        load_cassette(p)


def test_simulator_from_path_file_and_directory(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    sim = Simulator.from_path(p)
    assert sim.cassettes[0] is load_cassette(p)  # the cached parse
    resp = _ask(sim)
    assert resp.status == 200 and resp.body["content"][0]["text"] == "Sunny, 18C."

    d = tmp_path / "corpus"
    (d / "sub").mkdir(parents=True)
    _write(d / "a.json", _cassette_dict("from a", cid="tests/a", question="Paris?"))
    _write(d / "sub" / "b.json", _cassette_dict("from b", cid="tests/b", question="Rome?"))
    sim = Simulator.from_path(d)
    assert sorted(c.id for c in sim.cassettes) == ["tests/a", "tests/b"]
    answers = {_ask(sim, q).body["content"][0]["text"] for q in ("Paris?", "Rome?")}
    assert answers == {"from a", "from b"}

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CassetteError, match="no cassettes found"):
        Simulator.from_path(empty)
    with pytest.raises(CassetteError):
        Simulator.from_path(tmp_path / "nowhere.json")


# --- 2. encoded responses -----------------------------------------------------------------------


def test_each_response_parses_its_own_copy(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    recorded = copy.deepcopy(load_cassette(p).exchanges[0].response["body"])
    s1, s2, s3 = (Simulator.from_path(p) for _ in range(3))
    assert s1.cassettes[0] is s2.cassettes[0] is s3.cassettes[0]
    r1, r2 = _ask(s1), _ask(s2)
    assert isinstance(r1, EncodedResponse) and isinstance(r2, EncodedResponse)
    assert r1.status == r2.status == 200
    assert r1.body == r2.body == recorded
    assert r1.body is not r2.body
    r1.body["content"][0]["text"] = "mutated"
    r1.body["x"] = 1
    assert r2.body == recorded
    assert load_cassette(p).exchanges[0].response["body"] == recorded
    r3 = _ask(s3)  # served after the mutation, from the same memo
    assert r3.body == recorded and json.loads(r3.body_bytes()) == recorded


def test_body_bytes_before_and_after_a_change(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    recorded = load_cassette(p).exchanges[0].response["body"]
    resp = _ask(Simulator.from_path(p))
    assert resp.body_bytes() == json.dumps(recorded, separators=(",", ":")).encode()
    assert b"".join(resp.iter_bytes()) == resp.body_bytes()
    resp.body["x"] = 1
    assert json.loads(resp.body_bytes()) == {**recorded, "x": 1}
    assert json.loads(b"".join(resp.iter_bytes())) == {**recorded, "x": 1}
    resp.body = {"replaced": True}
    assert resp.body_bytes() == b'{"replaced":true}'


def test_a_changed_body_is_what_a_transport_sends(tmp_path: Path) -> None:
    from simulator.wire import body_chunks, whole_body

    def streamed(resp: Any) -> bytes:
        return b"".join(body_chunks(resp))

    p = _write(tmp_path / "c.json", _cassette_dict())
    recorded = load_cassette(p).exchanges[0].response["body"]
    resp = _ask(Simulator.from_path(p))
    assert streamed(resp) == whole_body(resp) == resp.body_bytes()
    resp.body["x"] = 1
    assert json.loads(streamed(resp)) == {**recorded, "x": 1}
    assert whole_body(resp) == streamed(resp)


def test_streamed_events_equal_the_synthesized_ones(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    recorded = load_cassette(p).exchanges[0].response["body"]
    s1, s2 = Simulator.from_path(p), Simulator.from_path(p)
    r1, r2 = _ask(s1, stream=True), _ask(s2, stream=True)
    assert r1.status == r2.status == 200
    assert r1.headers["content-type"].startswith("text/event-stream")
    want = synthesize_events(recorded, chunk=s1.chunk, ping_every=s1.ping_every,
                             seed="tests/caches#0")  # the engine seeds by cassette id#index
    for resp in (r1, r2):
        got = list(resp.events)
        assert len(got) == len(want) > 3
        for e, s in zip(got, want, strict=True):
            assert isinstance(e, EncodedEvent) and type(s) is SSEEvent
            assert e == s and s == e
            assert not (e != s) and not (s != e)
            assert e.event == s.event and e.data == s.data
            assert e.encode() == s.encode()
        assert b"".join(resp.iter_bytes()) == b"".join(s.encode() for s in want)
    assert [e.encode() for e in r1.events] == [e.encode() for e in r2.events]
    assert list(r1.events) != want[:-1]
    different = SSEEvent(want[0].event, {**want[0].data, "extra": 1})
    assert list(r1.events)[0] != different and different != list(r1.events)[0]


def test_recorded_events_are_served_again_streamed_and_assembled(tmp_path: Path) -> None:
    recorded_msg = _message("Sunny, 18C.")
    wire_events = [{"event": e.event, "data": e.data} for e in synthesize_events(recorded_msg)]
    data = _cassette_dict()
    response = data["exchanges"][0]["response"]
    del response["body"]
    response["events"] = wire_events
    p = _write(tmp_path / "c.json", data)
    want = [SSEEvent(e["event"], copy.deepcopy(e["data"])) for e in wire_events]
    wires = []
    for seed in (1, 2):
        streamed = _ask(Simulator.from_path(p, seed=seed), stream=True)
        got = list(streamed.events)
        assert all(isinstance(e, EncodedEvent) for e in got)
        assert got == want and want == got
        # The recorded values verbatim, each payload padded as the API pads it (spaces before
        # the closing brace, drawn for the exchange: the same bytes at every run).
        wires.append([e.encode() for e in got])
        assert [re.sub(rb" +}\n\n$", b"}\n\n", w) for w in wires[-1]] == \
            [e.encode() for e in want]
        assert any(w != e.encode() for w, e in zip(wires[-1], want, strict=True))
    assert wires[0] == wires[1]
    for seed in (1, 2):
        plain = _ask(Simulator.from_path(p, seed=seed))
        assert isinstance(plain, EncodedResponse)
        assert plain.body == recorded_msg
        plain.body["content"].clear()
    assert load_cassette(p).exchanges[0].response["events"] == wire_events
    assert _ask(Simulator.from_path(p)).body == recorded_msg


def test_encoded_events_are_immutable_and_hand_out_copies(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    events = list(_ask(Simulator.from_path(p), stream=True).events)
    e = events[0]
    assert isinstance(e, EncodedEvent)
    wire = e.encode()
    with pytest.raises(AttributeError):
        e.data = {"type": "hacked"}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        e.event = "hacked"
    with pytest.raises(AttributeError):
        e.wire = b"hacked"
    d = e.data
    assert d is not e.data
    d["type"] = "hacked"
    assert e.data["type"] != "hacked" and e.encode() == wire
    # the next stream of the same exchange is untouched
    again = list(_ask(Simulator.from_path(p), stream=True).events)
    assert [x.encode() for x in again] == [x.encode() for x in events]


def test_request_id_recorded_is_kept(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict(headers={"Request-Id": "req_recorded01"}))
    for stream in (False, True):
        for seed in (1, 2):
            sim = Simulator.from_path(p, seed=seed)
            resp = _ask(sim, stream=True) if stream else _ask(sim)
            assert resp.status == 200
            assert resp.headers["request-id"] == "req_recorded01"


def test_request_id_is_new_per_request_when_not_recorded(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.json", _cassette_dict())
    for stream in (False, True):
        seen: list[str] = []
        for seed in (1, 2, 3):
            sim = Simulator.from_path(p, seed=seed, replay="repeat")
            for _ in range(2):
                resp = _ask(sim, stream=True) if stream else _ask(sim)
                assert resp.status == 200
                rid = resp.headers["request-id"]
                assert re.fullmatch(r"req_011C[A-Za-z0-9]{20}", rid)
                seen.append(rid)
        assert len(set(seen)) == len(seen) == 6
    # the same seed gives the same ids (reproducible), the memo notwithstanding
    a = [_ask(Simulator.from_path(p, seed=7)).headers["request-id"] for _ in range(2)]
    assert a[0] == a[1]


# --- 3. whole-request verdicts ------------------------------------------------------------------


BAD = body([user("w?"), assistant(tool_use("toolu_1")), user(tool_result("toolu_2"))],
           tools=[WEATHER])
BAD_MESSAGE = ("messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
               "toolu_2. Each `tool_result` block must have a corresponding `tool_use` block in "
               "the previous message.")


def _weather_sim(**options: Any) -> Simulator:
    return Simulator(cassette(exchange(body([user("w?")], tools=[WEATHER]),
                                       message([text("ok")]))), **options)


def _rule_ids(sim: Simulator) -> list[str]:
    return [v.rule_id for v in sim.violations]


def test_a_remembered_verdict_is_the_same_answer_and_log(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = simulator.engine.run_rules

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(simulator.engine, "run_rules", counting)
    s1, s2 = _weather_sim(), _weather_sim()
    assert _weather_sim().rules == s1.rules
    r1 = s1(post(BAD))
    assert len(calls) == 1 and len(VERDICTS.entries) == 1
    r2 = s2(post(BAD))
    assert len(calls) == 1  # judged once: the second verdict is the remembered one
    assert error_of(r1) == error_of(r2) == (400, "invalid_request_error", BAD_MESSAGE)
    assert r1.headers["request-id"] == r1.body["request_id"]
    assert _rule_ids(s1) == _rule_ids(s2)
    assert _rule_ids(s1)[0] == RULE
    assert [v.message for v in s1.violations] == [v.message for v in s2.violations]
    assert s1.violations[0].message == BAD_MESSAGE


def test_the_verdict_depends_on_the_rules() -> None:
    strict = _weather_sim()
    assert error_of(strict(post(BAD)))[2] == BAD_MESSAGE
    lenient = _weather_sim(disabled_rules=[RULE])
    lenient(post(BAD))
    assert RULE not in _rule_ids(lenient)
    # and the other way round: a lenient verdict first does not excuse the strict simulator
    clear_facts()
    lenient = _weather_sim(disabled_rules=[RULE])
    lenient(post(BAD))
    assert RULE not in _rule_ids(lenient)
    strict = _weather_sim()
    assert error_of(strict(post(BAD)))[2] == BAD_MESSAGE
    assert _rule_ids(strict)[0] == RULE


def test_the_verdict_depends_on_the_beta_header() -> None:
    def sim() -> Simulator:
        return Simulator(cassette(exchange(body([user("hi")]), message([text("hello")]))))

    bad, good = {"anthropic-beta": "invalid-beta-name"}, {"anthropic-beta": "files-api-2025-04-14"}
    for first, second in ((bad, good), (good, bad)):
        clear_facts()
        s1, s2 = sim(), sim()
        r1, r2 = s1(post(body([user("hi")]), first)), s2(post(body([user("hi")]), second))
        refused, served = (s1, s2) if first is bad else (s2, s1)
        r_refused, r_served = (r1, r2) if first is bad else (r2, r1)
        assert r_refused.status == 400 and _rule_ids(refused) == ["beta.header_known"]
        assert r_served.status == 200 and _rule_ids(served) == []


CONTAINER = {"id": "container_1", "expires_at": "2026-01-20T13:00:00Z"}
SRV_B = {"type": "server_tool_use", "id": "srvtoolu_b", "name": "bash_code_execution",
         "input": {"command": "make chart"}}
OUTPUT = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_b",
          "content": {"type": "bash_code_execution_result", "stdout": "", "stderr": "",
                      "return_code": 0, "content": []}}
B0 = body([user("chart")], tools=[PTC_CE])
B1 = body([user("chart"), assistant(SRV_B, OUTPUT, text("done")), user("again")],
          tools=[PTC_CE], container="container_1")


def _container_sim(clock: FakeClock) -> Simulator:
    """As tests/test_state.py's reuse_sim: the first response creates container_1, the second
    request reuses it."""
    return Simulator(cassette(exchange(B0, message([SRV_B, OUTPUT, text("done")],
                                                    container=CONTAINER)),
                              exchange(B1, message([text("ok")], id="msg_2"))), clock=clock)


def test_state_is_never_ignored() -> None:
    # A blank simulator judges B1 first: container_1 is unknown there (a verdict remembered).
    blank = _container_sim(FakeClock())
    status, _, msg = error_of(blank(post(B1)))
    assert status == 400 and "container_1" in msg
    assert _rule_ids(blank) == ["container.unknown_or_expired"]
    # Where B0 created the container, the same B1 is served: the blank state's verdict is not.
    clock = FakeClock()
    live = _container_sim(clock)
    assert live(post(B0)).status == 200
    assert "container_1" in live.state.containers
    assert live(post(B1)).status == 200
    assert _rule_ids(live) == []
    # 30 days after creation the container has expired: refused, judged against the clock.
    clock = FakeClock()
    old = _container_sim(clock)
    assert old(post(B0)).status == 200
    clock.advance(days=30)
    status, etype, msg = error_of(old(post(B1)))
    assert (status, etype) == (400, "invalid_request_error")
    assert "has expired" in msg
    assert _rule_ids(old) == ["container.unknown_or_expired"]


class _PoisonedVerdicts:
    """Records what the engine asks and remembers; once armed, answers every ``get`` with a
    verdict the request does not deserve."""

    def __init__(self, poison: tuple[Any, ...]) -> None:
        self.poison = poison
        self.armed = False
        self.gets: list[Any] = []
        self.puts: list[Any] = []

    def get(self, key: Any) -> Any:
        self.gets.append(key)
        return self.poison if self.armed else None

    def put(self, key: Any, verdict: Any) -> None:
        self.puts.append(key)


def test_verdicts_are_not_used_with_a_live_container(monkeypatch: pytest.MonkeyPatch) -> None:
    blank = _container_sim(FakeClock())
    assert blank(post(B1)).status == 400  # container_1 unknown: a refusal to poison with
    (poison,) = VERDICTS.entries.values()
    assert [v.rule_id for v in poison[0]] == ["container.unknown_or_expired"]
    fake = _PoisonedVerdicts(poison)
    monkeypatch.setattr(simulator.engine, "VERDICTS", fake)
    sim = _container_sim(FakeClock())
    assert sim(post(B0)).status == 200
    assert len(fake.gets) == 1 and len(fake.puts) == 1  # blank state: consulted, remembered
    assert sim.state.containers
    fake.armed = True
    resp = sim(post(B1))
    assert resp.status == 200, resp.body  # judged against the state, not remembered
    assert _rule_ids(sim) == []
    assert len(fake.puts) == 1  # nor remembered under a live container


def test_verdict_key_is_none_when_something_cannot_be_encoded() -> None:
    rules = ("a", "b")
    good = body([user("hi")])
    req = History().analyse(good, rules, {})
    assert req is not None
    key = verdict_key(req, good, rules)
    assert key is not None
    assert verdict_key(req, good, ("a",)) != key
    beta = History().analyse(good, rules, {"anthropic-beta": "files-api-2025-04-14"})
    assert beta is not None and verdict_key(beta, good, rules) != key
    other = body([user("ho")])
    req_other = History().analyse(other, rules, {})
    assert req_other is not None and verdict_key(req_other, other, rules) != key

    odd_message = body([user("hi"), {"role": "assistant", "content": object()}])
    req = History().analyse(odd_message, rules, {})
    assert req is not None and verdict_key(req, odd_message, rules) is None
    odd_rest = {**good, "metadata": {"user_id": object()}}
    req = History().analyse(odd_rest, rules, {})
    assert req is not None and verdict_key(req, odd_rest, rules) is None
    no_headers = History().analyse(good, rules)  # no definitions key without the headers
    assert no_headers is not None and verdict_key(no_headers, good, rules) is None


def test_clear_facts_empties_verdicts() -> None:
    _weather_sim()(post(BAD))
    assert VERDICTS.entries
    clear_facts()
    assert not VERDICTS.entries


# --- 4. request ids -----------------------------------------------------------------------------

ID_SHAPE = re.compile(r"^req_011C[A-Za-z0-9]{20}$")


def test_request_ids_by_seed() -> None:
    a, b, c = RequestIds(1), RequestIds(1), RequestIds(2)
    seq_a = [a.new() for _ in range(50)]
    assert seq_a == [b.new() for _ in range(50)]
    seq_c = [c.new() for _ in range(50)]
    assert not set(seq_a) & set(seq_c)
    assert [RequestIds(0).new() for _ in range(2)] == [RequestIds(0).new()] * 2
    assert RequestIds(None).new() != RequestIds(None).new()
    for rid in seq_a + seq_c:
        assert ID_SHAPE.match(rid), rid


def test_request_ids_are_unique() -> None:
    ids = RequestIds(3)
    many = [ids.new() for _ in range(1000)]
    assert len(set(many)) == 1000
    assert all(ID_SHAPE.match(r) for r in many)


def test_request_ids_are_unique_across_threads() -> None:
    ids = RequestIds(4)
    out: list[list[str]] = [[] for _ in range(8)]
    start = threading.Barrier(8)

    def work(n: int) -> None:
        start.wait()
        out[n].extend(ids.new() for _ in range(200))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [r for chunk in out for r in chunk]
    assert len(every) == 1600 and len(set(every)) == 1600
    assert all(ID_SHAPE.match(r) for r in every)
    # the same ids a single thread draws from the same seed, in some order
    single = RequestIds(4)
    assert set(every) == {single.new() for _ in range(1600)}


def test_encoded_values_copy_and_pickle() -> None:
    import copy
    import pickle

    from simulator.http import EncodedEvent, EncodedResponse, SSEEvent

    ev = EncodedEvent("content_block_delta", {"type": "content_block_delta", "index": 0})
    for other in (copy.copy(ev), copy.deepcopy(ev), pickle.loads(pickle.dumps(ev))):
        assert other == ev == SSEEvent(ev.event, ev.data)
        assert other.encode() == ev.encode()
    resp = EncodedResponse(200, {"request-id": "req_1"}, b'{"type":"message","content":[]}')
    twin = copy.deepcopy(resp)
    twin.body["content"].append({"type": "text", "text": "x"})
    assert resp.body == {"type": "message", "content": []}
    assert pickle.loads(pickle.dumps(resp)).body_bytes() == resp.body_bytes()


# --- 5. seen request bodies (simulator.history.SEEN) ------------------------------------------


def test_a_body_seen_before_skips_the_analysis_but_not_the_matching(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from simulator.history import SEEN

    analysed: list[int] = []
    real = History.analyse

    def counting(self: History, *args: Any, **kw: Any) -> Any:
        analysed.append(1)
        return real(self, *args, **kw)

    monkeypatch.setattr(History, "analyse", counting)
    p = _write(tmp_path / "c.json", _cassette_dict())
    first = Simulator.from_path(p)
    assert _ask(first).status == 200
    n = len(analysed)  # the incoming request, and the recorded one for its matcher keys
    assert n >= 1 and len(SEEN.entries) == 1
    second = Simulator.from_path(p)
    ok = _ask(second)
    assert ok.status == 200 and ok.body["content"][0]["text"] == "Sunny, 18C."
    assert len(analysed) == n  # the same bytes: nothing analysed again
    # The remembered matcher keys still decide the match: another cassette's exchange (another
    # model) refuses the same bytes with the matcher's own message.
    other = _cassette_dict()
    other["exchanges"][0]["request"]["body"]["model"] = "claude-other-model"
    refused = Simulator.from_path(_write(tmp_path / "other.json", other))
    bad = _ask(refused)
    assert bad.status == 400 and "matcher `model`" in bad.body["error"]["message"]


def test_a_seen_body_is_judged_again_when_the_state_is_not_blank(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from simulator.history import SEEN

    p = _write(tmp_path / "c.json", _cassette_dict())
    assert _ask(Simulator.from_path(p)).status == 200
    assert len(SEEN.entries) == 1
    sim = Simulator.from_path(p)
    sim.state.seed_container("container_01")  # the state now holds what a rule may read
    calls: list[int] = []
    real = simulator.engine.run_rules

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(simulator.engine, "run_rules", counting)
    assert _ask(sim).status == 200
    assert calls == [1]  # judged by the rules, not answered from memory
