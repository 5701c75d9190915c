"""schedgen: one jobs.toml rendered to launchd plists, crontab lines and bash wrappers."""

from __future__ import annotations

__version__ = "0.1.0"
