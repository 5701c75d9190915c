"""benchmarks/bench_compare.py leaves nothing on the machine: its HOME's loop-mounted
ext4 is unmounted even while something still runs in it (needs root and a loop device)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_compare", ROOT / "benchmarks" / "bench_compare.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mkfs.ext4"),
                    reason="needs root and mkfs.ext4")
def test_a_home_still_in_use_is_unmounted_and_its_loop_device_freed(tmp_path: Path) -> None:
    b = bench()
    image = tmp_path / "home.img"
    at = b.fresh_ext4(image, tmp_path / "bench-home")
    if at is None:
        pytest.skip("no ext4 could be made and loop-mounted here")
    # A run cron started in the user's HOME as the benchmark ends: umount is "busy".
    busy = subprocess.Popen(["sleep", "1"], cwd=at)
    try:
        assert b.unmount(at)
        assert not os.path.ismount(at)
    finally:
        busy.wait()
        if os.path.ismount(at):  # the test failed: leave no mount behind all the same
            subprocess.run(["umount", "--lazy", str(at)], check=False)
    # The kernel lets the loop device go once its last user is gone, a moment after.
    for _ in range(50):
        loops = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True)
        if loops.stdout == "":
            break
        time.sleep(0.1)
    if loops.stdout and _mounted_in_another_namespace(loops.stdout.split(":")[0]):
        # A test beside this one made a mount namespace (unshare -m) while the file system
        # was mounted: its copy of the mount keeps the device until that test ends.
        pytest.skip("the loop device is held by another mount namespace's copy of the mount")
    assert loops.stdout == "", loops.stdout
    assert b.unmount(at)  # nothing mounted there: nothing to do


def _mounted_in_another_namespace(device: str) -> bool:
    """Is the file system on `device` mounted in a mount namespace other than this one?"""
    rdev = os.stat(device).st_rdev
    ours = os.readlink("/proc/self/ns/mnt")
    want = f"{os.major(rdev)}:{os.minor(rdev)}"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/mnt") == ours:
                continue
            with open(f"/proc/{pid}/mountinfo") as fh:
                if any(line.split()[2] == want for line in fh):
                    return True
        except OSError:
            continue  # gone meanwhile
    return False
