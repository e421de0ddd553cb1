"""Run rule-case files (format ``cirulla-rule-cases/1``, see docs/rule-cases.md).

Each case is one rule application checked against the engine's own functions, so a
failing case points at one rule. Used by ``cirulla rules check`` and by the test suite.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cirulla.rules.actions import Declaration, declaration_codes
from cirulla.rules.captures import legal_captures
from cirulla.rules.cards import ACES_MASK, VALUES, WILD, names_of, parse_card, parse_mask
from cirulla.rules.core import native, require_native
from cirulla.rules.core import score_deal as native_score
from cirulla.rules.game import dealer_bonus
from cirulla.rules.options import Options
from cirulla.rules.scoring import DealScore, score_deal

FORMAT = "cirulla-rule-cases/1"
#: The public rule cases, shipped with the package (``cirulla rules check`` runs them).
BUNDLED_CASES = Path(__file__).parent / "data" / "rule-cases.json"


@dataclass(frozen=True)
class CaseResult:
    section: str
    id: str
    ok: bool
    expected: Any
    got: Any

    def describe(self) -> str:
        return f"{self.section}/{self.id}: expected {self.expected!r}, got {self.got!r}"


@dataclass(frozen=True)
class Core:
    """The rule functions a case checks, from one rules core."""

    legal_captures: Callable[[int, int, int, bool], tuple[int, ...]]
    declaration_codes: Callable[[int], tuple[int, ...]]
    dealer_bonus: Callable[[int, bool], int]
    score_deal: Callable[[Options, list[int], list[int]], DealScore]


PYTHON_CORE = Core(legal_captures, declaration_codes, dealer_bonus, score_deal)


def core_functions(name: str) -> Core:
    """``python`` (the reference) or ``native`` (rules/cirulla/rules/_native.c)."""
    if name == "python":
        return PYTHON_CORE
    if name != "native":
        raise ValueError(f"core must be native or python, not {name!r}")
    require_native()
    return Core(native.captures, native.declaration_codes, native.dealer_bonus, native_score)


def _captures(case: dict[str, Any], core: Core) -> tuple[Any, Any]:
    options = Options.from_dict(case.get("options", {}))
    table = parse_mask(case["table"])
    card = parse_card(case["play"])
    named = {parse_card(k): v for k, v in case.get("named", {}).items()}
    wild = named.get(WILD, 0)
    value = wild if card == WILD and wild else VALUES[card]
    sets = core.legal_captures(table, value, wild, options.pairing_precedence)
    got = sorted(sorted(names_of(m)) for m in sets)
    expected = sorted(sorted(s) for s in case["expect"])
    return expected, got


def _declarations(case: dict[str, Any], core: Core) -> tuple[Any, Any]:
    hand = parse_mask(case["hand"])
    got = []
    for code in core.declaration_codes(hand):
        d = Declaration.from_code(code)
        assert d is not None
        got.append({"kind": d.kind.label, "points": d.points, "wild_value": d.wild_value})

    def key(d: dict[str, Any]) -> tuple[Any, ...]:
        return (d["kind"], d["points"], d["wild_value"] or 0)

    return sorted(case["expect"], key=key), sorted(got, key=key)


def _dealer_bonus(case: dict[str, Any], core: Core) -> tuple[Any, Any]:
    options = Options.from_dict(case.get("options", {}))
    table = parse_mask(case["table"])
    got: Any = (
        "redeal"
        if (table & ACES_MASK).bit_count() >= 2
        else core.dealer_bonus(table, options.dealer_low_bonus)
    )
    return case["expect"], got


def _deal_scoring(case: dict[str, Any], core: Core) -> tuple[Any, Any]:
    options = Options.from_dict(case.get("options", {}))
    captured = [parse_mask(cards) for cards in case["captured"]]
    score = core.score_deal(options, captured, case["scope"])
    return case["expect"], score.to_dict()


SECTIONS: dict[str, Callable[[dict[str, Any], Core], tuple[Any, Any]]] = {
    "captures": _captures,
    "declarations": _declarations,
    "dealer_bonus": _dealer_bonus,
    "deal_scoring": _deal_scoring,
}


def run_cases(data: dict[str, Any], core: str = "python") -> Iterator[CaseResult]:
    """Every case of a rule-case file against one core (``python`` or ``native``)."""
    functions = core_functions(core)
    if data.get("format") != FORMAT:
        raise ValueError(f"not a rule-case file: format is {data.get('format')!r}, not {FORMAT!r}")
    for section, runner in SECTIONS.items():
        for case in data.get(section, []):
            try:
                expected, got = runner(case, functions)
            except Exception as exc:  # a case that crashes the engine is a failing case
                expected, got = case.get("expect"), f"error: {exc}"
            yield CaseResult(section, case.get("id", "?"), expected == got, expected, got)


def run_file(path: str | Path, core: str = "python") -> list[CaseResult]:
    return list(run_cases(json.loads(Path(path).read_text()), core))
