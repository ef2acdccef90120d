"""Match records: written line by line while a match runs, read back, verified, shown."""
