"""The HTML of each page: a small shared layout, tables rendered on the server, and empty
boards that the page's script fills from JSON (the live feed or a replay)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from .listing import STATES, Listing, MatchRow, state_name
from .names import isolated, name_attribute, name_html
from .plot import rating_plot
from .standings import BotGame, RatingStep, StandingRow, Standings

TITLE = "Medina Arena"


def layout(
    title: str,
    body: str,
    *,
    script: str | Sequence[str] | None = None,
    data: str = "",
    heading: str | None = None,
) -> str:
    """A whole page: header with links, ``body``, and the page's scripts (from /static);
    ``heading``: the <h1>'s HTML when it is not ``title`` as it stands."""
    scripts = [script] if isinstance(script, str) else list(script or ())
    tag = "".join(f'<script src="/static/{name}" defer></script>' for name in scripts)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} - {TITLE}</title>
<link rel="stylesheet" href="/static/viewer.css">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<script src="/static/board.js" defer></script>
{tag}
</head>
<body{data}>
<header><a class="brand" href="/">{TITLE}</a>
<nav><a href="/">Matches</a> <a href="/standings">Standings</a> <a href="/metrics">Metrics</a></nav>
</header>
<main>
<h1>{heading if heading is not None else escape(title)}</h1>
{body}
</main>
</body>
</html>
"""


def matches_page(listing: Listing, etag: str = "", refresh_ms: int = 0) -> str:
    """One page of the matches list, with the state filter and the pager; the page's
    script asks every ``refresh_ms`` whether it changed (``etag``) and redraws it."""
    data = f' data-etag="{escape(etag)}" data-refresh-ms="{refresh_ms}"' if refresh_ms else ""
    body = f'<div id="listing">{listing_block(listing)}</div>'
    return layout("Matches", body, script="matches.js", data=data)


_ON = ' class="on"'


def scrolling(table: str) -> str:
    """``table`` in a box of its own that scrolls sideways when the table is wider than the
    window (a phone's), so that the page itself never is."""
    return f'<div class="table-scroll">{table}</div>'


def listing_block(listing: Listing) -> str:
    """The part of the matches page that refreshes: filter, pager and table."""
    query = listing.query
    everything = escape(query.link("/", page=1, states=frozenset()))
    links = [f'<a href="{everything}"{"" if query.states else _ON}>all</a>']
    for state in STATES:
        href = escape(query.link("/", page=1, states=frozenset({state})))
        on = _ON if query.states == {state} else ""
        name = state_name(state)
        links.append(f'<a href="{href}" data-filter="{name}"{on}>{name}</a>')
    filters = f'<p class="filters">show: {" ".join(links)}</p>'
    if not listing.rows:
        if query.states or query.page > 1:
            empty = "No matches on this page."
        else:
            empty = (
                "No matches yet: no match is running and the records directory holds no records."
            )
        return f'{filters}<p class="empty">{empty}</p>{_pager(listing)}'
    return f"{filters}{_pager(listing)}{_table(listing.rows)}{_pager(listing)}"


def _pager(listing: Listing) -> str:
    query = listing.query
    last = listing.first + len(listing.rows) - 1
    of = f" of {listing.total}" if listing.total is not None else ""
    shown = f"{listing.first} to {last}{of}" if listing.rows else f"none{of}"
    parts = [f'<span class="shown">{shown}</span>']
    if listing.newer is not None:
        parts.insert(
            0, f'<a rel="prev" href="{escape(query.link("/", page=listing.newer))}">« newer</a>'
        )
    if listing.more:
        parts.append(
            f'<a rel="next" href="{escape(query.link("/", page=query.page + 1))}">older »</a>'
        )
    return f'<p class="pager">{" ".join(parts)}</p>'


def _table(rows: Sequence[MatchRow]) -> str:
    lines = []
    for r in rows:
        links = []
        if r.live:
            links.append(f'<a class="live" href="/live/{escape(r.match_id)}">watch</a>')
        if r.record is not None:
            links.append(f'<a class="replay" href="/replay/{escape(r.record)}">replay</a>')
        match = f"<code>{escape(r.match_id)}</code>"
        # The id links where the row's first link does: on a phone the last column, where
        # the others are, is off-screen in the table's sideways scroll.
        if links:
            href = f"/live/{r.match_id}" if r.live else f"/replay/{r.record}"
            match = f'<a class="match" href="{escape(href)}">{match}</a>'
        scores = " / ".join(str(s) for s in r.scores) if r.scores is not None else ""
        bots = ", ".join(name_html(b) for b in r.bots)
        note = f' title="{escape(r.note)}"' if r.note else ""
        state = escape(state_name(r.state))
        lines.append(
            f'<tr data-match="{escape(r.match_id)}" data-state="{state}">'
            f"<td>{match}</td><td>{escape(r.ruleset)}</td>"
            f'<td>{r.players}</td><td class="names">{bots}</td>'
            f'<td class="state {state}"{note}>'
            f"{state}</td><td>{r.decisions}</td><td>{scores}</td>"
            f"<td>{' '.join(links)}</td></tr>"
        )
    return scrolling(
        '<table class="matches"><thead><tr><th>match</th><th>ruleset</th><th>players</th>'
        "<th>bots</th><th>state</th><th>decisions</th><th>scores</th><th></th></tr></thead>"
        f"<tbody>{''.join(lines)}</tbody></table>"
    )


def _board_block(moves: str) -> str:
    """The board, the score plot under it, and the panels beside it."""
    return f"""<div class="game">
<div class="boardbox"><svg id="board" class="board" role="img" aria-label="the board"></svg>
<h2>Scores over time</h2>
<svg id="plot" class="plot" role="img" aria-label="every seat's score after each step"></svg>
<p class="plot-note">circles: a palace claimed; squares: a palace or tower tile taken</p>
</div>
<aside>
<h2>Scores</h2>{scrolling('<table id="scores" class="scores"></table>')}
<h2>Tiles</h2><div id="tiles" class="tiles"></div>
{moves}
</aside>
</div>"""


def live_page(match_id: str) -> str:
    """The live page: a board the script fills from the match's event stream."""
    moves = '<h2 id="moves-title">Last moves</h2><ol id="moves" class="moves"></ol>'
    body = f"""<p class="status"><span id="status">connecting…</span>
<span id="clock" class="clock"></span>
<a id="replay-link" hidden href="/replay/{escape(match_id)}">replay</a></p>
{_board_block(moves)}
<div id="result" class="result" hidden></div>"""
    return layout(
        f"Match {match_id}",
        body,
        script=("plot.js", "live.js"),
        data=f' data-match="{escape(match_id)}"',
    )


#: Replay speeds offered, in steps per second (the default is marked).
SPEEDS = (1, 2, 4, 8, 16)
DEFAULT_SPEED = 4


def _controls(download: str) -> str:
    speeds = "".join(
        f'<option value="{n}"{" selected" if n == DEFAULT_SPEED else ""}>{n} steps/s</option>'
        for n in SPEEDS
    )
    return f"""<div class="controls">
<button id="first" title="first (Home)">« first</button>
<button id="prev" title="previous (←)">&lsaquo; prev</button>
<button id="play" title="play / pause (Space)">▶ play</button>
<select id="speed" aria-label="speed" title="speed">{speeds}</select>
<input id="slider" type="range" min="0" max="0" value="0" aria-label="step">
<button id="next" title="next (→)">next &rsaquo;</button>
<button id="last" title="last (End)">last »</button>
<span id="step" class="step"></span>
{download}</div>"""


def _replay_body(download: str) -> str:
    moves = '<h2>Moves</h2><ol id="movelist" class="movelist" start="1"></ol>'
    return f"""{_controls(download)}
<p id="status" class="status"></p>
{_board_block(moves)}
<div id="result" class="result" hidden></div>"""


def replay_page(record_id: str) -> str:
    """The replay page: steps through a record's boards."""
    rid = escape(record_id)
    quoted = quote(record_id, safe="")
    links = (
        f'<a id="moment" href="/replay/{quoted}?step=0" title="a link to this step">link</a>'
        f' <a id="download" href="/api/records/{quoted}/record.jsonl" download="{rid}.jsonl"'
        ' title="the record as the arena wrote it (JSON lines)">download the record</a>'
    )
    return layout(
        f"Replay {record_id}",
        _replay_body(links),
        script=("plot.js", "replay.js"),
        data=f' data-record="{rid}"',
    )


def unreplayable_page(record_id: str, why: str) -> str:
    """The replay page of a record that cannot be replayed (unreadable, empty): why, and
    the way to its file and back to the list, without the replay's controls."""
    quoted = quote(record_id, safe="")
    body = (
        f'<p class="empty" id="status">record {escape(repr(record_id))} cannot be replayed: '
        f'{escape(why)}</p><p><a href="/api/records/{quoted}/record.jsonl" '
        f'download="{escape(record_id)}.jsonl">download the record</a> · '
        '<a href="/">all matches</a></p>'
    )
    return layout(f"Replay {record_id}", body)


def standings_page(standings: Standings | None, show_all: bool = False) -> str:
    """A table of standings, or why there is none: the rows of bots that may play, and
    those that may not (revoked, suspended) too when ``show_all`` (``/standings?all=1``),
    numbered in the order shown, as ``ladder standings`` and its ``--all`` number them."""
    if standings is None:
        body = (
            '<p class="empty" id="no-standings">No tournament database configured: this '
            "server keeps no standings. Matches and their replays are on the "
            '<a href="/">matches page</a>.</p>'
        )
        return layout("Standings", body)
    shown = [r for r in standings.rows if show_all or r.active]
    hidden = len(standings.rows) - len(shown)
    # The columns a provider gives nothing for are left out (a ladder counts no wins).
    ordinals = any(r.ordinal is not None for r in standings.rows)
    statuses = any(r.status is not None for r in standings.rows)
    rows = []
    for n, r in enumerate(shown, start=1):
        ends = ", ".join(f"{escape(k)} {v}" for k, v in sorted(r.terminations.items()) if v)
        mean_rank = "-" if r.mean_rank is None or not r.games else f"{r.mean_rank:.2f}"
        share = (
            "-"
            if r.win_share is None or not r.games
            else f"{r.win_share * 100:.1f}% [{r.win_low * 100:.0f}-{r.win_high * 100:.0f}]"
        )
        ordinal = "-" if r.ordinal is None else f"{r.ordinal:.2f}"
        cells = [
            f"<td>{n}</td>",
            f'<td class="names">{_bot_link(r.bot, standings)}</td>',
            f"<td>{r.rating:.1f}</td><td>{r.low:.1f} to {r.high:.1f}</td>",
            f'<td class="ordinal">{ordinal}</td>' if ordinals else "",
            f'<td>{r.games}</td><td class="mean-rank">{mean_rank}</td>',
            f'<td class="win-share">{share}</td>' if standings.wins else "",
            f"<td>{ends or '-'}</td>",
            f'<td class="status">{escape(r.status or "")}{_provisional(r)}</td>'
            if statuses
            else "",
        ]
        rows.append(f'<tr data-bot="{name_attribute(r.bot)}">{"".join(cells)}</tr>')
    heads = [
        "#",
        "bot",
        "rating",
        "interval",
        "ordinal (mu - 3 sigma)" if ordinals else "",
        "games",
        "mean rank",
        "win share [95%]" if standings.wins else "",
        "terminations",
        "status" if statuses else "",
    ]
    head = "".join(f"<th>{h}</th>" for h in heads if h)
    which = (
        f' {hidden} revoked or suspended not shown: <a href="/standings?all=1">show all</a>.'
        if hidden
        else ' <a href="/standings">Only those that may play</a>.'
        if show_all and any(not r.active for r in standings.rows)
        else ""
    )
    note = (
        f'<p class="note" id="standings-note">{escape(standings.note)}{which}</p>'
        if standings.note or which
        else ""
    )
    body = (
        f"<h2>{escape(standings.title)}</h2>{note}"
        + scrolling(
            f'<table class="standings" id="standings"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
        + _head_to_head(standings, [r.bot for r in shown])
    )
    if standings.live:
        return layout("Standings", body, script="standings.js", data=' data-live="standings"')
    return layout("Standings", body)


def _provisional(row: StandingRow) -> str:
    """The mark of a row with too few games yet to be ranked among the others."""
    return ', <span class="provisional">provisional</span>' if row.provisional else ""


def _head_to_head(standings: Standings, names: list[str]) -> str:
    """The row bot finished ahead of the column bot in this share of the games both played
    (the bots ``names``, as the table shows them)."""
    if not standings.head_to_head:
        return ""
    head = "".join(f'<th class="names">{name_html(b)}</th>' for b in names)
    rows = []
    for a in names:
        cells = []
        for b in names:
            share, met = standings.head_to_head.get(a, {}).get(b, (0.0, 0))
            text = "" if a == b else "-" if met == 0 else f"{share * 100:.0f}% ({met})"
            cells.append(f'<td data-opponent="{name_attribute(b)}">{text}</td>')
        rows.append(
            f'<tr data-bot="{name_attribute(a)}"><th class="names">{name_html(a)}</th>'
            f"{''.join(cells)}</tr>"
        )
    return (
        '<h2>Head to head</h2><p class="note">Share of the games both played in which the row '
        "bot finished ahead of the column bot (a tie counts half), and how many.</p>"
        + scrolling(
            f'<table class="h2h" id="head-to-head"><thead><tr><th></th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    )


def _bot_link(bot: str, standings: Standings) -> str:
    if bot not in standings.games:
        return name_html(bot)
    return f'<a href="/standings/bot/{quote(bot, safe="")}">{name_html(bot)}</a>'


def bot_page(
    bot: str,
    title: str,
    games: Sequence[BotGame],
    replayable: set[str],
    history: Sequence[RatingStep] = (),
) -> str:
    """A bot's games in a tournament, each linked to its replay when the viewer has it, under
    its rating over those games."""
    rows = []
    for g in games:
        match = escape(g.match_id)
        if g.match_id in replayable:
            match = f'<a href="/replay/{quote(g.match_id, safe="")}">{match}</a>'
        seats = ", ".join(
            f"<b>{name_html(name)}</b>" if i == g.seat else name_html(name)
            for i, name in enumerate(g.seats)
        )
        rows.append(
            f'<tr data-game="{g.number}"><td>{g.number + 1}</td><td>{escape(g.variant)}</td>'
            f'<td class="names">{seats}</td><td>{g.rank}</td><td>{g.total}</td>'
            f"<td>{escape(g.termination)}</td><td>{match}</td></tr>"
        )
    body = (
        f'<h2>{escape(title)}</h2><p><a href="/standings">back to the standings</a></p>'
        f"{_rating_figure(bot, history)}"
        + scrolling(
            '<table class="standings" id="bot-games"><thead><tr><th>game</th><th>variant</th>'
            "<th>seats</th><th>rank</th><th>score</th><th>termination</th><th>match</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>"
        )
    )
    return layout(f"Bot {isolated(bot)}", body, heading=f"Bot {name_html(bot)}")


def _rating_figure(bot: str, history: Sequence[RatingStep]) -> str:
    if not history:
        return ""
    now = history[-1]
    return (
        f'<h2>Rating over {len(history)} games</h2><figure class="rating">'
        f"{rating_plot(bot, history)}<figcaption>rating after each game (line) and its "
        f"interval (band); now {now.rating:.1f}, {now.low:.1f} to {now.high:.1f}"
        "</figcaption></figure>"
    )


def not_found_page(message: str) -> str:
    """A 404 page naming what was not found."""
    return layout("Not found", f'<p class="empty">{escape(message)}</p>')


def bad_request_page(message: str) -> str:
    """A 400 page naming the parameter that is wrong, with the way back to the list."""
    return layout(
        "Bad request",
        f'<p class="empty">{escape(message)}</p><p><a href="/">all matches</a></p>',
    )
