"""The ``mcts`` bot: the search of ``cirulla.bots.mcts`` with an iteration and/or time budget,
root-parallel over a pool of processes, an exact or searched last round, and the opponent
evidence it keeps between decisions.
"""

from __future__ import annotations

import concurrent.futures
import random
from collections.abc import Sequence
from dataclasses import replace

from cirulla.bots.endgame import best_exact, solvable
from cirulla.bots.inference import (
    Evidence,
    PlayTracker,
)
from cirulla.bots.mcts import (
    SearchConfig,
    SearchResult,
    check_search_options,
    search,
)
from cirulla.bots.search_defaults import (
    DEFAULT_C,
    DEFAULT_DEPTH,
    DEFAULT_EPSILON,
    DEFAULT_EXPAND,
    DEFAULT_GUIDE,
    DEFAULT_INFER,
    DEFAULT_OPPONENT,
    DEFAULT_PLAYOUT,
    DEFAULT_POSTERIOR,
    DEFAULT_PRIOR,
    DEFAULT_REWARD,
    DEFAULT_ROOT,
    ENDGAMES,
    Expand,
    Guide,
    Opponent,
    Playout,
    Posterior,
    Reward,
    Root,
)
from cirulla.bots.seeding import decision_seed
from cirulla.rules.actions import Action
from cirulla.rules.core import resolve_core
from cirulla.rules.views import NO_HANDS, View


def _search_job(
    args: tuple[View, int, SearchConfig, Sequence[Evidence], tuple[int, Sequence[int]]],
) -> SearchResult:
    view, seed, config, evidence, hands = args
    return search(view, seed, config, evidence=evidence, hands=hands)


class MctsPolicy:
    """ISMCTS with an iteration and/or time budget, optionally over several processes.

    Root parallelization: each worker searches its own tree with its own seed; the root
    statistics are summed and the best action by them is played. An iteration budget is
    split between the workers, so ``iterations`` means the same total work either way.

    The time budget is wall time when a game clock is running (``time_left`` given: the
    server's clock is wall time), and this thread's CPU time otherwise, so that a
    benchmark's ``time=0.2`` buys the same search however busy the machine is.
    """

    name = "mcts"

    def __init__(
        self,
        seed: int | None = None,
        iterations: int | None = None,
        time: float | None = None,
        workers: int = 1,
        c: float = DEFAULT_C,
        epsilon: float = DEFAULT_EPSILON,
        prior: float = DEFAULT_PRIOR,
        core: str = "auto",
        root: Root = DEFAULT_ROOT,
        playout: Playout = DEFAULT_PLAYOUT,
        expand: Expand = DEFAULT_EXPAND,
        infer: float = DEFAULT_INFER,
        depth: int = DEFAULT_DEPTH,
        opponent: Opponent = DEFAULT_OPPONENT,
        reward: Reward = DEFAULT_REWARD,
        solve: int = 0,
        posterior: Posterior = DEFAULT_POSTERIOR,
        guide: Guide = DEFAULT_GUIDE,
        endgame: str = "search",
    ) -> None:
        if endgame not in ENDGAMES:
            raise ValueError(f"mcts endgame must be one of {', '.join(ENDGAMES)}, not {endgame!r}")
        if iterations is None and time is None:
            iterations = 1000
        if iterations is not None and iterations < 1:
            raise ValueError(f"mcts iterations must be at least 1, not {iterations}")
        if time is not None and time <= 0:
            raise ValueError(f"mcts time must be positive seconds, not {time}")
        if workers < 1:
            raise ValueError(f"mcts workers must be at least 1, not {workers}")
        check_search_options(
            root, playout, expand, infer, depth, opponent, reward, solve, posterior, guide
        )
        if "learned" in (guide, posterior):  # the weights load (and are checked) now
            # the network loads NumPy (the env extra): only a search that reads it pays
            from cirulla.bots.belief import shipped_net

            shipped_net()
        self.core = resolve_core(core)  # fails here, naming the choices, if unavailable
        self.seed = seed if seed is not None else random.randrange(1 << 62)
        self.iterations = iterations
        self.time = time
        self.workers = workers
        self.c = c
        self.epsilon = epsilon
        self.prior = prior
        self.root = root
        self.playout = playout
        self.expand = expand
        self.infer = infer
        self.depth = depth
        self.opponent = opponent
        self.reward = reward
        self.solve = solve
        self.posterior = posterior
        self.guide = guide
        self.endgame = endgame
        #: The search's options; each decision sets only the budget (``_choose``).
        self.config = SearchConfig(
            iterations=iterations,
            seconds=time,
            c=c,
            epsilon=epsilon,
            prior=prior,
            core=self.core,
            root=root,
            playout=playout,
            expand=expand,
            infer=infer,
            depth=depth,
            opponent=opponent,
            reward=reward,
            solve=solve,
            guide=guide,
        )
        self._tracker = PlayTracker(positions=posterior != "evidence")
        self.last_evidence: Sequence[Evidence] = ()  # what the last decision inferred from
        self.last_hands: tuple[int, Sequence[int]] = NO_HANDS  # the replay posterior's
        self._pool: concurrent.futures.Executor | None = None
        self.last: SearchResult | None = None

    def budget_seconds(self, time_left: float | None) -> float | None:
        """Seconds this decision may take: the --time budget, capped by the clock."""
        budget = self.time
        if time_left is not None:
            budget = time_left if budget is None else min(budget, time_left)
        return budget

    def choose(self, view: View, legal: Sequence[Action], time_left: float | None) -> int:
        posterior = self.posterior != "evidence"
        # ``evidence`` is also what records the opponent's plays, which the posteriors read.
        evidence = self._tracker.evidence(view) if self.infer > 0 or posterior else ()
        self.last_evidence = evidence
        self.last_hands = NO_HANDS

        if self.endgame == "exact" and len(legal) > 1 and solvable(view):
            self.last = None  # no search: nothing hidden is left to sample
            index = best_exact(view, [a.to_int() for a in legal], self.core)
        else:
            if posterior and len(legal) > 1:
                self.last_hands = self._posterior_hands(view)
            infer_from = evidence if self.infer > 0 else ()
            index = self._choose(view, legal, time_left, infer_from, self.last_hands)
        self._tracker.played(legal[index].to_int())
        return index

    def _posterior_hands(self, view: View) -> tuple[int, Sequence[int]]:
        """The opponent's candidate hands of the ``replay`` or ``learned`` posterior."""
        rng = random.Random(decision_seed(self.seed, view, salt=-1))
        if self.posterior == "replay":
            return self._tracker.replay_hands(view, rng)
        from cirulla.bots.belief import play_log_likelihood, shipped_net  # NumPy, as above

        net = shipped_net()
        return self._tracker.weighted_hands(
            view, rng, lambda plays, seat, hand: play_log_likelihood(net, plays, seat, hand)
        )

    def new_game(self) -> None:
        """A new game in the same session (``cirulla engine``'s ``newgame``): the plays
        followed so far belong to the last one."""
        self._tracker.reset()

    def played_instead(self, code: int) -> None:
        """The seat played ``code``, not the move this bot last chose (a trainer's
        exploration): the opponent's next play is then read from the table it left."""
        self._tracker.played(code)

    def _choose(
        self,
        view: View,
        legal: Sequence[Action],
        time_left: float | None,
        evidence: Sequence[Evidence],
        hands: tuple[int, Sequence[int]] = NO_HANDS,
    ) -> int:
        if len(legal) == 1:
            return 0
        seconds = self.budget_seconds(time_left)
        cpu_clock = time_left is None
        if seconds is not None and not cpu_clock:
            # Against a game clock, leave room for merging, answering, a slow last
            # iteration, and a busy machine's scheduling delays: 25% costs no measurable
            # strength (the strength curve is flat above 1,000 iterations, docs/bots-research.md).
            seconds = max(0.75 * seconds - 0.02, 0.001)
        jobs = []
        for w in range(self.workers):
            iterations = None
            if self.iterations is not None:
                iterations = self.iterations // self.workers + (w < self.iterations % self.workers)
                iterations = max(iterations, 1)
            seed = decision_seed(self.seed, view, salt=w)
            config = replace(
                self.config, iterations=iterations, seconds=seconds, cpu_clock=cpu_clock
            )
            jobs.append((view, seed, config, evidence, hands))
        if self.workers == 1:
            results = [_search_job(jobs[0])]
        else:
            if self._pool is None:
                # (the module's attribute: concurrent.futures loads its process pool,
                # and multiprocessing, on first use; every bot process paid 12 ms for it)
                self._pool = concurrent.futures.ProcessPoolExecutor(self.workers)
            results = list(self._pool.map(_search_job, jobs))
        visits: dict[int, int] = {}
        totals: dict[int, float] = {}
        survived: dict[int, int] = {}
        for result in results:
            for code, n in result.visits.items():
                visits[code] = visits.get(code, 0) + n
            for code, t in result.totals.items():
                totals[code] = totals.get(code, 0.0) + t
            for code, k in result.survived.items():
                survived[code] = survived.get(code, 0) + k
        self.last = SearchResult(
            visits,
            sum(r.iterations for r in results),
            max(r.seconds for r in results),
            totals,
            survived,
            self.root,
        )
        return self.last.best([a.to_int() for a in legal])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
