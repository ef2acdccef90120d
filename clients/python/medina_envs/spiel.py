"""Medina as an OpenSpiel game (``pyspiel``), registered as ``python_medina``.

>>> import pyspiel, medina_envs.spiel
>>> game = pyspiel.load_game("python_medina", {"ruleset": "medina-v2", "players": 3})
>>> state = game.new_initial_state()
>>> state.is_chance_node()  # medina-v2 draws the well, then the start merchant
True

Players are the seats; an action is an index of the flat action space (docs/encoding.md), a
turn of several placements being several decisions of the same player. medina-v2's setup is
two chance nodes (the well, then the start merchant, each uniform over the inner city as
the arena draws them; the outcome is the square); the 1st editions have none (their start
merchant is the starting player's decision). Returns are ``core.outcome`` at the end
(zero-sum, -1..1).

Imperfect information: an observation is the encoding of what the arena sends the seat —
its own supply, not the others'. Every action is public, so an information state (perfect
recall) is the history. The engine state is immutable, so cloning a state (which OpenSpiel
does through ``copy.deepcopy`` of its attributes) shares it.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import pyspiel
from medina.engine import (
    Action,
    GameState,
    IllegalActionError,
    apply_action,
    describe_supply,
    get_ruleset,
    is_legal,
    new_game,
    render,
    square_name,
)
from medina.engine.geometry import squares
from medina.engine.turn import explain
from medina_client.encoding import (
    ACTION_COUNT,
    CELLS,
    COLS,
    PLANE_COUNT,
    ROWS,
    TEA_INDEX,
    VECTOR_SIZE,
    action_of_index,
    actions_of_indices,
)

from . import core
from .observer import encode_state, mask_of

__all__ = ["GAME_NAME", "FactoredObserver", "MedinaGame", "MedinaObserver", "MedinaState", "load"]

GAME_NAME: Final = "python_medina"
#: Length of the observation tensor: the planes, flattened, then the vector.
OBSERVATION_SIZE: Final = PLANE_COUNT * CELLS + VECTOR_SIZE
_DEFAULTS: Final = {"ruleset": "medina-v2", "players": 4}

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Medina (Python, medina_envs)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


def _max_game_length(ruleset: str, players: int) -> int:
    """An upper bound on the moves of a game: every piece of every seat, the start merchant,
    every tea break (at most one per tea tile a purple claim hands out) and the setup."""
    c = get_ruleset(ruleset, players).components
    pieces = 4 * c.buildings + c.rooftops + c.neutral + c.blocking + c.stables
    return players * (pieces + c.merchants + c.walls) + 1 + 4 * players + 2


class MedinaGame(pyspiel.Game):  # type: ignore[misc]
    """A Medina game under one ruleset and player count (the game's parameters)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        given = {**_DEFAULTS, **(params or {})}
        ruleset = str(given["ruleset"])
        players = core.check_configuration(ruleset, given["players"])
        self.ruleset, self.players = ruleset, players
        self.setup_chance = get_ruleset(ruleset, players).well
        info = pyspiel.GameInfo(
            num_distinct_actions=ACTION_COUNT,
            max_chance_outcomes=CELLS,
            num_players=players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=_max_game_length(ruleset, players),
        )
        super().__init__(_GAME_TYPE, info, {"ruleset": ruleset, "players": players})

    def new_initial_state(self) -> MedinaState:
        """The game before its setup (medina-v2) or at its first decision."""
        return MedinaState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> MedinaObserver | FactoredObserver:
        """The observation tensor and string of a seat, or (perfect recall) its history.

        OpenSpiel's default kind (public facts and the seat's own private ones) is the seat's
        view: the encoding and the board with its supply. The history is public. The other
        kinds — the public facts alone, a seat's private facts alone, every seat's — are
        ``FactoredObserver`` strings (no tensor), each holding only what its kind allows.
        """
        if params:
            raise ValueError(f"the Medina observer takes no parameters, got {params}")
        if iig_obs_type is None:
            return MedinaObserver(perfect_recall=False)
        public = bool(iig_obs_type.public_info)
        if iig_obs_type.perfect_recall and public:
            return MedinaObserver(perfect_recall=True)
        private = iig_obs_type.private_info
        if public and private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
            return MedinaObserver(perfect_recall=False)
        if iig_obs_type.perfect_recall:  # the history is public: a private part has nothing
            return FactoredObserver(public=False, private=pyspiel.PrivateInfoType.NONE)
        return FactoredObserver(public=public, private=private)


class _Shared:
    """An engine state held by a pyspiel state: deep copies share it (it is immutable)."""

    __slots__ = ("game",)

    def __init__(self, game: GameState | None) -> None:
        self.game = game

    def __deepcopy__(self, memo: dict[int, Any]) -> _Shared:
        return _Shared(self.game)


class MedinaState(pyspiel.State):  # type: ignore[misc]
    """One position; before medina-v2's setup is drawn, a chance node."""

    def __init__(self, game: MedinaGame) -> None:
        super().__init__(game)
        self.ruleset, self.players = game.ruleset, game.players
        self.well = -1  # the drawn well square while the start merchant is being drawn
        self.held = _Shared(
            None if game.setup_chance else new_game(game.ruleset, game.players, seed=0)
        )

    @property
    def engine_state(self) -> GameState | None:
        """The engine state, None while the setup is being drawn."""
        return self.held.game

    def current_player(self) -> int:
        """The seat to decide, CHANCE during the setup, TERMINAL at the end."""
        s = self.held.game
        if s is None:
            return int(pyspiel.PlayerId.CHANCE)
        if s.over:
            return int(pyspiel.PlayerId.TERMINAL)
        return s.to_move

    def _legal_actions(self, player: int) -> list[int]:
        s = self.held.game
        if s is None or s.over or player != s.to_move:
            return []
        return [int(i) for i in np.flatnonzero(mask_of(s, player))]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The squares the well (then the start merchant) may take, equally likely."""
        g = get_ruleset(self.ruleset, self.players).geometry
        inner = [sq for sq in squares(g.inner) if sq != self.well]
        return [(sq, 1.0 / len(inner)) for sq in inner]

    def _apply_action(self, action: int) -> None:
        s = self.held.game
        if s is None:
            if all(action != sq for sq, _ in self.chance_outcomes()):
                what = "well" if self.well < 0 else "start merchant"
                raise ValueError(
                    f"{action} is not a chance outcome here: the {what} goes on a square of the "
                    "inner city (chance_outcomes())"
                    + ("" if self.well < 0 else f" other than the well's ({self.well})")
                )
            if self.well < 0:
                self.well = int(action)
            else:
                self.held = _Shared(
                    new_game(self.ruleset, self.players, 0, well=self.well, start_merchant=action)
                )
            return
        self.held = _Shared(apply_action(s, _listed_action(s, action)))

    def _action_to_string(self, player: int, action: int) -> str:
        g = get_ruleset(self.ruleset, self.players).geometry
        if player == pyspiel.PlayerId.CHANCE:
            what = "well" if self.well < 0 else "start merchant"
            return f"{what} at {square_name(g, action)}"
        if action == TEA_INDEX:
            return "tea"
        a = action_of_index(action, g.cols, g.rows)
        piece = a.kind.name.lower().replace("_", " ")
        if a.colour >= 0:
            piece = f"{('grey', 'purple', 'brown', 'orange')[a.colour]} {piece}"
        return f"{piece} at {square_name(g, a.square)}"

    def is_terminal(self) -> bool:
        """Whether nobody can place any more."""
        s = self.held.game
        return s is not None and s.over

    def returns(self) -> list[float]:
        """Every seat's outcome at the end, 0 before."""
        s = self.held.game
        if s is None or not s.over:
            return [0.0] * self.players
        return list(core.outcome(s))

    def __str__(self) -> str:
        s = self.held.game
        if s is None:
            return f"setup: drawing the {'well' if self.well < 0 else 'start merchant'}"
        return render(s)


def _listed_action(s: GameState, action: int) -> Action:
    """The engine action of ``action`` if legal_actions() lists it, else IllegalActionError.

    OpenSpiel wants one action id per move, so an id off the list is refused even where the
    engine would take its action (a palace's rooftop is listed on one of its building
    squares; the engine, like the arena, takes any of them). The engine names the rule an
    action breaks where there is one ("illegal" otherwise, "bad-action" off the space).
    """
    who = f"player {s.to_move}"
    try:
        index = core.action_index(action, who)
    except core.IllegalIndexError as exc:
        raise IllegalActionError("bad-action", f"{exc} (the action space)") from None
    try:
        return core.chosen_action(s, index, who)
    except core.IllegalIndexError as exc:
        refused = exc
    g = s.rules.geometry
    known = actions_of_indices(g.cols, g.rows)[index]
    if known is not None and not is_legal(s, known):
        raise explain(s, known)  # the engine's words, naming the rule the action breaks
    raise IllegalActionError("illegal", f"{refused}: each move has one id, in legal_actions()")


class MedinaObserver:
    """A seat's view (the encoding of what the arena sends it), or with perfect recall its
    information state: the public history (every action is public)."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        size = 0 if perfect_recall else OBSERVATION_SIZE
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        if not perfect_recall:
            self.dict = {
                "planes": self.tensor[: PLANE_COUNT * CELLS].reshape(PLANE_COUNT, ROWS, COLS),
                "vector": self.tensor[PLANE_COUNT * CELLS :],
            }

    def set_from(self, state: MedinaState, player: int) -> None:
        """The tensor of ``player``'s view (all 0 during the setup)."""
        if self.perfect_recall:
            return
        s = state.engine_state
        if s is None:
            self.tensor.fill(0)
            return
        enc = encode_state(s, player)
        self.dict["planes"][:] = enc.planes
        self.dict["vector"][:] = enc.vector

    def string_from(self, state: MedinaState, player: int) -> str:
        """The history (perfect recall), or the public board with the seat's own view: its
        turn and supply, and any other seat's supply shown (as the tensor holds it)."""
        if self.perfect_recall:
            return f"seat {player}, history [{' '.join(map(str, state.history()))}]"
        s = state.engine_state
        if s is None:
            return str(state)
        supply = describe_supply(s.supply_of(player))
        # Another seat's supply shown (medina-v1-2p) is in the tensor: the string holds it too.
        shown = _shown_supplies(s, but=player)
        return "\n".join([render(s), f"seat {player}: turn {s.turn}, supply {supply}", *shown])


def _shown_supplies(s: GameState, but: int = -1) -> list[str]:
    """A line for each seat's supply medina-v1-2p's running-low rule has shown (public),
    but ``but``'s."""
    return [
        f"seat {k}: supply {describe_supply(s.supply_of(k))} (shown)"
        for k in range(s.players)
        if (s.revealed >> k) & 1 and k != but
    ]


class FactoredObserver:
    """A part of a seat's view as a string (OpenSpiel's factored observations; no tensor):
    the public facts (the board, the turn, and in medina-v1-2p the supplies shown after
    running low) and/or the private ones (the seat's own supply, or with ``ALL_PLAYERS``
    every seat's)."""

    def __init__(self, public: bool, private: Any) -> None:
        self.public, self.private = public, private
        self.tensor = None
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: MedinaState, player: int) -> None:
        """Nothing: these kinds have no tensor."""

    def string_from(self, state: MedinaState, player: int) -> str:
        """The public part, then the private part, each only if the kind includes it."""
        s = state.engine_state
        parts = []
        if s is None:  # the setup: drawn in public
            return str(state) if self.public else ""
        if self.public:
            parts.append(f"{render(s)}\nturn {s.turn}")
            parts += _shown_supplies(s)
        if self.private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
            parts.append(f"seat {player}: supply {describe_supply(s.supply_of(player))}")
        elif self.private == pyspiel.PrivateInfoType.ALL_PLAYERS:
            parts += [
                f"seat {k}: supply {describe_supply(s.supply_of(k))}" for k in range(s.players)
            ]
        return "\n".join(parts)


def load(ruleset: str = "medina-v2", players: int = 4) -> Any:
    """``pyspiel.load_game`` of Medina under ``ruleset`` with ``players`` seats."""
    return pyspiel.load_game(GAME_NAME, {"ruleset": ruleset, "players": players})


pyspiel.register_game(_GAME_TYPE, MedinaGame)
