"""Medina for agents that learn: the standard environment APIs over the engine in process.

The observation every environment gives an agent is the fixed encoding of what the arena
would send its seat (docs/encoding.md, ``medina_client.encoding``); see docs/envs.md.

* ``aec_env(ruleset, players)``: PettingZoo AEC, one agent per seat (``medina_envs.aec``).
"""

from .aec import MedinaAECEnv, aec_env
from .core import IllegalIndexError

__all__ = ["IllegalIndexError", "MedinaAECEnv", "aec_env"]
