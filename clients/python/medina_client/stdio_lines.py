"""The stdio line codec: server messages as JSON lines for a bot program, its answers back.

Each line to the bot is the protobuf JSON mapping of one ``medina.v1.PlayResponse``;
each answer line is the JSON mapping of one ``medina.v1.Action``, or (protocol 1.1) of one
``medina.v1.Reply`` naming the request it answers (docs/protocol.md, "stdio bots").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from medina.v1 import arena_pb2, game_pb2
from medina.wire.shared.client import action_from_json

#: The kinds of server line that the bot must answer with exactly one line each.
ANSWERED_KINDS = frozenset({"request", "rejected"})

#: Longest excerpt of a bad line quoted in an error message.
_EXCERPT = 80


class LineError(ValueError):
    """A line from the bot is not the JSON mapping of a ``medina.v1.Action``."""


class NotJsonError(LineError):
    """A line from the bot is no JSON at all: most often a debug print meant for stderr."""


def encode_line(message: arena_pb2.PlayResponse) -> bytes:
    """``message`` as one compact JSON line, newline-terminated: lowerCamelCase names, enum
    names, the 64-bit seed as a string, and every field written out, zeros and empty lists
    included (a program never has to guess that a missing ``seat`` means seat 0). Optional
    fields that are absent (a tile at the board edge has no ``holder``) stay absent. Each
    object's fields come in the order of the .proto file (the protobuf library writes the
    fields at their default last, so a rooftop's ``colour`` would follow its ``squares``)."""
    data = json_format.MessageToDict(message, always_print_fields_with_no_presence=True)
    ordered = _in_field_order(message.DESCRIPTOR, data)
    return (json.dumps(ordered, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def _in_field_order(descriptor: Descriptor, data: dict[str, Any]) -> dict[str, Any]:
    """``data``, the JSON mapping of a message of ``descriptor``, its keys (and its nested
    messages' keys) in field number order."""
    out: dict[str, Any] = {}
    for f in sorted(descriptor.fields, key=lambda f: f.number):
        if f.json_name not in data:
            continue
        value = data[f.json_name]
        nested = f.message_type
        if nested is not None and not nested.GetOptions().map_entry:
            if isinstance(value, dict):
                value = _in_field_order(nested, value)
            elif isinstance(value, list):
                value = [_in_field_order(nested, v) if isinstance(v, dict) else v for v in value]
        out[f.json_name] = value
    out.update((k, v) for k, v in data.items() if k not in out)  # none expected
    return out


@dataclass
class Answer:
    """One answer line: the action, the request it names (None: the oldest line owed one),
    and the names of fields the bridge did not know and ignored."""

    action: game_pb2.Action
    request_id: int | None = None
    ignored: list[str] = field(default_factory=list)


def decode_action(line: str | bytes) -> game_pb2.Action:
    """Parse one answer line into an Action (see ``decode_answer``)."""
    return decode_answer(line).action


def decode_answer(line: str | bytes) -> Answer:
    """Parse one answer line (surrounding whitespace ignored).

    The line is an Action (``{"kind":...,"square":...}``), or a Reply naming the request it
    answers (``{"requestId":7,"action":{...}}``; ``"requestId"`` beside the action's own
    fields is taken too). Fields the bridge does not know are ignored and listed in
    ``ignored`` (a newer program's extras must not void its answer). Raises LineError saying
    what is wrong and quoting the start of the line. A well-formed Action that breaks a
    rule is not an error here: the server judges it.
    """
    data = _object(line)
    text = excerpt(json.dumps(data, separators=(",", ":")))
    ignored: list[str] = []
    request_id: int | None = None
    rid = data.pop("requestId", data.pop("request_id", None))
    if isinstance(rid, str) and rid.isdigit():
        rid = int(rid)  # the JSON mapping writes and reads uint32 either way
    if rid is not None:
        if isinstance(rid, bool) or not isinstance(rid, int) or not 0 < rid < 2**32:
            raise LineError(f"requestId must be a request's id (a positive integer): {text}")
        request_id = rid
    nested = "action" in data
    if nested:
        body = data.pop("action")
        ignored += _unknown(data, arena_pb2.Reply.DESCRIPTOR, "")
        if not isinstance(body, dict):
            raise LineError(f"'action' must be an object such as {_EXAMPLE}: {text}")
        data = body
    ignored += _unknown(data, game_pb2.Action.DESCRIPTOR, "action." if nested else "")
    try:
        action = action_from_json(data)
    except ValueError as exc:
        raise LineError(f"not a medina.v1.Action ({exc}): {text}") from None
    return Answer(action, request_id, ignored)


_EXAMPLE = '{"kind":"ACTION_KIND_WALL","square":17}'


def _unknown(data: dict[str, object], descriptor: Descriptor, prefix: str) -> list[str]:
    """Remove the keys ``descriptor`` has no field for; their names."""
    known = {f.json_name for f in descriptor.fields} | {f.name for f in descriptor.fields}
    extra = [k for k in data if k not in known]
    for k in extra:
        del data[k]
    return [prefix + k for k in extra]


def _object(line: str | bytes) -> dict[str, object]:
    """The JSON object a line holds; LineError otherwise."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotJsonError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    text = line.strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotJsonError(f"not JSON ({exc.msg} at column {exc.colno}): {excerpt(text)}") from None
    if not isinstance(data, dict):
        raise LineError(
            f"a JSON {_json_type(data)}, not an object such as {_EXAMPLE}: {excerpt(text)}"
        )
    return data


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
