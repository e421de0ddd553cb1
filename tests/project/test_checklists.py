"""CONTRIBUTING.md's checklists, checked where a file can be read for it: a rule option,
a bot kind, a ladder rpc or an event type that one of the places it must reach does not
know fails here, naming the place."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

import cirulla.server.messages  # noqa: F401 - registers the server's own event types
from cirulla.bots.specs import KINDS
from cirulla.ladder.cli_client import READ_METHODS
from cirulla.ladder.service import LadderService
from cirulla.rules.core import options_tuple
from cirulla.rules.events import EVENT_TYPES
from cirulla.rules.options import Options
from cirulla.v1 import rules_pb2

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = [f.name for f in fields(Options)]
AREAS = "rules|server|bots|env|clients|ladder|src|proto|tests|docs"
PATH_IN_TICKS = re.compile(rf"`((?:{AREAS})/[\w./-]+)`")


def read(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text))


# ---------------------------------------------------------------------- a rule option


def test_every_rule_option_is_a_field_of_the_protocols_rule_options() -> None:
    assert [f.name for f in rules_pb2.RuleOptions.DESCRIPTOR.fields] == OPTIONS


def test_the_native_options_list_reads_the_options_in_their_order() -> None:
    """engine.h's ``parse_opts`` reads ``core.options_tuple`` by position."""
    source = read("rules/cirulla/rules/engine.h")
    body = source[source.index("static int parse_opts(") :]
    body = body[: body.index("\n}\n")]
    assigned = re.findall(r"o->(\w+) = v\[(\d+)\];", body)
    assert [name for name, _ in assigned] == OPTIONS
    assert [int(i) for _, i in assigned] == list(range(len(OPTIONS)))
    assert f"tuple of {len(OPTIONS)} ints" in body
    assert f"int v[{len(OPTIONS)}]" in body
    assert len(options_tuple(Options())) == len(OPTIONS)


@pytest.mark.parametrize(
    "path",
    [
        "rules/cirulla/rules/encoding.py",  # the observation's layout and its table
        "env/cirulla/env/_native_env.c",  # the same slots in C
        "docs/env.md",  # the observation table
        "docs/rules.md",  # the option table
        "docs/text-protocol.md",  # the rules line
    ],
)
def test_every_rule_option_is_in(path: str) -> None:
    missing = [name for name in OPTIONS if name not in words(read(path))]
    assert not missing, f"{path} does not name the rule options {missing}"


def test_the_rules_docs_table_has_a_row_per_option() -> None:
    rows = re.findall(r"^\| `(\w+)` \|", read("docs/rules.md"), flags=re.M)
    assert [r for r in rows if r in OPTIONS] == OPTIONS


# ---------------------------------------------------------------------- a bot kind


def test_every_bot_kind_is_in_the_kinds_table_of_the_bots_guide() -> None:
    rows = set(re.findall(r"^\| `(\w+)` \|", read("docs/bots.md"), flags=re.M))
    missing = [kind for kind in KINDS if kind not in rows]
    assert not missing, f"docs/bots.md's kinds table lacks {missing}"


# ---------------------------------------------------------------------- a ladder rpc


def ladder_rpcs() -> list[str]:
    proto = read("proto/cirulla/v1/ladder.proto")
    service = proto[proto.index("service LadderService") :]
    service = service[: service.index("\n}")]
    return re.findall(r"^\s*rpc (\w+)\(", service, flags=re.M)


def test_every_ladder_rpc_has_a_servicer_method() -> None:
    rpcs = ladder_rpcs()
    assert len(rpcs) >= 10
    missing = [rpc for rpc in rpcs if not callable(getattr(LadderService, rpc, None))]
    assert not missing, f"cirulla.ladder.service.LadderService has no method {missing}"


def test_every_ladder_rpc_is_named_in_the_ladder_doc() -> None:
    doc = words(read("docs/ladder.md"))
    missing = [rpc for rpc in ladder_rpcs() if rpc not in doc]
    assert not missing, f"docs/ladder.md does not name the rpcs {missing}"


def test_the_commands_read_methods_are_ladder_rpcs() -> None:
    assert set(READ_METHODS) <= set(ladder_rpcs())


# ---------------------------------------------------------------------- an event type


def test_every_event_type_on_the_wire_is_named_in_the_protocol_doc() -> None:
    doc = words(read("docs/protocol.md"))
    missing = [t.wire for t in EVENT_TYPES if t.wire and t.wire not in doc]
    assert not missing, f"docs/protocol.md does not name the event fields {missing}"


def test_every_event_types_text_word_is_in_the_text_protocol_doc() -> None:
    doc = words(read("docs/text-protocol.md"))
    missing = [t.text for t in EVENT_TYPES if t.text and t.text not in doc]
    assert not missing, f"docs/text-protocol.md does not name the event words {missing}"


def test_contributing_names_files_that_exist() -> None:
    """The checklists' paths are real: a moved file fails here until the map follows."""
    text = read("CONTRIBUTING.md")
    paths = set(re.findall(PATH_IN_TICKS, text))
    assert len(paths) > 20
    missing = sorted(p for p in paths if not (ROOT / p.rstrip("/")).exists())
    assert not missing, f"CONTRIBUTING.md names paths that do not exist: {missing}"
