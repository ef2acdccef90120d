"""A scripted stdio bot for the bridge's tests (standard library only, not shipped).

``python stdio_bot.py BEHAVIOUR TRANSCRIPT [ARGS...]`` logs ARGS to stderr, appends every
line it reads to TRANSCRIPT and answers according to BEHAVIOUR:

- ``first``: the first legal action not refused yet, for every request and rejected line;
- ``garbage``: two blank lines and an unreadable line for the first request, then ``first``;
- ``twice``: two answer lines for every request;
- ``exit``: exits with status 4 at the first request;
- ``close``: closes its stdout at the first request and reads on until its stdin ends;
- ``hang``: never answers, and sleeps on when its stdin ends;
- ``late``: answers the first request only (as a program slower than the clock).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def legal(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every action of a request's legal actions (JSON mapping), tea last."""
    actions: list[dict[str, Any]] = []
    for group in request.get("legal", {}).get("placements", []):
        for square in group.get("squares", []):
            action = {"kind": group["kind"], "square": square}
            if "colour" in group:
                action["colour"] = group["colour"]
            actions.append(action)
    if request.get("legal", {}).get("tea"):
        actions.append({"kind": "ACTION_KIND_TEA"})
    return actions


def main(behaviour: str, transcript: str) -> int:
    token = os.environ.get("MEDINA_TOKEN")
    extra = sys.argv[3:]
    print(
        f"stdio_bot: started pid {os.getpid()} as {behaviour}, token {token}, "
        f"extra arguments {extra}",
        file=sys.stderr,
    )
    request: dict[str, Any] = {}
    sent = 0  # answers sent for the current request
    requests = 0
    with open(transcript, "a") as seen:
        for line in sys.stdin:
            seen.write(line)
            seen.flush()
            message = json.loads(line)
            if "request" in message:
                request, sent = message["request"], 0
                requests += 1
            elif "rejected" not in message:
                continue
            if behaviour in ("hang", "silent") or (behaviour == "late" and requests > 1):
                continue
            if behaviour == "exit":
                print("stdio_bot: bye", file=sys.stderr)
                return 4
            if behaviour == "close":
                sys.stdout.close()
                os.close(1)
                behaviour = "silent"
                continue
            answer = json.dumps(legal(request)[sent]) + "\n"
            sent += 1
            if behaviour == "garbage" and requests == 1:
                answer = "\n  \nthis is not json\n"
                behaviour = "first"
                sent -= 1
            elif behaviour == "twice":
                answer += answer
            elif behaviour == "named":  # skips request 1, names the request it answers
                if requests == 1:
                    continue
                named = {"requestId": request["requestId"], "action": legal(request)[0]}
                answer = json.dumps({**named, "eval": 0.5}) + "\n"
            sys.stdout.write(answer)
            sys.stdout.flush()
    print("stdio_bot: stdin closed", file=sys.stderr)
    if behaviour == "hang":
        time.sleep(3600)  # a bot that does not exit: the bridge must terminate it
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
