"""What every server does alike when it starts listening (rpc/common/serving.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server


@pytest.mark.parametrize("port", [65536, 70000, -1])
def test_a_port_out_of_range_is_refused_not_wrapped(tmp_path: Path, port: int) -> None:
    # gRPC takes a port modulo 65536: 70000 listened on 4464.
    with pytest.raises(ValueError, match=f"a port is 0 to 65535 .*, got {port}$"):
        asyncio.run(start_server(ServerConfig(host="127.0.0.1", port=port, records_dir=tmp_path)))


def test_a_port_another_server_listens_on_is_refused(tmp_path: Path) -> None:
    # gRPC's default (SO_REUSEPORT) let a second server start on it, and the kernel then
    # shared new connections between the two: a forgotten old server took half the bots.
    async def main() -> str:
        first = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            port = int(first.address.rsplit(":", 1)[1])
            with pytest.raises(OSError) as refused:
                await start_server(
                    ServerConfig(host="127.0.0.1", port=port, records_dir=tmp_path / "second")
                )
            return str(refused.value)
        finally:
            await first.stop(1)

    said = asyncio.run(main())
    assert said.startswith("could not listen on 127.0.0.1:") and "the port is in use" in said


def test_an_address_that_is_not_this_machines_is_refused_in_one_line(tmp_path: Path) -> None:
    async def main() -> str:
        with pytest.raises(OSError) as refused:
            # TEST-NET-1 (RFC 5737): never an address of this machine
            await start_server(ServerConfig(host="192.0.2.1", port=50999, records_dir=tmp_path))
        return str(refused.value)

    said = asyncio.run(main())
    assert said == "could not listen on 192.0.2.1:50999: the address is not this machine's"
