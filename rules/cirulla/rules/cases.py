"""Run rule-case files (format ``cirulla-rule-cases/1``, see docs/rule-cases.md).

Each case is one rule application checked against the engine's own functions, so a
failing case points at one rule. Used by ``cirulla rules check`` and by the test suite.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict, TypeVar

from cirulla.rules.actions import Declaration, declaration_codes
from cirulla.rules.captures import legal_captures
from cirulla.rules.cards import ACES_MASK, VALUES, WILD, names_of, parse_card, parse_mask
from cirulla.rules.core import native, require_native
from cirulla.rules.core import score_deal as native_score
from cirulla.rules.game import dealer_bonus
from cirulla.rules.options import Options, OptionValue
from cirulla.rules.scoring import DealScore, DealScoreDoc, score_deal

FORMAT = "cirulla-rule-cases/1"
#: The public rule cases, shipped with the package (``cirulla rules check`` runs them).
BUNDLED_CASES = Path(__file__).parent / "data" / "rule-cases.json"


class CaptureCase(TypedDict):
    """A ``captures`` case: the sets a card played on ``table`` may take."""

    id: NotRequired[str]
    options: NotRequired[dict[str, OptionValue]]
    table: list[str]
    play: str
    named: NotRequired[dict[str, int]]  # the wild card's named value, by card
    expect: list[list[str]]


class DeclarationExpected(TypedDict):
    kind: str
    points: int
    wild_value: int | None


class DeclarationCase(TypedDict):
    """A ``declarations`` case: what a hand may declare."""

    id: NotRequired[str]
    hand: list[str]
    expect: list[DeclarationExpected]


class DealerBonusCase(TypedDict):
    """A ``dealer_bonus`` case: the dealer's scope for the four table cards, or "redeal"."""

    id: NotRequired[str]
    options: NotRequired[dict[str, OptionValue]]
    table: list[str]
    expect: int | str


class DealScoringCase(TypedDict):
    """A ``deal_scoring`` case: each side's points for its captured cards and scope."""

    id: NotRequired[str]
    options: NotRequired[dict[str, OptionValue]]
    captured: list[list[str]]
    scope: list[int]
    expect: DealScoreDoc


class CaseFile(TypedDict):
    """A rule-case file (``cirulla-rule-cases/1``, docs/rule-cases.md)."""

    format: str
    captures: NotRequired[list[CaptureCase]]
    declarations: NotRequired[list[DeclarationCase]]
    dealer_bonus: NotRequired[list[DealerBonusCase]]
    deal_scoring: NotRequired[list[DealScoringCase]]


@dataclass(frozen=True)
class CaseResult:
    section: str
    id: str
    ok: bool
    expected: object  # the case's JSON, compared with what the core gave
    got: object

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


def _captures(case: CaptureCase, core: Core) -> tuple[object, object]:
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


def _declarations(case: DeclarationCase, core: Core) -> tuple[object, object]:
    hand = parse_mask(case["hand"])
    got: list[DeclarationExpected] = []
    for code in core.declaration_codes(hand):
        d = Declaration.from_code(code)
        assert d is not None
        got.append({"kind": d.kind.label, "points": d.points, "wild_value": d.wild_value})

    def key(d: DeclarationExpected) -> tuple[str, int, int]:
        return (d["kind"], d["points"], d["wild_value"] or 0)

    return sorted(case["expect"], key=key), sorted(got, key=key)


def _dealer_bonus(case: DealerBonusCase, core: Core) -> tuple[object, object]:
    options = Options.from_dict(case.get("options", {}))
    table = parse_mask(case["table"])
    got: int | str = (
        "redeal"
        if (table & ACES_MASK).bit_count() >= 2
        else core.dealer_bonus(table, options.dealer_low_bonus)
    )
    return case["expect"], got


def _deal_scoring(case: DealScoringCase, core: Core) -> tuple[object, object]:
    options = Options.from_dict(case.get("options", {}))
    captured = [parse_mask(cards) for cards in case["captured"]]
    score = core.score_deal(options, captured, case["scope"])
    return case["expect"], score.to_dict()


#: The sections of a rule-case file, in the order they run.
SECTIONS = ("captures", "declarations", "dealer_bonus", "deal_scoring")

C = TypeVar("C", CaptureCase, DeclarationCase, DealerBonusCase, DealScoringCase)


def _run_section(
    section: str,
    cases: list[C],
    runner: Callable[[C, Core], tuple[object, object]],
    core: Core,
) -> Iterator[CaseResult]:
    for case in cases:
        expected: object
        got: object
        try:
            expected, got = runner(case, core)
        except Exception as exc:  # a case that crashes the engine is a failing case
            expected, got = case.get("expect"), f"error: {exc}"
        yield CaseResult(section, case.get("id", "?"), expected == got, expected, got)


def _check_shape(data: object) -> None:
    """The file's frame, before any case runs: a wrong frame is the file's fault, named in
    one line (``ValueError``), where a wrong case is one failing case among the others."""
    if not isinstance(data, dict):
        raise ValueError(
            f"not a rule-case file: expected a JSON object with format {FORMAT!r}, "
            f"got {type(data).__name__}"
        )
    if data.get("format") != FORMAT:
        raise ValueError(f"not a rule-case file: format is {data.get('format')!r}, not {FORMAT!r}")
    for section in SECTIONS:
        cases = data.get(section, [])
        if not isinstance(cases, list):
            raise ValueError(f"{section}: expected a list of cases, got {type(cases).__name__}")
        for number, case in enumerate(cases):
            if not isinstance(case, dict):
                got = type(case).__name__
                raise ValueError(f"{section}[{number}]: expected a case (a JSON object), got {got}")


def run_cases(data: CaseFile, core: str = "python") -> Iterator[CaseResult]:
    """Every case of a rule-case file against one core (``python`` or ``native``)."""
    functions = core_functions(core)
    _check_shape(data)
    yield from _run_section("captures", data.get("captures", []), _captures, functions)
    yield from _run_section("declarations", data.get("declarations", []), _declarations, functions)
    yield from _run_section("dealer_bonus", data.get("dealer_bonus", []), _dealer_bonus, functions)
    yield from _run_section("deal_scoring", data.get("deal_scoring", []), _deal_scoring, functions)


def run_file(path: str | Path, core: str = "python") -> list[CaseResult]:
    data: CaseFile = json.loads(Path(path).read_text())  # checked by its frame, then per case
    return list(run_cases(data, core))
