"""The files in templates/, as shipped in the package (`schedgen.templates`)."""

from __future__ import annotations

from functools import cache
from importlib import util
from pathlib import Path


@cache
def _folder() -> Path | None:
    # The package's folder from its spec: importlib.resources would load its readers
    # (and zipfile) on every start for files that are plain files next to the code.
    spec = util.find_spec("schedgen.templates")
    places = list(spec.submodule_search_locations or ()) if spec is not None else []
    return Path(places[0]) if places else None


def text(name: str) -> str:
    """One shipped file's text."""
    folder = _folder()
    if folder is not None and (folder / name).is_file():
        return (folder / name).read_text(encoding="utf-8")
    from importlib import resources  # installed in a zip: only the resource API reads it

    return resources.files("schedgen.templates").joinpath(name).read_text(encoding="utf-8")
