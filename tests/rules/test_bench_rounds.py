"""``bench rules`` takes the Python API's loops in turns (``bench.alternated``), so that the
ratio of ``api`` to its baseline compares runs the shared host gave the same speed."""

from __future__ import annotations

from collections.abc import Callable

from cirulla.rules.bench import RulesReport, _report, alternated, bench_api, bench_api_before
from cirulla.rules.options import Options


def test_the_loops_take_turns_each_round_on_its_own_seed_and_their_turns_add_up() -> None:
    calls: list[tuple[str, float, int]] = []

    def loop(name: str, deals_per_turn: int) -> Callable[[float, int], RulesReport]:
        def run(seconds: float, seed: int) -> RulesReport:
            calls.append((name, seconds, seed))
            return _report(Options(), "native", 2 * seconds, seconds, deals_per_turn, 1, 36)

        return run

    first, second = alternated([loop("a", 100), loop("b", 7)], 1.5, 10, 3)
    assert calls == [
        ("a", 0.5, 10),
        ("b", 0.5, 10),
        ("a", 0.5, 11),
        ("b", 0.5, 11),
        ("a", 0.5, 12),
        ("b", 0.5, 12),
    ]
    assert (first["deals"], first["games"], first["actions"]) == (300, 3, 108)
    assert (first["cpu_seconds"], first["seconds"]) == (1.5, 3.0)
    assert first["deals_per_cpu_s"] == 200.0 and first["deals_per_s"] == 100.0
    assert second["deals"] == 21 and second["deals_per_cpu_s"] == 14.0


def test_the_api_and_its_baseline_in_turns_are_real_runs() -> None:
    options = Options()
    api, before = alternated(
        [
            lambda seconds, seed: bench_api(options, seconds, seed),
            lambda seconds, seed: bench_api_before(options, seconds, seed),
        ],
        0.4,
        1,
        2,
    )
    assert api["loop"] != before["loop"]
    for report in (api, before):
        assert report["cpu_seconds"] >= 0.4 and report["deals"] > 0
        assert report["deals_per_cpu_s"] == round(report["deals"] / report["cpu_seconds"], 1)
