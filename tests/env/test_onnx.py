"""An ONNX model plays as ``policy:model=PATH.onnx`` exactly as the same network in ``.npz``.

The test install has onnxruntime but no ``onnx`` package (nor PyTorch) to write a model, so
the model is written here from the ONNX protobuf's field numbers (``onnx.proto``: ModelProto,
GraphProto, NodeProto, TensorProto, ValueInfoProto), a few lines of the protobuf wire format:
an MLP ``MatMul, Add, Tanh, MatMul, Add`` with a dynamic batch dimension, the shape of what
``torch.onnx.export`` writes for such a network (docs/env.md). onnxruntime then runs it
inside the policy bot, whose every choice must be the ``.npz`` bot's on the same weights.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import numpy as np

from cirulla.bots.policy_bot import load_array_policy, save_mlp
from cirulla.bots.specs import make_policy
from cirulla.env.vector import make_options
from cirulla.rules.encoding import NUM_ACTIONS, OBS_SIZE
from cirulla.rules.game import Game

FLOAT = 1  # TensorProto.DataType.FLOAT


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, value: int | bytes | str) -> bytes:
    """One protobuf field: a varint (wire type 0) or length-delimited bytes (wire type 2)."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def tensor(name: str, array: np.ndarray) -> bytes:
    dims = b"".join(field(1, d) for d in array.shape)
    raw = array.astype("<f4").tobytes()
    return dims + field(2, FLOAT) + field(8, name) + field(9, raw)


def value_info(name: str, width: int) -> bytes:
    shape = field(1, field(2, "batch")) + field(1, field(1, width))  # dims: batch, width
    tensor_type = field(1, FLOAT) + field(2, shape)
    return field(1, name) + field(2, field(1, tensor_type))


def node(op: str, inputs: list[str], output: str) -> bytes:
    return b"".join(field(1, i) for i in inputs) + field(2, output) + field(4, op)


def onnx_mlp(layers: list[tuple[np.ndarray, np.ndarray]]) -> bytes:
    nodes, inits = [], []
    x = "obs"
    for i, (w, b) in enumerate(layers):
        inits += [tensor(f"w{i}", w), tensor(f"b{i}", b)]
        nodes += [node("MatMul", [x, f"w{i}"], f"m{i}"), node("Add", [f"m{i}", f"b{i}"], f"a{i}")]
        x = f"a{i}"
        if i < len(layers) - 1:
            nodes.append(node("Tanh", [x], f"t{i}"))
            x = f"t{i}"
    nodes.append(node("Identity", [x], "logits"))
    graph = b"".join(field(1, n) for n in nodes) + field(2, "cirulla_policy")
    graph += b"".join(field(5, t) for t in inits)
    graph += field(11, value_info("obs", OBS_SIZE)) + field(12, value_info("logits", NUM_ACTIONS))
    opset = field(1, "") + field(2, 13)
    return field(1, 8) + field(2, "cirulla-test") + field(7, graph) + field(8, opset)


def test_varint_matches_struct_for_small_values() -> None:
    assert varint(300) == b"\xac\x02" and varint(5) == struct.pack("B", 5)


def test_an_onnx_model_plays_as_the_same_npz_network(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    layers = [
        (rng.standard_normal((OBS_SIZE, 16)).astype(np.float32), rng.standard_normal(16)),
        (rng.standard_normal((16, NUM_ACTIONS)).astype(np.float32), np.zeros(NUM_ACTIONS)),
    ]
    layers = [(w.astype(np.float32), b.astype(np.float32)) for w, b in layers]
    onnx_path = tmp_path / "agent.onnx"
    onnx_path.write_bytes(onnx_mlp(layers))
    npz_path = save_mlp(tmp_path / "agent.npz", layers)
    by_onnx = make_policy("policy", {"model": str(onnx_path)})
    by_npz = make_policy("policy", {"model": str(npz_path)})
    assert callable(load_array_policy(str(onnx_path)))
    choices = 0
    for seed in range(4):
        game = Game(make_options(2, target=11), seed=seed)
        pick = random.Random(seed)
        while (seat := game.to_move) is not None:
            legal = game.legal_actions()
            view = game.view(seat)
            got = by_onnx.choose(view, legal, None)
            assert got == by_npz.choose(view, legal, None)
            assert isinstance(got, int)
            choices += 1
            game.apply(legal[got if seat == 0 else pick.randrange(len(legal))])
    assert choices > 50
