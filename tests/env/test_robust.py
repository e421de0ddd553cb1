"""The environments on bad input and without their extra.

``cirulla --help`` imports every area, ``cirulla.cli_env`` (``cirulla bench env``) among
them: it must work where NumPy, Gymnasium and PettingZoo are missing. Each
subprocess here hides those packages (a ``None`` in ``sys.modules`` makes their import fail,
as an absent package does). Bad input to the environments is one ``ValueError`` (or the rules'
``OptionError``) naming the field, never a stray ``TypeError`` or a silent truncation.
"""

from __future__ import annotations

import re
import subprocess
import sys

import gymnasium
import numpy as np
import pytest

from cirulla.env import aec_env
from cirulla.env.vector import ENV_CORE, Env, VectorEnv
from cirulla.rules.options import OptionError

WITHOUT_EXTRA = """
import sys
for name in ("numpy", "gymnasium", "pettingzoo", "pyspiel", "onnxruntime"):
    sys.modules[name] = None
{body}
"""

CORES = ["python", "native"] if ENV_CORE == "native" else ["python"]


def run_without_extra(body: str) -> subprocess.CompletedProcess[str]:
    code = WITHOUT_EXTRA.format(body=body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_command_works_without_the_env_extra() -> None:
    cli = "from cirulla.cli import main\nsys.exit(main(sys.argv[1:]))"
    done = run_without_extra(cli.replace("sys.argv[1:]", "['--help']"))
    assert done.returncode == 0, done.stderr
    assert "bench" in done.stdout and "Traceback" not in done.stderr
    done = run_without_extra(cli.replace("sys.argv[1:]", "['bench', '--help']"))
    assert done.returncode == 0, done.stderr
    assert "env" in done.stdout
    done = run_without_extra(cli.replace("sys.argv[1:]", "['bench', 'env', '--seconds', '0.1']"))
    assert done.returncode == 2
    said = done.stdout + done.stderr
    assert "Traceback" not in said and len(said.strip().splitlines()) == 1, said
    assert "cirulla bench env" in said and "pip install -e '.[env]'" in said, said


def test_the_package_imports_without_the_extra_and_says_what_is_missing() -> None:
    done = run_without_extra(
        "import cirulla.env\n"
        "try:\n"
        "    cirulla.env.aec_env()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert "needs the env extra" in done.stdout and "'.[env]'" in done.stdout


def test_importing_the_package_registers_the_gym_id() -> None:
    assert "Cirulla-v0" in gymnasium.registry


def test_bad_rules_and_players_name_the_option() -> None:
    with pytest.raises(OptionError, match="players must be 2, 3 or 4, not 5"):
        aec_env(players=5)
    with pytest.raises(OptionError, match="unknown rule option 'tarjet'"):
        aec_env(tarjet=3)
    with pytest.raises(OptionError, match="unknown preset 'nope'"):
        gymnasium.make("Cirulla-v0", preset="nope")
    with pytest.raises(OptionError, match=r"target must be 1\.\.1000"):
        gymnasium.make("Cirulla-v0", target=0)
    with pytest.raises(ValueError, match="opponents 3: expected a bot spec"):
        gymnasium.make("Cirulla-v0", opponents=3)
    with pytest.raises(ValueError, match=r"seat 2: expected 0\.\.1"):
        gymnasium.make("Cirulla-v0", seat=2)


@pytest.mark.parametrize("core", CORES)
def test_bad_actions_name_the_field(core: str) -> None:
    env = aec_env(core=core)
    env.reset(seed=1)
    for bad, message in (
        ("abc", "action: expected an integer index 0..2303, not 'abc'"),
        (1.5, "action: expected an integer index 0..2303, not 1.5"),
        (99999, "action index 99999 is not legal in this position"),
        (-1, "action index -1 is not legal in this position"),
        (10**20, "is not legal in this position"),
    ):
        with pytest.raises(ValueError, match=re.escape(message)):
            env.step(bad)
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    env.step(np.int64(legal[0]))  # a NumPy integer is an index like any other
    gym = gymnasium.make("Cirulla-v0", illegal="raise", core=core)
    gym.reset(seed=1)
    with pytest.raises(ValueError, match="action: expected an integer index"):
        gym.step("abc")
    with pytest.raises(ValueError, match="action index 99999 is not legal"):
        gym.step(99999)
    single = Env(core=core)
    with pytest.raises(ValueError, match=r"seat 7: expected 0\.\.1"):
        single.observe(7)
    with pytest.raises(ValueError, match="seed: expected an integer"):
        Env(seed="a", core=core)  # type: ignore[arg-type]
    batch = VectorEnv(2, core=core)
    with pytest.raises(ValueError, match="actions: expected integer indices, not float64"):
        batch.step([0.5, 1.0])
    with pytest.raises(ValueError, match="action index -1 is not legal in game 0"):
        batch.step([-1, -1])
    with pytest.raises(ValueError, match=r"seeds\[1\]: expected an integer"):
        VectorEnv(2, seeds=[1, "x"], core=core)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="seeds: 1 given for 2 games"):
        batch.reset(seeds=[1])


def test_an_unknown_core_is_refused() -> None:
    with pytest.raises(ValueError, match="core 'gpu': expected 'native' or 'python'"):
        VectorEnv(2, core="gpu")
    with pytest.raises(ValueError, match="core 'gpu'"):
        Env(core="gpu")


def test_openspiel_parameters_are_checked() -> None:
    import pyspiel  # type: ignore[import-not-found,unused-ignore]

    import cirulla.env.openspiel  # noqa: F401  (registers python_cirulla)

    with pytest.raises(ValueError, match="parameter must_capture: expected 0, 1 or -1"):
        pyspiel.load_game("python_cirulla", {"must_capture": 7})
    with pytest.raises(OptionError, match="players must be 2, 3 or 4"):
        pyspiel.load_game("python_cirulla", {"players": 5})
