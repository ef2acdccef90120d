"""What every environment shares: the spaces, a seat's observation, the outcome, seeding.

An agent's observation is the encoding of what the arena would send its seat
(``medina_client.encoding``): built from the engine state by ``medina_envs.observer``
(``observer="fast"``, the default) or, with ``observer="wire"``, from the arena's own
protobuf messages (``medina.wire``, which needs the ``medina-arena`` distribution): the
same tensors, the second several times slower.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final, Literal, TypeAlias

import numpy as np
from gymnasium import spaces
from medina.engine import (
    Action,
    GameState,
    get_ruleset,
    legal_moves,
    new_game,
    observe,
    result,
)
from medina_client.encoding import (
    ACTION_COUNT,
    CELLS,
    COLS,
    PLANE_COUNT,
    ROWS,
    TEA_INDEX,
    VECTOR_HIGH,
    VECTOR_SIZE,
    Encoded,
    EncodingError,
    action_of_index,
    actions_of_indices,
    checked_index,
    describe_action,
    encode,
)

from .observer import Observer, slot_masks

__all__ = [
    "MAX_GAME_SEED",
    "Encoder",
    "IllegalIndexError",
    "ObserverName",
    "action_index",
    "action_space",
    "check_configuration",
    "checked_int",
    "checked_seat",
    "checked_seed",
    "chosen_action",
    "encoder",
    "game_seeds",
    "new_state",
    "observation_space",
    "outcome",
]

#: How an environment builds observations: from the engine state, or from the wire messages.
ObserverName: TypeAlias = Literal["fast", "wire"]
#: A function giving the encoding of ``seat``'s view of a state.
Encoder: TypeAlias = Callable[[GameState, int], Encoded]
#: Largest game seed an environment draws (setups are drawn from it, docs/rules.md 12).
MAX_GAME_SEED: Final = 2**31 - 1


class IllegalIndexError(ValueError):
    """An action index that is not legal for the agent to move (its mask holds a 0 there)."""


def observation_space() -> spaces.Dict:
    """The observation space of every agent: the encoding and the action mask."""
    return spaces.Dict(
        {
            "observation": spaces.Dict(
                {
                    "planes": spaces.Box(0, 1, (PLANE_COUNT, ROWS, COLS), np.uint8),
                    "vector": spaces.Box(0.0, VECTOR_HIGH, (VECTOR_SIZE,), np.float32),
                }
            ),
            "action_mask": spaces.Box(0, 1, (ACTION_COUNT,), np.int8),
        }
    )


def action_space() -> spaces.Discrete:
    """The flat action space (docs/encoding.md, "Actions")."""
    return spaces.Discrete(ACTION_COUNT)


def _from_the_wire(s: GameState, seat: int) -> Encoded:
    """The encoding of the messages the arena would send ``seat`` now."""
    from medina.v1 import game_pb2
    from medina.wire.shared.legal import legal_bytes
    from medina.wire.shared.observation import observation_bytes

    obs = game_pb2.Observation.FromString(observation_bytes(observe(s, seat, since=s.n_events)))
    if s.over or s.to_move != seat:
        return encode(obs)
    return encode(obs, game_pb2.LegalActions.FromString(legal_bytes(legal_moves(s))))


def encoder(name: ObserverName) -> Encoder:
    """A new encoder called ``name`` (one per environment: "fast" remembers its last
    observation); ValueError for another name."""
    if name == "fast":
        return Observer()
    if name == "wire":
        return _from_the_wire
    raise ValueError(f"observer must be 'fast' or 'wire', not {name!r}")


def action_index(action: object, who: str) -> int:
    """The index an environment's ``step`` was given (``encoding.checked_index``: an int, a
    numpy integer or a 0-d numpy integer array in 0..ACTION_COUNT-1); IllegalIndexError for
    anything else, naming ``who`` and the value."""
    try:
        return checked_index(action)
    except EncodingError as exc:
        raise IllegalIndexError(f"{who} is to move: {exc}") from None


def chosen_action(s: GameState, index: int, who: str) -> Action:
    """The engine action of ``index`` (from ``action_index``) for the seat to move;
    IllegalIndexError unless its action mask allows it."""
    g = s.rules.geometry
    moves = legal_moves(s)
    known = actions_of_indices(g.cols, g.rows)[index]
    try:
        # An index off this grid: action_of_index raises, naming the cell.
        action = known or action_of_index(index, g.cols, g.rows)
    except EncodingError as exc:
        raise IllegalIndexError(f"{who}: {exc}") from None
    if index == TEA_INDEX:
        legal = moves.tea
    else:  # the index's slot (ACTION_SLOTS) and the action's square on this grid
        legal = bool(slot_masks(moves)[index // CELLS] >> action.square & 1)
    if not legal:
        raise IllegalIndexError(
            f"action {index} ({describe_action(index)}) is not legal for {who} now; "
            f"{len(moves)} actions are (the observation's action_mask)"
        )
    return action


def outcome(s: GameState) -> tuple[float, ...]:
    """Every seat's return at the end: the mean over the other seats of +1 for each it
    ranks ahead of, -1 behind, 0 level (ranks by score, docs/rules.md 12). Zero-sum, in
    -1..1; 2 players: +1 win, -1 loss, 0 draw."""
    ranks = result(s).ranks
    n = len(ranks)
    return tuple(
        sum((r > mine) - (r < mine) for j, r in enumerate(ranks) if j != i) / (n - 1)
        for i, mine in enumerate(ranks)
    )


def checked_int(name: str, value: object, context: str = "", wanted: str = "an int") -> int:
    """``value`` as an int if it is one: a Python int or a numpy integer (normalised to int,
    so ``np.int64(5)`` means what 5 means); TypeError naming ``name``, what it must be
    (``wanted``) and the value's type for anything else (a bool, a float, a str, ...), with
    ``context`` after."""
    if not isinstance(value, int | np.integer) or isinstance(value, bool):
        raise TypeError(f"{name} must be {wanted}, not {type(value).__name__} {value!r}{context}")
    return int(value)


def checked_seed(seed: object) -> int | None:
    """The seed of an environment's ``reset(seed=...)``, every environment's one check: None,
    or an int (``checked_int``) that is not negative, as Gymnasium's own seeding wants
    (ValueError for a negative seed)."""
    if seed is None:
        return None
    value = checked_int("seed", seed, wanted="an int or None")
    if value < 0:
        raise ValueError(f"seed must not be negative, not {value}")
    return value


def game_seeds(seed: object) -> random.Random:
    """The generator of game seeds after ``reset(seed=...)`` (None: from the OS), the seed
    checked (``checked_seed``)."""
    return random.Random(checked_seed(seed))


def new_state(ruleset: str, players: int, seeds: random.Random) -> GameState:
    """A new game with the next seed of ``seeds``."""
    return new_game(ruleset, players, seeds.randint(0, MAX_GAME_SEED))


def check_configuration(ruleset: str, players: object) -> int:
    """``players`` as an int, once checked: TypeError for a count that is not an int (a
    str, a float, a bool; a numpy integer is one), the engine's typed error for an unknown
    ruleset or a count it does not support."""
    count = checked_int("players", players, f" (for ruleset {ruleset!r})")
    get_ruleset(ruleset, count)
    return count


def checked_seat(seat: object, players: int) -> int | None:
    """A learning seat: None (a random seat each episode) or an int (``checked_int``) in
    0..players-1; TypeError or ValueError for anything else."""
    if seat is None:
        return None
    value = checked_int("seat", seat, wanted="an int or None")
    if not 0 <= value < players:
        raise ValueError(f"seat {value} is not a seat of a {players}-player game")
    return value
