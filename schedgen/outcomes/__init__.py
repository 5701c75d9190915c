"""What the run records say: history, logs, missed firings, health checks, the report."""
