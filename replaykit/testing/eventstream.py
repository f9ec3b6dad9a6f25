"""AWS event-stream framing (``application/vnd.amazon.eventstream``), what Bedrock's ConverseStream
answers with: stdlib only, for the scripted server and its tests.

One message is::

    total length (u32 BE) | headers length (u32 BE) | CRC32 of those 8 bytes (u32 BE)
    headers: name length (u8), name, value type (u8, 7 = string), value length (u16 BE), value
    payload (the event's JSON)
    CRC32 of everything before it (u32 BE)

botocore (``botocore/eventstream.py``) checks both CRCs and refuses a message whose sums do not match.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from typing import Any

_STRING = 7
PRELUDE = 12  # two lengths and the prelude CRC
TRAILER = 4  # the message CRC


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", _STRING, len(raw_value)) + raw_value


def message(headers: dict[str, str], payload: bytes, *, corrupt: bool = False) -> bytes:
    """One event-stream message. ``corrupt`` spoils its message CRC (a fault botocore must refuse)."""
    head = b"".join(_header(k, v) for k, v in headers.items())
    total = PRELUDE + len(head) + len(payload) + TRAILER
    prelude = struct.pack(">II", total, len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + head + payload
    crc = zlib.crc32(body) ^ (0xFFFFFFFF if corrupt else 0)
    return body + struct.pack(">I", crc)


def event(event_type: str, payload: dict[str, Any], *, corrupt: bool = False) -> bytes:
    """A Converse stream event (``messageStart``, ``contentBlockDelta``, ...)."""
    data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return message({":event-type": event_type, ":content-type": "application/json", ":message-type": "event"},
                   data, corrupt=corrupt)


def exception(exception_type: str, text: str) -> bytes:
    """An error inside the stream (``throttlingException``, ``modelStreamErrorException``, ...)."""
    data = json.dumps({"message": text}).encode()
    return message({":exception-type": exception_type, ":content-type": "application/json",
                    ":message-type": "exception"}, data)


def decode(data: bytes) -> Iterator[tuple[dict[str, str], bytes]]:
    """The messages of a buffer, each (headers, payload), both CRCs checked (ValueError when wrong)."""
    pos = 0
    while pos < len(data):
        if len(data) - pos < PRELUDE:
            raise ValueError("event stream: truncated prelude")
        total, head_len, prelude_crc = struct.unpack(">III", data[pos:pos + PRELUDE])
        if zlib.crc32(data[pos:pos + 8]) != prelude_crc:
            raise ValueError("event stream: prelude CRC mismatch")
        end = pos + total
        if end > len(data):
            raise ValueError("event stream: truncated message")
        (crc,) = struct.unpack(">I", data[end - TRAILER:end])
        if zlib.crc32(data[pos:end - TRAILER]) != crc:
            raise ValueError("event stream: message CRC mismatch")
        headers: dict[str, str] = {}
        cursor = pos + PRELUDE
        stop = cursor + head_len
        while cursor < stop:
            name_len = data[cursor]
            name = data[cursor + 1:cursor + 1 + name_len].decode()
            cursor += 1 + name_len
            kind, value_len = struct.unpack(">BH", data[cursor:cursor + 3])
            if kind != _STRING:
                raise ValueError(f"event stream: header type {kind} not supported here")
            headers[name] = data[cursor + 3:cursor + 3 + value_len].decode()
            cursor += 3 + value_len
        yield headers, data[stop:end - TRAILER]
        pos = end
