"""Medina as a Gymnasium environment: one learning seat against opponents the env plays.

>>> import gymnasium, medina_envs
>>> env = gymnasium.make("medina_envs/Medina-v0", players=2, opponents="greedy")
>>> obs, info = env.reset(seed=3)
>>> sorted(obs)
['action_mask', 'observation']

One step is one decision of the learning seat; the opponents' decisions in between are
played inside ``step`` (``medina_envs.opponents``: the SDK's strategies by name, or any
policy over the encoding). The observation is the encoding of what the arena would send the
learning seat (docs/encoding.md); the reward is 0 until the game ends, then the seat's
outcome (``core.outcome``: zero-sum, -1..1). An index the mask does not allow ends the
episode as a loss (reward -1, ``info["illegal"]`` says why; the next ``step`` wants a
``reset``) — or raises IllegalIndexError with ``illegal="raise"``. An action outside the
action space (not an integer index in 0..2574) raises IllegalIndexError either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, SupportsFloat

import gymnasium
import numpy as np
import numpy.typing as npt
from medina.engine import GameState, apply_action, new_game
from medina_client.encoding import PolicyInput

from . import core, render
from .opponents import Opponent, OpponentSpec, opponent

__all__ = ["ENV_ID", "MedinaEnv", "vector_env"]

#: The id ``gymnasium.make`` knows this environment by (registered by ``import medina_envs``).
ENV_ID = "medina_envs/Medina-v0"


class MedinaEnv(gymnasium.Env[PolicyInput, np.int64]):
    """A learning seat (``seat``; None: a random seat each episode) in a ``players``-player
    game of ``ruleset`` against ``opponents`` (one spec for all, or one per other seat in
    seat order)."""

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        ruleset: str = "medina-v2",
        players: int = 2,
        seat: int | np.integer[Any] | None = 0,
        opponents: OpponentSpec | Sequence[OpponentSpec] = "random",
        render_mode: str | None = None,
        observer: core.ObserverName = "fast",
        illegal: Literal["lose", "raise"] = "lose",
    ) -> None:
        players = core.check_configuration(ruleset, players)
        seat = core.checked_seat(seat, players)
        specs = (
            list(opponents)
            if isinstance(opponents, Sequence) and not isinstance(opponents, str)
            else [opponents] * (players - 1)
        )
        if len(specs) != players - 1:
            raise ValueError(f"{len(specs)} opponents given for {players - 1} other seats")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"not {render_mode!r}"
            )
        if illegal not in ("lose", "raise"):
            raise ValueError(f"illegal must be 'lose' or 'raise', not {illegal!r}")
        for spec in specs:
            opponent(spec, 0)  # a bad name fails here, not at the first reset
        self.ruleset, self.players, self.fixed_seat = ruleset, players, seat
        self.specs = specs
        self.render_mode = render_mode
        self.illegal = illegal
        self._encode = core.encoder(observer)
        self.observation_space = core.observation_space()
        self.action_space = core.action_space()
        self.seat = seat if seat is not None else 0
        self.game: GameState | None = None
        #: Whether the episode ended on an index the mask did not allow (``illegal="lose"``).
        self._lost = False
        self._opponents: dict[int, Opponent] = {}

    @property
    def state_of_game(self) -> GameState:
        """The engine state (the whole game; for the trainer's eyes, not the agent's)."""
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[PolicyInput, dict[str, Any]]:
        """A new game; the opponents play until the learning seat's first decision. ``seed``
        as every environment takes it (``core.checked_seed``)."""
        super().reset(seed=core.checked_seed(seed))
        rng = self.np_random
        self.seat = (
            self.fixed_seat if self.fixed_seat is not None else int(rng.integers(self.players))
        )
        others = [p for p in range(self.players) if p != self.seat]
        self._opponents = {
            p: opponent(spec, int(rng.integers(2**31)))
            for p, spec in zip(others, self.specs, strict=True)
        }
        self.game = new_game(self.ruleset, self.players, int(rng.integers(core.MAX_GAME_SEED)))
        self._lost = False
        self._play_opponents()
        self._show()
        return self._observe(), {"seat": self.seat}

    def step(
        self, action: np.integer[Any] | int | npt.NDArray[np.integer[Any]]
    ) -> tuple[PolicyInput, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play the learning seat's ``action``, then the opponents until its next decision."""
        s = self.state_of_game
        if s.over or self._lost:
            raise RuntimeError("the episode is over: call reset()")
        who = f"the learning seat {self.seat}"
        index = core.action_index(action, who)  # off the action space: raises in either mode
        try:
            chosen = core.chosen_action(s, index, who)
        except core.IllegalIndexError as exc:
            if self.illegal == "raise":
                raise
            self._lost = True  # the episode ended here: the game goes no further
            self._show()
            return self._observe(), -1.0, True, False, {"seat": self.seat, "illegal": str(exc)}
        self.game = apply_action(s, chosen)
        self._play_opponents()
        self._show()
        s = self.state_of_game
        reward = core.outcome(s)[self.seat] if s.over else 0.0
        return self._observe(), reward, s.over, False, {"seat": self.seat}

    def _play_opponents(self) -> None:
        s = self.state_of_game
        while not s.over and s.to_move != self.seat:
            s = apply_action(s, self._opponents[s.to_move](s))
        self.game = s

    def _observe(self) -> PolicyInput:
        return self._encode(self.state_of_game, self.seat).policy_input()

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The learning seat's legal actions as booleans (for maskable learners)."""
        return self._encode(self.state_of_game, self.seat).mask.astype(bool)

    def _show(self) -> None:
        # Gymnasium's "human" mode renders as the episode goes, without render() calls.
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        """The board as ``render_mode`` says (see ``medina_envs.aec``); in "human" mode
        ``reset`` and ``step`` print it too."""
        if self.render_mode == "human":
            print(render.ansi(self.state_of_game), end="")
            return None
        if self.render_mode == "ansi":
            return render.ansi(self.state_of_game)
        if self.render_mode == "rgb_array":
            return render.rgb(self.state_of_game)
        return None


def vector_env(
    num_envs: int, mode: Literal["sync", "async"] = "sync", **kwargs: Any
) -> gymnasium.vector.VectorEnv[Any, Any, Any]:
    """``num_envs`` copies of ``MedinaEnv(**kwargs)`` stepped together (``gymnasium.vector``:
    "sync" in this process, "async" one process each).

    An episode that ends restarts in the same step (``AutoresetMode.SAME_STEP``): the
    observation returned is the new game's, so every mask in a batch has a legal action;
    the last observation of the finished game is in ``info["final_obs"]``.
    """
    return gymnasium.make_vec(
        ENV_ID,
        num_envs=num_envs,
        vectorization_mode=mode,
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP},
        **kwargs,
    )
