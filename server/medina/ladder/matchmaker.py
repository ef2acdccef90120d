"""The matchmaker: which idle bots play which match next. Pure: candidates and offers in,
plans out, randomness from the caller's seeded ``random.Random``.

The bot waiting longest is served first. Its opponents are the eligible bots nearest in
rating (conservative ordinal), except that with probability ``exploration`` they are drawn
at random from every eligible bot, so ratings keep meeting the whole field. Bots that just
played each other are not matched together again while another bot could take the seat
(``plan``'s ``rematch_after_s``). Nobody plays
itself, nor (unless allowed) another bot of its owner. Seats are given so that each bot's
count of games at each seat, in matches of that many players, stays as even as it can.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Candidate", "MatchPlan", "Offer", "accepts", "due_offers", "plan"]


@dataclass(frozen=True, slots=True)
class Offer:
    """A kind of match the ladder forms, with its share of the mix."""

    ruleset: str
    players: int
    decision_ms: int
    weight: float = 1.0


#: How many matches past its share (against the offer that is due) an offer may be formed
#: by bots that have waited ``patience_s``.
LEAD_ALLOWED = 2
#: Waited this many times ``patience_s``, bots take any offer: something waiting does not
#: clear stands in the due offer's way (owners' caps, bots that stay busy).
STALL_PATIENCE = 10


def due_offers(
    offers: Sequence[Offer],
    formed: Mapping[Offer, int],
    accepting: Mapping[Offer, int],
    waited_s: float,
    patience_s: float,
) -> tuple[Offer, ...]:
    """The offers to form now, given how many of each were ``formed``, how many connected
    bots accept each (``accepting``), and how long the longest-idle bot has ``waited_s``.

    The offer furthest behind its share (by weight) among those enough connected bots
    accept is due, and formed alone, so bigger matches are not starved by smaller ones that
    fill first. Once a bot has waited ``patience_s`` the others may be formed too, but only
    while fewer than ``LEAD_ALLOWED`` matches ahead of their share: with bots freed two at a
    time by two-player matches, one bot had always waited out the patience before four were
    idle, and a four-player match was never formed. After ``STALL_PATIENCE`` times the
    patience, any offer will do."""
    feasible = [o for o in offers if o.weight > 0 and accepting.get(o, 0) >= o.players]
    if not feasible:
        return tuple(offers)
    due = min(feasible, key=lambda o: (formed.get(o, 0) / o.weight, -o.players))
    if waited_s >= STALL_PATIENCE * patience_s:
        return tuple(offers)
    if waited_s < patience_s:
        return (due,)
    share = formed.get(due, 0) / due.weight
    return tuple(
        o
        for o in offers
        if o == due or (o.weight > 0 and formed.get(o, 0) - share * o.weight < LEAD_ALLOWED)
    )


@dataclass(frozen=True, slots=True)
class Candidate:
    """A connected bot that can take another match now."""

    bot_id: int
    name: str
    owner: str
    line_id: int
    ordinal: float
    #: Matches it may still start now (its cap minus those it plays).
    free: int
    #: When it last became idle (smaller: waiting longer).
    idle_since: float
    #: What it accepts; empty: anything.
    rulesets: frozenset[str] = frozenset()
    players: frozenset[int] = frozenset()
    min_decision_ms: int | None = None
    max_decision_ms: int | None = None
    #: The other bots of the last match it played (ended).
    last_match: frozenset[int] = frozenset()
    #: Games played at each seat (by this rating line), by the match's number of players:
    #: ``{4: (games at seat 0, ..., at seat 3), ...}``; a size absent: none yet.
    seat_counts: Mapping[int, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """A match to start: the offer and its bots in seat order."""

    offer: Offer
    seats: tuple[Candidate, ...]


def accepts(bot: Candidate, offer: Offer) -> bool:
    """Whether ``bot`` said it plays matches like ``offer``."""
    if bot.rulesets and offer.ruleset not in bot.rulesets:
        return False
    if bot.players and offer.players not in bot.players:
        return False
    if bot.min_decision_ms is not None and offer.decision_ms < bot.min_decision_ms:
        return False
    return bot.max_decision_ms is None or offer.decision_ms <= bot.max_decision_ms


def plan(
    candidates: Sequence[Candidate],
    offers: Sequence[Offer],
    rng: random.Random,
    *,
    exploration: float = 0.2,
    same_owner: bool = False,
    owner_busy: Mapping[str, int] | None = None,
    max_per_owner: int | None = None,
    busy: Sequence[Candidate] = (),
    now: float = 0.0,
    rematch_after_s: float = 0.0,
) -> list[MatchPlan]:
    """Every match that can start now among ``candidates``, longest-waiting bots first.

    ``owner_busy`` counts the matches each owner's bots play now; with ``max_per_owner`` no
    owner's bots are in more matches than that at once.

    Two bots of one last match (``Candidate.last_match``) meet again only once the bot
    served has waited ``rematch_after_s`` (since ``idle_since``; ``now`` on the same clock),
    or when no other connected bot, idle or ``busy`` (connected, no match free now), could
    take the seat. Without this, every match that can start at once is formed, so when a
    slow bot's 40 s match ended among 2 s ones the only idle bots were the ones it had just
    released, and they were matched with each other again at once: a fast bot played the
    slow one in all 5 of its matches in 4 minutes while the others played 100 to 270, and
    neither rating nor exploration ever saw the rest of the field. Two bots alone on a
    ladder still play each other at once, every time.
    """
    free = {c.bot_id: c.free for c in candidates}
    load = dict(owner_busy or {})
    plans: list[MatchPlan] = []
    waiting = sorted(candidates, key=lambda c: (c.idle_since, c.bot_id))

    def owner_ok(owner: str) -> bool:
        return max_per_owner is None or load.get(owner, 0) < max_per_owner

    progress = True
    while progress:
        progress = False
        for anchor in waiting:
            if free[anchor.bot_id] <= 0 or not owner_ok(anchor.owner):
                continue
            rematch = now - anchor.idle_since >= rematch_after_s
            formed = _form(
                anchor,
                waiting,
                offers,
                free,
                rng,
                exploration,
                same_owner,
                owner_ok,
                connected=() if rematch else (*waiting, *busy),
            )
            if formed is None:
                continue
            plans.append(formed)
            for bot in formed.seats:
                free[bot.bot_id] -= 1
            for owner in {bot.owner for bot in formed.seats}:
                load[owner] = load.get(owner, 0) + 1
            progress = True
    return plans


def _form(
    anchor: Candidate,
    waiting: Sequence[Candidate],
    offers: Sequence[Offer],
    free: Mapping[int, int],
    rng: random.Random,
    exploration: float,
    same_owner: bool,
    owner_ok: Callable[[str], bool],
    connected: Sequence[Candidate],
) -> MatchPlan | None:
    """A match for ``anchor`` among the idle ``waiting`` bots, or None. Bots of the last
    match of a bot chosen are left out while another of the ``connected`` bots could take
    the seat (empty: rematches allowed)."""
    possible: list[tuple[Offer, list[Candidate]]] = []
    for offer in offers:
        if offer.weight <= 0 or not accepts(anchor, offer):
            continue
        others = [
            c
            for c in waiting
            if c.bot_id != anchor.bot_id
            and free[c.bot_id] > 0
            and accepts(c, offer)
            and (same_owner or c.owner != anchor.owner)
            and owner_ok(c.owner)
        ]
        if len(others) >= offer.players - 1:
            possible.append((offer, others))
    if not possible:
        return None
    offer, others = rng.choices(possible, weights=[o.weight for o, _ in possible])[0]
    chosen = [anchor]
    pool = list(others)
    while len(chosen) < offer.players and pool:
        fresh = [c for c in pool if not _met(c, chosen)]
        if not fresh:
            if any(_could_take(c, chosen, offer, same_owner) for c in connected):
                return None  # it waits for that bot rather than meet the same ones again
            fresh = pool
        if rng.random() < exploration:
            pick = rng.choice(fresh)
        else:
            pick = min(fresh, key=lambda c: (abs(c.ordinal - anchor.ordinal), c.idle_since))
        chosen.append(pick)
        # One owner per match unless allowed: each pick narrows the pool.
        pool = [
            c
            for c in pool
            if c.bot_id != pick.bot_id and (same_owner or c.owner not in {b.owner for b in chosen})
        ]
    if len(chosen) < offer.players:
        return None
    return MatchPlan(offer, _balanced(chosen, rng))


def _met(bot: Candidate, chosen: Sequence[Candidate]) -> bool:
    """Whether ``bot`` played its last match with one of ``chosen`` (or they theirs with it)."""
    return any(bot.bot_id in c.last_match or c.bot_id in bot.last_match for c in chosen)


def _could_take(
    bot: Candidate, chosen: Sequence[Candidate], offer: Offer, same_owner: bool
) -> bool:
    """Whether ``bot``, once free, could take the next seat of ``offer`` beside ``chosen``
    without a rematch."""
    return (
        all(bot.bot_id != c.bot_id for c in chosen)
        and accepts(bot, offer)
        and (same_owner or all(bot.owner != c.owner for c in chosen))
        and not _met(bot, chosen)
    )


def _seat_count(bot: Candidate, players: int, seat: int) -> int:
    counts = bot.seat_counts.get(players, ())
    return counts[seat] if seat < len(counts) else 0


def _balanced(bots: Sequence[Candidate], rng: random.Random) -> tuple[Candidate, ...]:
    """``bots`` in the seat order that keeps each one's seat counts most even.

    Counts are of the games in matches of this size only: a seat means something else in
    another size (the last of two movers is not the last of four), and counts summed over
    sizes made seats 0 and 1 fill in every size, so that a bot playing only four-player
    matches sat seats 0-3 50/48/28/4 times. Each order costs the sum, over its bots, of how
    many games each already has at the seat it gets (above its least-played seat, which is
    the same sum less a constant): each bot goes where it is most behind, so every bot moves
    first, second, ... equally often in each size, its share of the first mover's edge."""
    orders: list[tuple[Candidate, ...]] = list(itertools.permutations(bots))
    rng.shuffle(orders)
    players = len(bots)

    def load(order: tuple[Candidate, ...]) -> int:
        return sum(_seat_count(b, players, i) for i, b in enumerate(order))

    best: tuple[Candidate, ...] = min(orders, key=load)
    return best
