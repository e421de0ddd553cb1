"""Standings from journaled games: per-bot and head-to-head tables, results.json.

A game counts as a win for a bot if a side it sits on won. For Elo, each game is broken
into pairwise comparisons between seats of different bots: the winner's side beats every
other side, and (3 players) the losers are compared on points, more points winning and
equal points drawing. With 2 or 4 players that is simply the game result.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import NotRequired, TypedDict

from rich.table import Table

from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.matches.outcome import Outcome
from cirulla.clients.tournament.ratings import RateKey, rate_games
from cirulla.clients.tournament.stats import (
    EloEstimate,
    Penta,
    Sprt,
    Wdl,
    elo_interval,
    los,
    penta_interval,
)
from cirulla.rules.options import side_of


def side_ranks(result: GameResult) -> list[int]:
    """Rank per side (0 = best): the winner first, the others by points."""
    sides = len(result.totals)
    if result.winner is None:
        return [int(side in result.forfeit_sides) for side in range(sides)]
    ranks = [0] * sides
    for side in range(sides):
        if side != result.winner:
            ranks[side] = 1 + sum(
                1
                for other in range(sides)
                if other != result.winner and result.totals[other] > result.totals[side]
            )
    return ranks


def compare(result: GameResult, side_a: int, side_b: int) -> float:
    """Score of side_a against side_b in this game: 1, 1/2 or 0."""
    ranks = side_ranks(result)
    if ranks[side_a] < ranks[side_b]:
        return 1.0
    if ranks[side_a] > ranks[side_b]:
        return 0.0
    return 0.5


@dataclass
class BotLine:
    """Running totals of one bot; ``wdl`` is its pairwise record against other bots."""

    name: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    points: float = 0.0
    deals: int = 0
    wdl: Wdl = field(default_factory=Wdl)
    problems: dict[str, int] = field(default_factory=dict)
    rating_mu: float = 25.0
    rating_sigma: float = 25.0 / 3

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def points_per_deal(self) -> float:
        return self.points / self.deals if self.deals else 0.0

    @property
    def elo(self) -> EloEstimate:
        return elo_interval(self.wdl)

    @property
    def los(self) -> float:
        return los(self.wdl)


@dataclass
class HeadToHead:
    """A two-bot pairing from the first bot's point of view.

    ``penta`` counts its complete duplicate pairs (both games of a deck set finished); the
    SPRT decides on them (``sprt_llr``), as fastchess does with paired games;
    ``sprt_llr_trinomial`` treats every game as independent, for comparison.
    """

    pairing: str
    first: str
    second: str
    wdl: Wdl = field(default_factory=Wdl)
    points: tuple[float, float] = (0.0, 0.0)
    deals: int = 0
    penta: Penta = field(default_factory=Penta)
    sprt_llr: float | None = None
    sprt_llr_trinomial: float | None = None
    sprt_decision: str | None = None

    @property
    def elo_pairs(self) -> EloEstimate:
        """Elo and its interval from the pentanomial counts."""
        return penta_interval(self.penta)


@dataclass
class Standings:
    bots: list[BotLine]
    head_to_head: list[HeadToHead]
    games: int
    void_games: int


def side_bots(result: GameResult, players: int) -> dict[int, str]:
    """The bot of each side (a partnership is always two seats of the same bot)."""
    sides: dict[int, str] = {}
    for seat, bot in enumerate(result.seats):
        sides.setdefault(side_of(seat, players), bot)
    return dict(sorted(sides.items()))


def _record_game(
    lines: dict[str, BotLine], result: GameResult, players: int
) -> dict[tuple[str, str], Wdl]:
    """Update per-bot totals; return this game's pairwise results by (bot, opponent)."""
    for seat, bot in enumerate(result.seats):
        outcome = result.seat_outcomes[seat] if seat < len(result.seat_outcomes) else Outcome.OK
        if outcome != Outcome.OK:
            problems = lines[bot].problems
            problems[outcome] = problems.get(outcome, 0) + 1
    sides = side_bots(result, players)
    for side, bot in sides.items():
        if result.deals:
            lines[bot].points += result.totals[side]
            lines[bot].deals += result.deals
    for bot in set(sides.values()):
        line = lines[bot]
        line.games += 1
        bot_sides = [side for side, b in sides.items() if b == bot]
        if result.winner is None:
            if all(side in result.forfeit_sides for side in bot_sides) and len(
                result.forfeit_sides
            ) < len(sides):
                line.losses += 1
            else:
                line.draws += 1
        elif sides.get(result.winner) == bot:
            line.wins += 1
        else:
            line.losses += 1
    pair_wdl: dict[tuple[str, str], Wdl] = {}
    for side, bot in sides.items():
        for other_side, other in sides.items():
            if other_side <= side or other == bot:
                continue
            score = compare(result, side, other_side)
            wdl = Wdl(int(score == 1.0), int(score == 0.5), int(score == 0.0))
            pair_wdl[(bot, other)] = pair_wdl.get((bot, other), Wdl()) + wdl
            pair_wdl[(other, bot)] = pair_wdl.get((other, bot), Wdl()) + wdl.flipped()
    for (bot, _), wdl in pair_wdl.items():
        lines[bot].wdl = lines[bot].wdl + wdl
    return pair_wdl


def _rate(lines: dict[str, BotLine], results: Sequence[GameResult], players: int) -> None:
    """Plackett-Luce (openskill) ratings, game by game in schedule order (``ratings``:
    going on from the last refresh's)."""
    keys: list[RateKey] = []
    for result in results:
        sides = side_bots(result, players)
        ranks = side_ranks(result)
        keys.append((tuple(sides.values()), tuple(ranks[s] for s in sides)))
    for name, rating in rate_games(tuple(lines), keys).items():
        lines[name].rating_mu = rating.mu
        lines[name].rating_sigma = rating.sigma


class Tally:
    """``standings``' sums, added to one game at a time: the runner's SPRT check reads the
    pairings after every game, and adding up every game played again each time made a
    long SPRT run quadratic (144 ms a check at 10,000 games). ``standings`` adds all
    games up through one too, so both are one definition.

    Exact whatever order the games come in: every sum is of integers, and the pairings
    are listed in the order of their first game by index, as ``standings`` lists them.
    A deck set with more than two games of a pairing (``standings`` counts none of its
    games as a pair) sends the pairs' counts back to the whole count of every set."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.lines = {name: BotLine(name) for name in settings.bots}
        self.pairs: dict[tuple[str, ...], HeadToHead] = {}
        #: each pairing's first game (its lowest index): the pairings' order
        self.first_game: dict[tuple[str, ...], int] = {}
        #: the first bot's game scores per duplicate deck set of each pairing
        self.sets: dict[tuple[tuple[str, ...], int], list[float]] = {}
        #: each pairing's complete pairs so far (every set of exactly two games)
        self.penta: dict[tuple[str, ...], Penta] = {}
        self.overfull = False  # a set of more than two games was seen
        self.games = 0
        self.void = 0

    def add(self, result: GameResult) -> None:
        self.games += 1
        self.void += result.winner is None
        pair_wdl = _record_game(self.lines, result, self.settings.players)
        if len(set(result.group)) == 2 and len(result.group) == 2:
            a, b = result.group
            h2h = self.pairs.setdefault(result.group, HeadToHead(" vs ".join(result.group), a, b))
            first = self.first_game.get(result.group, result.index)
            self.first_game[result.group] = min(first, result.index)
            game = pair_wdl.get((a, b), Wdl())
            h2h.wdl = h2h.wdl + game
            scores = self.sets.setdefault((result.group, result.deal_set), [])
            scores.append(game.score)
            if len(scores) == 2:  # both seatings of the deck set played: one duplicate pair
                self.penta[result.group] = self.penta.get(result.group, Penta()) + Penta.of_pair(
                    *scores
                )
            self.overfull = self.overfull or len(scores) > 2
            if result.deals:
                sides = side_bots(result, self.settings.players)
                pts = {bot: float(result.totals[side]) for side, bot in sides.items()}
                h2h.points = (h2h.points[0] + pts[a], h2h.points[1] + pts[b])
                h2h.deals += result.deals

    def _pentas(self) -> dict[tuple[str, ...], Penta]:
        if not self.overfull:
            return self.penta
        pentas: dict[tuple[str, ...], Penta] = {}
        for (group, _), scores in self.sets.items():
            if len(scores) == 2:
                pentas[group] = pentas.get(group, Penta()) + Penta.of_pair(*scores)
        return pentas

    def standings(self, rated: Sequence[GameResult] | None = None) -> Standings:
        """The standings of the games added (copies: adding more changes none of them);
        openskill ratings from ``rated`` (the same games in schedule order), else none."""
        lines = {
            name: replace(line, problems=dict(line.problems)) for name, line in self.lines.items()
        }
        order = sorted(self.pairs, key=lambda group: self.first_game[group])
        pairs = [replace(self.pairs[group]) for group in order]
        pentas = self._pentas()
        sprt = Sprt(*self.settings.sprt) if self.settings.sprt else None
        for group, h2h in zip(order, pairs, strict=True):
            h2h.penta = pentas.get(group, Penta())
            if sprt is not None:
                h2h.sprt_llr = sprt.llr_penta(h2h.penta)
                h2h.sprt_llr_trinomial = sprt.llr(h2h.wdl)
                h2h.sprt_decision = sprt.verdict(h2h.sprt_llr)
        if rated is not None:
            _rate(lines, rated, self.settings.players)
        bots = sorted(lines.values(), key=lambda b: (-b.wdl.score, -b.win_rate, b.name))
        return Standings(bots, pairs, self.games, self.void)


def standings(
    settings: Settings, results: Iterable[GameResult], *, ratings: bool = True
) -> Standings:
    """Everything the tables and ``results.json`` show. ``ratings=False`` leaves the
    openskill ratings out (most of the cost): the runner's SPRT check after every game
    needs only the pairings' counts (and keeps a ``Tally`` for it)."""
    ordered = sorted(results, key=lambda r: r.index)
    tally = Tally(settings)
    for result in ordered:
        tally.add(result)
    return tally.standings(ordered if ratings else None)


def _fmt_elo(est: EloEstimate) -> str:
    """``+89 ±199`` when the interval is finite, else ``-191 [-inf,+35]``."""

    def one(x: float) -> str:
        return ("+inf" if x > 0 else "-inf") if math.isinf(x) else f"{round(x) + 0:+d}"

    if math.isinf(est.elo):
        return one(est.elo)
    if math.isinf(est.margin):
        return f"{one(est.elo)} [{one(est.low)},{one(est.high)}]"
    return f"{one(est.elo)} ±{est.margin:.0f}"


def _fmt_problems(problems: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(problems.items())) or "-"


def bots_table(st: Standings, title: str = "Standings") -> Table:
    """Per bot: results, points per deal, Elo against the field, LOS, openskill rating."""
    table = Table(title=title, caption="Elo and LOS from pairwise results against the field")
    table.add_column("bot")
    table.add_column("games", justify="right")
    table.add_column("W-L-D", justify="right")
    table.add_column("win%", justify="right")
    table.add_column("pts/deal", justify="right")
    table.add_column("Elo ±95%", justify="right")
    table.add_column("LOS", justify="right")
    table.add_column("skill", justify="right")
    show_problems = any(b.problems for b in st.bots)
    if show_problems:
        table.add_column("problems")
    for b in st.bots:
        row = [
            b.name,
            str(b.games),
            f"{b.wins}-{b.losses}-{b.draws}",
            f"{b.win_rate:.0%}",
            f"{b.points_per_deal:.2f}",
            _fmt_elo(b.elo),
            f"{b.los:.0%}",
            f"{b.rating_mu:.1f}±{b.rating_sigma:.1f}",
        ]
        if show_problems:
            row.append(_fmt_problems(b.problems))
        table.add_row(*row)
    return table


def pairs_table(st: Standings, sprt: Sprt | None = None) -> Table:
    table = Table(title="Head to head (first bot's view)")
    table.add_column("pairing")
    table.add_column("W-L-D", justify="right")
    table.add_column("score", justify="right")
    table.add_column("Elo (95%)", justify="right")
    table.add_column("LOS", justify="right")
    table.add_column("Ptnml(0-2)", justify="right")
    table.add_column("Elo pairs (95%)", justify="right")
    table.add_column("pts/deal", justify="right")
    show_sprt = any(h.sprt_llr is not None for h in st.head_to_head)
    if show_sprt:
        table.add_column("SPRT (bounds) [elo0, elo1]", justify="right")
        table.add_column("SPRT", justify="right")
    for h in st.head_to_head:
        est = elo_interval(h.wdl)
        row = [
            h.pairing,
            f"{h.wdl.wins}-{h.wdl.losses}-{h.wdl.draws}",
            f"{h.wdl.score:.0%}",
            _fmt_elo(est),
            f"{los(h.wdl):.0%}",
            str(list(h.penta.counts)),
            _fmt_elo(h.elo_pairs) if h.penta.pairs else "-",
            f"{h.points[0] / h.deals:.2f} : {h.points[1] / h.deals:.2f}" if h.deals else "-",
        ]
        if show_sprt:
            llr = h.sprt_llr or 0.0
            shown = sprt.describe(llr) if sprt is not None else f"LLR {llr:.2f}"
            decided = {"H1": "H1 accepted", "H0": "H0 accepted"}
            row += [shown, decided.get(h.sprt_decision or "", "running")]
        table.add_row(*row)
    return table


class WdlDoc(TypedDict):
    wins: int
    draws: int
    losses: int


class OpenSkillDoc(TypedDict):
    mu: float
    sigma: float


class BotDoc(TypedDict):
    """A bot's line of ``results.json``'s standings (``BotLine``)."""

    bot: str
    games: int
    wins: int
    losses: int
    draws: int
    win_rate: float
    points_per_deal: float
    pairwise: WdlDoc
    #: Elo and its 95% interval; null where unbounded (JSON has no infinity)
    elo: float | None
    elo_95: list[float | None]
    los: float
    openskill: OpenSkillDoc
    #: games lost per outcome (crash, timeout, ...)
    problems: dict[str, int]


class PentaDoc(TypedDict):
    pairs: int
    counts: list[int]
    elo: float | None
    elo_95: list[float | None]


class SprtDoc(TypedDict):
    model: str
    llr: float | None
    llr_trinomial: float | None
    lower: float
    upper: float
    decision: str | None


class PairDoc(TypedDict):
    """A pairing of ``results.json``'s standings (``HeadToHead``)."""

    pairing: str
    first: str
    second: str
    wins: int
    draws: int
    losses: int
    elo: float | None
    elo_95: list[float | None]
    los: float
    points_per_deal: list[float] | None
    pentanomial: PentaDoc
    #: with ``--sprt`` only
    sprt: NotRequired[SprtDoc]


class StandingsDoc(TypedDict):
    games: int
    void_games: int
    bots: list[BotDoc]
    head_to_head: list[PairDoc]


class GameCounts(TypedDict):
    """How far a tournament is, written beside its standings by the runner."""

    scheduled_games: int
    finished_games: int


class ResultsDoc(TypedDict):
    """``results.json``: the settings, the standings and every game in order."""

    settings: dict[str, object]
    standings: StandingsDoc
    games: list[dict[str, object]]
    scheduled_games: NotRequired[int]
    finished_games: NotRequired[int]


def _finite(x: float) -> float | None:
    """JSON has no infinity: an unbounded Elo (or interval end) is written as null."""
    return x if math.isfinite(x) else None


def standings_dict(st: Standings, sprt: Sprt | None = None) -> StandingsDoc:
    bots: list[BotDoc] = []
    for b in st.bots:
        est = b.elo
        bots.append(
            {
                "bot": b.name,
                "games": b.games,
                "wins": b.wins,
                "losses": b.losses,
                "draws": b.draws,
                "win_rate": b.win_rate,
                "points_per_deal": b.points_per_deal,
                "pairwise": {"wins": b.wdl.wins, "draws": b.wdl.draws, "losses": b.wdl.losses},
                "elo": _finite(est.elo),
                "elo_95": [_finite(est.low), _finite(est.high)],
                "los": b.los,
                "openskill": {"mu": b.rating_mu, "sigma": b.rating_sigma},
                "problems": dict(b.problems),
            }
        )
    pairs: list[PairDoc] = []
    for h in st.head_to_head:
        est = elo_interval(h.wdl)
        entry: PairDoc = {
            "pairing": h.pairing,
            "first": h.first,
            "second": h.second,
            "wins": h.wdl.wins,
            "draws": h.wdl.draws,
            "losses": h.wdl.losses,
            "elo": _finite(est.elo),
            "elo_95": [_finite(est.low), _finite(est.high)],
            "los": los(h.wdl),
            "points_per_deal": [p / h.deals for p in h.points] if h.deals else None,
            "pentanomial": {
                "pairs": h.penta.pairs,
                "counts": list(h.penta.counts),
                "elo": _finite(h.elo_pairs.elo) if h.penta.pairs else None,
                "elo_95": [_finite(h.elo_pairs.low), _finite(h.elo_pairs.high)],
            },
        }
        if sprt is not None:
            entry["sprt"] = {
                "model": "pentanomial",
                "llr": h.sprt_llr,
                "llr_trinomial": h.sprt_llr_trinomial,
                "lower": sprt.lower,
                "upper": sprt.upper,
                "decision": h.sprt_decision,
            }
        pairs.append(entry)
    return {"games": st.games, "void_games": st.void_games, "bots": bots, "head_to_head": pairs}


def results_document(
    settings: Settings, results: Iterable[GameResult], extra: GameCounts | None = None
) -> ResultsDoc:
    """The content of results.json: settings, standings and every game in order."""
    ordered = sorted(results, key=lambda r: r.index)
    st = standings(settings, ordered)
    sprt = Sprt(*settings.sprt) if settings.sprt else None
    doc: ResultsDoc = {
        "settings": settings.to_dict(),
        "standings": standings_dict(st, sprt),
        "games": [r.to_dict() for r in ordered],
    }
    if extra is not None:
        doc["scheduled_games"] = extra["scheduled_games"]
        doc["finished_games"] = extra["finished_games"]
    return doc
