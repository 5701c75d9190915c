"""Every command's --help ends with an example of it, and says nothing of how it was built."""

from __future__ import annotations

import pytest

from schedgen.cli import EXAMPLES, app
from tests.helpers import schedgen

NAMES = sorted(c.name or (c.callback.__name__ if c.callback else "")
               for c in app.registered_commands)


def test_every_command_has_an_example() -> None:
    assert sorted(EXAMPLES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_help_shows_the_example(name: str) -> None:
    r = schedgen(name, "--help", env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    assert f"Example: schedgen {name}" in r.stdout
    assert "design card" not in r.stdout
