"""What a bot or engine command that cannot start usually lacks, said beside the error.

A newcomer's first command names a script that is not executable (``Permission
denied``), or a file of the current folder without ``./`` (``No such file or
directory`` for a file that is right there, since a bare name is looked up on PATH).
Both are one step from working; the bare error does not say which step. The tournament's
``cmd:`` bots and the text-engine bridge both start programs a user typed.
"""

from __future__ import annotations

import os


def start_hint(program: str, exc: BaseException) -> str:
    """`` (the step that is missing)`` for ``program`` that failed to start with
    ``exc``, or ``""`` when the error says it all."""
    if isinstance(exc, PermissionError) and os.path.isfile(program):
        return f" (make it executable, chmod +x {program}, or name its interpreter first)"
    if isinstance(exc, FileNotFoundError) and "/" not in program and os.path.exists(program):
        return f" (a command without a / is looked up on PATH: write ./{program})"
    return ""
