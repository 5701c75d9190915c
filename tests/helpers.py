"""Small builders shared by the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def build_file_tree(root: Path, tree: dict[str, str | bytes | dict]) -> None:
    """Create files and folders from a dict: {"a.txt": "x", "sub": {"b": b"y"}}."""
    for name, value in tree.items():
        p = root / name
        if isinstance(value, dict):
            p.mkdir(parents=True, exist_ok=True)
            build_file_tree(p, value)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(value, bytes):
                p.write_bytes(value)
            else:
                p.write_text(value)


def write_executable(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


def write_config(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def schedgen(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a subprocess, as a user would (exit codes, stderr, no traceback)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "schedgen", *args], cwd=cwd, env=full_env,
                          input=input, capture_output=True, text=True, timeout=120)
