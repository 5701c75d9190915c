"""`validate`: load and check the config; every problem is in the ConfigError it raises.

Imports neither jinja2 nor the describers, so checking a config stays cheap.
"""

from __future__ import annotations

from pathlib import Path

from schedgen.config import load as cfg
from schedgen.config.model import Config


def validate(config_path: Path) -> Config:
    return cfg.load(config_path)
