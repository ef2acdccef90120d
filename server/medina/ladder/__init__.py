"""The ladder: bot accounts, a lobby where bots stay connected, a matchmaker that forms
matches among them continuously, and ratings of every result (docs/ladder.md)."""
