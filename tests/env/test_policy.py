"""A policy over the encoding plays through the kit as the ``policy:model=...`` bot kind."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from cirulla.bots.botspec import parse_bot_spec
from cirulla.bots.policy_bot import save_mlp
from cirulla.bots.specs import make_policy
from cirulla.env.vector import make_options
from cirulla.rules.encoding import NUM_ACTIONS, OBS_SIZE, index_actions, legal_actions, observe
from cirulla.rules.game import Game


def last_legal(obs: np.ndarray, mask: np.ndarray) -> int:
    """A MODULE:FUNC policy for the test: the highest legal index."""
    assert obs.shape == (OBS_SIZE,)
    return int(np.flatnonzero(mask)[-1])


def play_one(policy_spec: str, seed: int) -> Game:
    kind, opts = parse_bot_spec(policy_spec)
    bot = make_policy(kind, opts, seed=1)
    game = Game(make_options(2, target=11), seed=seed)
    rng = random.Random(seed)
    while (seat := game.to_move) is not None:
        legal = game.legal_actions()
        choice = (
            bot.choose(game.view(seat), legal, None) if seat == 0 else rng.randrange(len(legal))
        )
        assert isinstance(choice, int)
        game.apply(legal[choice])
    return game


def test_a_function_policy_is_called_with_the_environments_encoding() -> None:
    bot = make_policy("policy", {"model": f"{__name__}:last_legal"})
    game = Game(make_options(2), seed=3)
    legal = game.legal_actions()
    choice = bot.choose(game.view(game.to_move), legal, None)
    assert isinstance(choice, int)
    actions = legal_actions(game)
    expected = actions.code_of(max(i for i in actions.indices if i >= 0))
    assert legal[choice].to_int() == expected
    assert observe(game, game.turn).shape == (OBS_SIZE,)


def test_an_npz_model_plays_whole_games(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    path = save_mlp(
        tmp_path / "m.npz",
        [
            (rng.standard_normal((OBS_SIZE, 8)), np.zeros(8)),
            (rng.standard_normal((8, NUM_ACTIONS)), np.zeros(NUM_ACTIONS)),
        ],
    )
    assert play_one(f"policy:model={path}", seed=4).winner is not None


def test_the_kits_legal_order_does_not_change_the_indices() -> None:
    rng = random.Random(0)
    for seed in range(30):
        game = Game(make_options(2, must_capture=False), seed=seed)
        while game.to_move is not None:
            codes = game.legal_codes()
            hand = game.hands[game.turn]
            shuffled = codes[:]
            rng.shuffle(shuffled)
            core = dict(zip(codes, index_actions(codes, hand).indices, strict=True))
            ordered = index_actions(sorted(shuffled), hand)
            assert dict(zip(ordered.codes, ordered.indices, strict=True)) == core
            game.apply(rng.choice(codes))


def test_a_bad_model_is_one_clear_line() -> None:
    with pytest.raises(ValueError, match="needs model="):
        make_policy("policy", {})
    with pytest.raises(ValueError, match="expected PATH"):
        make_policy("policy", {"model": "nothing"})


def test_a_missing_or_malformed_model_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file"):
        make_policy("policy", {"model": str(tmp_path / "absent.npz")})
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(ValueError, match=r"not a \.npz file"):
        make_policy("policy", {"model": str(tmp_path / "junk.npz")})
    wrong = save_mlp(tmp_path / "wrong.npz", [(np.zeros((OBS_SIZE, 4)), np.zeros(4))])
    with pytest.raises(ValueError, match="gives 4 outputs, not the 2304 action logits"):
        make_policy("policy", {"model": str(wrong)})
    skewed = save_mlp(tmp_path / "skewed.npz", [(np.zeros((10, NUM_ACTIONS)), np.zeros(3))])
    with pytest.raises(ValueError, match=r"w0 \(10, 2304\) and b0 \(3,\) do not follow 451"):
        make_policy("policy", {"model": str(skewed)})
    (tmp_path / "junk.onnx").write_bytes(b"\x00\x01")
    with pytest.raises(ValueError, match="not a usable ONNX model"):
        make_policy("policy", {"model": str(tmp_path / "junk.onnx")})
    with pytest.raises(ValueError, match="cannot import no_such_module_here"):
        make_policy("policy", {"model": "no_such_module_here:act"})


@pytest.mark.parametrize("given", [["--option", "model=absent.npz"], ["--model", "absent.npz"]])
def test_the_bot_command_says_a_bad_model_in_one_line(tmp_path: Path, given: list[str]) -> None:
    import subprocess
    import sys

    where = ["--server", "127.0.0.1:1", "--match", "m", "--token=t"]
    done = subprocess.run(
        [sys.executable, "-m", "cirulla", "bot", "policy", *given, *where],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stdout + done.stderr
    assert "policy model absent.npz: no such file" in done.stdout + done.stderr


def test_a_policy_answering_outside_the_mask_stops_bench_strength_in_one_line(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "wild_policy.py").write_text(
        "def choose(obs, mask):\n    return len(mask) + 5  # beyond every index\n"
    )
    argv = [sys.executable, "-m", "cirulla", "bench", "strength", "--games", "2"]
    argv += ["--a", "policy:model=wild_policy:choose", "--b", "random"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "not a legal action" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def _console(tmp_path: Path, *args: str) -> tuple[int, str]:
    """The installed ``cirulla`` console script (not ``python -m``, which puts the current
    folder on the path by itself), run in ``tmp_path`` with no PYTHONPATH."""
    import os
    import subprocess
    import sys

    script = Path(sys.executable).parent / "cirulla"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(script), *args], cwd=tmp_path, capture_output=True, text=True, timeout=180, env=env
    )
    return done.returncode, done.stdout + done.stderr


MYBOT = "import numpy as np\n\ndef act(obs, mask):\n    return int(np.flatnonzero(mask)[0])\n"


def test_a_module_in_the_current_folder_imports_under_every_command(tmp_path: Path) -> None:
    (tmp_path / "mybot.py").write_text(MYBOT)
    code, out = _console(
        tmp_path, "bench", "strength", "--a", "policy:model=mybot:act", "--b", "random",
        "--games", "2", "--target", "5",
    )  # fmt: skip
    assert code == 0 and "cannot import" not in out, out
    # the bot command imports it too (then fails to reach the absent server, not to import)
    code, out = _console(
        tmp_path, "bot", "policy", "--option", "model=mybot:act",
        "--server", "127.0.0.1:1", "--match", "m", "--token=t", "--retries", "0",
        "--join-timeout", "1",
    )  # fmt: skip
    assert "cannot import" not in out and "Traceback" not in out, out


def test_a_python_file_model_loads_with_its_neighbours(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "helper_for_policy.py").write_text(MYBOT)
    (folder / "filebot.py").write_text(
        "from helper_for_policy import act as first\n\ndef act(obs, mask):\n"
        "    return first(obs, mask)\n\ndef last(obs, mask):\n"
        "    import numpy as np\n    return int(np.flatnonzero(mask)[-1])\n"
    )
    assert play_one(f"policy:model={folder / 'filebot.py'}", seed=2).winner is not None
    assert play_one(f"policy:model={folder / 'filebot.py'}:last", seed=2).winner is not None
    with pytest.raises(ValueError, match="no such file"):
        make_policy("policy", {"model": str(tmp_path / "absent.py")})
    (folder / "broken.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ValueError, match=r"broken\.py failed to load \(boom\)"):
        make_policy("policy", {"model": str(folder / "broken.py")})
