"""The web viewer: matches, live games over Server-Sent Events, replays, standings and
/metrics, served over HTTP beside the gRPC server (read-only)."""

from .app import Viewer, build_app, records_viewer
from .metrics import LadderProbe
from .server import HttpServer, arena_viewer, serve_viewer
from .standings import BotGame, PerBot, RatingStep, StandingRow, Standings, StandingsProvider

__all__ = [
    "BotGame",
    "HttpServer",
    "LadderProbe",
    "PerBot",
    "RatingStep",
    "StandingRow",
    "Standings",
    "StandingsProvider",
    "Viewer",
    "arena_viewer",
    "build_app",
    "records_viewer",
    "serve_viewer",
]
