"""The ``learned`` bot: a trained action-value network played with NumPy alone.

The network scores each legal action of a decision, Q(observation, action), in the manner
of DouZero (Zha et al. 2021, "DouZero: Mastering DouDizhu with Self-Play Deep
Reinforcement Learning"): the observation and one action's features go in, a value in
points of the rest of the deal comes out, and the bot plays the legal action of highest
value. ``cirulla train`` (``cirulla.bots.train``) trains it by expert iteration (the
values are mcts's root means, as differences between the actions of a decision: the
shipped weights) or by deep Monte-Carlo (the rest of the deal's point difference as the
target). The weights that ship are ``data/learned.npz``, whose SHA-256 is
``WEIGHTS_SHA256`` (checked when they load).

Everything the network reads is computed from the seat's ``View`` (``decision_features``),
the same function in training and at play time, so it never sees a hidden card:

* the observation: the environments' encoding of the view (``cirulla.env.encoding``,
  ``encode_view``), with counts and points scaled to about 0..1;
* per action: the environments' action features (``action_features``: the card, what it
  takes, the declaration, the value named), the table it leaves (40 cards), and the greedy
  bot's appraisal of it (``heuristic.Appraiser``, a function of the view): its score in
  points, the chance-weighted sweep it leaves, and whether it sweeps.

The network: ``h1 = relu(obs @ wo + act @ wa + b1)``, ``h2 = relu(h1 @ w2 + b2)``,
``q = h2 @ w3 + act @ v + b3``. The observation's half of the first layer is computed once
per decision, the rest per action; ``v`` is a linear path from the action's features,
started at the greedy score, so an untrained network plays like greedy and training
learns what greedy misjudges. A decision costs well under a millisecond.

The last round of a 2-player deal hides nothing (the stock is empty: what the seat cannot
see is the opponent's hand), and there the bot plays the exact minimax move instead
(``cirulla.bots.endgame``), which the network, trained to imitate a sampling search, plays
worst of all its decisions. In the round before it, where the network gives up most of
what it still gives up to its teacher, nine cards are hidden, and the bot plays the move of
best minimax value averaged over deals of them sampled within a fixed node budget
(``endgame="sampled"``, the default; ``"exact"``: the last round only; ``"network"``: the
network everywhere).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cirulla.bots.endgame import (
    SAMPLED_NODES,
    best_exact,
    penultimate,
    sampled_values,
    solvable,
)
from cirulla.bots.heuristic import SCOPA_POINT, Appraiser
from cirulla.bots.inference import Evidence, PlayTracker, hidden_hand_marginals
from cirulla.bots.model_files import ArraySpec, Headers, read_bounded, read_npz
from cirulla.bots.seeding import decision_seed
from cirulla.extras import install_hint
from cirulla.rules.actions import Action
from cirulla.rules.cards import NUM_CARDS
from cirulla.rules.views import View

try:  # the observation's encoding needs NumPy too: both come with the env extra
    import numpy as np
    import numpy.typing as npt

    from cirulla.rules.encoding import FEATURE_SIZE, OBS_FIELDS, OBS_SIZE, encode_view
except ImportError:  # pragma: no cover - the base install has no NumPy
    np = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from typing import TypeAlias

    #: The network's arrays, its features and its values: float32 (NumPy is an extra,
    #: so the alias exists for the type checker only; annotations are never evaluated).
    Floats: TypeAlias = npt.NDArray[np.float32]
    #: Card indices and masks as arrays.
    Ints: TypeAlias = npt.NDArray[np.int64]

#: The weights that ship with the bot, and their SHA-256 (checked on load).
WEIGHTS_PATH = Path(__file__).resolve().parent / "data" / "learned.npz"
WEIGHTS_SHA256 = "98874938358bc60cbac2df7f360ed7be64b68d92be35b1f9023c903bec4b3585"
#: The feature layouts a network can read. 1 (the shipped weights', ``cirulla train``'s
#: default): the view's encoding and the action features; 2: the same, then the belief over
#: the opponent's hidden hand (40 numbers, ``inference.hidden_hand_marginals`` of the
#: evidence of its plays this round). A weights file records its layout and is read with
#: it; an unknown one is refused.
FEATURES_VERSIONS = (1, 2)
FEATURES_VERSION = 1

#: How the end of a 2-player deal is played (``cirulla.bots.endgame``): by the network;
#: the last round solved exactly (every card is known once the stock is empty); or that,
#: and the round before it by minimax over sampled deals of its nine hidden cards.
ENDGAMES = ("network", "exact", "sampled")
#: The largest ``nodes`` budget that keeps the bot ``instant`` (about 7 ms a move on the
#: machine the docs measure on; the default is a fifth of it).
INSTANT_NODES = 100_000
#: Feature layout of one action (after the environments' 96 action features).
ACT_EXTRA = ("greedy_score", "sweep_risk", "sweeps")
#: The network's output is in these points: targets are divided by it in training.
POINT_SCALE = 4.0


def _need_numpy() -> None:
    if np is None:
        raise ImportError(f"the learned bot needs NumPy: {install_hint('env')}")


def obs_size(version: int = FEATURES_VERSION) -> int:
    _need_numpy()
    return OBS_SIZE + (NUM_CARDS if version >= 2 else 0)


def act_size() -> int:
    _need_numpy()
    return FEATURE_SIZE + NUM_CARDS + len(ACT_EXTRA)


_OBS_SCALE: Floats | None = None


def _obs_scale() -> Floats:
    """Per-entry scale of the raw observation: counts and points to about 0..1 (the
    totals are scaled by the target in ``decision_features``, which this cannot know)."""
    global _OBS_SCALE
    if _OBS_SCALE is None:
        scale = np.ones(OBS_SIZE, dtype=np.float32)
        for name, factor in (
            ("hand_sizes", 1 / 3),
            ("scope", 1 / 10),
            ("stock", 1 / 30),
            ("round", 1 / 6),
            ("deal", 1 / 10),
            ("piccola_max", 1 / 10),
        ):
            at, length = OBS_FIELDS[name]
            scale[at : at + length] = factor
        at, _ = OBS_FIELDS["rules"]
        scale[at + 6] = 1 / 100  # the target
        _OBS_SCALE = scale
    return _OBS_SCALE


_BITS: Ints | None = None


def _bits() -> Ints:
    global _BITS
    if _BITS is None:
        _BITS = np.arange(NUM_CARDS, dtype=np.int64)
    return _BITS


def decision_features(
    view: View,
    codes: Sequence[int],
    evidence: Sequence[Evidence] = (),
    version: int = FEATURES_VERSION,
) -> tuple[Floats, Floats]:
    """``(obs, acts)``: the scaled observation of ``view`` and one feature row per action
    code, computed from the view and ``evidence`` (what this seat saw the opponent play this
    round, ``PlayTracker.evidence``) alone (module docstring), in layout ``version``."""
    _need_numpy()
    obs = encode_view(view)
    target = max(view.options.target, 1)
    obs *= _obs_scale()
    at, length = OBS_FIELDS["totals"]
    obs[at : at + length] /= target
    if version >= 2:
        belief = np.asarray(hidden_hand_marginals(view, evidence), dtype=np.float32)
        obs = np.concatenate((obs, belief))
    k = len(codes)
    acts = np.zeros((k, act_size()), dtype=np.float32)
    c = np.asarray(codes, dtype=np.int64)
    card = c & 63
    decl = c >> 6 & 63
    capture = c >> 12
    rows = np.arange(k)
    acts[rows, card] = 1.0
    bits = _bits()
    taken = (capture[:, None] >> bits[None, :]) & 1
    acts[:, 40:80] = taken
    acts[rows, 80 + (decl >> 4)] = 1.0
    acts[rows, 83 + (decl & 15)] = 1.0
    count = taken.sum(axis=1)
    acts[:, 94] = count / 4.0
    table = view.table
    clears = (capture == table) & (capture != 0)
    acts[:, 95] = clears
    # The table each action leaves: the captured cards gone, or the played card added.
    table_bits = (table >> bits) & 1
    after = np.where(capture[:, None] != 0, table_bits[None, :] - taken, table_bits[None, :])
    after[rows, card] |= (capture == 0).astype(np.int64)
    acts[:, FEATURE_SIZE : FEATURE_SIZE + NUM_CARDS] = after
    appraiser = Appraiser(view)
    extra = FEATURE_SIZE + NUM_CARDS
    for i, code in enumerate(codes):
        score, risk, sweeps = appraise(appraiser, view, int(code))
        acts[i, extra] = score
        acts[i, extra + 1] = risk
        acts[i, extra + 2] = sweeps
    return obs, acts


def appraise(appraiser: Appraiser, view: View, code: int) -> tuple[float, float, float]:
    """Greedy's score of ``code``, the sweep risk it leaves, and 1 if it sweeps."""
    score = appraiser.score(code)
    card, decl, capture = code & 63, code >> 6 & 63, code >> 12
    wild = decl & 15 if decl & 15 else view.wild_value
    if capture:
        after = view.table & ~capture
        sweeps = float(not after and not appraiser.last_card)
    else:
        after = view.table | 1 << card
        sweeps = 0.0
    return score, appraiser.sweep_risk(after, wild) / (SCOPA_POINT + 1.0), sweeps


# --------------------------------------------------------------------------- the network

PARAMS = ("wo", "wa", "b1", "w2", "b2", "w3", "v", "b3")
#: The arrays of a weights file, checked on their headers before any is read
#: (``model_files``): the parameters (floats) and ``meta`` (JSON bytes).
WEIGHT_SPECS = {
    **{name: ArraySpec(ndim=2 if name in ("wo", "wa", "w2") else 1) for name in PARAMS},
    "meta": ArraySpec(ndim=1, kinds="u"),
}
#: Longest ``meta`` JSON read.
MAX_META_BYTES = 64 * 1024


@dataclass
class QNet:
    """The action-value network's arrays (module docstring), float32."""

    wo: Floats
    wa: Floats
    b1: Floats
    w2: Floats
    b2: Floats
    w3: Floats
    v: Floats
    b3: Floats
    #: The weights file's JSON metadata (the feature layout, the sizes, what trained it).
    meta: dict[str, Any]

    @classmethod
    def init(cls, hidden: int, hidden2: int, seed: int, version: int = FEATURES_VERSION) -> QNet:
        """A fresh network (He initialisation) whose linear path is greedy's score."""
        _need_numpy()
        rng = np.random.default_rng(seed)
        n_obs, n_act = obs_size(version), act_size()

        def he(n_in: int, n_out: int, fan_in: int) -> Floats:
            scale = float(np.sqrt(2.0 / fan_in))
            return (rng.standard_normal((n_in, n_out)) * scale).astype(np.float32)

        v = np.zeros(n_act, dtype=np.float32)
        v[n_act - len(ACT_EXTRA)] = 1.0 / POINT_SCALE  # greedy's score, in output units
        return cls(
            wo=he(n_obs, hidden, n_obs + n_act),
            wa=he(n_act, hidden, n_obs + n_act),
            b1=np.zeros(hidden, dtype=np.float32),
            w2=he(hidden, hidden2, hidden),
            b2=np.zeros(hidden2, dtype=np.float32),
            w3=(rng.standard_normal(hidden2) * 0.01).astype(np.float32),
            v=v,
            b3=np.zeros(1, dtype=np.float32),
            meta={"features": version, "hidden": hidden, "hidden2": hidden2},
        )

    @property
    def version(self) -> int:
        """The feature layout it reads (``FEATURES_VERSION``)."""
        return int(self.meta.get("features", 1))

    def arrays(self) -> dict[str, Floats]:
        return {name: getattr(self, name) for name in PARAMS}

    def q(self, obs: Floats, acts: Floats) -> Floats:
        """Values of the actions ``acts`` ([k, act]) in the position ``obs`` ([obs]), in
        output units (points / ``POINT_SCALE``)."""
        h1 = np.maximum(obs @ self.wo + acts @ self.wa + self.b1, 0.0)
        h2 = np.maximum(h1 @ self.w2 + self.b2, 0.0)
        values: Floats = h2 @ self.w3 + acts @ self.v + self.b3[0]  # b3[0]: a float32
        return values

    def save(self, path: str | Path) -> str:
        """Write the ``.npz`` (byte for byte the same for the same arrays: fixed zip entry
        dates and order) and return its SHA-256."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            entries = {**self.arrays(), "meta": np.frombuffer(_meta_bytes(self.meta), np.uint8)}
            for name, array in entries.items():
                data = io.BytesIO()
                np.lib.format.write_array(data, np.ascontiguousarray(array), allow_pickle=False)
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data.getvalue())
        blob = buffer.getvalue()
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
        return hashlib.sha256(blob).hexdigest()


def _meta_bytes(meta: dict[str, Any]) -> bytes:
    return json.dumps(meta, sort_keys=True).encode()


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_qnet(path: str | Path, sha256: str | None = None) -> QNet:
    """The network of a ``.npz`` written by ``QNet.save``, checked (``ValueError`` naming
    the file and what is wrong): its SHA-256 if given, its arrays' shapes, its feature
    version."""
    _need_numpy()
    blob = read_bounded(path, "learned weights")
    if sha256 is not None and hashlib.sha256(blob).hexdigest() != sha256:
        raise ValueError(
            f"learned weights {path}: SHA-256 {hashlib.sha256(blob).hexdigest()[:16]}... is not "
            f"the recorded {sha256[:16]}..."
        )

    def check_shapes(headers: Headers) -> None:
        """The layers fit together, from the headers (the feature version is in ``meta``,
        so the observation's width may be any version's; checked exactly once read)."""
        hidden, hidden2 = headers["b1"][0][0], headers["b2"][0][0]
        widths = {obs_size(v) for v in FEATURES_VERSIONS}
        expected = {
            "wa": (act_size(), hidden),
            "w2": (hidden, hidden2),
            "w3": (hidden2,),
            "v": (act_size(),),
            "b3": (1,),
        }
        wo = headers["wo"][0]
        if wo[0] not in widths or wo[1] != hidden:
            raise ValueError(f"learned weights {path}: wo has shape {wo}, not (inputs, {hidden})")
        for name, shape in expected.items():
            if headers[name][0] != shape:
                raise ValueError(
                    f"learned weights {path}: {name} has shape {headers[name][0]}, not {shape}"
                )
        if headers["meta"][0][0] > MAX_META_BYTES:
            raise ValueError(f"learned weights {path}: meta above {MAX_META_BYTES} bytes")

    arrays = read_npz(path, "learned weights", WEIGHT_SPECS, check_shapes, blob=blob)
    try:
        meta = json.loads(bytes(arrays["meta"].astype(np.uint8)).decode())
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"learned weights {path}: its meta array is not JSON") from None
    if meta.get("features") not in FEATURES_VERSIONS:
        raise ValueError(
            f"learned weights {path}: features version {meta.get('features')}, "
            f"this bot reads {', '.join(map(str, FEATURES_VERSIONS))}"
        )
    net = QNet(**{n: arrays[n].astype(np.float32) for n in PARAMS}, meta=meta)
    hidden, hidden2 = net.b1.shape[0], net.b2.shape[0]
    expected = {
        "wo": (obs_size(net.version), hidden),
        "wa": (act_size(), hidden),
        "w2": (hidden, hidden2),
        "w3": (hidden2,),
        "v": (act_size(),),
        "b3": (1,),
    }
    for name, shape in expected.items():
        if getattr(net, name).shape != shape:
            raise ValueError(
                f"learned weights {path}: {name} has shape {getattr(net, name).shape}, not {shape}"
            )
    return net


_CACHE: dict[tuple[str, int, int], QNet] = {}


def cached_qnet(path: str | Path, sha256: str | None = None) -> QNet:
    """``load_qnet`` once per file version and process (strength games build a bot per
    game)."""
    where = Path(path).resolve()
    try:
        stat = where.stat()
    except OSError:
        raise ValueError(f"learned weights {path}: no such file") from None
    key = (str(where), stat.st_mtime_ns, stat.st_size)
    net = _CACHE.get(key)
    if net is None:
        net = _CACHE[key] = load_qnet(where, sha256)
    return net


def action_values(
    net: QNet, view: View, codes: Sequence[int], evidence: Sequence[Evidence] = ()
) -> Floats:
    """The network's value of each action code, in points of the rest of the deal."""
    obs, acts = decision_features(view, codes, evidence, net.version)
    values: npt.NDArray[np.float32] = net.q(obs, acts)
    return values * POINT_SCALE


class LearnedPolicy:
    """Plays the legal action of highest learned value (ties: the first, in legal order);
    in a 2-player deal's last round, where every card is known, the minimax move
    (``endgame`` ``"exact"`` or ``"sampled"``), and in the round before it the move of best
    minimax value over sampled deals, within ``nodes`` minimax nodes (``"sampled"``, the
    default; the network's move when not even one deal fits).

    Deterministic: the choice depends only on the views it was shown, the weights and
    ``seed`` (which draws the sampled deals). Weights of layout 2 read the opponent's plays
    of the round, which ``PlayTracker`` rebuilds from consecutive views: that bot is asked
    every move, forced ones too. The shipped layout reads no plays, so it keeps no tracker
    and lets the server play its forced moves.
    """

    def __init__(
        self,
        seed: int | None = None,
        weights: str | None = None,
        endgame: str = "sampled",
        nodes: int = SAMPLED_NODES,
    ) -> None:
        _need_numpy()
        if endgame not in ENDGAMES:
            raise ValueError(
                f"learned endgame must be one of {', '.join(ENDGAMES)}, not {endgame!r}"
            )
        if nodes < 1:
            raise ValueError(f"learned nodes must be at least 1, not {nodes}")
        self.seed = seed
        self.endgame = endgame
        self.nodes = nodes
        #: The kit runs an instant policy inline, with no thread to abandon it on overrun:
        #: true of the network and of a node budget of a few milliseconds.
        self.instant = endgame != "sampled" or nodes <= INSTANT_NODES
        if weights:
            self.net = cached_qnet(weights)
            self.name = f"learned:{Path(weights).stem}"
        else:
            self.net = cached_qnet(WEIGHTS_PATH, WEIGHTS_SHA256)
            self.name = "learned"
        follows_plays = self.net.version >= 2
        self._tracker = PlayTracker() if follows_plays else None
        #: The kit's ``Hello.auto_play_forced``: a bot that follows the plays sees them all.
        self.auto_play_forced = not follows_plays
        #: What the last decision read of the opponent's plays this round (its belief's
        #: source, ``inference.hidden_hand_marginals``).
        self.last_evidence: Sequence[Evidence] = ()

    def new_game(self) -> None:
        """A new game in the same session (``cirulla engine``'s ``newgame``)."""
        if self._tracker is not None:
            self._tracker.reset()

    def _sampled(self, view: View, codes: list[int]) -> list[float]:
        """The moves' mean minimax values over sampled deals in the round before a 2-player
        deal's last (``endgame="sampled"``); empty elsewhere."""
        if self.endgame != "sampled" or not penultimate(view):
            return []
        return sampled_values(view, codes, decision_seed(self.seed, view), self.nodes)

    def choose(self, view: View, legal: Sequence[Action], time_left: float | None) -> int:
        tracker = self._tracker
        evidence = self.last_evidence = tracker.evidence(view) if tracker else ()
        index = 0
        if len(legal) > 1:
            codes = [a.to_int() for a in legal]
            if self.endgame != "network" and solvable(view):
                index = best_exact(view, codes)
            else:
                # The network's values unless the sampled deals valued the moves (none
                # when not even one deal fits the budget).
                values = self._sampled(view, codes) or action_values(
                    self.net, view, codes, evidence
                )
                index = int(np.argmax(values))
        if tracker is not None:
            tracker.played(legal[index].to_int())
        return index
