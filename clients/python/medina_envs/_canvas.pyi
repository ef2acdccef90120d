from collections.abc import Sequence

def join(
    masks: Sequence[int],
    cols: int,
    rows: int,
    canvas_cols: int,
    canvas_rows: int,
    tail: Sequence[bytes],
    /,
) -> bytearray: ...
