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
