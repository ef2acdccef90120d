"""The single-process server: one process hosts the matches (``Arena``), plays their seats
over gRPC streams and answers every service. Each worker of ``serve --workers N`` is one."""
