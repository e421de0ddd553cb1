"""A bot version's own limits in the sandbox (bot_versions.limits, the
``cirulla.bots.cgroups.parse_limits`` form, empty: the defaults).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("limits", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.drop_column("limits")
