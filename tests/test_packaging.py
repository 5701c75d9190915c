"""The wheel ships every package folder: pyproject lists them by hand."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "schedgen").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    on_disk.add("schedgen.templates")
    assert on_disk == listed


def test_every_template_file_kind_ships() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = set(data["schedgen.templates"])
    kinds = {"*" + p.suffix for p in (ROOT / "templates").iterdir() if p.suffix and p.name != "__init__.py"}
    assert kinds <= patterns
