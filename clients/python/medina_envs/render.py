"""Pictures of a game for the environments' ``render``: the ASCII board and an RGB image.

Both show the public board only (what a spectator sees): no seat's supply.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from medina.engine import GameState, Phase, render, result
from medina.engine.notation import board_tokens

__all__ = ["CELL_PX", "ansi", "rgb"]

#: Pixels per square in the RGB image.
CELL_PX: Final = 20

_RGB: Final[dict[str, tuple[int, int, int]]] = {
    "..": (232, 220, 190),  # empty city square: sand
    "++": (200, 190, 160),  # empty wall space
    "##": (120, 100, 80),  # wall
    "T": (90, 70, 60),  # tower
    "@@": (70, 140, 220),  # well
    "mm": (40, 40, 40),  # merchant
    "MM": (0, 0, 0),  # merchant of the current street
    "g": (150, 150, 150),  # grey building
    "p": (130, 60, 150),  # purple
    "b": (140, 90, 40),  # brown
    "o": (240, 140, 30),  # orange
    "s": (225, 200, 120),  # stable
}
#: Rooftop colours by the letter the ASCII board uses (red, yellow, blue, green).
_ROOF_RGB: Final[dict[str, tuple[int, int, int]]] = {
    "R": (210, 40, 40),
    "Y": (240, 210, 40),
    "B": (40, 80, 210),
    "G": (40, 160, 70),
}


def ansi(s: GameState) -> str:
    """The ASCII board (docs: ``medina.engine.notation``) with the turn and the scores."""
    totals = result(s).totals
    scores = ", ".join(f"seat {seat} {total}" for seat, total in enumerate(totals))
    if s.phase is Phase.OVER:
        status = f"game over after turn {s.turn}; scores: {scores}"
    else:
        status = (
            f"turn {s.turn}: seat {s.to_move} to move ({s.placed} of {s.quota} placed); "
            f"scores: {scores}"
        )
    return f"{render(s)}\n{status}\n"


def rgb(s: GameState) -> npt.NDArray[np.uint8]:
    """The board as an image, ``(rows * CELL_PX, cols * CELL_PX, 3)`` uint8: one square of
    colour per square, a rooftop as a square of its owner's colour on its building, and a
    claimed palace's pieces framed in that colour."""
    g = s.rules.geometry
    px = CELL_PX
    image = np.zeros((g.rows * px, g.cols * px, 3), dtype=np.uint8)
    for sq, token in enumerate(board_tokens(s)):
        row, col = divmod(sq, g.cols)
        cell = image[row * px : (row + 1) * px, col * px : (col + 1) * px]
        cell[:] = _RGB.get(token) or _RGB["T" if token[0] == "T" else token[0].lower()]
        cell[0, :] = cell[:, 0] = (60, 50, 40)  # grid lines
        roof = _ROOF_RGB.get(token[1]) if token[0] in "gpbosGPBO" else None
        if roof is not None:
            cell[2:4, 2:-2] = cell[-4:-2, 2:-2] = roof
            cell[2:-2, 2:4] = cell[2:-2, -4:-2] = roof
            if token[0].isupper():  # the building carrying the rooftop
                cell[6:-6, 6:-6] = roof
    return image
