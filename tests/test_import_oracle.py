"""The oracle that reads an argv out of a job file must never run anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.import_oracle import function_argv, same_as_cron


@pytest.mark.parametrize("function", [
    "sg_command() {\n  exec /bin/sh -c 'echo a\n  b' \"${SCHEDGEN_JOB}\"\n}\n",
    "sg_command() {\n  ${sg_exec-} /bin/sh -c 'echo a\n  b' \"${SCHEDGEN_JOB}\"\n}\n",
])
def test_the_argv_is_read_in_either_form(function: str) -> None:
    assert function_argv(function, "j") == ["/bin/sh", "-c", "echo a\n  b", "j"]


def test_anything_but_the_hand_over_is_refused_unrun(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    function = f"sg_command() {{\n  touch {b}\n  exec /bin/true \"$(touch {a})\"\n}}\n"
    with pytest.raises(AssertionError, match="refused: touch"):
        function_argv(function, "j")
    assert not a.exists() and not b.exists()


@pytest.mark.parametrize(("shell", "command", "argv", "same"), [
    ("/bin/sh", "a b", ["/bin/sh", "-c", "a b"], True),
    ("/bin/sh", "a b", ["bash", "-c", "a b", "j"], False),  # dash is not bash
    ("/bin/bash", "a b", ["bash", "-c", "a b", "j"], True),
    ("/bin/sh", "/x/a b", ["/x/a", "b"], True),
    ("/bin/sh", "a > f", ["a", ">", "f"], False),
    ("/bin/sh", "~/x y", ["/h/x", "y"], True),
    ("/bin/sh", "root /x", ["root", "/x"], True),  # what cron does with it in a user crontab
])
def test_same_as_cron(shell: str, command: str, argv: list[str], same: bool) -> None:
    assert same_as_cron(shell, command, argv, "/h") is same
