"""Raw UTF-8 on the wire, and SSE line endings (issue 40).

Live sends non-ASCII text raw in every JSON body and stream payload (0 ``\\uXXXX`` escapes over
165 payloads and 10 bodies of four recorders); so does the simulator, with ``content-length``
counting bytes. Every SSE parser of the project splits lines where the SSE standard does
(``\\n``, ``\\r\\n``, ``\\r``) and nowhere else (not at U+2028, which a raw payload may carry).
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import pytest
from _simkit import API_HEADERS, body, cassette, exchange, message, text, user

import simulator
from simulator.envelope import ADVERSARIAL, iter_sse_lines, parse_raw_sse, sse_lines
from simulator.http import SSEEvent, json_bytes
from simulator.record import _sse
from simulator.routes import build
from simulator.server import start_server
from simulator.sse import apply_envelope, assemble_message, synthesize_events

TEXT = "héllo — 日本語 🎉"
#: Characters str.splitlines splits at, though SSE does not.
NOT_LINE_ENDS = "a\u2028b\u2029c\x85d"
REQ = body([user("Say hello.")])


def _cassette(answer: str = TEXT) -> Any:
    return cassette(exchange(REQ, message([text(answer)])), id="tests/utf8")


def test_json_bytes_are_raw_utf8_and_a_lone_surrogate_stays_escaped() -> None:
    assert json_bytes({"t": TEXT}) == ('{"t":"' + TEXT + '"}').encode()
    assert b"\\u" not in json_bytes({"t": TEXT})
    assert json_bytes({"t": "a\ud800b"}) == b'{"t":"a\\ud800b"}'
    assert json.loads(json_bytes({"t": "a\ud800b", "u": TEXT})) == {"t": "a\ud800b", "u": TEXT}


def test_a_json_body_carries_raw_utf8_and_the_sdk_decodes_it() -> None:
    with simulator.mock(_cassette()):
        raw = httpx.post("https://api.anthropic.com/v1/messages", json=REQ,
                         headers=API_HEADERS).content
        assert TEXT.encode() in raw and b"\\u" not in raw
    with simulator.mock(_cassette()):
        got = anthropic.Anthropic().messages.create(**REQ)
    assert got.content[0].text == TEXT  # type: ignore[union-attr]


@pytest.mark.parametrize("envelope", ["live", "minimal", "adversarial"])
def test_stream_payloads_carry_raw_utf8_and_the_sdk_decodes_them(envelope: str) -> None:
    with simulator.mock(_cassette(), envelope=envelope, replay="repeat"):
        raw = httpx.post("https://api.anthropic.com/v1/messages", json={**REQ, "stream": True},
                         headers=API_HEADERS).content
        assert b"\\u" not in raw
        for char in TEXT:  # each character raw (cut anywhere but inside one)
            assert char.encode() in raw
        if envelope == "minimal":
            assert TEXT.encode() in raw
        with anthropic.Anthropic().messages.stream(**REQ) as stream:
            got = stream.get_final_message()
    assert got.content[0].text == TEXT  # type: ignore[union-attr]


def test_content_length_counts_bytes_on_a_real_server() -> None:
    url, stop = start_server(build(_cassette()))
    try:
        r = httpx.post(f"{url}/v1/messages", json=REQ, headers=API_HEADERS)
    finally:
        stop()
    assert r.status_code == 200
    assert int(r.headers["content-length"]) == len(r.content) > len(r.text)
    assert TEXT.encode() in r.content


def test_a_payload_with_unicode_line_separators_stays_one_line() -> None:
    """U+2028, U+2029 and U+0085 go raw in a payload; SSE does not end a line there."""
    msg = message([text(NOT_LINE_ENDS)])
    wire = b"".join(e.encode() for e in synthesize_events(msg, seed="sep", envelope="minimal"))
    assert NOT_LINE_ENDS.encode() in wire
    events = parse_raw_sse(wire.decode())
    assert assemble_message([SSEEvent(n, json.loads(d)) for n, d in events]) \
        ["content"][0]["text"] == NOT_LINE_ENDS
    with simulator.mock(_cassette(NOT_LINE_ENDS)):
        with anthropic.Anthropic().messages.stream(**REQ) as stream:
            assert stream.get_final_message().content[0].text == NOT_LINE_ENDS  # type: ignore[union-attr]


# --- line endings -----------------------------------------------------------------------------

MSG = message([text("one two three"), {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                        "input": {"city": "Zürich"}}], "tool_use")


def _wire(eol: bytes) -> bytes:
    events = synthesize_events(MSG, seed="eol", envelope="minimal")
    return b"".join(SSEEvent(e.event, e.data, e.pad, (eol, eol, eol)).encode() for e in events)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_every_sse_parser_of_the_project_reads_each_line_ending(eol: bytes) -> None:
    wire = _wire(eol)
    want = [(e.event, e.data) for e in synthesize_events(MSG, seed="eol", envelope="minimal")]
    text_ = wire.decode()
    # simulator.envelope (tooluse fidelity's raw SSE captures)
    assert [(n, json.loads(d)) for n, d in parse_raw_sse(text_)] == want
    # simulator.record (tooluse record relays a live stream), fed in awkward pieces: one byte at
    # a time, so a CRLF is always split across two chunks
    lines = list(iter_sse_lines(wire[i:i + 1] for i in range(len(wire))))
    assert lines == sse_lines(text_)
    assert [(e.event, e.data) for e in _sse(iter([*lines, ""]))] == want
    # conformance.probe.transport reads the whole body with sse_lines
    assert [(e.event, e.data) for e in _sse(iter([*sse_lines(text_), ""]))] == want


def test_mixed_line_endings_never_read_as_one() -> None:
    """The adversarial profile mixes the three endings line by line; a line ending in ``\\r``
    is never followed by a blank line ending in ``\\n`` (that pair reads as one CRLF)."""
    base = synthesize_events(MSG, seed="mix", envelope="minimal")
    for i in range(40):
        events = apply_envelope(base, True, f"mix#{i}", 0, ADVERSARIAL)
        wire = b"".join(e.encode() for e in events)
        assert [n for n, _ in parse_raw_sse(wire.decode())] == [e.event for e in events]
        assert [n for n, _ in _raw_events(wire)] == [e.event for e in events]


def _raw_events(wire: bytes) -> list[tuple[str, str]]:
    """The SDK's own SSE decoder over the bytes (anthropic._streaming.SSEDecoder)."""
    from anthropic._streaming import SSEDecoder
    return [(s.event or "", s.data) for s in SSEDecoder().iter_bytes(iter([wire]))]


def test_a_stream_recorded_over_any_line_ending_validates_the_same() -> None:
    """The recorder's parser gives the same events whatever line endings it met, and the
    project's stream validation (``tooluse validate``'s) accepts them."""
    from simulator.validation import validate
    for eol in (b"\n", b"\r\n", b"\r"):
        lines = iter_sse_lines([_wire(eol)])
        events = [{"event": e.event, "data": e.data} for e in _sse(iter([*lines, ""]))]
        assert validate(events, "sse_events") == []


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_tooluse_validate_reads_raw_sse_text_with_each_line_ending(
        eol: bytes, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A raw event stream, as a file of its own or in a capture's ``data``: its events
    validated (a broken payload still reported)."""
    from conformance.cli import main
    raw = tmp_path / "stream.sse"
    raw.write_bytes(_wire(eol))
    capture = tmp_path / "capture.json"
    capture.write_text(json.dumps({"source": "s", "kind": "sse_events", "note": "",
                                   "data": _wire(eol).decode()}))
    assert main(["validate", str(raw), str(capture)]) == 0, capsys.readouterr()
    broken = tmp_path / "broken.sse"
    broken.write_bytes(_wire(eol).replace(b'"type":"content_block_stop"', b'"type":7', 1))
    assert main(["validate", str(broken)]) == 1
    assert "broken.sse:/" in capsys.readouterr().out
