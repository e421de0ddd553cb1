"""The repository stands alone: no link or path in its tracked files leaves it.

Markdown links (`[text](target)`) must resolve to a file inside the repository (web
addresses are fine), and no tracked text file may name a path outside it, such as
a shared folder beside the checkout or an absolute path on one machine.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXT = (".md", ".py", ".proto", ".toml", ".js", ".json", ".sh", ".c", ".h", ".txt", ".yaml")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# Paths that can only point outside a clone: a sibling folder, a home or work directory.
OUTSIDE = re.compile(r"\.\./shared|(?<![\w.])/work/|/home/\w|/Users/\w")


def tracked() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    return [ROOT / n for n in names if n.endswith(TEXT) and (ROOT / n).is_file()]


def test_markdown_links_stay_inside_the_repository() -> None:
    bad = []
    for path in tracked():
        if path.suffix != ".md":
            continue
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a web address or an anchor on the same page
            resolved = (path.parent / target.split("#")[0]).resolve()
            rel = path.relative_to(ROOT)
            if not resolved.is_relative_to(ROOT):
                bad.append(f"{rel}: {target} leaves the repository")
            elif not resolved.exists():
                bad.append(f"{rel}: {target} does not exist")
    assert not bad, "\n".join(bad)


def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    me = Path(__file__).resolve()
    bad = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in tracked()
        if path != me
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not bad, "\n".join(bad)
