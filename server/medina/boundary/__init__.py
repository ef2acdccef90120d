"""What crosses between the arena and programs or text others wrote: the environment the
arena's bots start from (``environment``: not the arena's own gRPC settings), their text
on an operator's terminal (``terminal``: control characters shown, never acted on), and
the files it writes for others (``files``: whole or not at all, never over a device).
Standard library only."""
