"""``medina-arena web --server HOST:PORT``: another server's matches listed and followed live
through gRPC, as a spectator."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from medina.referee.config import MatchSettings
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server

from .conftest import play_bots
from .sse import get, read_events

URL = re.compile(r"viewer on http://([0-9.]+):(\d+)/")


def test_web_follows_a_remote_match_to_its_end(tmp_path: Path) -> None:
    async def main() -> None:
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path / "arena")
        )
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "medina.cli", "web", "--records", str(tmp_path),
            "--server", running.address, "--http", "0",
            "--max-streams-per-client", "1", "--limit-loopback",
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
            found = URL.search(line)
            assert found and f"matches of {running.address}" in line, line
            host, port = found.group(1), int(found.group(2))
            hosted = running.arena.create(MatchSettings("medina-v1-2p", 2, 5))
            status, _, page = await get(host, port, "/")
            assert status == 200 and hosted.match_id.encode() in page
            assert f"/live/{hosted.match_id}".encode() in page
            status, _, live = await get(host, port, f"/live/{hosted.match_id}")
            assert status == 200 and hosted.match_id.encode() in live
            # Each address's live streams are counted, as beside a server (`web` had no
            # limit: one client could open streams until the process ran out of files).
            path = f"/api/live/{hosted.match_id}/events"
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(f"GET {path} HTTP/1.0\r\n\r\n".encode())
            await writer.drain()
            assert b"200" in await reader.readline()  # one stream is open
            status, _, body = await get(host, port, path)
            assert status == 429 and b"already has 1 open streams" in body, body
            writer.close()
            await writer.wait_closed()
            async with asyncio.timeout(30):  # until the viewer has seen it close
                while (
                    b"medina_http_event_streams_open 0.0"
                    not in (await get(host, port, "/metrics"))[2]
                ):
                    await asyncio.sleep(0.05)
            events = asyncio.create_task(read_events(host, port, path))
            await play_bots(running, hosted, 3)
            frames = await asyncio.wait_for(events, 60)
            outcome = hosted.match.outcome
            assert outcome is not None
            kind, last = frames[-1]
            assert kind == "end"
            assert [s["total"] for s in last["result"]["seats"]] == [s.total for s in outcome.seats]
            assert last["view"]["phase"] == "over"
            # The story arrives a point per decision, the first message's from the start.
            story = [p for _kind, frame in frames for p in frame["story"]]
            assert [p["step"] for p in story] == list(range(hosted.match.state.decisions + 1))
            assert story[-1]["scores"] == [s.total for s in outcome.seats]
            status, _, _ = await get(host, port, "/live/no-such-match")
            assert status == 404
        finally:
            proc.terminate()
            await proc.wait()
            await running.stop(1)

    asyncio.run(main())
