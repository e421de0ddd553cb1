"""The .proto files are a published API: `buf lint` (STANDARD rules) must stay clean.

buf comes from the npm registry (`@bufbuild/buf`), pinned in `.ci/setup.d/20-buf.sh`, which
`.ci/run` sources before the tests (it exports CIRULLA_BUF). On a developer machine
without it the test installs that same version into .cache/buf (npm needed), so it runs
on a fresh machine instead of being skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "buf"
SETUP = ROOT / ".ci" / "setup.d" / "20-buf.sh"


def pinned_version() -> str:
    """The one pin, in the CI step that installs buf."""
    found = re.search(r"^BUF_VERSION=(\S+)$", SETUP.read_text(), re.MULTILINE)
    assert found, f"{SETUP} must set BUF_VERSION"
    return found.group(1)


@pytest.fixture(scope="module")
def buf() -> Path:
    given = os.environ.get("CIRULLA_BUF")
    if given:
        return Path(given)
    binary = CACHE / "node_modules" / ".bin" / "buf"
    version = pinned_version()
    installed = (
        binary.exists()
        and subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
        == version
    )
    if not installed:
        npm = shutil.which("npm")
        assert npm, (
            f"buf {version} is needed: run `source .ci/setup.d/20-buf.sh` (installs it with "
            "npm into .cache/buf), or install npm"
        )
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-save", "--prefix", str(CACHE), f"@bufbuild/buf@{version}"],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return binary


def test_buf_is_the_pinned_version(buf: Path) -> None:
    out = subprocess.run([str(buf), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == pinned_version()


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
