"""Starting bot processes for a seat and playing a match of them on a server (``match``,
``check-bot`` and the tournament runner share it)."""
