"""The configuration of ``cirulla train`` (``cirulla.bots.train``), apart from the
training itself so that the command's flags and defaults need no NumPy to register."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

OPPONENTS = ("greedy", "self", "random")


@dataclass(frozen=True)
class TrainConfig:
    """One training run; every field is a flag of ``cirulla train``."""

    games: int = 15_000
    seed: int = 0
    hidden: int = 256
    hidden2: int = 128
    epsilon: float = 0.05
    chunk: int = 100
    epochs: int = 3
    batch: int = 512
    lr: float = 1e-3
    lr_end: float = 2e-4
    opponents: str = "greedy=0.5,self=0.5"
    target: int = 51
    minutes: float | None = None
    #: An mcts spec: expert iteration, the teacher plays the labelled seats and the
    #: differences between its root actions' mean rewards are the targets (the default,
    #: the committed weights' method); None: deep Monte-Carlo, the network plays and the
    #: rest of the deal's point difference is the target.
    teacher: str | None = "mcts:iterations=400"
    #: The network's feature layout (``learned.FEATURES_VERSIONS``): 1, the shipped
    #: weights'; 2 adds the belief over the opponent's hidden hand.
    features: int = 1
    #: Expert iteration: the chance that a labelled decision is played by the network
    #: being trained (DAgger) instead of the teacher; the teacher labels it either way.
    student: float = 0.0


def parse_mix(text: str) -> list[tuple[str, float]]:
    """``"greedy=0.6,self=0.4"`` -> ``[("greedy", 0.6), ("self", 0.4)]`` (weights > 0)."""
    mix = []
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, raw = item.partition("=")
        if name not in OPPONENTS:
            raise ValueError(f"opponents: {name!r} is not one of {', '.join(OPPONENTS)}")
        try:
            weight = float(raw) if sep else 1.0
        except ValueError:
            raise ValueError(f"opponents: weight of {name} must be a number, not {raw!r}") from None
        if weight <= 0:
            raise ValueError(f"opponents: weight of {name} must be positive, not {raw}")
        mix.append((name, weight))
    if not mix:
        raise ValueError("opponents: name at least one of greedy, self, random")
    return mix


def check_config(config: TrainConfig) -> None:
    """``ValueError`` naming the first bad field."""
    positive = ("games", "hidden", "hidden2", "chunk", "epochs", "batch", "target")
    for name in positive:
        if getattr(config, name) < 1:
            raise ValueError(f"{name} must be at least 1, not {getattr(config, name)}")
    if not 0.0 <= config.student <= 1.0:
        raise ValueError(f"student must be in [0, 1], not {config.student}")
    if not 0.0 <= config.epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], not {config.epsilon}")
    if config.lr <= 0 or config.lr_end <= 0:
        raise ValueError("lr and lr-end must be positive")
    if config.minutes is not None and config.minutes <= 0:
        raise ValueError(f"minutes must be positive, not {config.minutes}")
    if config.features not in (1, 2):
        raise ValueError(f"features must be 1 or 2, not {config.features}")
    parse_mix(config.opponents)
    if config.teacher is not None and not config.teacher.startswith("mcts"):
        raise ValueError(
            f"teacher must be an mcts spec (mcts:iterations=N), not {config.teacher!r}"
        )


#: Every field's default, by name (the command's flags).
DEFAULTS: dict[str, Any] = asdict(TrainConfig())
