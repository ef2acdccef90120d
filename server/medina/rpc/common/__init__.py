"""What the single-process server and the multi-worker front share: statuses and their
reasons, the organiser credential, tokens, limits, admission, request ids, listings,
reflection, the server configuration and how a gRPC server is started."""
