"""The .proto files are a published API: `buf breaking` (FILE rules, buf.yaml) against
main's protocol must pass, so only additive changes land (a client written from the
protos before a change still compiles and plays).

The baseline is the `main` branch of this repository when it has one (a worktree or a
clone working on a branch), else the last commit: either way the working tree's protos
are checked against committed ones. buf comes from tests/protocol/test_lint.py's fixture.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

from tests.protocol.test_lint import ROOT, buf  # noqa: F401 (the fixture)


def baseline_ref() -> str:
    git = shutil.which("git")
    assert git, "git is needed to read the baseline protocol"
    known = subprocess.run(
        [git, "rev-parse", "--verify", "--quiet", "main"], cwd=ROOT, capture_output=True
    )
    return "main" if known.returncode == 0 else "HEAD"


def export(ref: str, into: Path) -> Path:
    """buf.yaml and proto/ of ``ref``, written under ``into``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, "buf.yaml", "proto"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def breaking(buf_path: Path, cwd: Path, against: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(buf_path), "breaking", "--against", str(against)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_protocol_has_no_breaking_change_against_main(buf: Path, tmp_path: Path) -> None:  # noqa: F811
    against = export(baseline_ref(), tmp_path / "baseline")
    assert (against / "proto" / "cirulla" / "v1" / "play.proto").exists()
    out = breaking(buf, ROOT, against)
    assert out.returncode == 0, out.stdout + out.stderr


def test_buf_breaking_would_catch_a_removed_field(buf: Path, tmp_path: Path) -> None:  # noqa: F811
    """Guards the guard: the protocol with one Hello field removed must fail."""
    changed = tmp_path / "changed"
    shutil.copytree(ROOT / "proto", changed / "proto")
    shutil.copy(ROOT / "buf.yaml", changed / "buf.yaml")
    play = changed / "proto" / "cirulla" / "v1" / "play.proto"
    text = play.read_text()
    assert "bool defer_events = 9;" in text
    play.write_text(text.replace("bool defer_events = 9;", ""))
    out = breaking(buf, changed, ROOT)
    assert out.returncode != 0 and "defer_events" in out.stdout + out.stderr
