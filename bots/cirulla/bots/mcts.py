"""Single-observer information-set MCTS (Cowling, Powley & Whitehouse 2012).

The bot cannot see the other hands or the stock, so each iteration first *determinizes*:
``sample_world`` deals the unseen cards at random, consistent with everything the bot has
seen. All iterations share ONE tree whose edges are action codes. Every action in Cirulla
is public once played (card, capture, declaration), so an action code is exactly what the
bot observes of an opponent's move and the tree's nodes are the bot's information sets.

A child exists in some determinizations and not in others (an opponent can only play a
card the sample gave him), so UCB uses the child's *availability* count (how often it was
selectable) in place of the parent's visit count. Below the tree a cheap heuristic plays
the deal out; the reward is the deal's point difference from each side's point of view,
squashed into [0, 1], with a game-win term when a side reaches the target.

By default (``opponent="playout"``) only the searcher's side selects by UCB in the tree:
the other sides play the playout policy's move there too, so the search plans against a
club player rather than against an opponent that picks one move for all the worlds of a
node, knowing the searcher's hand and not its own (docs/bots-research.md, what it bought).

Two implementations of the same search: the native one (``_search.c`` beside this
module, ``cirulla.bots.compiled``: the whole loop in C, used whenever the native rules
core is built) and this module's Python loop,
the readable reference (``core="python"``). They share the root set-up below (legal
actions, the greedy prior, their order) and every constant; their random streams differ.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from cirulla.bots.compiled import NativeSearch, run_search
from cirulla.bots.heuristic import (
    SCOPA_POINT,
    STATIC_WORTH,
    Appraiser,
    Mover,
    code_score,
    playout_code,
)
from cirulla.bots.inference import (
    DEFAULT_INFER,
    INFER_TRIES,
    Evidence,
    sample_consistent,
)
from cirulla.bots.policy import decision_cancelled
from cirulla.bots.rewards import (
    DEAL_MEAN,
    DEAL_SD,
    POINT_SCALE,
    WIN_WEIGHT,
    rewards_of,
    solve_rest,
)
from cirulla.bots.search_defaults import (
    DEFAULT_C,
    DEFAULT_DEPTH,
    DEFAULT_EPSILON,
    DEFAULT_EXPAND,
    DEFAULT_GUIDE,
    DEFAULT_OPPONENT,
    DEFAULT_PLAYOUT,
    DEFAULT_POSTERIOR,
    DEFAULT_PRIOR,
    DEFAULT_REWARD,
    DEFAULT_ROOT,
    EXPANSIONS,
    GUIDES,
    OPPONENTS,
    PLAYOUTS,
    POSTERIORS,
    REWARDS,
    ROOTS,
    Expand,
    Guide,
    Opponent,
    Playout,
    Reward,
    Root,
)
from cirulla.rules.core import options_tuple, resolve_core, view_tuple
from cirulla.rules.views import NO_HANDS, View, sample_world


class Node:
    """Statistics of one edge of the tree, from the view of the side that made the move."""

    __slots__ = ("avail", "children", "side", "total", "visits")

    def __init__(self, side: int) -> None:
        self.side = side
        self.visits = 0
        self.total = 0.0
        self.avail = 1
        self.children: dict[int, Node] = {}


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Root statistics by action code (what root parallelization merges).

    ``totals`` is the summed reward of each root action and ``survived`` how many halvings
    it survived (none with the UCB root). ``seconds`` is on the search's clock.
    """

    visits: dict[int, int]
    iterations: int
    seconds: float
    totals: dict[int, float] = field(default_factory=dict)
    survived: dict[int, int] = field(default_factory=dict)
    root: str = DEFAULT_ROOT

    def mean_points(self, code: int) -> float:
        """A visited root action's mean reward as a deal point difference (the reward is
        ``0.5 + difference / (2 * POINT_SCALE)``): what training and the regret read."""
        return (self.totals[code] / self.visits[code] - 0.5) * 2 * POINT_SCALE

    def best(self, codes: Sequence[int]) -> int:
        """Index in ``codes`` of the action to play; ties go to the earlier code.

        UCB root: the most visited action. Halving root: the last survivor, or when the
        budget ran out mid-phase the current survivor with the best mean reward.
        """

        def key(i: int) -> tuple[int, float, int]:
            code = codes[i]
            n = self.visits.get(code, 0)
            if self.root != "halving":
                return (0, n, -i)
            mean = self.totals.get(code, 0.0) / n if n else -math.inf
            return (self.survived.get(code, 0), mean, -i)

        return max(range(len(codes)), key=key)


def halving_rounds(k: int) -> int:
    """How many halvings take ``k`` root actions down to one."""
    r = 0
    while (1 << r) < k:
        r += 1
    return r


def check_search_options(
    root: str,
    playout: str,
    expand: str,
    infer: float,
    depth: int,
    opponent: str,
    reward: str,
    solve: int,
    posterior: str = DEFAULT_POSTERIOR,
    guide: str = DEFAULT_GUIDE,
) -> None:
    """The search's option values, checked once for ``search`` and ``MctsPolicy`` (a bad
    spec fails when the bot is built, before any game): a ValueError names the option."""
    choices = (
        ("root", root, ROOTS),
        ("playout", playout, PLAYOUTS),
        ("expand", expand, EXPANSIONS),
        ("opponent", opponent, OPPONENTS),
        ("reward", reward, REWARDS),
        ("posterior", posterior, POSTERIORS),
        ("guide", guide, GUIDES),
    )
    for option, value, allowed in choices:
        if value not in allowed:
            raise ValueError(f"mcts {option} must be one of {', '.join(allowed)}, not {value!r}")
    if not 0.0 <= infer <= 1.0:
        raise ValueError(f"mcts infer must be a probability in [0, 1], not {infer}")
    if depth < 0:
        raise ValueError(f"mcts depth must be 0 (no limit) or a number of plies, not {depth}")
    if solve not in (0, 1):
        raise ValueError(f"mcts solve must be 0 or 1, not {solve}")


def root_prior(
    view: View,
    codes: Sequence[int],
    weight: float,
    guide: str = DEFAULT_GUIDE,
    evidence: Sequence[Evidence] = (),
) -> dict[int, float]:
    """Progressive bias for the root: the greedy appraisal (``guide="greedy"``) or the
    learned network's value (``"learned"``) of each action, in reward units, best = 0.

    Added to a root child's UCB value as ``bias / (visits + 1)``: it orders the first
    visits like a club player (or the network) would and fades as the statistics take over.
    """
    if weight <= 0:
        return {}
    if guide == "learned":
        # the network loads NumPy (the env extra): only a search guided by it pays for it
        from cirulla.bots.learned import WEIGHTS_PATH, WEIGHTS_SHA256, action_values, cached_qnet

        net = cached_qnet(WEIGHTS_PATH, WEIGHTS_SHA256)
        values = action_values(net, view, codes, evidence)
        scores = {code: float(v) for code, v in zip(codes, values, strict=True)}
    else:
        appraiser = Appraiser(view)
        scores = {code: appraiser.score(code) for code in codes}
    best = max(scores.values())
    return {code: weight * (s - best) / (2 * POINT_SCALE) for code, s in scores.items()}


@dataclass(frozen=True)
class SearchConfig:
    """Every option of one search, with its strategy choices as ``Literal`` types (the
    fields are documented at ``search``). ``MctsPolicy`` builds one per bot and varies
    only the budget per decision; ``check`` names the first bad option."""

    iterations: int | None = None
    seconds: float | None = None
    c: float = DEFAULT_C
    epsilon: float = DEFAULT_EPSILON
    prior: float = DEFAULT_PRIOR
    core: str | None = None
    root: Root = DEFAULT_ROOT
    cpu_clock: bool = False
    playout: Playout = DEFAULT_PLAYOUT
    expand: Expand = DEFAULT_EXPAND
    infer: float = DEFAULT_INFER
    depth: int = DEFAULT_DEPTH
    opponent: Opponent = DEFAULT_OPPONENT
    reward: Reward = DEFAULT_REWARD
    solve: int = 0
    guide: Guide = DEFAULT_GUIDE

    def check(self) -> None:
        if self.iterations is None and self.seconds is None:
            raise ValueError("search needs an iteration budget, a time budget, or both")
        check_search_options(
            self.root,
            self.playout,
            self.expand,
            self.infer,
            self.depth,
            self.opponent,
            self.reward,
            self.solve,
            guide=self.guide,
        )


def search(
    view: View,
    seed: int,
    config: SearchConfig,
    *,
    evidence: Sequence[Evidence] = (),
    hands: tuple[int, Sequence[int]] = NO_HANDS,
) -> SearchResult:
    """Run ISMCTS from ``view`` until the iteration budget or the time budget is spent:
    ``config``, every option of the search in one object
    (``search(view, 1, SearchConfig(iterations=300))``), the evidence of the other sides'
    plays and the replay posterior's ``hands``.

    Deterministic for a given seed when only ``iterations`` bounds it. ``core``: native
    (the default when built), python (the reference loop below), or None/auto. ``root``:
    ``ucb`` (UCB with the greedy prior as progressive bias, play the most visited) or
    ``halving`` (sequential halving on common worlds). ``cpu_clock``: ``seconds`` counts
    this thread's CPU time (load-independent, for benchmarks) instead of wall time.
    ``playout``: ``sighted`` (the mover avoids leaving a table the next player's sampled
    hand sweeps) or ``blind`` (he weighs that risk from what he can see, like greedy).
    ``expand``: a node below the root expands a ``random`` untried action, or the one the
    playout heuristic rates ``best``. ``infer``: probability of rejecting a sampled world
    for each observed play in ``evidence`` that its hidden hands contradict
    (``cirulla.bots.inference``; 0: uniform worlds). ``depth``: at most this many plies of an
    iteration are played in the tree, the root action included; the playout takes over
    below (0: no limit, the tree grows as deep as the visits take it). ``opponent``: the
    other sides' moves in the tree are chosen by UCB on their reward (``tree``) or by the
    playout policy (``playout``: their edges are followed without ending the descent;
    ``blind``: the same, and they play the blind policy in the tree and the playouts).
    ``reward``: ``points`` (a deal that does not end the game is worth its point
    difference) or ``win`` (WIN_WEIGHT of it is the chance of winning the game after it).
    ``solve``: 1 ends every playout of a 2-player deal, once the stock is empty, by
    ``solve_rest`` (the searcher's best moves against the playout policy) instead of the
    heuristic. ``hands``: ``(seat, candidates)``, that seat's hidden hand in every world is
    one of the candidate masks (the ``replay`` posterior), and ``evidence`` is not used.
    ``guide``: what the root prior reads, the greedy appraisal or the learned network.
    """
    cfg = config
    cfg.check()
    if view.seat is None or view.to_move != view.seat:
        raise ValueError("search runs from a view of the seat to move")
    iterations, seconds, c, epsilon, prior = (
        cfg.iterations,
        cfg.seconds,
        cfg.c,
        cfg.epsilon,
        cfg.prior,
    )
    core, root, cpu_clock, playout, expand = (
        cfg.core,
        cfg.root,
        cfg.cpu_clock,
        cfg.playout,
        cfg.expand,
    )
    infer, depth, opponent, reward, solve, guide = (
        cfg.infer,
        cfg.depth,
        cfg.opponent,
        cfg.reward,
        cfg.solve,
        cfg.guide,
    )
    blind = playout == "blind"
    reply = playout == "reply"
    expand_best = expand == "best"
    opp_playout = opponent != "tree"
    opp_blind = opponent == "blind"
    chance = reward == "win"
    solve_last = bool(solve) and view.options.players == 2
    clock = time.thread_time if cpu_clock else time.perf_counter
    start = clock()
    rng = random.Random(seed)
    # The root is the bot's own decision: the same legal actions in every world.
    world = sample_world(view, rng, hidden=hands)
    native = resolve_core(core) == "native"
    root_codes = world.legal_codes() if native else world.reference_legal_codes()
    bias = root_prior(view, root_codes, prior, guide, evidence) if prior > 0 else {}
    order = sorted(root_codes, key=lambda code: -bias.get(code, 0.0))
    halving = root == "halving"
    if native:
        left = -1.0 if seconds is None else max(seconds - (clock() - start), 0.0)
        native_args = NativeSearch(
            options=options_tuple(view.options),
            view=view_tuple(view),
            order=order,
            bias=[bias.get(code, 0.0) for code in order],
            seed=rng.getrandbits(64),
            iterations=-1 if iterations is None else iterations,
            seconds=left,
            c=c,
            epsilon=epsilon,
            point_scale=POINT_SCALE,
            win_weight=WIN_WEIGHT,
            worth=STATIC_WORTH,
            scopa=SCOPA_POINT,
            halving=halving,
            cpu_clock=cpu_clock,
            blind=blind,
            expand_best=expand_best,
            evidence=[e.as_tuple() for e in evidence],
            infer=infer,
            tries=INFER_TRIES,
            depth=depth,
            reply=reply,
            opp_playout=opp_playout,
            opp_blind=opp_blind,
            chance=chance,
            deal_mean=DEAL_MEAN,
            deal_sd=DEAL_SD,
            solve=bool(solve),
            hands=list(hands[1]),
            hands_seat=hands[0],
        )
        visits, totals, survived, done, _ = run_search(native_args)
        return SearchResult(
            {code: n for code, n in zip(order, visits, strict=True) if n},
            done,
            clock() - start,
            {code: t for code, t, n in zip(order, totals, visits, strict=True) if n},
            {code: k for code, k in zip(order, survived, strict=True) if k},
            root,
        )
    side_of = tuple(view.options.side_of(s) for s in range(view.options.players))
    my_side = side_of[view.seat]
    root_node = Node(-1)
    world_seeds: list[int] = []
    deadline = start + seconds if seconds is not None else math.inf
    limit = iterations if iterations is not None else 1 << 62
    log = math.log
    sqrt = math.sqrt
    # Sequential halving: survivors in rank order; every survivor plays world k before
    # any plays world k + 1; the worse half is dropped when the phase's worlds are done.
    halving = halving and len(order) > 1
    survivors = list(range(len(order)))
    by_index: list[Node | None] = [None] * len(order)
    survived = [0] * len(order)
    rounds = halving_rounds(len(order))
    pos = world_k = per_phase = 0
    phase_end = -1
    done = 0
    while done < limit:
        if not done & 3 and done and (clock() >= deadline or decision_cancelled()):
            break
        if halving:
            i = survivors[pos]
            expanded = world_k == 0
            if expanded:
                by_index[i] = root_node.children[order[i]] = Node(my_side)
            node = by_index[i]
            assert node is not None
            code = order[i]
        else:
            # Root first: its n-th visit of every action is played in the n-th world, so
            # the actions are compared on the same hidden cards (common random numbers).
            expanded = len(root_node.children) < len(order)
            if expanded:
                code = order[len(root_node.children)]
                node = root_node.children[code] = Node(my_side)
            else:
                log_n = log(done)
                best_value = -1e9
                node = root_node
                code = order[0]
                for c_code, child in root_node.children.items():
                    value = (
                        child.total / child.visits
                        + c * sqrt(log_n / child.visits)
                        + bias.get(c_code, 0.0) / (child.visits + 1)
                    )
                    if value > best_value:
                        best_value, code, node = value, c_code, child
        k = node.visits
        while len(world_seeds) <= k:
            world_seeds.append(rng.getrandbits(64))
        r = random.Random(world_seeds[k])
        game = sample_consistent(view, r, evidence, infer, hands=hands)
        game.apply_code(code)
        path: list[Node] = [node]
        while not expanded and not game.deal_over and (not depth or len(path) < depth):
            if opp_playout and side_of[game.turn] != my_side:
                # The other side moves as the playouts would; its edge is followed (or
                # made) and the descent goes on to the searcher's next decision.
                code = playout_code(game, r, epsilon, blind or opp_blind, reply)
                forced = node.children.get(code)
                if forced is None:
                    forced = node.children[code] = Node(side_of[game.turn])
                game.apply_code(code)
                path.append(forced)
                node = forced
                continue
            codes = game.reference_legal_codes()
            children = node.children
            untried: list[int] = []
            for code in codes:
                known = children.get(code)
                if known is None:
                    untried.append(code)
                else:
                    known.avail += 1
            if untried:
                if expand_best and len(untried) > 1:
                    mover = Mover.of(game, blind, reply)
                    code = max(untried, key=lambda u: code_score(mover, game, u))
                else:
                    code = untried[r.randrange(len(untried))] if len(untried) > 1 else untried[0]
                child = Node(side_of[game.turn])
                children[code] = child
                game.apply_code(code)
                path.append(child)
                break
            best_code = codes[0]
            best_child = None
            best_value = -1e9
            for code in codes:
                child = children[code]
                value = child.total / child.visits + c * sqrt(log(child.avail) / child.visits)
                if value > best_value:
                    best_value, best_code, best_child = value, code, child
            assert best_child is not None
            game.apply_code(best_code)
            path.append(best_child)
            node = best_child
        while not game.deal_over:
            if solve_last and not game.stock:
                game = solve_rest(
                    game, my_side, chance, blind or opp_blind, reply and not opp_blind
                )
                break
            theirs = opp_blind and side_of[game.turn] != my_side
            game.apply_code(playout_code(game, r, epsilon, blind or theirs, reply))
        rewards = rewards_of(game, chance)
        for child in path:
            child.visits += 1
            child.total += rewards[child.side]
        done += 1
        if halving:
            pos += 1
            if pos < len(survivors):
                continue
            pos = 0
            world_k += 1
            if phase_end < 0:
                # After one world for every action: the budget in iterations, from the
                # iteration limit and/or the time this first world took.
                budget = limit
                if seconds is not None:
                    spent = clock() - start
                    est = len(order) * seconds / spent if spent > 0 else 1e18
                    if est < budget:
                        budget = int(est)
                per_phase = max(budget // rounds, len(order))
                phase_end = per_phase // len(order)
            if world_k >= phase_end:
                nodes = by_index
                survivors.sort(key=lambda j: (-_mean(nodes[j]), j))
                del survivors[(len(survivors) + 1) // 2 :]
                for j in survivors:
                    survived[j] += 1
                if len(survivors) == 1:
                    break
                phase_end = world_k + max(per_phase // len(survivors), 1)
    return SearchResult(
        {code: child.visits for code, child in root_node.children.items()},
        done,
        clock() - start,
        {code: child.total for code, child in root_node.children.items()},
        {order[j]: k for j, k in enumerate(survived) if k},
        root,
    )


def _mean(node: Node | None) -> float:
    assert node is not None and node.visits
    return node.total / node.visits
