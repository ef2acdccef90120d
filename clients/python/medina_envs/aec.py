"""Medina as a PettingZoo AEC environment: one agent per seat, one step per decision.

>>> from medina_envs import aec_env
>>> env = aec_env("medina-v2", 3)
>>> env.reset(seed=7)
>>> env.agent_selection
'seat_0'

Agents are ``seat_0`` .. ``seat_{n-1}``. A turn of several placements is several steps by
the same agent; passes are the engine's (an agent with no legal placement is not asked).
Each agent's observation is the encoding of what the arena would send its seat
(docs/encoding.md): its own supply, never the others'; the ``action_mask`` is its legal
actions when it is to move and all 0 otherwise. Rewards are 0 until the game ends, then
``core.outcome`` (zero-sum, -1..1). ``reset(seed=S)`` makes the setup and everything after it
reproducible; ``render_mode`` is ``"human"`` (prints the ASCII board), ``"ansi"`` (returns it)
or ``"rgb_array"``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from medina.engine import GameState, Phase, apply_action
from medina_client.encoding import PolicyInput
from pettingzoo import AECEnv

from . import core, render

__all__ = ["MedinaAECEnv", "aec_env"]

# Read once: ``GameState.over`` reads an enum member from its class, 15 times a global's
# cost in Python 3.11, at every step.
_OVER = Phase.OVER


class MedinaAECEnv(AECEnv[str, PolicyInput, int]):
    """A Medina game for ``players`` agents under ``ruleset``."""

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "medina_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        ruleset: str = "medina-v2",
        players: int = 4,
        render_mode: str | None = None,
        observer: core.ObserverName = "fast",
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        players = core.check_configuration(ruleset, players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"not {render_mode!r}"
            )
        self.ruleset = ruleset
        self.players = players
        self.render_mode = render_mode
        self._encode = core.encoder(observer)
        self.possible_agents = [f"seat_{seat}" for seat in range(players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        obs_space, act_space = core.observation_space(), core.action_space()
        self.observation_spaces: dict[str, spaces.Space[Any]] = dict.fromkeys(
            self.possible_agents, obs_space
        )
        self.action_spaces: dict[str, spaces.Space[Any]] = dict.fromkeys(
            self.possible_agents, act_space
        )
        self._seeds: random.Random | None = None
        self.game: GameState | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The encoding and the mask (the same for every agent)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The flat action space (the same for every agent)."""
        return self.action_spaces[agent]

    @property
    def state_of_game(self) -> GameState:
        """The engine state (the whole game; for the trainer's eyes, not an agent's)."""
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; with ``seed`` (``core.checked_seed``) the setup and the game
        seeds after it repeat."""
        if seed is not None or self._seeds is None:
            self._seeds = core.game_seeds(seed)
        self.game = core.new_state(self.ruleset, self.players, self._seeds)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.to_move]
        self._show()

    def observe(self, agent: str) -> PolicyInput:
        """What the arena would send ``agent``'s seat now, encoded."""
        s = self.game
        if s is None:
            s = self.state_of_game  # raises: no game yet
        return self._encode(s, self._seat[agent]).policy_input()

    def last(
        self, observe: bool = True
    ) -> tuple[PolicyInput | None, float, bool, bool, dict[str, Any]]:
        """The observation, reward, termination, truncation and info of the agent to move."""
        _ = self.state_of_game  # raises: no game yet
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped: call reset()")
        return super().last(observe)

    def step(self, action: int | None) -> None:
        """Play ``action`` (an index its mask allows) for the agent to move."""
        s = self.game
        if s is None:
            s = self.state_of_game  # raises: no game yet
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)  # type: ignore[arg-type]  # it takes None
            return
        index = core.action_index(action, agent)
        s = self.game = apply_action(s, core.chosen_action(s, index, agent))
        self._cumulative_rewards[agent] = 0.0
        if s.phase is _OVER:  # the only rewards: every step before leaves them all 0
            self.rewards = dict(zip(self.agents, core.outcome(s), strict=True))
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
        else:
            self.agent_selection = self.possible_agents[s.to_move]
        self._show()

    def _show(self) -> None:
        # "human" mode renders as the game goes (PettingZoo's and Gymnasium's convention).
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        """The board as ``render_mode`` says: printed ("human"), as text ("ansi") or as an
        image ("rgb_array"); None without a mode."""
        if self.render_mode == "human":
            print(render.ansi(self.state_of_game), end="")
            return None
        if self.render_mode == "ansi":
            return render.ansi(self.state_of_game)
        if self.render_mode == "rgb_array":
            return render.rgb(self.state_of_game)
        return None

    def close(self) -> None:
        """Nothing to release."""


def aec_env(
    ruleset: str = "medina-v2",
    players: int = 4,
    render_mode: str | None = None,
    observer: core.ObserverName = "fast",
) -> MedinaAECEnv:
    """A new AEC environment (see ``MedinaAECEnv``)."""
    return MedinaAECEnv(ruleset, players, render_mode, observer)
