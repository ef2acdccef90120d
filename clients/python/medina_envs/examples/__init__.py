"""Examples: OpenSpiel's MCTS against the example bots (``spiel_mcts``), and a linear policy
trained by behaviour cloning and played over gRPC (``train_policy``, ``linear_policy``)."""
