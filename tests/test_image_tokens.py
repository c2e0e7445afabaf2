"""Images cost what the docs' formula says, read from their own bytes (issue 40): ``width ×
height / 750`` tokens after the API's scaling (long edge at most 1,568 px, at most ~1,600 tokens);
an image whose size cannot be read costs the ceiling."""

from __future__ import annotations

import base64
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.count_tokens import estimate_tokens
from simulator.image_tokens import MAX_IMAGE_TOKENS, image_size, image_tokens, source_tokens


def png(w: int, h: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", w, h) \
        + b"\x08\x02\x00\x00\x00" + b"\x00" * 4


def gif(w: int, h: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", w, h) + b"\x00" * 8


def jpeg(w: int, h: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    sof = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, h, w) + b"\x03" + b"\x00" * 9
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp_vp8x(w: int, h: int) -> bytes:
    body = b"VP8X" + struct.pack("<I", 10) + b"\x00" * 4 + (w - 1).to_bytes(3, "little") \
        + (h - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body


def webp_vp8l(w: int, h: int) -> bytes:
    bits = (w - 1) | ((h - 1) << 14)
    body = b"VP8L" + struct.pack("<I", 5) + b"\x2f" + bits.to_bytes(4, "little")
    return b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body + b"\x00" * 8


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize("make", [png, gif, jpeg, webp_vp8x, webp_vp8l])
@given(w=st.integers(1, 9000), h=st.integers(1, 9000))
def test_the_size_is_read_from_every_accepted_media_type(make: Any, w: int, h: int) -> None:
    if make is gif:
        w, h = min(w, 65535), min(h, 65535)
    assert image_size(b64(make(w, h))) == (w, h)


def test_bytes_that_are_not_an_image_cost_the_ceiling() -> None:
    assert image_size(b64(b"not an image at all, really")) is None
    assert image_size("%%%not base64%%%") is None
    assert source_tokens({"type": "base64", "data": "A" * 4000}) == MAX_IMAGE_TOKENS
    assert source_tokens({"type": "url", "url": "https://example.com/cat.png"}) == MAX_IMAGE_TOKENS


def test_the_docs_formula_and_its_scaling() -> None:
    assert image_tokens(200, 200) == 54  # 40,000 / 750
    assert image_tokens(1000, 1000) == 1334
    assert image_tokens(1092, 1092) == 1590  # the docs' table: 1:1 at 1092 px is ~1,590 tokens
    assert image_tokens(4000, 3000) == MAX_IMAGE_TOKENS  # scaled down, at most the ceiling
    assert image_tokens(8000, 100) == 41  # the long edge scaled to 1,568 px: 1568 x 19.6 px


@given(w=st.integers(1, 20000), h=st.integers(1, 20000))
def test_an_image_never_costs_more_than_the_ceiling_and_grows_with_its_size(w: int, h: int) -> None:
    t = image_tokens(w, h)
    assert 1 <= t <= MAX_IMAGE_TOKENS
    assert image_tokens(w + 1, h) >= t - 1  # scaling rounds, it never shrinks the cost by much


def test_a_small_image_costs_little_in_the_estimate() -> None:
    def est(raw: bytes) -> int:
        block = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": b64(raw)}}
        return estimate_tokens({"messages": [{"role": "user", "content": [block]}]})
    empty = estimate_tokens({"messages": [{"role": "user", "content": []}]})
    assert est(png(100, 100)) - empty == 14  # ceil(10,000 / 750)
    assert est(png(1092, 1092)) - empty == 1590
