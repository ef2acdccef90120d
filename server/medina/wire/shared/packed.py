"""Protobuf wire bytes for the hot path: varints, packed fields, and board arrays from masks.

upb parses wire bytes far faster than Python sets repeated fields one value at a
time, so the observation's large arrays are encoded here and merged in one call.
Only the encoding rules of the protobuf wire format are used: a field key is
``(number << 3) | wire_type``; varints are little-endian base-128 (negative
int32 values as their 64-bit two's complement, ten bytes); a packed repeated
field is one length-delimited record of concatenated varints.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from google.protobuf.message import Message

__all__ = ["board_bytes", "field", "key", "packed", "present", "scalar", "spread", "varint"]

_MASK64 = (1 << 64) - 1
_VARINT = 0
_LENGTH_DELIMITED = 2


def varint(n: int) -> bytes:
    """The varint encoding of ``n`` (int32/int64 semantics for negative values)."""
    n &= _MASK64
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


#: Varints of every value a board array holds (seats, squares, placement numbers).
_SMALL = {n: varint(n) for n in range(-2, 4096)}


def key(message: type[Message], name: str) -> tuple[bytes, bytes]:
    """(length-delimited key, varint key) of field ``name`` of ``message``."""
    number: int = message.DESCRIPTOR.fields_by_name[name].number
    return varint(number << 3 | _LENGTH_DELIMITED), varint(number << 3 | _VARINT)


def field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited record (sub-message, bytes or packed field); empty if no payload."""
    if not payload:
        return b""
    size = len(payload)
    return tag + (_SMALL[size] if size < 4096 else varint(size)) + payload


def present(tag: bytes, payload: bytes) -> bytes:
    """A sub-message field that is present even when all its fields are defaults (empty)."""
    return field(tag, payload) if payload else tag + b"\x00"


def packed(tag: bytes, values: list[int]) -> bytes:
    """A packed repeated varint field."""
    try:
        payload = b"".join([_SMALL[v] for v in values])
    except KeyError:
        payload = b"".join([varint(v) for v in values])
    return field(tag, payload)


def scalar(tag: bytes, value: int) -> bytes:
    """A varint scalar field (omitted at zero, as proto3 serializes it)."""
    if not value:
        return b""
    return tag + (_SMALL.get(value) or varint(value))


def optional(tag: bytes, seat: int) -> bytes:
    """An optional seat field: absent for nobody (a negative seat), else present even at 0."""
    if seat < 0:
        return b""
    return tag + _SMALL[seat]


_BITS = bytes.maketrans(b"01", b"\x00\x01")


@lru_cache(maxsize=8192)
def spread(mask: int, value: int, size: int) -> int:
    """An int whose byte ``i`` (little-endian) is ``value`` where bit ``i`` of ``mask`` is set.

    Sums of spreads of disjoint masks are board arrays with one byte per square;
    cached because from one decision to the next most masks do not change.
    """
    bits = format(mask, f"0{size}b").encode().translate(_BITS)
    return int.from_bytes(bits, "big") * value


def board_bytes(base: int, layers: Iterable[tuple[int, int]], size: int) -> bytes:
    """``size`` bytes: ``base`` plus ``value`` on the squares of each ``(mask, value)``.

    The masks must be disjoint and every resulting byte below 128 (a one-byte varint).
    """
    total = base
    for mask, value in layers:
        if mask:
            total += spread(mask, value, size)
    return total.to_bytes(size, "little")
