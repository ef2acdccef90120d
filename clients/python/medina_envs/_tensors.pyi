from collections.abc import Sequence

LAYOUT: tuple[dict[str, int], dict[str, int], tuple[int, int, int]]

def join(
    masks: Sequence[int],
    cols: int,
    rows: int,
    canvas_cols: int,
    canvas_rows: int,
    tail: Sequence[bytes],
    /,
) -> bytearray: ...
def vector(
    ruleset: int,
    players: int,
    phase: int,
    to_move: int,
    turn: int,
    quota: int,
    placed: int,
    tea_pool: int,
    exhausted: int,
    palace_tiles: list[int],
    tower_tiles: list[int],
    tower_merchants: list[int],
    seat: int,
    supply: list[int],
    roofs: list[int],
    blocking: list[int],
    tea: list[int],
    revealed: int,
    score_rows: Sequence[bytes],
    /,
) -> bytes: ...
