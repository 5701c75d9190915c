"""How many examples the property tests try. A default run takes a third of each test's
full size, to keep the suite fast; SCHEDGEN_TEST_THOROUGH=1 takes them all."""

from __future__ import annotations

import os

THOROUGH = os.environ.get("SCHEDGEN_TEST_THOROUGH") == "1"


def examples(full: int) -> int:
    """`full` under SCHEDGEN_TEST_THOROUGH=1, else a third of it (at least 10)."""
    return full if THOROUGH else max(10, full // 3)
