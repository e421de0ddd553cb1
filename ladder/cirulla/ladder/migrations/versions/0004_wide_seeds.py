"""ladder_matches.seed: 64 bits (a ladder match's deck seed is drawn from 63 random bits, so no
bot can search the seed space for its deck from the few cards it sees).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ladder_matches", schema=None) as batch_op:
        batch_op.alter_column("seed", existing_type=sa.Integer(), type_=sa.BigInteger())


def downgrade() -> None:
    with op.batch_alter_table("ladder_matches", schema=None) as batch_op:
        batch_op.alter_column("seed", existing_type=sa.BigInteger(), type_=sa.Integer())
