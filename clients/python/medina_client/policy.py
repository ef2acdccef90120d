"""Play a policy over the encoding in the arena: ``play_policy`` and ``PolicyBot``.

A policy is a function of the observation the learning environments give
(``{"observation": {"planes", "vector"}, "action_mask"}``, docs/encoding.md) returning an
action index its mask allows. ``PolicyBot`` builds exactly that observation from each
``DecisionRequest`` (``medina_client.encoding``), asks the policy and replies with the
action of the index, so a policy trained in process plays over gRPC unchanged:

>>> import asyncio
>>> from medina_client import play_policy
>>> # asyncio.run(play_policy(my_policy, "127.0.0.1:50051", token))

Needs numpy (``pip install medina-client[envs]``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeAlias

from medina.engine import Action
from medina.v1 import match_pb2

from .bot import Bot, Turn
from .encoding import (
    EncodingError,
    PolicyInput,
    action_of_index,
    checked_index,
    describe_action,
    encode,
)
from .errors import MedinaClientError
from .runner import play

__all__ = ["Policy", "PolicyBot", "PolicyError", "load_policy", "play_policy"]

#: A policy: the observation -> an action index (``encoding.checked_index``: an int, a numpy
#: integer or a 0-d numpy integer array).
Policy: TypeAlias = Callable[[PolicyInput], Any]


class PolicyError(MedinaClientError, ValueError):
    """A policy that cannot be loaded, or that chose an index its mask does not allow."""


class PolicyBot(Bot):
    """A bot playing ``policy``: every decision is the policy's index, turned into an action.

    An index outside the mask raises PolicyError (a bug in the policy: the mask is the legal
    list, minus any action the server already refused for this request).
    """

    def __init__(self, policy: Policy, name: str = "policy", version: str = "0") -> None:
        if not callable(policy):
            raise PolicyError(f"a policy is a function of the observation, not {policy!r}")
        self.policy = policy
        self.name = name
        self.version = version

    def choose(self, turn: Turn) -> Action:
        """The policy's action for this request."""
        request = turn.request
        if not request.HasField("legal"):
            raise PolicyError(
                "the request holds no legal actions, so there is no action mask: a policy "
                "bot must not ask the server to omit them"
            )
        enc = encode(request.observation, request.legal, turn.excluded)
        chosen = self.policy(enc.policy_input())
        try:
            index = checked_index(chosen)
        except EncodingError as exc:
            raise PolicyError(f"the policy's answer to request {turn.request_id}: {exc}") from None
        if not enc.mask[index]:
            raise PolicyError(
                f"the policy chose action {index} ({describe_action(index)}), which its mask "
                f"does not allow (request {turn.request_id}; {int(enc.mask.sum())} legal)"
            )
        board = request.observation.board
        return action_of_index(index, board.cols, board.rows)


async def play_policy(
    policy: Policy,
    address: str,
    token: str,
    *,
    name: str = "policy",
    version: str = "0",
    **options: Any,
) -> match_pb2.MatchResult:
    """Play one seat with ``policy`` to the end of its match; the result.

    ``options`` are ``medina_client.play``'s (credentials, reconnection), except
    ``omit_legal_actions``: the mask is the request's legal list.
    """
    if options.get("omit_legal_actions"):
        raise PolicyError("play_policy needs the legal actions: omit_legal_actions must be False")
    return await play(PolicyBot(policy, name, version), address, token, **options)


def load_policy(spec: str) -> Policy:
    """The policy ``module:function`` names (``function`` may be any callable attribute,
    dotted for one inside a class or object); PolicyError when it cannot be loaded, naming
    why (an attribute built when looked up, as the example linear policy's weights are read,
    fails here, before any match)."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise PolicyError(f"a policy is named module:function, not {spec!r}")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise PolicyError(f"cannot import the policy's module {module_name!r}: {exc}") from None
    for part in attribute.split("."):
        try:
            found = hasattr(target, part)
        except Exception as exc:  # built when looked up (a module's __getattr__), and failed
            raise PolicyError(f"cannot load the policy {spec!r}: {exc}") from None
        if not found:
            raise PolicyError(f"{module_name!r} has no {attribute!r} (for policy {spec!r})")
        target = getattr(target, part)
    if not callable(target):
        raise PolicyError(f"{spec!r} is not callable")
    policy: Policy = target
    return policy
