"""The .proto files are a published API: `buf lint` (STANDARD rules) must stay clean.

buf comes from the npm registry (`@bufbuild/buf`); it is installed into .cache/buf on first
use so this test runs on a fresh machine instead of being skipped.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "buf"


@pytest.fixture(scope="module")
def buf() -> Path:
    binary = CACHE / "node_modules" / ".bin" / "buf"
    if not binary.exists():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install buf (@bufbuild/buf) for the proto lint test"
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-save", "--prefix", str(CACHE), "@bufbuild/buf@^1"],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return binary


def test_buf_lint_is_clean(buf: Path) -> None:
    out = subprocess.run(
        [str(buf), "lint"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_buf_lint_would_catch_a_violation(buf: Path, tmp_path: Path) -> None:
    """Guards the guard: a module with a lint error must fail."""
    (tmp_path / "buf.yaml").write_text(
        "version: v2\nmodules:\n  - path: proto\nlint:\n  use:\n    - STANDARD\n"
    )
    bad = tmp_path / "proto" / "bad" / "v1"
    bad.mkdir(parents=True)
    (bad / "bad.proto").write_text('syntax = "proto3";\npackage bad.v1;\nenum Color { RED = 0; }\n')
    out = subprocess.run(
        [str(buf), "lint"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode != 0 and "RED" in out.stdout + out.stderr
