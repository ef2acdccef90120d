"""Which bots play which game in which seat: round robin and gauntlet groups, paired setups
with a Latin-square seat rotation. Pure: the same file gives the same schedule."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .config import MAX_GROUPS, TournamentConfig, Variant


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game: its number in the tournament (play order), the block it belongs to (one
    setup seed over every seat rotation of one group of bots), and who sits where."""

    number: int
    block: int
    variant: Variant
    seed: int
    rotation: int
    seats: tuple[str, ...]


def group_count(cfg: TournamentConfig, variant: Variant) -> int:
    """How many distinct groups of bots can meet in ``variant``."""
    k = variant.players
    if cfg.format == "gauntlet":
        return len(cfg.candidates) * math.comb(len(cfg.bots) - len(cfg.candidates), k - 1)
    return math.comb(len(cfg.bots), k)


def groups(cfg: TournamentConfig, variant: Variant) -> list[tuple[str, ...]]:
    """Every group of bots that meets in ``variant`` (bot order as in the file). A gauntlet's
    groups alternate between the candidates (each group of the field meets the first
    candidate, then the second, ...), so any prefix of the list is fair to them."""
    k = variant.players
    names = [b.name for b in cfg.bots]
    if cfg.format == "gauntlet":
        rest = [n for n in names if n not in cfg.candidates]
        return [(c, *g) for g in itertools.combinations(rest, k - 1) for c in cfg.candidates]
    return list(itertools.combinations(names, k))


def coverage(cfg: TournamentConfig) -> list[str]:
    """A line per variant whose games do not play every group of bots equally often (round
    robin and gauntlet; an SPRT has one pairing): how many groups meet and how many games
    would play each alike. Empty when every group meets equally."""
    if cfg.format == "sprt":
        return []
    notes = []
    for variant in cfg.variants:
        count = group_count(cfg, variant)
        size = variant.players if cfg.paired else 1
        blocks = cfg.games // size
        if blocks % count == 0:
            continue
        what = f"{variant.ruleset} {variant.players}p"
        kind = "groups" if variant.players > 2 else "pairings"
        whole = count * size
        if blocks < count:
            notes.append(
                f"{what}: {cfg.games} games meet {blocks} of the {count} {kind} of bots; "
                f"a multiple of {whole} games plays every one equally often"
            )
        else:
            notes.append(
                f"{what}: {cfg.games} games meet each of the {count} {kind} of bots "
                f"{blocks // count} or {blocks // count + 1} times; a multiple of {whole} "
                "games plays every one equally often"
            )
    return notes


def _choose(
    cfg: TournamentConfig, variant: Variant, blocks: int, seed: int
) -> Iterator[tuple[str, ...]]:
    """``blocks`` groups: every group once per whole round while whole rounds fit; the rest
    (or all, when there are more groups than blocks) a sample that keeps the numbers of games
    as even as it can -- the candidates' first in a gauntlet, then the bots' -- the
    least-played first, ties drawn from ``seed``, no group twice."""
    count = group_count(cfg, variant)
    played: dict[str, int] = {b.name: 0 for b in cfg.bots}
    rounds = blocks // count if count <= MAX_GROUPS else 0
    if rounds:
        every = groups(cfg, variant)
        for _ in range(rounds):
            for g in every:
                for n in g:
                    played[n] += 1
                yield g
    rest = blocks - rounds * count
    if rest == 0:
        return
    rng = random.Random(seed)
    order = {b.name: i for i, b in enumerate(cfg.bots)}
    gauntlet = cfg.format == "gauntlet"

    def load(g: tuple[str, ...]) -> tuple[int, int]:
        # a gauntlet's group is its candidate and a group of the field
        return (
            (played[g[0]], sum(played[n] for n in g[1:]))
            if gauntlet
            else (0, sum(played[n] for n in g))
        )

    pool = groups(cfg, variant) if count <= MAX_GROUPS else []
    for _ in range(rest):
        if pool:
            rng.shuffle(pool)
            best = min(pool, key=load)
            pool.remove(best)
        else:  # too many groups to list: take the least-played bots
            k = variant.players

            def least(names: list[str], n: int) -> list[str]:
                return sorted(names, key=lambda x: (played[x], rng.random()))[:n]

            if gauntlet:
                field = [b.name for b in cfg.bots if b.name not in cfg.candidates]
                best = (
                    *least(list(cfg.candidates), 1),
                    *sorted(least(field, k - 1), key=order.__getitem__),
                )
            else:
                best = tuple(sorted(least(list(played), k), key=order.__getitem__))
        for n in best:
            played[n] += 1
        yield best


def rotation(group: Sequence[str], r: int) -> tuple[str, ...]:
    """Seat order of rotation ``r``: seat i gets ``group[(i + r) % k]``. Over the ``k``
    rotations every bot sits in every seat once (a Latin square)."""
    k = len(group)
    return tuple(group[(i + r) % k] for i in range(k))


def build_sprt(cfg: TournamentConfig) -> list[ScheduledGame]:
    """An SPRT's schedule: pair *p* plays setup seed ``cfg.seed + p`` over every seat
    rotation -- for 2 players, of the candidate and the baseline (one block); for 3-4, of
    the candidate with a group of the field, then of the baseline with the same group in
    the same seats (two blocks). The field's groups come in turn."""
    variant = cfg.variants[0]
    k = variant.players
    candidate, baseline = cfg.candidates[0], cfg.baseline
    field = [b.name for b in cfg.bots if b.name not in (candidate, baseline)]
    field_groups = list(itertools.islice(itertools.combinations(field, k - 1), MAX_GROUPS))
    pair_games = k * cfg.pair_blocks
    out: list[ScheduledGame] = []
    for p in range(cfg.games // pair_games):
        seed = cfg.seed + p
        if k == 2:
            groups_of_pair: list[tuple[str, ...]] = [(candidate, baseline)]
        else:
            others = field_groups[p % len(field_groups)]
            groups_of_pair = [(candidate, *others), (baseline, *others)]
        for i, group in enumerate(groups_of_pair):
            block = p * cfg.pair_blocks + i
            for r in range(k):
                out.append(ScheduledGame(len(out), block, variant, seed, r, rotation(group, r)))
    return out


def build(cfg: TournamentConfig) -> list[ScheduledGame]:
    """The whole schedule: ``cfg.games`` games per variant, numbered in play order.

    Blocks of the variants are interleaved so an early stop (``--until-separated``) has
    played every variant; block ``b`` uses setup seed ``cfg.seed + b``. An SPRT has a
    schedule of its own (``build_sprt``).
    """
    if cfg.format == "sprt":
        return build_sprt(cfg)
    per_variant: list[list[tuple[int, tuple[str, ...], int]]] = []
    for vi, variant in enumerate(cfg.variants):
        k = variant.players
        size = k if cfg.paired else 1
        n_blocks = cfg.games // size
        chosen = list(_choose(cfg, variant, n_blocks, cfg.seed * 1_000_003 + vi))
        per_variant.append([(vi, g, size) for g in chosen])
    out: list[ScheduledGame] = []
    block = 0
    longest = max(len(v) for v in per_variant)
    seated: list[Counter[tuple[str, int]]] = [Counter() for _ in cfg.variants]
    for i in range(longest):
        for blocks in per_variant:
            if i >= len(blocks):
                continue
            vi, group, size = blocks[i]
            variant = cfg.variants[vi]
            seed = cfg.seed + block
            for r in range(size):
                rot = r if cfg.paired else _evenest(group, seated[vi], i)
                out.append(ScheduledGame(len(out), block, variant, seed, rot, rotation(group, rot)))
            block += 1
    return out


def _evenest(group: Sequence[str], seated: Counter[tuple[str, int]], i: int) -> int:
    """An unpaired game's rotation: the one that seats ``group`` where its bots have sat
    least so far (``seated``: games per bot and seat, updated), ties to game ``i``'s turn.
    Rotating by ``i`` alone seats a bot in the same seats round after round whenever the
    number of groups shares a factor with the player count (4 bots in 2-player games: the
    first bot first in two of its three games, every round)."""
    k = len(group)

    def worn(r: int) -> tuple[int, int]:
        sat = sum(seated[name, seat] for seat, name in enumerate(rotation(group, r)))
        return sat, (r - i) % k

    best = min(range(k), key=worn)
    for seat, name in enumerate(rotation(group, best)):
        seated[name, seat] += 1
    return best
