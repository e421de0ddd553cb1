"""CI's side environment with a CPU PyTorch, Stable-Baselines3, sb3-contrib and the ONNX
exporter (.ci/setup.d/40-rl.sh), for the tests of the learning examples and of a PyTorch
bot. ``CIRULLA_RL_PYTHON`` names its interpreter. On a fresh clone the step installs it
in the background while the project installs and the other tests run (about a minute of
a 2-core machine's time), and names in ``CIRULLA_RL_STATUS`` the file it writes once
done: a test that needs the environment waits for that file, and fails with the
install's own output if the install failed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

RL_PYTHON = os.environ.get("CIRULLA_RL_PYTHON")
HOW = (
    "CIRULLA_RL_PYTHON is not set: run `source .ci/setup.d/40-rl.sh` in the checkout (a side "
    "venv with a CPU PyTorch, stable-baselines3, sb3-contrib, onnx), then run pytest again"
)
needs_rl = pytest.mark.skipif(RL_PYTHON is None, reason=HOW)
#: How long a test waits for the background install (a first install downloads about 1 GB).
INSTALL_WAIT_SECONDS = 1800.0


def rl_python() -> str:
    """The side environment's interpreter, once its install (if still running) is done."""
    assert RL_PYTHON is not None, HOW
    status = os.environ.get("CIRULLA_RL_STATUS")
    if status:
        path = Path(status)
        deadline = time.monotonic() + INSTALL_WAIT_SECONDS
        while not path.exists():
            assert time.monotonic() < deadline, f"the side venv's install wrote no {path}"
            time.sleep(1)
        said = path.read_text(errors="replace")
        assert said.startswith("ok"), f"the side venv's install failed:\n{said[-4000:]}"
    return RL_PYTHON
