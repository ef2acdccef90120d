"""The stdio line codec: server messages as JSON lines for a bot program, its answers back.

Each line to the bot is the protobuf JSON mapping of one ``medina.v1.PlayResponse``;
each answer line is the JSON mapping of one ``medina.v1.Action`` (docs/protocol.md,
"stdio bots").
"""

from __future__ import annotations

import json

from google.protobuf import json_format
from medina.v1 import arena_pb2, game_pb2

#: The kinds of server line that the bot must answer with exactly one line each.
ANSWERED_KINDS = frozenset({"request", "rejected"})

#: Longest excerpt of a bad line quoted in an error message.
_EXCERPT = 80


class LineError(ValueError):
    """A line from the bot is not the JSON mapping of a ``medina.v1.Action``."""


def encode_line(message: arena_pb2.PlayResponse) -> bytes:
    """``message`` as one compact JSON line, newline-terminated: lowerCamelCase names, enum
    names, the 64-bit seed as a string, and every field written out, zeros and empty lists
    included (a program never has to guess that a missing ``seat`` means seat 0). Optional
    fields that are absent (a tile at the board edge has no ``holder``) stay absent."""
    data = json_format.MessageToDict(message, always_print_fields_with_no_presence=True)
    return (json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def decode_action(line: str | bytes) -> game_pb2.Action:
    """Parse one answer line (surrounding whitespace ignored) into an Action.

    Raises LineError saying what is wrong and quoting the start of the line. A
    well-formed Action that breaks a rule is not an error here: the server judges it.
    """
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LineError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    text = line.strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LineError(f"not JSON ({exc.msg} at column {exc.colno}): {excerpt(text)}") from None
    if not isinstance(data, dict):
        raise LineError(
            f"a JSON {_json_type(data)}, not an object such as "
            f'{{"kind":"ACTION_KIND_WALL","square":17}}: {excerpt(text)}'
        )
    action = game_pb2.Action()
    try:
        json_format.ParseDict(data, action)
    except json_format.ParseError as exc:
        reason = " ".join(str(exc).split())  # the library's message spans lines
        raise LineError(f"not a medina.v1.Action ({reason}): {excerpt(text)}") from None
    return action


def excerpt(text: str) -> str:
    """``text`` quoted, cut to a readable length."""
    if len(text) > _EXCERPT:
        return repr(text[:_EXCERPT]) + f" ... ({len(text)} characters)"
    return repr(text)


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"
