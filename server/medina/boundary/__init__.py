"""What crosses between the arena and programs or text others wrote: the environment the
arena's bots start from (``environment``: not the arena's own gRPC settings) and their text
on an operator's terminal (``terminal``: control characters shown, never acted on).
Standard library only."""
