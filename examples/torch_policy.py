"""A PyTorch policy as a Cirulla bot: ``act(observation, action_mask)`` for the ``policy:``
kind, its moves chosen by a ``torch.nn`` network (docs/env.md, "A PyTorch policy, sandboxed").

The network is CleanRL's actor (examples/rl/cleanrl_ppo.py): a tanh MLP 451 -> 64 -> 64 ->
2304 logits over the observation scaled by ``cirulla.env.example.input_scale``; the bot plays
the legal index of highest logit. Its weights are ``torch_policy.pt`` beside this file when
there is one (``torch.save(agent.actor.state_dict(), "torch_policy.pt")`` after training),
else a fixed seeded initialisation (an untrained network: legal but weak moves).

One line plays it, kept alive between games (PyTorch is imported once), sandboxed; the
interpreter is the python of the virtual environment where torch is installed (with cirulla)::

    cirulla tournament --sandbox --bot greedy \\
      --bot torch="serve:$TORCH_PYTHON -m cirulla.bots.loop policy:model=examples/torch_policy.py"
    cirulla ladder add torch \\
      "serve:$TORCH_PYTHON -m cirulla.bots.loop policy:model=examples/torch_policy.py" --queue 2p

Under ``--sandbox`` the runner binds what that interpreter imports from (its prefix, base
prefix and the folders of its ``sys.path``) and this file's folder, read-only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch
from torch import nn

from cirulla.env.encoding import NUM_ACTIONS, OBS_SIZE
from cirulla.env.example import input_scale

#: Trained weights, if any: the actor's ``state_dict`` saved beside this file.
WEIGHTS = Path(__file__).with_suffix(".pt")

torch.set_num_threads(1)  # one bot, one core: a sandbox's CPU share is one core by default
torch.manual_seed(0)
ACTOR = nn.Sequential(
    nn.Linear(OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, NUM_ACTIONS)
)
if WEIGHTS.is_file():
    ACTOR.load_state_dict(torch.load(WEIGHTS, weights_only=True))
ACTOR.eval()
SCALE = torch.as_tensor(input_scale())
# stderr is the bot's log: say what plays (a sandboxed bot's log shows it ran torch)
print(
    f"torch policy: torch {torch.__version__}, "
    f"weights {WEIGHTS.name if WEIGHTS.is_file() else 'seeded (untrained)'}",
    file=sys.stderr,
    flush=True,
)


def act(observation: Any, action_mask: Any) -> int:
    """The legal index of highest logit of the network."""
    with torch.no_grad():
        logits = ACTOR(torch.as_tensor(observation, dtype=torch.float32) * SCALE)
    legal = torch.as_tensor(action_mask, dtype=torch.bool)
    return int(torch.argmax(torch.where(legal, logits, torch.tensor(float("-inf")))))
