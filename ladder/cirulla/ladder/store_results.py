"""Results and ratings: the only writer of ``ratings`` and ``rating_history``.

**Recording a result** is one transaction that moves the match from ``claimed`` or
``running`` to ``finished`` with a guarded UPDATE (rowcount 1, ``store_matches``), stores
the seats' outcomes, applies the openskill update with its history rows and the failure
counts (``store_bots``). A second report of the same match changes nothing (``finish``
returns False). A duplicate twin is rated once both games are over (``settle_pair``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, RowMapping, func, insert, select, update

from cirulla.ladder import rating
from cirulla.ladder.fields import shown
from cirulla.ladder.schema import (
    bot_versions,
    ladder_matches,
    ladder_seats,
    rating_history,
    ratings,
)
from cirulla.ladder.store_bots import BotStore
from cirulla.ladder.store_rows import (
    BotHistory,
    HeadToHead,
    MatchOutcome,
    NotFound,
    RatingPoint,
    RatingView,
    SeatOutcome,
    Standing,
)

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore


class ResultStore:
    """Recording results, rating them, and the standings and histories they make."""

    def __init__(self, ladder: LadderStore) -> None:
        self.ladder = ladder

    def finish(self, match_id: str, outcome: MatchOutcome) -> bool:
        """Record a result and its rating update, exactly once (see the module docstring).

        Returns False, changing nothing, when the match is not claimed or running any more
        (already finished or cancelled: a second report).
        """
        now = self.ladder.now()
        matches = self.ladder.matches
        with self.ladder.engine.begin() as conn:
            match = (
                conn.execute(select(ladder_matches).where(ladder_matches.c.id == match_id))
                .mappings()
                .first()
            )
            if match is None:
                raise NotFound(f"no ladder match {shown(match_id)}")
            seats = (
                conn.execute(
                    select(
                        ladder_seats, bot_versions.c.bot_id, bot_versions.c.validation_games_left
                    )
                    .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
                    .where(ladder_seats.c.match_id == match_id)
                    .order_by(ladder_seats.c.seat)
                )
                .mappings()
                .all()
            )
            validating = any(s["validation_games_left"] > 0 for s in seats)
            unrated = bool(match["unrated"])
            rated = not outcome.void and not validating and not unrated
            notes = json.loads(match["notes"] or "[]") + list(outcome.notes)
            if unrated and not outcome.void:
                notes.append("unrated: requested as an unrated game")
            elif validating and not outcome.void:
                notes.append("unrated: validation game of a new bot version")
            if not matches.record_result(
                conn,
                match_id,
                finished_at=now,
                result=outcome.result_json(),
                rated=rated,
                notes=json.dumps(notes),
            ):
                return False
            BotStore.lock_versions(conn, {s["version_id"] for s in seats})
            by_seat = {s.seat: s for s in outcome.seats}
            sides = 2 if match["queue"] == "4p" else len(seats)
            for seat in seats:
                result = by_seat.get(seat["seat"], SeatOutcome(seat["seat"]))
                side = seat["side"]
                points = outcome.totals[side] if side < len(outcome.totals) else None
                matches.record_seat(
                    conn, match_id, seat["seat"], result.outcome, result.fault, points
                )
                self.ladder.bots.count_failure(conn, seat, result, match_id, outcome.void, unrated)
            if rated and not match["pair_id"]:
                self._rate(conn, match["queue"], match_id, seats, sides, outcome, now)
            elif match["pair_id"]:
                # A duplicate twin is rated only once both games are over: until then its
                # result must not show through the standings (withheld means withheld).
                self.settle_pair(conn, match["pair_id"], now)
            return True

    def settle_pair(self, conn: Connection, pair_id: str, now: float) -> None:
        """Rate the finished games of a duplicate pair once none of it is in flight.

        A game counts as rated already when it has rating history rows (each rating
        update writes them), so calling this again never rates a game twice.
        """
        if self.ladder.views.pair_left(conn, pair_id):
            return
        games = conn.execute(
            select(ladder_matches)
            .where(
                ladder_matches.c.pair_id == pair_id,
                ladder_matches.c.status == "finished",
                ladder_matches.c.rated.is_(True),
            )
            .order_by(ladder_matches.c.finished_at, ladder_matches.c.id)
        ).mappings()
        for game in list(games):
            done = conn.execute(
                select(func.count())
                .select_from(rating_history)
                .where(rating_history.c.match_id == game["id"])
            ).scalar_one()
            if done:
                continue
            seats = (
                conn.execute(
                    select(ladder_seats)
                    .where(ladder_seats.c.match_id == game["id"])
                    .order_by(ladder_seats.c.seat)
                )
                .mappings()
                .all()
            )
            result = json.loads(game["result"] or "{}")
            outcome = MatchOutcome(
                winner=result.get("winner"),
                totals=tuple(result.get("totals") or ()),
                forfeit_sides=tuple(result.get("forfeit_sides") or ()),
                seats=(),
            )
            sides = 2 if game["queue"] == "4p" else len(seats)
            self._rate(conn, game["queue"], game["id"], seats, sides, outcome, now)

    def settle_pair_of(self, match_id: str) -> None:
        """After a game of a pair ended without a result (cancelled): rate its twin."""
        with self.ladder.engine.begin() as conn:
            pair = self.ladder.views.pair_of(conn, match_id)
            if pair:
                self.settle_pair(conn, pair, self.ladder.now())

    @staticmethod
    def start_version(
        conn: Connection, version_id: int, previous_id: int | None, queue_text: str
    ) -> None:
        """A new bot version's ratings, one per queue, from its previous version's
        (``rating.new_version_skill``), in the transaction that adds the version."""
        for queue in queue_text.split(","):
            old = None
            if previous_id is not None:
                old_row = conn.execute(
                    select(ratings.c.mu, ratings.c.sigma).where(
                        ratings.c.version_id == previous_id, ratings.c.queue == queue
                    )
                ).first()
                if old_row is not None:
                    old = rating.Skill(old_row.mu, old_row.sigma)
            start = rating.new_version_skill(old)
            conn.execute(
                insert(ratings).values(
                    version_id=version_id,
                    queue=queue,
                    mu=start.mu,
                    sigma=start.sigma,
                    games=0,
                    wins=0,
                    draws=0,
                    last_played_at=None,
                )
            )

    @staticmethod
    def _rate(
        conn: Connection,
        queue: str,
        match_id: str,
        seats: Sequence[RowMapping],
        sides: int,
        outcome: MatchOutcome,
        now: float,
    ) -> None:
        ranks = rating.ranks_of(sides, outcome.winner, outcome.totals, outcome.forfeit_sides)
        versions_by_side: list[list[int]] = [[] for _ in range(sides)]
        for seat in seats:
            if seat["version_id"] not in versions_by_side[seat["side"]]:
                versions_by_side[seat["side"]].append(seat["version_id"])
        current: dict[int, Any] = {}
        for vid in {v for side in versions_by_side for v in side}:
            row = (
                conn.execute(
                    select(ratings).where(ratings.c.version_id == vid, ratings.c.queue == queue)
                )
                .mappings()
                .first()
            )
            if row is None:
                row = {  # type: ignore[assignment]
                    "mu": rating.MU0,
                    "sigma": rating.SIGMA0,
                    "last_played_at": None,
                    "games": 0,
                }
                conn.execute(
                    insert(ratings).values(
                        version_id=vid, queue=queue, mu=rating.MU0, sigma=rating.SIGMA0
                    )
                )
            current[vid] = row
        teams = [
            [
                rating.Skill(
                    current[v]["mu"],
                    rating.inflate(current[v]["sigma"], current[v]["last_played_at"], now),
                )
                for v in side
            ]
            for side in versions_by_side
        ]
        new = rating.rate(teams, ranks)
        best = min(ranks)
        sole_winner = ranks.count(best) == 1
        for side, team in enumerate(versions_by_side):
            won = ranks[side] == best and sole_winner
            drew = ranks[side] == best and not sole_winner
            for vid, skill in zip(team, new[side], strict=True):
                conn.execute(
                    update(ratings)
                    .where(ratings.c.version_id == vid, ratings.c.queue == queue)
                    .values(
                        mu=skill.mu,
                        sigma=skill.sigma,
                        games=ratings.c.games + 1,
                        wins=ratings.c.wins + (1 if won else 0),
                        draws=ratings.c.draws + (1 if drew else 0),
                        last_played_at=now,
                    )
                )
                conn.execute(
                    insert(rating_history).values(
                        version_id=vid,
                        queue=queue,
                        match_id=match_id,
                        mu=skill.mu,
                        sigma=skill.sigma,
                        at=now,
                    )
                )

    # -- reads -----------------------------------------------------------------------

    def standings(self, queue: str, include_inactive: bool = False) -> list[Standing]:
        """Bots of ``queue`` (current versions), best ``mu - 3 sigma`` first."""
        now = self.ladder.now()
        out: list[Standing] = []
        for bot in self.ladder.bots.list_bots():
            if bot["state"] == "removed" or queue not in bot["queues"]:
                continue
            if not include_inactive and bot["state"] != "active":
                continue
            with self.ladder.engine.connect() as conn:
                row = (
                    conn.execute(
                        select(ratings).where(
                            ratings.c.version_id == bot["version_id"], ratings.c.queue == queue
                        )
                    )
                    .mappings()
                    .first()
                )
            if row is None:
                continue
            sigma = rating.inflate(row["sigma"], row["last_played_at"], now)
            out.append(
                {
                    "bot": bot,
                    "queue": queue,
                    "mu": row["mu"],
                    "sigma": sigma,
                    "score": rating.score(row["mu"], sigma),
                    "games": row["games"],
                    "wins": row["wins"],
                    "draws": row["draws"],
                    "provisional": row["games"] < rating.PROVISIONAL_GAMES,
                    "last_played_at": row["last_played_at"],
                    "rank": 0,
                }
            )
        out.sort(key=lambda e: (e["bot"]["state"] != "active", -e["score"], e["bot"]["name"]))
        for rank, entry in enumerate(out, 1):
            entry["rank"] = rank
        return out

    def rated_games(self, queue: str) -> int:
        """Rated games of ``queue`` whose rating is applied (no twin of a pair in play)."""
        with self.ladder.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count(func.distinct(rating_history.c.match_id))).where(
                        rating_history.c.queue == queue
                    )
                ).scalar_one()
            )

    def bot_history(self, name: str, queue: str | None = None, limit: int = 50) -> BotHistory:
        """A bot's versions, ratings, rating history and matches.

        Rating points of a game whose duplicate pair is still in play are left out: they
        would tell the result of the withheld game.
        """
        now = self.ladder.now()
        views = self.ladder.views
        with self.ladder.engine.connect() as conn:
            bot = BotStore.row(conn, name)
            versions = (
                conn.execute(
                    select(bot_versions)
                    .where(bot_versions.c.bot_id == bot["id"])
                    .order_by(bot_versions.c.version)
                )
                .mappings()
                .all()
            )
            vids = [v["id"] for v in versions]
            by_id = {v["id"]: v["version"] for v in versions}
            rating_rows = conn.execute(
                select(ratings).where(ratings.c.version_id == vids[-1])
            ).mappings()
            current: list[RatingView] = [
                {
                    "queue": r["queue"],
                    "mu": r["mu"],
                    "sigma": rating.inflate(r["sigma"], r["last_played_at"], now),
                    "games": r["games"],
                    "wins": r["wins"],
                    "draws": r["draws"],
                    "last_played_at": r["last_played_at"],
                    "provisional": r["games"] < rating.PROVISIONAL_GAMES,
                }
                for r in rating_rows
                if queue in (None, r["queue"])
            ]
            points_query = (
                select(rating_history)
                .where(rating_history.c.version_id.in_(vids))
                .order_by(rating_history.c.at, rating_history.c.id)
            )
            points: list[RatingPoint] = [
                {
                    "queue": p["queue"],
                    "version": by_id[p["version_id"]],
                    "match_id": p["match_id"],
                    "mu": p["mu"],
                    "sigma": p["sigma"],
                    "at": p["at"],
                }
                for p in conn.execute(points_query).mappings()
                if queue in (None, p["queue"]) and not views.pair_in_play(conn, p["match_id"])
            ]
            info = self.ladder.bots.info(conn, bot["id"])
        return {
            "bot": info,
            "versions": [
                {
                    "version": v["version"],
                    "spec": v["spec"],
                    "limits": v["limits"],
                    "queues": v["queues"].split(","),
                    "created_at": v["created_at"],
                }
                for v in versions
            ],
            "ratings": current,
            "rating_history": points,
            "matches": views.bot_matches(name, queue, limit),
        }

    def head_to_head(self, a: str, b: str, queue: str | None = None, limit: int = 50) -> HeadToHead:
        """Finished, not withheld games where ``a`` and ``b`` sat on opposite sides."""
        games = a_wins = b_wins = draws = a_points = b_points = 0
        matches = self.ladder.views.bot_matches(a, queue, 10_000, versus=b)
        for m in matches:
            if m["status"] != "finished" or m["withheld"]:
                continue
            sides_a = {s["side"] for s in m["seats"] if s["bot"] == a}
            sides_b = {s["side"] for s in m["seats"] if s["bot"] == b}
            if len(sides_a) != 1 or len(sides_b) != 1 or sides_a == sides_b:
                continue
            side_a, side_b = sides_a.pop(), sides_b.pop()
            points = {s["side"]: s["points"] or 0 for s in m["seats"]}
            games += 1
            a_points += points.get(side_a, 0)
            b_points += points.get(side_b, 0)
            if m["winner"] == side_a:
                a_wins += 1
            elif m["winner"] == side_b:
                b_wins += 1
            else:
                draws += 1
        return {
            "bot_a": a,
            "bot_b": b,
            "games": games,
            "a_wins": a_wins,
            "b_wins": b_wins,
            "draws": draws,
            "a_points": a_points,
            "b_points": b_points,
            "matches": matches[:limit],
        }
