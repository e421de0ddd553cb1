"""Crafted model files are refused in one line before anything is read or inflated.

The attacks: a few hundred bytes of ``.npz`` whose array header claims 1 TiB (``np.load``
tried to allocate it: a MemoryError traceback), and a 3 MB zip bomb that inflates to
3 GiB (inflated whole before any shape was checked). Both are built here in tmp_path;
they are refused through the Python API (``load_mlp``, ``load_qnet``,
``load_array_policy``), through ``cirulla bot`` as a user runs it, and in a real
``cirulla tournament`` (the bot's log says why); the shipped weights still load.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from cirulla.bots.learned import WEIGHTS_PATH, WEIGHTS_SHA256, load_qnet
from cirulla.bots.model_files import MAX_FILE_BYTES
from cirulla.bots.policy_bot import load_array_policy, load_mlp, save_mlp
from cirulla.env.encoding import NUM_ACTIONS, OBS_SIZE

TIB = 1 << 40
CHUNK = 16 << 20


def npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    out = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(out, header)
    return out.getvalue()


def tib_claim(path: Path, name: str, shape: tuple[int, ...]) -> Path:
    """An .npz of a few hundred bytes whose one array claims ``shape`` (1 TiB)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{name}.npy", npy_header(shape) + bytes(64))
    return path


def zip_bomb(path: Path, name: str, zeros: int) -> Path:
    """An .npz whose one float32 array is ``zeros`` bytes of zeros, deflated: about 1,000
    times smaller. Built from one deflated 16 MiB block repeated (each ends with a full
    flush, so the copies are the same bytes), written as a plain zip by hand. Its CRC is
    left 0: a loader inflates everything before it can check it."""
    header = npy_header((zeros // 4,))
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = deflate.compress(header) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(bytes(CHUNK)) + deflate.flush(zlib.Z_FULL_FLUSH)
    data = head + block * (zeros // CHUNK) + deflate.flush()
    size = len(header) + zeros
    fname = f"{name}.npy".encode()
    local = struct.pack(
        "<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, 0, len(data), size, len(fname), 0
    )
    central = struct.pack(
        "<IHHHHHHIIIHHHHHII",
        *(0x02014B50, 20, 20, 0, 8, 0, 0x21, 0, len(data), size, len(fname)),
        *(0, 0, 0, 0, 0, 0),
    )
    end = struct.pack(
        "<IHHHHIIH",
        0x06054B50,
        0,
        0,
        1,
        1,
        len(central) + len(fname),
        len(local) + len(fname) + len(data),
        0,
    )
    path.write_bytes(local + fname + data + central + fname + end)
    return path


def bot_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``cirulla bot ...`` against a closed port: the model is loaded before dialling."""
    argv = [sys.executable, "-m", "cirulla", "bot", *args]
    argv += ["--server", "127.0.0.1:9", "--match", "m-1-00000000", "--token", "t"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def one_line_refusal(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr


def test_the_shipped_weights_and_a_saved_policy_still_load(tmp_path: Path) -> None:
    net = load_qnet(WEIGHTS_PATH, WEIGHTS_SHA256)
    assert net.wo.shape[1] == net.b1.shape[0] and net.version == 1
    saved = tmp_path / "again.npz"
    net.save(saved)
    assert load_qnet(saved).w2.shape == net.w2.shape
    rng = np.random.default_rng(0)
    layers = [(rng.standard_normal((OBS_SIZE, 16)), np.zeros(16))]
    layers.append((rng.standard_normal((16, NUM_ACTIONS)), np.zeros(NUM_ACTIONS)))
    model = save_mlp(tmp_path / "mlp.npz", layers)
    assert [w.shape for w, _ in load_mlp(model)] == [(OBS_SIZE, 16), (16, NUM_ACTIONS)]
    assert callable(load_array_policy(str(model)))


def test_an_array_that_claims_a_tebibyte_is_refused_in_one_line(tmp_path: Path) -> None:
    policy = tib_claim(tmp_path / "tib-policy.npz", "w0", (TIB // 4,))
    weights = tib_claim(tmp_path / "tib-weights.npz", "wo", (1 << 20, TIB // 4 // (1 << 20)))
    assert os.path.getsize(policy) < 600
    expected = (
        f"policy model {policy}: array w0 claims shape ({TIB // 4},) of float32 (1,024.0 GiB) "
        "but its entry holds 192 bytes"
    )
    with pytest.raises(ValueError) as exc:
        load_mlp(policy)
    assert str(exc.value) == expected
    with pytest.raises(ValueError, match="claims shape"):
        load_array_policy(str(policy))
    with pytest.raises(ValueError) as exc:
        load_qnet(weights)
    assert str(exc.value) == (
        f"learned weights {weights}: array wo claims shape (1048576, 262144) of float32 "
        "(1,024.0 GiB) but its entry holds 192 bytes"
    )

    one_line_refusal(bot_command("policy", "--model", str(policy)), expected)
    one_line_refusal(bot_command("learned", "--weights", str(weights)), "array wo claims shape")


def test_a_zip_bomb_is_refused_from_its_directory_without_inflating(tmp_path: Path) -> None:
    bomb = zip_bomb(tmp_path / "bomb.npz", "w0", 3 << 30)
    assert os.path.getsize(bomb) < 4 << 20  # about 3 MB on disk ...
    with zipfile.ZipFile(bomb) as archive:  # ... a real bomb: it inflates to zeros
        assert archive.getinfo("w0.npy").file_size > 3 << 30
        with archive.open("w0.npy") as member:
            start = member.read(CHUNK)
        assert start.startswith(b"\x93NUMPY") and start[-1024:] == bytes(1024)
    expected = (
        f"policy model {bomb}: its arrays claim 3.0 GiB or more once inflated, above the "
        "256.0 MiB limit"
    )
    with pytest.raises(ValueError) as exc:
        load_mlp(bomb)
    assert str(exc.value) == expected
    one_line_refusal(bot_command("policy", "--model", str(bomb)), expected)

    # Below the total but inflating 1,000 times: the compression ratio bound.
    dense = zip_bomb(tmp_path / "dense.npz", "wo", 64 << 20)
    with pytest.raises(ValueError) as exc:
        load_qnet(dense)
    assert "entry 'wo.npy' inflates" in str(exc.value)
    assert str(exc.value).endswith("to 64.0 MiB, above the compression ratio limit 200")


def test_a_tournament_bot_with_a_bomb_gets_one_line_in_its_log(tmp_path: Path) -> None:
    bomb = zip_bomb(tmp_path / "bomb.npz", "w0", 3 << 30)
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--bot", f"policy:model={bomb}"]
    argv += ["--bot", "random", "--games", "2", "--concurrency", "1", "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    # the bomb's bot joined none of its games: the run fails, naming it (issue 40, item 5)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "joined none of its 2 games" in done.stdout + done.stderr
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2
    logs = sorted((out / "logs").glob("policy-*.log"))
    assert logs
    for log in logs:
        text = log.read_text()
        assert "Traceback" not in text and "MemoryError" not in text
        assert "its arrays claim 3.0 GiB or more once inflated, above the 256.0 MiB" in text


def test_an_onnx_file_above_the_limit_is_refused_before_onnxruntime_reads_it(
    tmp_path: Path,
) -> None:
    big = tmp_path / "big.onnx"
    with big.open("wb") as out:
        out.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(ValueError) as exc:
        load_array_policy(str(big))
    assert str(exc.value) == (
        f"policy model {big}: 268,435,457 bytes, above the 256.0 MiB limit of a model file"
    )
    # An unreadable small one still gets onnxruntime's own one-line complaint.
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a usable ONNX model"):
        load_array_policy(str(junk))
