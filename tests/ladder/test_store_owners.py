"""Each table of the clients' database has one writer (issue 22): the part of the ladder's
store that owns its aggregate, or the worker pool's store. Read from the sources: every
``insert(T)``, ``update(T)``, ``delete(T)`` and ``T.delete()`` in the clients' modules is
in the module that owns ``T``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The source folders whose modules may write the database's tables: the ladder's area
#: (its store and the worker pool's) and the clients', which must not write at all.
AREAS = {
    "ladder": ROOT / "ladder" / "cirulla" / "ladder",
    "clients": ROOT / "clients" / "cirulla" / "clients",
}

OWNERS = {
    "bots": "ladder/store_bots.py",
    "bot_versions": "ladder/store_bots.py",
    "ladder_matches": "ladder/store_matches.py",
    "ladder_seats": "ladder/store_matches.py",
    "ratings": "ladder/store_results.py",
    "rating_history": "ladder/store_results.py",
    "workers": "ladder/store_workers.py",
    "enrollments": "ladder/store_enrollments.py",
    "match_requests": "ladder/store_requests.py",
    "pool_jobs": "ladder/pool_store.py",
    "pool_tournaments": "ladder/pool_store.py",
}
WRITES = ("insert", "update", "delete")


def writes_in(path: Path) -> list[tuple[str, int]]:
    """(table, line) of every write of a known table in ``path``."""
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in WRITES and node.args:
            target = node.args[0]
            if isinstance(target, ast.Name) and target.id in OWNERS:
                out.append((target.id, node.lineno))
        elif (
            isinstance(func, ast.Attribute)
            and func.attr in WRITES
            and isinstance(func.value, ast.Name)
            and func.value.id in OWNERS
        ):
            out.append((func.value.id, node.lineno))
    return out


def test_every_table_is_written_by_its_owner_only() -> None:
    found: dict[str, set[str]] = {table: set() for table in OWNERS}
    strays: list[str] = []
    paths = [(area, p) for area, folder in AREAS.items() for p in sorted(folder.rglob("*.py"))]
    for area, path in paths:
        if "migrations" in path.parts:
            continue  # the schema's history creates and alters every table
        module = f"{area}/{path.relative_to(AREAS[area]).as_posix()}"
        for table, line in writes_in(path):
            found[table].add(module)
            if module != OWNERS[table]:
                strays.append(f"{module}:{line} writes {table} (owned by {OWNERS[table]})")
    assert strays == []
    # every table is written somewhere: the check reads the writes it claims to check
    assert {table for table, modules in found.items() if not modules} == set()
