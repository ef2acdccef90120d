"""``medina-arena serve`` refuses unsafe or contradictory options with one clear line."""

from __future__ import annotations

import pytest
from medina.cli import main


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--host", "0.0.0.0"], "organiser calls (create, abort) open to anyone"),
        (["--host", "::"], "--organiser-token"),
        (["--tls-cert", "x.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-client-ca", "ca.pem"], "mutual TLS is TLS"),
        (["--max-message-bytes", "10"], "max_message_bytes 10 is below 1024"),
        (["--handshake-timeout-s", "0"], "handshake_timeout_s 0.0 must be positive"),
        (["--max-streams-per-client", "-1"], "max_streams_per_client"),
        (["--tls-cert", "missing.pem", "--tls-key", "missing.key"], "missing.pem"),
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--workers", "-2"], "--workers must be at least 1, got -2"),
        (["--workers", "2", "--http", "0"], "--http (the viewer) runs beside a one-process"),
    ],
)
def test_bad_serve_options(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", *argv]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_log_level_typo_is_refused_not_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--log-level", "WARNNG", "replay", "list", "."])
    assert exit_info.value.code == 2
    assert "invalid choice: 'WARNNG'" in capsys.readouterr().err
