"""The observation and action encoding's former home, kept because published examples
(``examples/torch_policy.py``, ``examples/rl/cleanrl_ppo.py``) import it from here: the
encoding itself is ``cirulla.rules.encoding`` (it needs only the rules core and NumPy, so
the bots and the environments both read it without importing each other). docs/env.md."""

from __future__ import annotations

from cirulla.rules.encoding import (
    CAPTURE_RANKS,
    DECL_VARIANTS,
    FEATURE_FIELDS,
    FEATURE_SIZE,
    HAND_SLOTS,
    MAX_SEATS,
    MAX_SIDES,
    NUM_ACTIONS,
    OBS_FIELDS,
    OBS_SIZE,
    Float32Array,
    LegalActions,
    action_features,
    encode_view,
    index_actions,
    legal_actions,
    legal_features,
    observe,
    variant_of,
)

__all__ = [
    "CAPTURE_RANKS",
    "DECL_VARIANTS",
    "FEATURE_FIELDS",
    "FEATURE_SIZE",
    "HAND_SLOTS",
    "MAX_SEATS",
    "MAX_SIDES",
    "NUM_ACTIONS",
    "OBS_FIELDS",
    "OBS_SIZE",
    "Float32Array",
    "LegalActions",
    "action_features",
    "encode_view",
    "index_actions",
    "legal_actions",
    "legal_features",
    "observe",
    "variant_of",
]
