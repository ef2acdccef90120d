"""The closed tables of protocol 1.1 are one list each, in code and in docs/protocol.md: the
rule codes a refusal carries, the ErrorInfo reasons, and the features; and the protocol's
version, written once per language (server, Python SDK, Node bot), is the same in each."""

from __future__ import annotations

import importlib
import pkgutil
import random
import re
from collections.abc import Iterable
from pathlib import Path

import medina.v1
import pytest
from google.protobuf import descriptor_pb2
from medina.engine import (
    CONFIGURATIONS,
    Action,
    ActionKind,
    apply_action,
    is_legal,
    legal_moves,
    new_game,
    squares_named,
)
from medina.engine.errors import RULE_CODES
from medina.engine.turn import explain
from medina.engine.variants import ROOFTOP_COLOURS, RULESETS, get_ruleset
from medina.rpc.common.status import Reason
from medina.v1 import common_pb2, game_pb2
from medina.wire.shared import protocol as server
from medina.wire.shared.actions import MalformedActionError, action_from_proto
from medina.wire.shared.enums import RULESET_IDS, RULESET_NAMES
from medina.wire.shared.protocol import ALWAYS_ON, OPT_IN
from medina_client import messages as sdk

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "protocol.md").read_text()


def doc_table(heading: str) -> list[str]:
    """The first column (a `code`) of the first table after ``heading``."""
    section = DOC[DOC.index(heading) :]
    table = section[section.index("\n|") + 1 :]
    lines = table[: table.index("\n\n")].splitlines()
    rows = [m[1] for line in lines if (m := re.match(r"\| `([^`]+)` \|", line))]
    assert rows, heading
    return rows


def test_every_rule_code_raised_is_in_the_table_and_every_entry_is_used() -> None:
    used: set[str] = set()
    for path in (ROOT / "server" / "medina").rglob("*.py"):
        text = path.read_text()
        used |= set(re.findall(r'IllegalActionError\(\s*"([a-z-]+)"', text))
        used |= set(re.findall(r'Rejection\([^)]*?"([a-z-]+)"', text))
    assert used == set(RULE_CODES)


def test_the_docs_list_every_rule_code_reason_and_feature() -> None:
    assert doc_table("### Rule codes") == sorted(RULE_CODES)
    assert doc_table("## Errors") == [r.value for r in Reason]
    assert doc_table("## Versions and features") == [*ALWAYS_ON, *OPT_IN]


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_refusals_carry_a_listed_code_and_name_squares_on_the_board(
    ruleset: str, players: int
) -> None:
    rng = random.Random(11)
    s = new_game(ruleset, players, 11)
    g = s.rules.geometry
    seen: set[str] = set()
    while not s.over:
        for _ in range(12):  # random attempts, most of them illegal
            kind = rng.choice(list(ActionKind))
            action = Action(kind, rng.randrange(-2, g.size + 2), rng.randrange(-1, 5))
            if is_legal(s, action):
                continue
            error = explain(s, action)
            assert error.rule in RULE_CODES, error
            named = squares_named(g, error.message)
            assert all(0 <= sq < g.size for sq in named)
            seen.add(error.rule)
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    assert len(seen) >= 8  # the attempts reached many different rules


def doc_rule_codes_not_on_the_wire() -> set[str]:
    """The rule codes the doc's table marks as never in a ``Rejected``."""
    section = DOC[DOC.index("### Rule codes") :]
    section = section[: section.index("\n## ")]
    return set(re.findall(r"^\| `([a-z-]+)` \|.*\| no: [^|]*\|$", section, re.MULTILINE))


def test_the_codes_the_doc_keeps_off_the_wire_never_reach_a_rejected() -> None:
    # bad-action, bad-colour and bad-square are what the engine says of an Action it cannot
    # place; over the wire such a reply is refused as malformed before the rules see it.
    off_wire = doc_rule_codes_not_on_the_wire()
    assert off_wire == {"bad-action", "bad-colour", "bad-square", "game-over"}
    engine = "".join(p.read_text() for p in (ROOT / "server" / "medina" / "engine").rglob("*.py"))
    assert not re.search(r'IllegalActionError\(\s*"malformed"', engine)  # the server's own
    rng = random.Random(5)
    seen: set[str] = set()
    for ruleset, players in (("medina-v2", 3), ("medina-v1", 3), ("medina-v1-2p", 2)):
        s = new_game(ruleset, players, 5)
        g = s.rules.geometry
        while not s.over:
            for _ in range(8):
                msg = game_pb2.Action(
                    kind=rng.randrange(0, 11),  # type: ignore[arg-type]
                    square=rng.choice((rng.randrange(-2, g.size + 2), 99_999)),
                    colour=rng.randrange(0, 6),  # type: ignore[arg-type]
                )
                try:
                    action = action_from_proto(msg, g)
                except MalformedActionError:
                    seen.add("malformed")
                    continue
                if not is_legal(s, action):
                    seen.add(explain(s, action).rule)
            moves = legal_moves(s)
            s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    assert "malformed" in seen and len(seen) >= 8
    assert seen.isdisjoint(off_wire)


def test_the_ladder_section_spells_the_ruleset_names_the_ladder_takes() -> None:
    # LobbyHello.rulesets are strings, matched exactly against the ladder's offers, whose
    # rulesets are the engine's names; the table maps each to the Ruleset enum.
    section = DOC[DOC.index("## The ladder") :]
    rows = re.findall(r"^\s*\| `([a-z0-9-]+)` \| `(RULESET_[A-Z0-9_]+)` \|$", section, re.MULTILINE)
    enum = common_pb2.Ruleset.DESCRIPTOR.values_by_number
    assert rows == [(name, enum[n].name) for name, n in RULESET_IDS.items()]
    assert [name for name, _ in rows] == list(RULESETS)


def _node_const(name: str) -> str:
    """A top-level ``const NAME = value;`` of the Node bot, as written."""
    source = (ROOT / "clients" / "node" / "bot.js").read_text()
    found = re.search(rf"^const {name} = (.+);$", source, re.MULTILINE)
    assert found, f"clients/node/bot.js has no const {name}"
    return found[1]


def test_every_language_speaks_the_servers_protocol_version() -> None:
    # One constant per language (protobuf has no constants): Python's is wire/shared/protocol.py,
    # which the SDK imports (the same objects, not copies); clients/node/bot.js must agree.
    assert sdk.PROTOCOL_VERSION is server.PROTOCOL_VERSION
    assert sdk.PROTOCOL_MINOR is server.PROTOCOL_MINOR
    node = (int(_node_const("PROTOCOL_VERSION")), int(_node_const("PROTOCOL_MINOR")))
    assert node == (server.PROTOCOL_VERSION, server.PROTOCOL_MINOR)
    # What the clients ask for are features the server offers, under the same names.
    node_features = re.findall(r"'([^']+)'", _node_const("FEATURES"))
    assert set(sdk.FEATURES) <= set(OPT_IN) and set(node_features) <= set(OPT_IN)
    assert sdk.REDIRECT == server.REDIRECT == _node_const("REDIRECT").strip("'")
    # The SDK names the rulesets with the server's own table.
    assert sdk.RULESET_NAMES is RULESET_NAMES


def test_the_default_rooftop_colours_are_the_ones_the_guide_names() -> None:
    text = " ".join(DOC.split())
    four = get_ruleset("medina-v2", 4).rooftop_colours
    rest = ", ".join(f"{i} {ROOFTOP_COLOURS[c]}" for i, c in enumerate(four) if i)
    assert f"default seat 0 is {ROOFTOP_COLOURS[four[0]]}, {rest}" in text
    two = get_ruleset("medina-v1-2p", 2)
    own = [ROOFTOP_COLOURS[c] for c in two.rooftop_colours]
    blocking = [ROOFTOP_COLOURS[c] for c in two.blocking_colours]
    assert (
        f"in medina-v1-2p seat 0 scores with {own[0]} and blocks with {blocking[0]}, seat 1 "
        f"scores with {own[1]} and blocks with {blocking[1]}"
    ) in text


def schema(files: Iterable[descriptor_pb2.FileDescriptorProto]) -> tuple[set[str], set[str]]:
    """The medina files' messages and services by name (nested messages by their own), and
    their members: every ``Message.field`` and ``Service.Rpc``."""
    owners: set[str] = set()
    members: set[str] = set()

    def walk(messages: Iterable[descriptor_pb2.DescriptorProto]) -> None:
        for m in messages:
            owners.add(m.name)
            members.update(f"{m.name}.{f.name}" for f in m.field)
            walk(m.nested_type)

    for f in files:
        if f.package.startswith("medina"):
            walk(f.message_type)
            for service in f.service:
                owners.add(service.name)
                members.update(f"{service.name}.{r.name}" for r in service.method)
    return owners, members


def test_the_versions_section_names_every_addition_over_the_released_1_0_schema() -> None:
    # docs/migrating.md once kept a second list of them, which left most out
    released = descriptor_pb2.FileDescriptorSet()
    released.ParseFromString((ROOT / "proto" / "releases" / "medina-v1.binpb").read_bytes())
    current = []
    for info in pkgutil.iter_modules(medina.v1.__path__):
        if info.name.endswith("_pb2"):
            proto = descriptor_pb2.FileDescriptorProto()
            importlib.import_module(f"medina.v1.{info.name}").DESCRIPTOR.CopyToProto(proto)
            current.append(proto)
    owners_then, members_then = schema(released.file)
    owners_now, members_now = schema(current)
    services = {s.name for f in current for s in f.service}
    # a member of a 1.0 message or service is named; a new service is named whole (its new
    # messages come with it, or with the member that carries them)
    wanted = {m for m in members_now - members_then if m.split(".")[0] in owners_then}
    wanted |= (owners_now - owners_then) & services
    section = DOC[DOC.index("## Versions and features") :]
    section = section[: section.index("\n## ")]
    assert wanted and sorted(n for n in wanted if f"`{n}`" not in section) == []
