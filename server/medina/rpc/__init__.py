"""The gRPC layer: servicers, seat transport, conversion calls, auth and limits. No game logic."""
