"""A trained policy as a bot: the ``policy:model=...`` kind.

A policy over the documented encoding (``cirulla.env.encoding``) sees the observation vector
and the legal-action mask of its seat and answers a fixed action index. The kit hands bots
the rules core's ``View`` of the seat, built from the server's decision request, so the bot
encodes exactly what the environments encode (``encode_view``) and maps the legal actions to
the same fixed indices (``index_actions``). ``model`` is one of:

* ``PATH.npz``: a NumPy multilayer perceptron, arrays ``w0, b0, w1, b1, ...`` (``w_i`` of
  shape ``(inputs, outputs)``), tanh between layers, the last layer's outputs the logits of
  the ``NUM_ACTIONS`` indices (``save_mlp`` writes one);
* ``PATH.onnx``: an ONNX model with one float32 input of shape ``(batch, OBS_SIZE)`` and the
  logits ``(batch, NUM_ACTIONS)`` as its first output (needs ``onnxruntime``);
* ``MODULE:FUNC``: a Python function ``f(observation, action_mask) -> index``;
* ``PATH.py`` or ``PATH.py:FUNC``: the same function from a Python file (``FUNC`` defaults to
  ``act``).

Where a function is imported from is one rule under every command (``cirulla bot``, ``bench
strength``, ``tournament``, the ladder's bot processes): ``MODULE`` is imported with the
folder the command was started from first on ``sys.path``, as ``python -m`` does, and a
``PATH.py`` file is loaded from that path (relative to that folder) with its own folder first
on ``sys.path``, so the modules beside it import too. A sandboxed bot sees only the files its
command line names, so there the file form is the one that works: ``model=PATH.py`` names
the file, which the runner binds into the sandbox.

The bot plays the legal index of highest logit (models) or the function's answer; an answer
outside the mask is submitted as an illegal action, which the server counts and replaces.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from cirulla.bots.model_files import Arrays, Headers, read_bounded, read_npz
from cirulla.bots.policy import RawAnswer
from cirulla.extras import install_hint
from cirulla.rules.actions import Action
from cirulla.rules.views import View

try:  # the observation's encoding needs NumPy too: both come with the env extra
    import numpy as np
    import numpy.typing as npt

    from cirulla.rules.encoding import NUM_ACTIONS, OBS_SIZE, encode_view, index_actions
except ImportError:  # pragma: no cover - the base install has no NumPy
    np = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from typing import TypeAlias

    #: An observation (``encode_view``) or a batch of them, and what a layer gives.
    Floats: TypeAlias = npt.NDArray[np.float32]
    #: The legal-action mask over the ``NUM_ACTIONS`` indices.
    Mask: TypeAlias = npt.NDArray[np.int8]
    #: An array as a model file holds it (``model_files.read_npz``: any numeric dtype).
    Stored: TypeAlias = npt.NDArray[np.generic]
    #: One layer of an MLP: its weights ``(inputs, outputs)`` and its bias ``(outputs,)``.
    Layer: TypeAlias = tuple[Stored, Stored]

#: ``f(observation, action_mask) -> index``, the form every model takes once loaded.
ArrayPolicy = Callable[["Floats", "Mask"], int]


def _need_numpy() -> None:
    if np is None:
        raise ImportError(f"the policy bot needs NumPy: {install_hint('env')}")


def save_mlp(path: str | Path, layers: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]]) -> Path:
    """Write an MLP's ``(weights, bias)`` layers as the ``.npz`` the policy bot reads."""
    _need_numpy()
    arrays = {}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"] = np.asarray(w, dtype=np.float32)
        arrays[f"b{i}"] = np.asarray(b, dtype=np.float32)
    target = Path(path)
    np.savez(target, **arrays)  # type: ignore[arg-type]
    return target


def load_mlp(path: str | Path) -> list[Layer]:
    """The ``(weights, bias)`` layers of an ``.npz`` written by ``save_mlp``, checked: the
    first takes the observation, each the previous one's outputs, the last gives the
    logits of every action index (``ValueError`` naming the array otherwise)."""
    _need_numpy()

    def check_layers(shapes: Headers | Arrays) -> None:
        """The layers follow each other (checked on the headers, before any reading)."""
        count = sum(1 for k in shapes if k.startswith("w"))
        if count == 0 or any(f"w{i}" not in shapes or f"b{i}" not in shapes for i in range(count)):
            raise ValueError(f"policy model {path}: expected arrays w0, b0, w1, b1, ...")
        width = OBS_SIZE
        for i in range(count):
            w, b = shape_of(shapes[f"w{i}"]), shape_of(shapes[f"b{i}"])
            if len(w) != 2 or w[0] != width or b != (w[1],):
                raise ValueError(
                    f"policy model {path}: w{i} {w} and b{i} {b} do not follow "
                    f"{width} inputs (w{i} must be ({width}, n) and b{i} (n,))"
                )
            width = w[1]
        if width != NUM_ACTIONS:
            raise ValueError(
                f"policy model {path}: the last layer gives {width} outputs, "
                f"not the {NUM_ACTIONS} action logits"
            )

    arrays = read_npz(path, "policy model", check_shapes=check_layers)
    check_layers(arrays)  # the arrays read are those the headers described
    count = sum(1 for k in arrays if k.startswith("w"))
    return [(arrays[f"w{i}"], arrays[f"b{i}"]) for i in range(count)]


def shape_of(item: Stored | tuple[tuple[int, ...], np.dtype[np.generic]]) -> tuple[int, ...]:
    """The shape of an array, or of a header's (shape, dtype)."""
    return tuple(item.shape) if isinstance(item, np.ndarray) else tuple(item[0])


def mlp_logits(layers: Sequence[Layer], obs: Stored) -> Stored:
    """The MLP's logits for one observation or a batch (tanh between layers), in the
    layers' own float precision."""
    x = obs
    for i, (w, b) in enumerate(layers):
        x = np.add(np.matmul(x, w), b)  # x @ w + b, whatever float dtype the file holds
        if i < len(layers) - 1:
            x = np.tanh(x)
    return x


def masked_argmax(logits: Stored, mask: Mask) -> int:
    """The legal index of highest logit."""
    return int(np.argmax(np.where(mask.astype(bool), logits, -np.inf)))


def load_array_policy(model: str) -> ArrayPolicy:
    """An ``f(observation, action_mask) -> index`` from a ``.npz``, ``.onnx`` or ``MODULE:FUNC``."""
    _need_numpy()
    if model.endswith(".npz"):
        layers = load_mlp(model)
        return lambda obs, mask: masked_argmax(mlp_logits(layers, obs), mask)
    if model.endswith(".onnx"):
        try:
            import onnxruntime  # type: ignore[import-untyped,unused-ignore]
        except ImportError:
            raise ImportError(
                f"an .onnx policy needs onnxruntime: {install_hint('onnx')}"
            ) from None
        # Size-checked bytes, not the path: nothing unchecked is read (an ONNX file may
        # name external data files, which a model given as bytes cannot use).
        blob = read_bounded(model, "policy model")
        try:
            session = onnxruntime.InferenceSession(blob, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own classes for a bad file
            raise ValueError(f"policy model {model}: not a usable ONNX model ({exc})") from None
        name = session.get_inputs()[0].name

        def run(obs: Floats, mask: Mask) -> int:
            logits = session.run(None, {name: obs.reshape(1, -1).astype(np.float32)})[0]
            return masked_argmax(np.asarray(logits).reshape(-1), mask)

        return run
    return _load_function(model)


#: The function a ``PATH.py`` model names when it names none.
DEFAULT_FUNCTION = "act"


def _first_on_path(folder: str) -> None:
    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)


def _load_function(model: str) -> ArrayPolicy:
    """``MODULE:FUNC``, ``PATH.py`` or ``PATH.py:FUNC`` by the module docstring's rule."""
    head, sep, func = model.rpartition(":") if ".py:" in model else (model, "", "")
    if head.endswith(".py") or model.endswith(".py"):
        path = Path(head if sep else model).absolute()
        func = func if sep else DEFAULT_FUNCTION
        if not path.is_file():
            raise ValueError(f"policy model {model!r}: no such file {path}")
        _first_on_path(str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ValueError(f"policy model {model!r}: cannot load {path}")
        imported = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = imported
        try:
            spec.loader.exec_module(imported)
        except Exception as exc:  # the user's module: any error is one line
            sys.modules.pop(path.stem, None)
            raise ValueError(
                f"policy model {model!r}: {path.name} failed to load ({exc})"
            ) from None
        module = path.name
    else:
        module, sep, func = model.partition(":")
        if not sep or not module or not func:
            raise ValueError(
                f"policy model {model!r}: expected PATH.npz, PATH.onnx, PATH.py[:FUNC] "
                "or MODULE:FUNC"
            )
        _first_on_path(os.getcwd())
        try:
            imported = importlib.import_module(module)
        except ImportError as exc:
            raise ValueError(
                f"policy model {model!r}: cannot import {module} ({exc}; MODULE is imported "
                "from the folder the command started in, or name the file: PATH.py:FUNC)"
            ) from None
    found = getattr(imported, func, None)
    if not callable(found):
        raise ValueError(f"policy model {model!r}: {module} has no function {func}")
    return cast(ArrayPolicy, found)


class ArrayPolicyBot:
    """A policy over the encoding, playing through the kit (see the module docstring)."""

    instant = True
    auto_play_forced = True

    def __init__(self, model: str | None = None, seed: int | None = None) -> None:
        if not model:
            raise ValueError(
                "bot kind 'policy' needs model=PATH.npz, PATH.onnx, PATH.py[:FUNC] or MODULE:FUNC"
            )
        self.model = model
        self.name = f"policy:{Path(model).stem if '/' in model else model}"
        self.func = load_array_policy(model)

    def choose(
        self, view: View, legal: Sequence[Action], time_left: float | None
    ) -> int | RawAnswer:
        codes = [a.to_int() for a in legal]
        # Ranks follow the core's legal order: per card and declaration, captures ascending
        # (no capture first), which is the order of the codes' values.
        actions = index_actions(sorted(codes), view.hand)
        mask: npt.NDArray[np.int8] = actions.mask().view(np.int8)
        index = int(self.func(encode_view(view), mask))
        if not 0 <= index < mask.shape[0] or not mask[index]:
            return RawAnswer(text=f"index {index}", index=len(legal))
        return codes.index(actions.code_of(index))
