"""Initial ladder schema: bots, versions, ratings, matches, seats, workers, enrollments.

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("state", sa.String(length=16), server_default="active", nullable=False),
        sa.Column("state_reason", sa.Text(), server_default="", nullable=False),
        sa.Column("bot_key_hash", sa.String(length=64), nullable=True),
        sa.Column("max_concurrency", sa.Integer(), server_default="2", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "ladder_matches",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("queue", sa.String(length=4), nullable=False),
        sa.Column("pair_id", sa.String(length=64), nullable=True),
        sa.Column("pair_index", sa.Integer(), server_default="0", nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="scheduled", nullable=False),
        sa.Column("worker_id", sa.String(length=64), nullable=True),
        sa.Column("lease_expires_at", sa.Float(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("claimed_at", sa.Float(), nullable=True),
        sa.Column("started_at", sa.Float(), nullable=True),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.Column("cancel_reason", sa.Text(), server_default="", nullable=False),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("rated", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("server_address", sa.String(length=255), server_default="", nullable=False),
        sa.Column("server_match_id", sa.String(length=64), nullable=True),
        sa.Column("notes", sa.Text(), server_default="[]", nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("ladder_matches", schema=None) as batch_op:
        batch_op.create_index("ix_ladder_matches_pair", ["pair_id"], unique=False)
        batch_op.create_index("ix_ladder_matches_server_match", ["server_match_id"], unique=False)
        batch_op.create_index("ix_ladder_matches_status", ["status", "created_at"], unique=False)

    op.create_table(
        "workers",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("server_address", sa.String(length=255), nullable=False),
        sa.Column("heartbeat_at", sa.Float(), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "bot_versions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("spec", sa.Text(), nullable=False),
        sa.Column("queues", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("validation_games_left", sa.Integer(), server_default="0", nullable=False),
        sa.Column("consecutive_failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_failure", sa.Text(), server_default="", nullable=False),
        sa.Column("last_log", sa.Text(), server_default="", nullable=False),
        sa.Column("last_log_match_id", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("bot_id", "version", name="uq_bot_versions_bot_version"),
    )
    op.create_table(
        "enrollments",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("served_by", sa.String(length=64), nullable=False),
        sa.Column("capacity", sa.Integer(), nullable=False),
        sa.Column("connected_at", sa.Float(), nullable=False),
        sa.Column("heartbeat_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "ladder_seats",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("side", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("token", sa.Text(), nullable=True),
        sa.Column("delivered_at", sa.Float(), nullable=True),
        sa.Column("outcome", sa.String(length=16), server_default="", nullable=False),
        sa.Column("points", sa.Integer(), nullable=True),
        sa.Column("fault", sa.Text(), server_default="", nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["ladder_matches.id"],
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["bot_versions.id"],
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name="pk_ladder_seats"),
    )
    with op.batch_alter_table("ladder_seats", schema=None) as batch_op:
        batch_op.create_index("ix_ladder_seats_version", ["version_id"], unique=False)

    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("queue", sa.String(length=4), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["bot_versions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("match_id", "version_id", name="uq_rating_history_match_version"),
    )
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.create_index("ix_rating_history_version", ["version_id"], unique=False)

    op.create_table(
        "ratings",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("queue", sa.String(length=4), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), server_default="0", nullable=False),
        sa.Column("wins", sa.Integer(), server_default="0", nullable=False),
        sa.Column("draws", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_played_at", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["bot_versions.id"],
        ),
        sa.PrimaryKeyConstraint("version_id", "queue", name="pk_ratings"),
    )


def downgrade() -> None:
    op.drop_table("ratings")
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.drop_index("ix_rating_history_version")

    op.drop_table("rating_history")
    with op.batch_alter_table("ladder_seats", schema=None) as batch_op:
        batch_op.drop_index("ix_ladder_seats_version")

    op.drop_table("ladder_seats")
    op.drop_table("enrollments")
    op.drop_table("bot_versions")
    op.drop_table("workers")
    with op.batch_alter_table("ladder_matches", schema=None) as batch_op:
        batch_op.drop_index("ix_ladder_matches_status")
        batch_op.drop_index("ix_ladder_matches_server_match")
        batch_op.drop_index("ix_ladder_matches_pair")

    op.drop_table("ladder_matches")
    op.drop_table("bots")
