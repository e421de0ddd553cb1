"""The public rule cases (cirulla/rules/data/rule-cases.json, format in docs/rule-cases.md)."""

import json
import subprocess
import sys

import pytest

from cirulla.rules.cases import BUNDLED_CASES, run_cases
from cirulla.rules.core import CORE

CASES = json.loads(BUNDLED_CASES.read_text())
RESULTS = {f"{r.section}/{r.id}": r for r in run_cases(CASES)}
# Both cores are held to every case (the native one is built by the install; see
# test_rules_native.py for the check that it is).
CORES = ("python", "native") if CORE == "native" else ("python",)
ALL_RESULTS = {f"{core}:{r.section}/{r.id}": r for core in CORES for r in run_cases(CASES, core)}


def test_the_file_has_every_section():
    sections = {key.split("/")[0] for key in RESULTS}
    assert sections == {"captures", "declarations", "dealer_bonus", "deal_scoring"}


@pytest.mark.parametrize("key", sorted(ALL_RESULTS))
def test_rule_case(key):
    result = ALL_RESULTS[key]
    assert result.ok, result.describe()


def test_cli_check_passes_and_counts(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "cirulla", "rules", "check"],  # the bundled cases
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == f"{len(RESULTS)} passed, 0 failed"


@pytest.mark.parametrize("core", CORES)
def test_cli_check_runs_each_core(core):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cirulla",
            "rules",
            "check",
            "--core",
            core,
            str(BUNDLED_CASES),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == f"{len(RESULTS)} passed, 0 failed"


def test_cli_check_reports_a_failing_case_and_exits_1(tmp_path):
    broken = json.loads(BUNDLED_CASES.read_text())
    broken["dealer_bonus"][0]["expect"] = 2  # the fifteen case really scores 1
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    out = subprocess.run(
        [sys.executable, "-m", "cirulla", "rules", "check", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 1
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == f"{len(RESULTS) - 1} passed, 1 failed"
    assert any("dealer_bonus/fifteen" in line for line in lines[:-1])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read {path}: No such file or directory"),
        ("[1, 2]", "{path}: not a rule-case file: expected a JSON object with format"),
        ('{"captures": []}', "{path}: not a rule-case file: format is None"),
        (
            '{"format": "cirulla-rule-cases/1", "deal_scoring": 5}',
            "{path}: deal_scoring: expected a list of cases, got int",
        ),
        (
            '{"format": "cirulla-rule-cases/1", "captures": [3]}',
            "{path}: captures[0]: expected a case (a JSON object), got int",
        ),
        ("root:x:0:0", "{path}: not JSON: Expecting value"),
    ],
)
def test_cli_check_of_a_file_that_is_no_case_file_is_one_line(tmp_path, content, message):
    """A file that cannot be read, or whose frame is wrong, is the input's fault: one line
    naming the file and what is wrong, exit 2, and no case counted (a wrong case inside a
    good frame is a failing case: exit 1, above)."""
    path = tmp_path / "cases.json"
    if content is not None:
        path.write_text(content)
    out = subprocess.run(
        [sys.executable, "-m", "cirulla", "rules", "check", str(BUNDLED_CASES), str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith("cirulla rules check: " + message.format(path=path)), out.stderr
