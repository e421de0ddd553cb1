"""Bot kinds by name (``KINDS``): each kind's options, their types and defaults, and
``make_policy(kind, options, seed)`` that builds the policy.

A kind whose policy needs modules a bot of another kind would not load names its factory
with ``cirulla.runs.Runs(module, function)``, imported when such a bot is made: every bot
process imports this registry (``cirulla.bots.loop``), and the search's modules (MCTS,
the endgame solver, the inference) were about a tenth of a random or greedy bot's start
(docs/performance-log.md, "Start-up"). The options' defaults come from
``cirulla.bots.search_defaults``, which imports none of them.

Bot specs (the four forms, ``KIND:key=value,...`` read into a kind and its converted
options, the command line that plays one) are ``cirulla.bots.botspec``'s, which reads
this registry; this module never imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from cirulla.bots.policy import Policy
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
    SAMPLED_NODES,
)
from cirulla.bots.simple import GreedyPolicy, RandomPolicy
from cirulla.extras import MissingExtraError, importable
from cirulla.runs import Runs

#: A bot option's value once converted (``KindOption.type``), or its default (None: unset).
OptionValue = int | float | str | None


@dataclass(frozen=True, slots=True)
class KindOption:
    """One option of a bot kind: its type, default and a line of help."""

    name: str
    type: Callable[[str], OptionValue]
    default: OptionValue
    help: str


@dataclass(frozen=True, slots=True)
class BotKind:
    name: str
    summary: str
    #: the policy's constructor, or the module and name of one (imported when a bot is made)
    factory: Callable[..., Policy] | Runs
    options: tuple[KindOption, ...] = ()

    def option(self, name: str) -> KindOption:
        for opt in self.options:
            if opt.name == name:
                return opt
        known = ", ".join(o.name for o in self.options) or "none"
        raise ValueError(f"bot kind {self.name!r} has no option {name!r} (options: {known})")

    def convert(self, key: str, raw: str) -> OptionValue:
        """Option ``key``'s value read from ``raw`` by its type (a ValueError names the
        option and the type)."""
        opt = self.option(key)
        try:
            return opt.type(raw.strip())
        except ValueError:
            type_name = getattr(opt.type, "__name__", "its type")
            raise ValueError(
                f"bot option {self.name}:{key} takes {type_name}, not {raw!r}"
            ) from None


def _policy_bot(model: str | None = None, seed: int | None = None) -> Policy:
    """A trained policy over the environments' encoding (``cirulla.bots.policy_bot``)."""
    if not importable("numpy"):  # the env extra's arrays; a base install has none
        raise MissingExtraError(["env"])
    # loads NumPy: imported when such a bot is made, not by every bot process (a built-in
    # bot's start would pay about 0.1 s for it; a reconnecting seat has 1 s)
    from cirulla.bots.policy_bot import ArrayPolicyBot

    return ArrayPolicyBot(model, seed=seed)


def _learned_bot(
    weights: str | None = None,
    endgame: str = "sampled",
    nodes: int = SAMPLED_NODES,
    seed: int | None = None,
) -> Policy:
    """The trained action-value network (``cirulla.bots.learned``), NumPy at play time."""
    if not importable("numpy"):
        raise MissingExtraError(["env"])
    from cirulla.bots.learned import LearnedPolicy  # loads NumPy, as above

    return LearnedPolicy(seed=seed, weights=weights, endgame=endgame, nodes=nodes)


KINDS: dict[str, BotKind] = {
    "random": BotKind("random", "uniform over the legal actions, seeded", RandomPolicy),
    "greedy": BotKind(
        "greedy",
        "one-move heuristic: takes what is worth most, avoids leaving a sweep, always declares",
        GreedyPolicy,
    ),
    "mcts": BotKind(
        "mcts",
        "information-set Monte Carlo tree search over sampled deals",
        Runs("cirulla.bots.mcts_policy", "MctsPolicy"),
        (
            KindOption(
                "iterations",
                int,
                None,
                "iterations per decision (default 1000 unless --time is given)",
            ),
            KindOption("time", float, None, "seconds per decision (always capped by the clock)"),
            KindOption("workers", int, 1, "processes searching in parallel (root parallelization)"),
            KindOption("c", float, DEFAULT_C, "UCB exploration constant"),
            KindOption("epsilon", float, DEFAULT_EPSILON, "random-move rate of the playouts"),
            KindOption(
                "prior",
                float,
                DEFAULT_PRIOR,
                "weight of the greedy appraisal as a root bias (0 = none)",
            ),
            KindOption(
                "root",
                str,
                DEFAULT_ROOT,
                "root allocation: ucb (most visited, greedy prior), halving (sequential "
                "halving on common worlds, best mean)",
            ),
            KindOption(
                "playout",
                str,
                DEFAULT_PLAYOUT,
                "playout mover: sighted (sees the next hand when avoiding sweeps), blind "
                "(weighs the risk from the cards he cannot see), reply (weighs the next "
                "hand's best capture, not only a sweep)",
            ),
            KindOption(
                "expand",
                str,
                DEFAULT_EXPAND,
                "which untried action a node below the root expands: random, best (the "
                "playout heuristic's)",
            ),
            KindOption(
                "infer",
                float,
                DEFAULT_INFER,
                "chance of rejecting a sampled deal per observed opponent play it makes "
                "unlikely (a better capture or a declaration left untaken; 0 = off)",
            ),
            KindOption(
                "posterior",
                str,
                DEFAULT_POSTERIOR,
                "how the opponent's hidden hand is inferred (2 players): evidence (random "
                "deals rejected by its plays, see infer), replay (hands with which greedy "
                "would have made its plays this round), learned (hands weighed by how "
                "likely the learned network finds its plays this round)",
            ),
            KindOption(
                "opponent",
                str,
                DEFAULT_OPPONENT,
                "how the other sides move in the tree: tree (UCB on their own reward), "
                "playout (the playout policy: a greedy-like opponent), blind (the blind "
                "playout policy, in the tree and the playouts)",
            ),
            KindOption(
                "reward",
                str,
                DEFAULT_REWARD,
                "what a deal that does not end the game is worth: points (its point "
                "difference), win (mostly the chance of winning the game after it)",
            ),
            KindOption(
                "solve",
                int,
                0,
                "1: 2-player playouts end the deal, once the stock is empty, by an exact "
                "search of the searcher's best moves against the playout policy",
            ),
            KindOption(
                "depth",
                int,
                DEFAULT_DEPTH,
                "tree plies per iteration at most, the root action included; playouts below "
                "(0 = no limit)",
            ),
            KindOption(
                "guide",
                str,
                DEFAULT_GUIDE,
                "what the root prior reads: greedy (the greedy appraisal), learned (the "
                "learned bot's network's value of each action)",
            ),
            KindOption(
                "endgame",
                str,
                "search",
                "the last round of a 2-player deal, every card known: search (the default) "
                "or exact (solved by minimax, as learned does)",
            ),
            KindOption(
                "core",
                str,
                "auto",
                "search loop: native (compiled, the default when built), python (reference)",
            ),
        ),
    ),
    "policy": BotKind(
        "policy",
        "a trained policy over the environments' observation (docs/env.md)",
        _policy_bot,
        (
            KindOption(
                "model",
                str,
                None,
                "PATH.npz (NumPy MLP), PATH.onnx (ONNX model), PATH.py[:FUNC] or MODULE:FUNC "
                "(f(observation, action_mask) -> index; MODULE from the current folder)",
            ),
        ),
    ),
    "learned": BotKind(
        "learned",
        "a trained network's best action from the seat's view (cirulla train; NumPy); "
        "a 2-player deal's last round solved exactly, the round before by minimax over "
        "sampled deals",
        _learned_bot,
        (
            KindOption(
                "weights",
                str,
                None,
                "PATH.npz written by cirulla train (default: the weights that ship)",
            ),
            KindOption(
                "endgame",
                str,
                "sampled",
                "the end of a 2-player deal: sampled (the default: the last round solved "
                "by minimax, every card known, and the round before by minimax over "
                "sampled deals of its hidden cards), exact (the last round only) or network "
                "(the network everywhere)",
            ),
            KindOption(
                "nodes",
                int,
                SAMPLED_NODES,
                "endgame=sampled: minimax nodes for the round before the last, over all "
                "its sampled deals (a count, not a time: the move is the same on any machine)",
            ),
        ),
    ),
}


def get_kind(name: str) -> BotKind:
    kind = KINDS.get(name.strip().lower())
    if kind is None:
        program = any(c in name for c in "/. ")  # a file or a command line, not a kind
        raise ValueError(
            f"unknown bot kind {name!r}; kinds are {', '.join(KINDS)}"
            + (PROGRAM_HINT if program else "")
        )
    return kind


#: After an unknown kind that looks like a program: the spec forms that run one.
PROGRAM_HINT = (
    "; a program of your own is 'cmd:COMMAND' (a gRPC player, e.g. 'cmd:{python} my_bot.py')"
    " or 'text:COMMAND' (a text-protocol engine, e.g. 'text:./my-engine')"
)


def make_policy(
    kind: str, options: Mapping[str, object] | None = None, seed: int | None = None
) -> Policy:
    """A ready policy of ``kind`` with ``options`` (strings are converted like a spec's,
    other values are taken as converted)."""
    bot_kind = get_kind(kind)
    converted: dict[str, object] = {}
    for key, value in (options or {}).items():
        bot_kind.option(key)  # an unknown option is refused whatever its value
        converted[key] = bot_kind.convert(key, value) if isinstance(value, str) else value
    return factory_of(bot_kind)(seed=seed, **converted)


def factory_of(kind: BotKind) -> Callable[..., Policy]:
    """``kind``'s policy constructor, its module imported if the kind names it (``Runs``)."""
    if isinstance(kind.factory, Runs):
        return cast(Callable[..., Policy], kind.factory.target())
    return kind.factory
