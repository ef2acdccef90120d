"""Broken stdio bot: answers its first request, then at its second says why on stderr and
exits with status 5 (under the bridge, which then exits with its own status 3)."""

from __future__ import annotations

import json
import sys


def main() -> int:
    requests = 0
    for line in sys.stdin:
        message = json.loads(line)
        if "request" in message:
            requests += 1
            request = message["request"]
            if requests == 2:
                print(f"oops: cannot handle request {request['requestId']}", file=sys.stderr)
                return 5
            group = request["legal"]["placements"][0]
            print(json.dumps({"kind": group["kind"], "square": group["squares"][0],
                              "colour": group["colour"]}), flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
