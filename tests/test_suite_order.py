"""The suite's own scheduling (tests/conftest.py): the end-to-end and LONG tests start at
the heads of the workers' shares, and every LONG entry still names a test."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import pytest

from tests import conftest


@dataclass
class Item:
    nodeid: str
    marks: tuple[str, ...] = field(default=())

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.marks else None


def test_every_long_entry_names_a_test_function() -> None:
    for entry in conftest.LONG:
        for prefix in (entry,) if isinstance(entry, str) else entry:
            path, _, name = prefix.partition("::")
            module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
            assert callable(getattr(module, name.partition("[")[0], None)), prefix


@pytest.mark.parametrize(("total", "workers"), [(2269, 6), (7, 3), (100, 4), (5, 6)])
def test_the_shares_are_cut_as_worksteal_cuts_them(total: int, workers: int) -> None:
    pending, shares = list(range(total)), []
    for left in range(workers, 0, -1):   # xdist's WorkStealingScheduling.check_schedule
        n = len(pending) // left
        shares.append(n)
        del pending[:n]
    assert conftest._worker_shares(total, workers) == shares


def test_each_e2e_and_long_test_heads_a_share_of_its_own() -> None:
    stress = "tests/test_wrapper_stress.py::test_signal_stress_quick"
    page = ("tests/test_report.py::test_the_page_is_self_contained",
            "tests/test_report.py::test_chromium_shows_a_lane_per_job_and_the_right_marks")
    assert stress in conftest.LONG and page in conftest.LONG
    items = ([Item(f"tests/test_a.py::test_{i}") for i in range(40)]
             + [Item(page[1]), Item(stress), Item(page[0])]
             + [Item(f"tests/test_e2e_{i}.py::test_it", ("e2e",)) for i in range(3)]
             + [Item(f"tests/test_z.py::test_{i}") for i in range(20)])
    out = conftest._long_first_on_each_worker(list(items), 6)
    assert sorted(out, key=id) == sorted(items, key=id)   # the same tests, each once
    starts = [0]
    for size in conftest._worker_shares(len(out), 6)[:-1]:
        starts.append(starts[-1] + size)
    heads = [out[s].nodeid for s in starts]
    assert heads[:3] == [f"tests/test_e2e_{i}.py::test_it" for i in range(3)]
    assert heads[3] == stress
    assert {heads[4], out[starts[4] + 1].nodeid} == set(page)   # a group stays on one worker
    # without workers: the same tests first, the rest in their order
    alone = conftest._long_first_on_each_worker(list(items), 1)
    assert [i.nodeid for i in alone[6:]] == [i.nodeid for i in items if i.nodeid.startswith(
        ("tests/test_a", "tests/test_z"))]
