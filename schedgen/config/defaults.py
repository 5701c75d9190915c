"""What jobs.toml means when it says nothing: the one table the loader, the schema and
the docs read."""

from __future__ import annotations

# Every install target schedgen knows, in the order `render` and `diff` list them.
TARGETS = ("launchd", "cron", "systemd", "kubernetes")
