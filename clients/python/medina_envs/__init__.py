"""Medina for agents that learn: the standard environment APIs over the engine in process.

The observation every environment gives an agent is the fixed encoding of what the arena
would send its seat (docs/encoding.md, ``medina_client.encoding``); see docs/envs.md.

* ``aec_env(ruleset, players)``: PettingZoo AEC, one agent per seat (``medina_envs.aec``).
* ``gymnasium.make("medina_envs/Medina-v0", ...)`` or ``MedinaEnv``: Gymnasium, one learning
  seat against opponents (``medina_envs.gym_env``); ``vector_env(n, ...)`` steps n at once.
"""

import gymnasium

from .aec import MedinaAECEnv, aec_env
from .core import IllegalIndexError
from .gym_env import ENV_ID, MedinaEnv, vector_env

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="medina_envs.gym_env:MedinaEnv")

__all__ = ["ENV_ID", "IllegalIndexError", "MedinaAECEnv", "MedinaEnv", "aec_env", "vector_env"]
