"""Examples: OpenSpiel's MCTS against the example bots (``spiel_mcts``)."""
