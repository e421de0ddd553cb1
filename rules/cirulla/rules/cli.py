"""``cirulla rules ...`` and ``cirulla bench rules``."""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import fields
from typing import NotRequired, TypedDict

from rich.table import Table

from cirulla.console import output_console  # the commands' one console (src/)
from cirulla.rules.arguments import add_rule_arguments, options_from_args
from cirulla.rules.bench import (
    Machine,
    RulesReport,
    alternated,
    bench_api,
    bench_api_before,
    bench_api_floor,
    bench_rules,
    bench_search,
    machine_at_end,
    machine_at_start,
)
from cirulla.rules.cases import BUNDLED_CASES, run_file
from cirulla.rules.core import CORE, CoreUnavailableError, native, resolve_core
from cirulla.rules.errors import CirullaError
from cirulla.rules.events import DealScored, GameOver
from cirulla.rules.game import Game
from cirulla.rules.options import OPTION_HELP, PRESETS, Options

#: The rounds ``bench rules`` takes the Python API's loops in (``bench.alternated``): a
#: shared host's speed moves within seconds, and the api loop, the memory-bound one, moved
#: with it by half between two runs a minute apart (docs/performance-log.md).
API_ROUNDS = 5


class Figure(TypedDict, total=False):
    """One headline figure of ``cirulla bench rules`` beside its baseline of the same run."""

    deals_per_cpu_s: float | None
    baseline: str
    baseline_deals_per_cpu_s: float | None
    ratio: float | None
    over_naive_python: float | None
    floor_deals_per_cpu_s: float | None
    reachable_ratio: float | None


class BenchReport(TypedDict):
    """``cirulla bench rules`` on every core: each loop, and the figures read from them."""

    benchmark: str
    core: str
    cores: dict[str, RulesReport]
    api: RulesReport
    api_before: RulesReport
    search: RulesReport
    api_floor: NotRequired[RulesReport]
    native_listed: NotRequired[RulesReport]
    user_sees_deals_per_cpu_s: float | None
    figures: dict[str, Figure]
    native_over_python: NotRequired[float | None]
    native_loop_over_api: NotRequired[float | None]
    deck_isa: NotRequired[str]
    machine: Machine


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    rules = commands.add_parser(
        "rules",
        help="rule options, presets, rule-case checks and a demo game",
        description="The rules core: options and presets (docs/rules.md), rule-case files, a demo.",
    )
    sub = rules.add_subparsers(dest="rules_command", metavar="ACTION", required=True)

    p = sub.add_parser("options", help="list every rule option with its default and presets")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_options)

    p = sub.add_parser(
        "check",
        help="run rule-case files (format cirulla-rule-cases/1)",
        description="Run rule-case files; prints one line per failing case and "
        "'N passed, N failed'. Exit status 1 if any case failed.",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="rule-case files (default: the public cases shipped with cirulla, "
        "rules/cirulla/rules/data/rule-cases.json; format in docs/rule-cases.md)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="also list passing cases")
    p.add_argument(
        "--core",
        choices=("auto", "native", "python"),
        default="auto",
        help="rules core to check (auto: the one running, see cirulla --version)",
    )
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "demo",
        help="play one game between random players and print the score deal by deal",
    )
    add_rule_arguments(p)
    p.add_argument("--seed", type=int, default=None, help="deck and player seed")
    p.set_defaults(func=cmd_demo)

    p = bench.add_parser(
        "rules",
        help="random-policy deals per second through the rules core (one core)",
        description="Plays random-policy deals (legal actions, declarations and deal "
        "scoring included) and prints JSON: the loop inside the native core, in C "
        "(`cores.native`; `native_listed`: the same games, each pick from the whole list of "
        "legal codes, as a policy or search in C sees them), the reference core's loop in Python "
        "(`cores.python`), and a Python program calling Game.legal_actions() and "
        "Game.apply() (`api`: what a Python user of the rules sees, about two orders of "
        "magnitude below the C loop). Rates are per wall second and per CPU second.",
    )
    add_rule_arguments(p)
    p.add_argument(
        "--seconds",
        type=float,
        default=10.0,
        help="CPU seconds to run each core (default 10: steady-state caches, as in search); "
        "the wall time is longer on a busy machine",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--core",
        choices=("both", "native", "python"),
        default="both",
        help="rules core to measure; both (default) runs native then python then the "
        "Python API's loops (api, api_before and search in turns: five rounds of a fifth "
        "of --seconds each), --seconds each, and reports the ratios measured in the same run",
    )
    p.add_argument("--json", action="store_true", help="print JSON (the default; kept for scripts)")
    p.set_defaults(func=cmd_bench)


def _fmt(value: object) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def cmd_options(args: argparse.Namespace) -> int:
    names = [f.name for f in fields(Options)]
    if args.json:
        print(json.dumps({p: o.to_dict() for p, o in PRESETS.items()}, indent=2))
        return 0
    table = Table(title="Cirulla rule options (defaults = standard)")
    table.add_column("option")
    for preset in PRESETS:
        table.add_column(preset, justify="center")
    table.add_column("meaning")
    default = PRESETS["standard"]
    for name in names:
        cells = []
        for options in PRESETS.values():
            value = getattr(options, name)
            text = _fmt(value)
            cells.append(f"[bold]{text}[/bold]" if value != getattr(default, name) else text)
        table.add_row(name, *cells, OPTION_HELP[name])
    console = output_console()
    console.print(table)
    console.print("fantacarte is for 2 players only. Override with --rule OPTION=VALUE.")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    try:
        core = resolve_core(args.core)
    except CoreUnavailableError as exc:
        print(f"cirulla rules check: {exc}", file=sys.stderr)
        return 2
    passed = failed = 0
    runs = []
    for path in args.files or [str(BUNDLED_CASES)]:
        try:  # every file read and framed before any result is printed
            runs.append((path, run_file(path, core)))
        except OSError as exc:
            print(
                f"cirulla rules check: cannot read {path}: {exc.strerror or exc}", file=sys.stderr
            )
            return 2
        except json.JSONDecodeError as exc:
            print(f"cirulla rules check: {path}: not JSON: {exc}", file=sys.stderr)
            return 2
        except ValueError as exc:  # the file's frame (cases.run_cases), or not UTF-8
            print(f"cirulla rules check: {path}: {exc}", file=sys.stderr)
            return 2
    for path, results in runs:
        for result in results:
            if result.ok:
                passed += 1
                if args.verbose:
                    print(f"ok   {result.section}/{result.id}")
            else:
                failed += 1
                print(f"FAIL {path}: {result.describe()}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def cmd_demo(args: argparse.Namespace) -> int:
    try:
        options = options_from_args(args)
    except CirullaError as exc:
        print(f"cirulla rules demo: {exc}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    game = Game(options, seed=rng.getrandbits(64))
    sides = " ".join(f"side{i:>2}" for i in range(options.sides))
    print(f"deal  {sides}   (deal points -> running totals)")
    while not game.is_over:
        for event in game.apply(rng.choice(game.legal_actions())):
            if isinstance(event, DealScored):
                pts = " ".join(f"{s.total:>6}" for s in event.score.sides)
                totals = " ".join(f"{t:>4}" for t in event.totals)
                print(f"{event.deal:>4}  {pts}   -> {totals}")
            elif isinstance(event, GameOver):
                how = " by cappotto" if event.cappotto else ""
                print(f"side {event.winner} wins{how}, {event.totals}")
    return 0


def _ratio(a: RulesReport, b: RulesReport) -> float | None:
    """How many times ``a``'s deals per CPU second ``b``'s are (one decimal)."""
    if not a["deals_per_cpu_s"] or not b["deals_per_cpu_s"]:
        return None
    return round(float(a["deals_per_cpu_s"]) / float(b["deals_per_cpu_s"]), 1)


def figures(
    runs: dict[str, RulesReport],
    api: RulesReport,
    before: RulesReport,
    search: RulesReport,
    listed: RulesReport | None = None,
    floor: RulesReport | None = None,
) -> dict[str, Figure]:
    """Each headline figure beside its baseline measured in the same run (deals per CPU
    second, one core): docs/performance.md's table reads them. With ``floor`` (the api
    program on a game doing no rules work), ``api`` also says the highest ratio to its
    baseline that any ``Game`` could reach in this run (``reachable_ratio``)."""
    python = runs["python"]
    out: dict[str, Figure] = {
        "api": {
            "deals_per_cpu_s": api["deals_per_cpu_s"],
            "baseline": "api_before",
            "baseline_deals_per_cpu_s": before["deals_per_cpu_s"],
            "ratio": _ratio(api, before),
            "over_naive_python": _ratio(api, python),
        },
        "search": {
            "deals_per_cpu_s": search["deals_per_cpu_s"],
            "baseline": "api_before",
            "baseline_deals_per_cpu_s": before["deals_per_cpu_s"],
            "ratio": _ratio(search, before),
            "over_naive_python": _ratio(search, python),
        },
    }
    if floor is not None:
        out["api"]["floor_deals_per_cpu_s"] = floor["deals_per_cpu_s"]
        out["api"]["reachable_ratio"] = _ratio(floor, before)
    if "native" in runs:
        native = runs["native"]
        out["native"] = {
            "deals_per_cpu_s": native["deals_per_cpu_s"],
            "baseline": "cores.python",
            "baseline_deals_per_cpu_s": python["deals_per_cpu_s"],
            "ratio": _ratio(native, python),
        }
    if listed is not None:
        out["native_listed"] = {
            "deals_per_cpu_s": listed["deals_per_cpu_s"],
            "baseline": "cores.python",
            "baseline_deals_per_cpu_s": python["deals_per_cpu_s"],
            "ratio": _ratio(listed, python),
        }
    return out


def cmd_bench(args: argparse.Namespace) -> int:
    try:
        options = options_from_args(args)
    except CirullaError as exc:
        print(f"cirulla bench rules: {exc}", file=sys.stderr)
        return 2
    if args.core != "both":
        try:
            one = bench_rules(options, args.seconds, args.seed, args.core)
        except CoreUnavailableError as exc:
            print(f"cirulla bench rules: {exc}", file=sys.stderr)
            return 2
        print(json.dumps(one))
        return 0
    machine = machine_at_start()
    cores = ["native", "python"] if CORE == "native" else ["python"]
    runs = {core: bench_rules(options, args.seconds, args.seed, core) for core in cores}
    listed = (
        bench_rules(options, args.seconds, args.seed, "native", listed=True)
        if "native" in runs
        else None
    )
    # the API's loops and their baseline in turns, so that their ratios meet one machine
    api, before, search = alternated(
        [
            lambda seconds, seed: bench_api(options, seconds, seed),
            lambda seconds, seed: bench_api_before(options, seconds, seed),
            lambda seconds, seed: bench_search(options, seconds, seed),
        ],
        args.seconds,
        args.seed,
        API_ROUNDS,
    )
    floor = (
        bench_api_floor(
            options, args.seconds, args.seed, max(1, round(api["actions"] / max(1, api["deals"])))
        )
        if "native" in runs
        else None
    )
    report: BenchReport = {
        "benchmark": "rules",
        "core": CORE,
        "cores": runs,
        # what a Python program calling Game.legal_actions() and Game.apply() sees
        "api": api,
        "api_before": before,
        "search": search,
        "user_sees_deals_per_cpu_s": api["deals_per_cpu_s"],
        "figures": figures(runs, api, before, search, listed, floor),
        "machine": machine_at_end(machine),
    }
    if floor is not None:
        report["api_floor"] = floor
    if listed is not None:
        report["native_listed"] = listed
    if native is not None:  # which code shuffled the seeded decks (native.seeded_decks)
        report["deck_isa"] = native.DECK_ISA
    if len(runs) == 2:
        report["native_over_python"] = _ratio(runs["native"], runs["python"])
        report["native_loop_over_api"] = _ratio(runs["native"], api)
    print(json.dumps(report))
    return 0
