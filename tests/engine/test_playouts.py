"""Seeded random playouts of every ruleset: invariants, an independent rules model, replays."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from medina.engine import (
    NOBODY,
    Action,
    ActionKind,
    Event,
    EventKind,
    GameState,
    Phase,
    apply_action,
    legal_moves,
    new_game,
    observe,
    render,
    result,
)
from medina.engine.state import SLOTS
from medina.engine.variants import CONFIGURATIONS

from . import reference as ref
from .support import sides

CONFIGS = list(CONFIGURATIONS)
SEEDS = range(8)  # per configuration and policy; seed 0 also runs the rules model
Policy = Callable[[GameState, random.Random], Action]


def uniform(s: GameState, rng: random.Random) -> Action:
    """A uniformly random legal action (buildings dominate)."""
    moves = legal_moves(s)
    return moves.nth(rng.randrange(len(moves)))


def by_kind(s: GameState, rng: random.Random) -> Action:
    """A random kind of piece first, then a random square: more rooftops, stables, tea."""
    groups: dict[tuple[int, int], list[Action]] = {}
    for a in legal_moves(s).actions():
        groups.setdefault((a.kind, a.colour), []).append(a)
    keys = sorted(groups)
    return rng.choice(groups[keys[rng.randrange(len(keys))]])


POLICIES: dict[str, Policy] = {"uniform": uniform, "by-kind": by_kind}


def fingerprint(s: GameState) -> tuple[object, ...]:
    """Everything in a state, for equality and for "was it mutated" checks."""
    values = tuple(
        tuple(v) if isinstance(v, list) else v
        for name in GameState.__slots__
        if name not in ("legal_cache", "score_cache", "_events")
        for v in [getattr(s, name)]
    )
    return (*values, tuple(s.events))


@dataclass
class Ledger:
    """Independent bookkeeping of tiles, tea, removals and merchants along a playout."""

    players: int
    holder: list[ref.Cell | None] = field(default_factory=lambda: [None] * 4)
    holder_size: list[int] = field(default_factory=lambda: [0] * 4)
    contacts: set[tuple[ref.Cell, int]] = field(default_factory=set)
    tower_tiles: list[int] = field(default_factory=lambda: [NOBODY] * 4)
    tower_touched: set[int] = field(default_factory=set)
    claimed: set[ref.Cell] = field(default_factory=set)
    purple_claims: int = 0
    tea: list[int] = field(default_factory=list)
    tea_pool: int = 0
    tea_gone: int = 0  # spent or removed from the game
    merchants_to_seats: int = 0
    merchants_removed: int = 0
    buildings_removed: list[int] = field(default_factory=lambda: [0] * 4)
    blocking_removed: set[tuple[int, int]] = field(default_factory=set)

    def palace_tile_owners(self, s: GameState) -> list[int]:
        """Who holds each palace tile by this ledger."""
        owners = {p.key: o for p, o in competing(s, ref.Board.of(s))}
        return [NOBODY if k is None else owners[k] for k in self.holder]


def competing(s: GameState, board: ref.Board) -> list[tuple[ref.RefPalace, int]]:
    """Claimed, not blocked palaces with their tile owner (a seat or NOBODY)."""
    out = []
    for p in board.palaces():
        if p.letter == ".":
            continue
        seat, kind = ref.owner_of(s, p.letter)
        if kind != "blocking":
            out.append((p, NOBODY if kind == "neutral" else seat))
    return out


def check_tiles(led: Ledger, s: GameState, board: ref.Board) -> None:
    """7.1 as "moves only to a strictly larger palace", 7.2 as first contacts, 7.3 tea."""
    rivals = competing(s, board)
    tiles = []
    for colour in range(4):
        mine = [(p, o) for p, o in rivals if p.colour == colour]
        held = next(((p, o) for p, o in mine if p.key == led.holder[colour]), None)
        for p, o in mine:
            if held is None or len(p.pieces) > len(held[0].pieces):
                held = (p, o)
        led.holder[colour] = held[0].key if held else None
        tiles.append(held[1] if held else NOBODY)
    assert s.palace_tiles == tiles
    arms = board.arms()
    for p, o in rivals:
        near = {y for x in p.pieces for y in board.g.ortho[x]}
        for t, arm in enumerate(arms):
            if near & arm and (p.key, t) not in led.contacts:
                led.contacts.add((p.key, t))
                led.tower_tiles[t] = o
                if t not in led.tower_touched:
                    led.tower_touched.add(t)
                    count = s.rules.tower_merchants[t]
                    if o == NOBODY:
                        led.merchants_removed += count
                    else:
                        led.merchants_to_seats += count
    assert s.tower_tiles == led.tower_tiles
    assert s.tower_merchants == [
        0 if t in led.tower_touched else s.rules.tower_merchants[t] for t in range(4)
    ]
    for p, o in rivals:
        if p.key not in led.claimed:
            led.claimed.add(p.key)
            if s.rules.tea and p.colour == 1:
                count = min((3, 2, 1, 0)[min(led.purple_claims, 3)], led.tea_pool)
                led.purple_claims += 1
                led.tea_pool -= count
                if o == NOBODY:
                    led.tea_gone += count
                else:
                    led.tea[o] += count


def check_exhaustion(led: Ledger, s: GameState, board: ref.Board) -> None:
    """6.2 colour exhaustion and [v1-2p] blocking-rooftop removal, from the board."""
    rules = s.rules
    on_board: set[tuple[int, str, int]] = set()  # (seat, kind, colour)
    for p in board.palaces():
        if p.letter != ".":
            seat, kind = ref.owner_of(s, p.letter)
            on_board.add((seat, kind, p.colour))
    for colour in range(4):
        if rules.two_colour_roofs:
            for seat in range(2):
                both = {(seat, "own", colour), (seat, "blocking", colour)} <= on_board
                if both and (1 - seat, "blocking", colour) not in on_board:
                    led.blocking_removed.add((1 - seat, colour))
            done = all(
                (seat, kind, colour) in on_board
                or (kind == "blocking" and (seat, colour) in led.blocking_removed)
                for seat in range(2)
                for kind in ("own", "blocking")
            )
        else:
            done = all((seat, "own", colour) in on_board for seat in range(s.players))
        assert bool(s.exhausted >> colour & 1) == done, f"colour {colour} exhaustion"
        if done:
            assert all(s.supply_of(seat).buildings[colour] == 0 for seat in range(s.players))


def check_conservation(led: Ledger, s: GameState, board: ref.Board) -> None:
    """Board + supplies + removed = what the players started with (plus tower merchants)."""
    c = s.rules.components
    n = s.players
    sups = [s.supply_of(seat) for seat in range(n)]
    first = Counter(t[0] for t in board.tok)
    for colour in range(4):
        letter = ref.COLOURS[colour]
        on_board = first[letter] + first[letter.upper()]
        held = sum(u.buildings[colour] for u in sups)
        assert on_board + held + led.buildings_removed[colour] == n * c.buildings
    stables = first["s"]
    assert stables + sum(u.stables for u in sups) == n * c.stables
    assert len(board.walls()) + sum(u.walls for u in sups) == n * c.walls
    started = 1 if s.phase is not Phase.START_MERCHANT else 0  # the start merchant
    merchants = len(board.merchants()) + sum(u.merchants for u in sups)
    assert merchants == n * c.merchants + started + led.merchants_to_seats
    assert sum(s.tower_merchants) + led.merchants_to_seats + led.merchants_removed == sum(
        s.rules.tower_merchants
    )
    letters = [p.letter for p in board.palaces() if p.letter != "."]
    for seat, u in enumerate(sups):
        own = ref.ROOF_LETTERS[s.rules.rooftop_colours[seat]]
        assert letters.count(own) + u.rooftops.bit_count() == c.rooftops
        if s.rules.two_colour_roofs:
            block = ref.ROOF_LETTERS[s.rules.blocking_colours[seat]]
            gone = sum(1 for who, _ in led.blocking_removed if who == seat)
            assert letters.count(block) + u.blocking.bit_count() + gone == c.blocking
    if s.rules.neutral_colour >= 0:
        neutral = ref.ROOF_LETTERS[s.rules.neutral_colour]
        assert letters.count(neutral) + sum(u.neutral for u in sups) == n * c.neutral
    if s.rules.tea:
        assert s.tea == led.tea and s.tea_pool == led.tea_pool
        assert sum(s.tea) + s.tea_pool + led.tea_gone == 6


def check_board(s: GameState, board: ref.Board) -> None:
    """No two palaces touch; no piece in the well ring; every side keeps its gate."""
    palaces = board.palaces()
    owner = {x: i for i, p in enumerate(palaces) for x in p.pieces}
    for x, i in owner.items():
        assert all(owner.get(y, i) == i for y in board.g.around[x]), f"palaces touch at {x}"
    assert not set(owner) & board.well_ring()
    for side in sides(s.rules.geometry):
        assert side & ~s.walls, "a gate was closed"


def perturbed(s: GameState, seat: int) -> GameState:
    """A copy in which ``seat``'s hidden supply differs but nothing public does."""
    t = s.copy()
    base = seat * SLOTS
    full = [i for i in range(7) if t.supply[base + i]]
    if full:
        t.supply[base + full[0]] -= 1
        t.supply[base + (full[0] + 1) % 7] += 1
    return t


def check_hidden(s: GameState) -> None:
    """Another seat's hidden supply never changes what a seat or a spectator observes."""
    for other in range(s.players):
        if s.revealed >> other & 1 or s.pieces_left(other) == 0:
            continue
        t = perturbed(s, other)
        for seat in (*range(s.players), None):
            if seat != other:
                assert observe(t, seat) == observe(s, seat)


def play(ruleset: str, players: int, seed: int, policy: Policy, deep: bool) -> None:
    """One seeded game with every check; ``deep`` adds the rules model at every decision."""
    s = new_game(ruleset, players, seed)
    rng = random.Random(seed * 7919 + players)
    led = Ledger(players, tea=[0] * players, tea_pool=6 if s.rules.tea else 0)
    actions: list[Action] = []
    while not s.over:
        engine = set(legal_moves(s).actions())
        assert engine, "a decision without legal actions"
        if deep:
            assert engine == ref.legal_actions(s), (
                f"legal actions differ at decision {len(actions)}"
            )
        a = policy(s, rng)
        before = fingerprint(s)
        t = apply_action(s, a)
        assert fingerprint(s) == before, "apply_action mutated its input"
        events = t.events_since(s.n_events)
        step(led, s, t, a, events)
        if deep or len(actions) % 16 == 0:
            check_hidden(t)
        actions.append(a)
        s = t
    board = ref.Board.of(s)
    for seat in range(players):
        assert not ref.placements(s, seat, board), "the game ended with a legal placement left"
    assert result(s).totals == ref.totals(s, led.palace_tile_owners(s), led.tower_tiles)
    replay = new_game(ruleset, players, seed)
    for a in actions:
        replay = apply_action(replay, a)
    assert fingerprint(replay) == fingerprint(s)
    assert render(replay) == render(s) and result(replay) == result(s)


def step(led: Ledger, s: GameState, t: GameState, a: Action, events: list[Event]) -> None:
    """Checks after one decision ``a`` took ``s`` to ``t``."""
    for e in events:
        if e.kind is EventKind.COLOUR_EXHAUSTED:
            led.buildings_removed[e.colour] += sum(
                s.supply_of(seat).buildings[e.colour] for seat in range(s.players)
            )
        elif e.kind is EventKind.TEA_SPENT:
            led.tea[e.seat] -= 1
            led.tea_gone += 1
    placed = [e for e in events if e.kind is EventKind.PLACED]
    if a.kind is ActionKind.TEA:
        assert not placed
    else:
        assert [(e.seat, e.piece, e.square) for e in placed] == [(s.to_move, a.kind, a.square)]
    board = ref.Board.of(t)
    check_board(t, board)
    check_tiles(led, t, board)
    check_exhaustion(led, t, board)
    check_conservation(led, t, board)
    for e in events:
        if e.kind is EventKind.PASSED:
            assert not ref.placements(t, e.seat, board), f"seat {e.seat} passed with a move"
    if t.over:
        assert events[-1].kind is EventKind.GAME_OVER


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize(("ruleset", "players"), CONFIGS)
def test_random_playouts_keep_every_invariant(ruleset: str, players: int, policy: str) -> None:
    for seed in SEEDS:
        play(ruleset, players, seed, POLICIES[policy], deep=seed == 0)


def _facts(s: GameState) -> dict[str, object]:
    """Every field of ``s`` by value (lists and tuples as tuples; the caches left out)."""
    facts: dict[str, object] = {"events": tuple(s.events)}
    for name in GameState.__slots__:
        if name in ("_events", "legal_cache", "score_cache"):
            continue
        value = getattr(s, name)
        facts[name] = tuple(value) if isinstance(value, list | tuple) else value
    return facts


@pytest.mark.parametrize(("ruleset", "players"), CONFIGS)
def test_applying_an_action_leaves_the_state_before_untouched(ruleset: str, players: int) -> None:
    # States share what did not change (the palaces, the history) with the states before
    # them; a rule that wrote into a shared piece would change a state already played.
    rng = random.Random(11)
    for seed in range(3):
        states = [new_game(ruleset, players, seed)]
        facts = [_facts(states[0])]
        while not states[-1].over:
            states.append(apply_action(states[-1], uniform(states[-1], rng)))
            facts.append(_facts(states[-1]))
        assert [_facts(s) for s in states] == facts
