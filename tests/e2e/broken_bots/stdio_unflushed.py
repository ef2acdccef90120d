"""Broken stdio bot: answers every request on a block-buffered stdout and never flushes, as a
plain print() does when stdout is a pipe (this test environment sets PYTHONUNBUFFERED, so the
buffer is made explicit), so its answers never reach the bridge."""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    out = os.fdopen(sys.stdout.fileno(), "w", buffering=65536, closefd=False)
    for line in sys.stdin:
        message = json.loads(line)
        request = message.get("request") or message.get("rejected")
        if message.get("request"):
            group = request["legal"]["placements"][0]
            answer = {"kind": group["kind"], "square": group["squares"][0]}
            print(json.dumps({**answer, "colour": group["colour"]}), file=out)
        if "ended" in message:
            return


if __name__ == "__main__":
    main()
