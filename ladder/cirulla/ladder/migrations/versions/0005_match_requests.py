"""Requested matches: the match_requests table, and on ladder_matches the request a match
plays (request_id), its claim priority (requested games before scheduled ones) and
whether it was requested unrated.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "match_requests",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("queue", sa.String(4), nullable=False),
        sa.Column("bots", sa.Text(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("unrated", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("requested_by", sa.Text(), nullable=False, server_default=""),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_match_requests_created", "match_requests", ["created_at"])
    with op.batch_alter_table("ladder_matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("request_id", sa.String(64), nullable=True))
        batch_op.add_column(sa.Column("priority", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(
            sa.Column("unrated", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.create_index("ix_ladder_matches_request", ["request_id"])


def downgrade() -> None:
    with op.batch_alter_table("ladder_matches", schema=None) as batch_op:
        batch_op.drop_index("ix_ladder_matches_request")
        batch_op.drop_column("unrated")
        batch_op.drop_column("priority")
        batch_op.drop_column("request_id")
    op.drop_index("ix_match_requests_created", table_name="match_requests")
    op.drop_table("match_requests")
