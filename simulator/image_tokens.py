"""What an image costs in input tokens, by the documented formula, from its own bytes.

The vision docs (https://platform.claude.com/docs/en/build-with-claude/vision, "Evaluate image
size") give the cost of an image as ``tokens = (width px × height px) / 750``, after the API has
scaled it down (aspect ratio kept) until its long edge is at most 1,568 pixels and it costs at most
about 1,600 tokens. The pixel size is read from the image's header (PNG, JPEG, GIF and WebP, the
four media types the API accepts); an image whose size cannot be read (a URL or file source, or
bytes that are not an image) costs the documented ceiling, :data:`MAX_IMAGE_TOKENS`.

Measured: an earlier flat ~1,600 tokens put 3 of 38 live image requests within 25 % (a small
image: live 24, estimate 1,615; issue 40).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

#: Pixels a token (the docs' formula).
PIXELS_PER_TOKEN = 750
#: The long edge the API scales an image down to (pixels).
MAX_LONG_EDGE = 1568
#: The most one image costs: the docs' "about 1,600 tokens".
MAX_IMAGE_TOKENS = 1600
#: How much of a base64 image is decoded to find its size (a JPEG's frame header may follow its
#: EXIF data and thumbnail; 256 KiB of base64 is 192 KiB of image).
_HEAD = 256 * 1024


def image_size(data: str) -> tuple[int, int] | None:
    """(width, height) in pixels of a base64 PNG, JPEG, GIF or WebP image, or None."""
    head = data[:_HEAD]
    head = head[: len(head) - len(head) % 4]
    try:
        raw = base64.b64decode(head, validate=False)
    except (ValueError, binascii.Error):
        return None
    for reader in (_png, _gif, _webp, _jpeg):
        size = reader(raw)
        if size is not None:
            return size if size[0] > 0 and size[1] > 0 else None
    return None


def _png(raw: bytes) -> tuple[int, int] | None:
    if raw[:8] != b"\x89PNG\r\n\x1a\n" or len(raw) < 24 or raw[12:16] != b"IHDR":
        return None
    w, h = struct.unpack(">II", raw[16:24])
    return w, h


def _gif(raw: bytes) -> tuple[int, int] | None:
    if raw[:6] not in (b"GIF87a", b"GIF89a") or len(raw) < 10:
        return None
    w, h = struct.unpack("<HH", raw[6:10])
    return w, h


def _webp(raw: bytes) -> tuple[int, int] | None:
    if raw[:4] != b"RIFF" or raw[8:12] != b"WEBP" or len(raw) < 30:
        return None
    chunk = raw[12:16]
    if chunk == b"VP8 " and raw[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", raw[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and raw[20:21] == b"\x2f":
        bits = int.from_bytes(raw[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(raw[24:27], "little") + 1, int.from_bytes(raw[27:30], "little") + 1
    return None


# Start-of-frame markers carry the size; C4 (Huffman tables), C8 (reserved) and CC (arithmetic
# coding conditioning) share the range and do not.
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg(raw: bytes) -> tuple[int, int] | None:
    if raw[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 <= len(raw):
        if raw[i] != 0xFF:
            return None
        marker = raw[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            i += 2
            continue
        length = int.from_bytes(raw[i + 2:i + 4], "big")
        if marker in _SOF:
            h, w = struct.unpack(">HH", raw[i + 5:i + 9])
            return w, h
        i += 2 + length
    return None


def image_tokens(width: int, height: int) -> int:
    """The documented cost of a ``width`` × ``height`` image, after the API's scaling."""
    scale = min(1.0, MAX_LONG_EDGE / max(width, height),
                math.sqrt(MAX_IMAGE_TOKENS * PIXELS_PER_TOKEN / (width * height)))
    return max(1, min(MAX_IMAGE_TOKENS,
                      math.ceil(width * scale * height * scale / PIXELS_PER_TOKEN)))


def source_tokens(source: object) -> int:
    """What an image block with ``source`` costs: by the formula when its bytes are in the request
    and readable, else the ceiling."""
    if isinstance(source, dict) and source.get("type") == "base64":
        data = source.get("data")
        size = image_size(data) if isinstance(data, str) else None
        if size is not None:
            return image_tokens(*size)
    return MAX_IMAGE_TOKENS


__all__ = ["MAX_IMAGE_TOKENS", "MAX_LONG_EDGE", "PIXELS_PER_TOKEN", "image_size", "image_tokens",
           "source_tokens"]
