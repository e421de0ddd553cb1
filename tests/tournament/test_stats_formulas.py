"""Issue 25 item 6: the statistics against the formulas of fastchess and fishtest, written
here independently of ``cirulla.clients.tournament.stats`` (from their published code:
fastchess's EloWDL / EloPentanomial / SPRT, fishtest's LLRcalc), on the same counts.

And two things a newcomer hit: five pairs all 1-1 gave "Elo pairs +0 ±0", an interval of
width zero from five samples; the SPRT column showed a bare LLR, where fastchess shows it
with its bounds and hypotheses (``LLR 3.92 (-2.94, 2.94) [0, 50]``)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.clients.tournament.results import _fmt_elo
from cirulla.clients.tournament.stats import (
    SPRT_PRIOR,
    Penta,
    Sprt,
    Wdl,
    elo_interval,
    los,
    penta_interval,
)

Z95 = 1.959963984540054  # fastchess's CI95zscore


def ref_elo(score: float) -> float:
    """fastchess scoreToEloDiff, fishtest stat_util.elo."""
    return -400.0 * math.log10(1.0 / score - 1.0)


def ref_logistic(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def ref_wdl_error(w: int, d: int, lost: int) -> float:
    """fastchess EloWDL::error: half the width of the 95% interval in Elo."""
    n = w + d + lost
    pw, pd, pl = w / n, d / n, lost / n
    score = pw + 0.5 * pd
    dev = pw * (1 - score) ** 2 + pd * (0.5 - score) ** 2 + pl * (0 - score) ** 2
    stdev = math.sqrt(dev / n)
    return (ref_elo(score + Z95 * stdev) - ref_elo(score - Z95 * stdev)) / 2


def ref_penta_error(ll: float, ld: float, dd_wl: float, wd: float, ww: float) -> float:
    """fastchess EloPentanomial::error (scores of a pair per game: 0, 1/4, 1/2, 3/4, 1)."""
    pairs = ll + ld + dd_wl + wd + ww
    p = [x / pairs for x in (ll, ld, dd_wl, wd, ww)]
    values = (0.0, 0.25, 0.5, 0.75, 1.0)
    score = sum(pi * v for pi, v in zip(p, values, strict=True))
    variance = sum(pi * (v - score) ** 2 for pi, v in zip(p, values, strict=True))
    per_pair = variance / pairs
    up, low = score + Z95 * math.sqrt(per_pair), score - Z95 * math.sqrt(per_pair)
    return (ref_elo(up) - ref_elo(low)) / 2


def ref_los(w: int, lost: int) -> float:
    """cutechess and fastchess: draws ignored."""
    return 0.5 * (1 + math.erf((w - lost) / math.sqrt(2 * (w + lost))))


def ref_llr_normal(counts: list[float], values: list[float], elo0: float, elo1: float) -> float:
    """fastchess SPRT::getLLR (and fishtest's LLR_logistic of old): the GSPRT's normal
    approximation, N (s1 - s0) (2 s - s0 - s1) / (2 var)."""
    n = sum(counts)
    s = sum(c * v for c, v in zip(counts, values, strict=True)) / n
    var = sum(c * (v - s) ** 2 for c, v in zip(counts, values, strict=True)) / n
    s0, s1 = ref_logistic(elo0), ref_logistic(elo1)
    return n * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)


def ref_llr_exact(counts: list[float], values: list[float], elo0: float, elo1: float) -> float:
    """fishtest LLRcalc.LLR: the generalized LLR itself. For each hypothesis the most
    likely distribution on ``values`` with mean s_i is p_j = f_j / (1 + x (v_j - s_i)),
    x solving sum p_j = 1 (found by bisection); LLR = N sum f_j log(p1_j / p0_j)."""
    n = sum(counts)
    freq = [c / n for c in counts]

    def mle(target: float) -> list[float]:
        shifted = [v - target for v in values]

        def slope(x: float) -> float:  # decreasing in x; 0 at the multiplier
            return sum(f * d / (1 + x * d) for f, d in zip(freq, shifted, strict=True))

        lo, hi = -1 / max(shifted) + 1e-12, -1 / min(shifted) - 1e-12
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if slope(mid) > 0 else (lo, mid)
        x = (lo + hi) / 2
        return [f / (1 + x * d) for f, d in zip(freq, shifted, strict=True)]

    p0, p1 = mle(ref_logistic(elo0)), mle(ref_logistic(elo1))
    return n * sum(f * math.log(a / b) for f, a, b in zip(freq, p1, p0, strict=True) if f > 0)


def test_elo_los_and_intervals_are_fastchess_s_on_the_same_counts() -> None:
    for w, d, lost in [(60, 0, 40), (7, 3, 10), (512, 40, 448), (30, 0, 10)]:
        est = elo_interval(Wdl(w, d, lost))
        assert est.elo == pytest.approx(ref_elo((w + d / 2) / (w + d + lost)))
        assert est.margin == pytest.approx(ref_wdl_error(w, d, lost))
        assert los(Wdl(w, d, lost)) == pytest.approx(ref_los(w, lost))
    for counts in [(3, 0, 4, 0, 8), (2, 1, 10, 2, 5), (10, 0, 30, 0, 12)]:
        est = penta_interval(Penta(counts))
        assert est.margin == pytest.approx(ref_penta_error(*counts))


def test_five_pairs_all_split_are_not_a_zero_width_interval() -> None:
    split = penta_interval(Penta((0, 0, 5, 0, 0)))
    assert split.elo == 0.0
    prior = (SPRT_PRIOR, 0, 5, 0, SPRT_PRIOR)  # the prior, only because the variance is 0
    variance = (2 * SPRT_PRIOR * 0.25) / (5 + 2 * SPRT_PRIOR)
    half = Z95 * math.sqrt(variance / 5)
    assert split.margin == pytest.approx((ref_elo(0.5 + half) - ref_elo(0.5 - half)) / 2)
    assert 50 < split.margin < 200, prior
    assert _fmt_elo(split) != "+0 ±0"
    # five pairs all won: the point estimate is unbounded, its lower end is not
    swept = penta_interval(Penta((0, 0, 0, 0, 5)))
    assert swept.elo == math.inf and math.isfinite(swept.low) and swept.low > 0
    # three games all won (trinomial), same rule
    assert math.isfinite(elo_interval(Wdl(3, 0, 0)).low)


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1"),
    [((3, 0, 4, 0, 8), 0, 50), ((20, 3, 40, 5, 30), 0, 10), ((30, 0, 55, 0, 15), -10, 10)],
)
def test_pentanomial_llr_is_the_gsprt_of_fastchess_and_fishtest(
    counts: tuple[int, int, int, int, int], elo0: float, elo1: float
) -> None:
    values = [0.0, 0.25, 0.5, 0.75, 1.0]
    prior = [float(c) for c in counts]
    prior[0] += SPRT_PRIOR  # the project's documented prior (docs/tournament.md)
    prior[-1] += SPRT_PRIOR
    sprt = Sprt(elo0, elo1, 0.05, 0.05)
    llr = sprt.llr_penta(Penta(counts))
    assert llr == pytest.approx(ref_llr_normal(prior, values, elo0, elo1))
    # fishtest's exact generalized LLR: the normal approximation is within 15% of it
    exact = ref_llr_exact(prior, values, elo0, elo1)
    assert llr == pytest.approx(exact, rel=0.15) and (llr > 0) == (exact > 0)
    wdl = Wdl(40, 5, 30)
    tri = [30 + SPRT_PRIOR, 5, 40 + SPRT_PRIOR]
    assert sprt.llr(wdl) == pytest.approx(ref_llr_normal(tri, [0, 0.5, 1], elo0, elo1))
    assert sprt.lower == pytest.approx(math.log(0.05 / 0.95))
    assert sprt.upper == pytest.approx(math.log(0.95 / 0.05))


def test_the_sprt_column_reads_like_fastchess(tmp_path: Path) -> None:
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out)]
    argv += ["--bot", "random", "--bot", "greedy", "--games", "4", "--target", "11"]
    argv += ["--seed", "2", "--bot-seed", "2", "--sprt", "0", "50", "0.05", "0.05"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((out / "results.json").read_text())
    llr = doc["standings"]["head_to_head"][0]["sprt"]["llr"]
    shown = f"LLR {llr:.2f} (-2.94, 2.94) [0, 50]"
    assert shown in done.stdout, done.stdout
    assert re.search(r"(running|H[01] accepted)", done.stdout)
