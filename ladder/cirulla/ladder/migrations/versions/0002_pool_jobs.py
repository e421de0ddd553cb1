"""Tournament games on the worker pool: pool_tournaments and pool_jobs.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pool_tournaments",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("label", sa.Text(), server_default="", nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("runner_seen_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "pool_jobs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("tournament_id", sa.String(length=64), nullable=False),
        sa.Column("game_index", sa.Integer(), nullable=False),
        sa.Column("game", sa.Text(), nullable=False),
        sa.Column("group_size", sa.Integer(), server_default="0", nullable=False),
        sa.Column("status", sa.String(length=16), server_default="scheduled", nullable=False),
        sa.Column("worker_id", sa.String(length=64), nullable=True),
        sa.Column("lease_expires_at", sa.Float(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("claimed_at", sa.Float(), nullable=True),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("cancel_reason", sa.Text(), server_default="", nullable=False),
        sa.Column("notes", sa.Text(), server_default="[]", nullable=False),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("record", sa.Text(), nullable=True),
        sa.Column("record_text", sa.Text(), nullable=True),
        sa.Column("logs", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["pool_tournaments.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "game_index", name="uq_pool_jobs_game"),
    )
    with op.batch_alter_table("pool_jobs", schema=None) as batch_op:
        batch_op.create_index("ix_pool_jobs_status", ["status", "created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("pool_jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_pool_jobs_status")
    op.drop_table("pool_jobs")
    op.drop_table("pool_tournaments")
