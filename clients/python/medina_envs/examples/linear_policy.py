"""A small linear policy over the encoding, in numpy: the example ``train_policy`` trains it.

Each action's logit is a linear function of the planes at its square and their sums over
the 3 x 3 squares around it, with one weight vector per placement slot (building colours,
rooftops, stable, merchant, wall, ...), plus a bias per slot; the tea break has a bias of
its own. 11 x 50 weights and 12 biases: it can learn to roof big palaces, to build next to
its own, to wall them in. It reads only the observation an environment (or the arena, through
``medina_client.play_policy``) gives, so the same object trains in process and plays over gRPC:

    python -m medina_client --policy medina_envs.examples.linear_policy:policy

``policy`` is the policy with the weights of ``$MEDINA_POLICY_WEIGHTS`` (an ``.npz`` that
``save`` wrote), else of ``linear_policy.npz`` beside this file. They are read when ``policy``
is first looked up (``from medina_envs.examples.linear_policy import policy``, or
``--policy`` loading it before it connects), not at the first decision of a match: a wrong
path or file raises ``PolicyWeightsError`` naming the variable and the path then. Importing
the module for ``LinearPolicy`` (as ``train_policy`` does) reads nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
from medina_client.encoding import ACTION_SLOTS, CELLS, PLANE_COUNT, TEA_INDEX, PolicyInput

__all__ = [
    "FEATURES",
    "WEIGHTS",
    "WEIGHTS_VARIABLE",
    "LinearPolicy",
    "PolicyWeightsError",
    "policy",
]

#: Features per square: the planes there, and their sums over the 3 x 3 squares around it.
FEATURES: Final = 2 * PLANE_COUNT
SLOTS: Final = len(ACTION_SLOTS)
#: The weights shipped with the example (trained by ``train_policy`` with its defaults).
WEIGHTS: Final = Path(__file__).with_name("linear_policy.npz")
#: The environment variable naming other weights for ``policy``.
WEIGHTS_VARIABLE: Final = "MEDINA_POLICY_WEIGHTS"
Floats = npt.NDArray[np.float64]


def features(planes: npt.NDArray[np.uint8]) -> Floats:
    """``(FEATURES, 234)``: every square's planes, then their 3 x 3 neighbourhood sums."""
    x = planes.astype(np.float64)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    rows, cols = x.shape[1], x.shape[2]
    around = sum(padded[:, dr : dr + rows, dc : dc + cols] for dr in range(3) for dc in range(3))
    return np.concatenate([x, around]).reshape(FEATURES, CELLS)


class LinearPolicy:
    """Logits ``W @ features + b`` per slot and square; ``tea`` the tea break's logit."""

    def __init__(self, weights: Floats | None = None, bias: Floats | None = None) -> None:
        self.weights = np.zeros((SLOTS, FEATURES)) if weights is None else weights
        self.bias = np.zeros(SLOTS + 1) if bias is None else bias
        if self.weights.shape != (SLOTS, FEATURES) or self.bias.shape != (SLOTS + 1,):
            raise ValueError(
                f"weights {self.weights.shape} and bias {self.bias.shape}: expected "
                f"{(SLOTS, FEATURES)} and {(SLOTS + 1,)}"
            )

    def logits(self, phi: Floats, mask: npt.NDArray[np.int8]) -> Floats:
        """The logits of every action from the features (``-inf`` where the mask says no)."""
        flat = np.empty(TEA_INDEX + 1)
        flat[:TEA_INDEX] = (self.weights @ phi + self.bias[:SLOTS, None]).reshape(-1)
        flat[TEA_INDEX] = self.bias[SLOTS]
        flat[mask == 0] = -np.inf
        return flat

    def distribution(self, phi: Floats, mask: npt.NDArray[np.int8]) -> Floats:
        """The softmax over the legal actions."""
        logits = self.logits(phi, mask)
        p: Floats = np.exp(logits - logits.max())
        p /= p.sum()
        return p

    def probabilities(self, obs: PolicyInput) -> tuple[Floats, Floats]:
        """The softmax over the legal actions of an observation, and its features."""
        phi = features(obs["observation"]["planes"])
        return self.distribution(phi, obs["action_mask"]), phi

    def __call__(self, obs: PolicyInput) -> int:
        """The most likely legal action (how it plays)."""
        phi = features(obs["observation"]["planes"])
        return int(np.argmax(self.logits(phi, obs["action_mask"])))

    def sample(self, obs: PolicyInput, rng: np.random.Generator) -> tuple[int, Floats, Floats]:
        """An action drawn from the softmax (how it learns), its probabilities and features."""
        p, phi = self.probabilities(obs)
        return int(rng.choice(p.size, p=p)), p, phi

    @staticmethod
    def grad_log_prob(action: int, p: Floats, phi: Floats) -> tuple[Floats, Floats]:
        """The gradient of ``log p[action]`` with respect to the weights and the biases."""
        slot_p = p[:TEA_INDEX].reshape(SLOTS, CELLS)
        g_w = -(slot_p @ phi.T)
        g_b = -np.append(slot_p.sum(axis=1), p[TEA_INDEX])
        if action == TEA_INDEX:
            g_b[SLOTS] += 1.0
        else:
            slot, cell = divmod(action, CELLS)
            g_w[slot] += phi[:, cell]
            g_b[slot] += 1.0
        return g_w, g_b

    def save(self, path: Path) -> None:
        """Write the weights as an ``.npz``."""
        np.savez(path, weights=self.weights, bias=self.bias)

    @classmethod
    def load(cls, path: Path) -> LinearPolicy:
        """Read weights ``save`` wrote."""
        with np.load(path) as data:
            return cls(np.asarray(data["weights"]), np.asarray(data["bias"]))


class PolicyWeightsError(ValueError):
    """Weights ``policy`` cannot read: the file ``$MEDINA_POLICY_WEIGHTS`` names is missing or
    is not weights ``LinearPolicy.save`` wrote."""


def load_weights() -> LinearPolicy:
    """The policy with the weights of ``$MEDINA_POLICY_WEIGHTS``, else the shipped ones;
    PolicyWeightsError naming the variable (when it is set) and the path."""
    named = os.environ.get(WEIGHTS_VARIABLE)
    path = WEIGHTS if named is None else Path(named)
    where = f"{path} (the shipped weights)" if named is None else f"{WEIGHTS_VARIABLE}={named}"
    if not path.is_file():
        raise PolicyWeightsError(f"{where}: no such file")
    try:
        return LinearPolicy.load(path)
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise PolicyWeightsError(
            f"{where}: not weights LinearPolicy.save wrote ({type(exc).__name__}: {exc})"
        ) from None


#: The example policy with its weights (see the module's docstring): declared here, built by
#: ``__getattr__`` when first looked up.
policy: LinearPolicy


def __getattr__(name: str) -> LinearPolicy:
    # ``policy`` is built when first looked up (PEP 562), so a bad $MEDINA_POLICY_WEIGHTS
    # fails as ``--policy`` loads it, before any match, and importing the module for its
    # classes (training) does not read weights it will not use.
    if name != "policy":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = load_weights()
    globals()["policy"] = loaded  # looked up once: later look-ups find it here
    return loaded
