"""Broken stdio bot: prints a debug line on stdout before its (flushed) answer, so the
bridge reads the debug line as its answer."""

from __future__ import annotations

import json
import sys


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "request" in message:
            group = message["request"]["legal"]["placements"][0]
            print("thinking about", len(group["squares"]), "squares", flush=True)
            print(json.dumps({"kind": group["kind"], "square": group["squares"][0],
                              "colour": group["colour"]}), flush=True)  # fmt: skip
        if "ended" in message:
            return


if __name__ == "__main__":
    main()
