"""Bot authors (issue 40): every bot's author key (bots.author_key_hash, its SHA-256;
NULL for a bot registered before, until an admin rotates one) and the log of its state
changes (bot_events), which authors read and the deactivation webhook follows.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("author_key_hash", sa.String(64), nullable=True))
    op.create_table(
        "bot_events",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("bot_id", sa.Integer(), sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False, server_default=""),
    )
    op.create_index("ix_bot_events_bot", "bot_events", ["bot_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_bot_events_bot", table_name="bot_events")
    op.drop_table("bot_events")
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("author_key_hash")
