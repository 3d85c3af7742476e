"""The soffice child is started without a Python `preexec_fn` (a fork running Python in a
process that may have threads): exec wrappers lift the worker's memory cap and tie the
child's life to its parent. Checked in real processes."""

from __future__ import annotations

import subprocess
import sys

# Run in a fresh interpreter with a soft address-space cap, as a sandbox worker has: the probe
# started through the wrappers reports its own cap (soft == hard) and its parent-death signal.
_CAPPED_PARENT = r"""
import resource, subprocess, sys
from content_core.binary.office import _child_setup_prefix

_, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, hard))
probe = (
    "import ctypes, resource\n"
    "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
    "signal = ctypes.c_int()\n"
    "ctypes.CDLL('libc.so.6').prctl(2, ctypes.byref(signal))  # PR_GET_PDEATHSIG\n"
    "print(soft == hard, signal.value)\n"
)
done = subprocess.run(
    [*_child_setup_prefix(), sys.executable, "-c", probe],
    capture_output=True, text=True, timeout=120,
)
print(done.stdout.strip() or done.stderr.strip())
"""


def test_the_soffice_child_is_uncapped_and_dies_with_its_parent() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CAPPED_PARENT], capture_output=True, text=True, timeout=240
    )
    assert done.stdout.split() == ["True", "9"], done.stdout + done.stderr  # 9: SIGKILL
