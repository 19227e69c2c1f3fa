"""Accept length / accept rate definitions (DOMAIN.md §3, docs/metrics.md) as executable statements."""
from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from ingest.derive import accept


def test_sglang_accept_len_is_tokens_per_step_and_drafts_are_one_less() -> None:
    tokens = accept.tokens_per_step_from_sglang_accept_len(1.58)
    assert tokens == 1.58
    assert accept.accepted_drafts_per_step(tokens) == pytest.approx(0.58)  # the story's "accept length 0.58"


def test_drafts_only_rate_uses_num_draft_tokens_minus_the_root() -> None:
    assert accept.accept_rate_drafts(1.58, 3) == pytest.approx(0.29)  # 2 drafts proposed per step
    assert accept.accept_rate_drafts(1.0, 4) == 0.0  # a dead drafter
    assert accept.accept_rate_drafts(4.0, 4) == 1.0  # every draft accepted
    assert accept.accept_rate_drafts(1.58, None) is None
    assert accept.accept_rate_drafts(1.58, 1) is None  # no drafts proposed: undefined, not zero


def test_functions_take_arrays_too() -> None:
    tokens = np.array([1.0, 2.5, np.nan])
    rates = accept.accept_rate_drafts(tokens, 4)
    assert rates[:2] == pytest.approx([0.0, 0.5]) and np.isnan(rates[2])


def test_vllm_counters() -> None:
    # "Accepted: 89 tokens, Drafted: 975 tokens" with k=15 drafts per step: 65 steps
    assert accept.tokens_per_step_from_counts(89, 975, 15) == pytest.approx(1 + 89 / 65)
    # V0: emitted tokens include the bonus token; steps = draft tokens / k
    assert accept.tokens_per_step_from_emitted(10616, 13311, 3) == pytest.approx(10616 / 4437)
    assert accept.rate_as_fraction(9.1, is_percent=True) == pytest.approx(0.091)
    assert accept.rate_as_fraction(0.642, is_percent=False) == 0.642


@pytest.mark.parametrize(
    ("name", "tau", "num_steps", "num_draft_tokens", "rate"),
    [
        ("tau/num_steps", 2.17, 3, 4, 2.17 / 3),
        ("tau/(num_steps+1)", 2.17, 3, 4, 2.17 / 4),
        ("tau/num_draft_tokens", 2.17, 3, 8, 2.17 / 8),  # topk > 1: the tree has more tokens than steps + 1
        ("drafts/(num_draft_tokens-1)", 2.17, 3, 4, 1.17 / 3),
        ("drafts/(num_draft_tokens-1)", 1.0, 3, 4, 0.0),  # the 2026 formula shows a dead drafter as 0.00
        ("tau/(num_steps+1)", 1.0, 3, 4, 0.25),  # ...the older ones as 1/(steps+1)
    ],
)
def test_each_historical_accept_rate_formula(name: str, tau: float, num_steps: int, num_draft_tokens: int, rate: float) -> None:
    formula = accept.formula_by_name(name)
    assert formula.rate(tau, num_steps, num_draft_tokens) == pytest.approx(rate)
    assert formula.tokens_per_step(rate, num_steps, num_draft_tokens) == pytest.approx(tau)


def test_formula_is_recognized_from_the_logged_values() -> None:
    # corpus sglang-issue-11948 (2025-10-22): accept len 2.17/1.95/1.80, accept rate 0.54/0.49/0.45, 3 steps
    tau = np.array([2.17, 1.95, 1.80, 2.05])
    rate = np.array([0.54, 0.49, 0.45, 0.51])
    names = [f.name for f in accept.matching_formulas(tau, rate, num_steps=3, num_draft_tokens=4)]
    assert names == ["tau/(num_steps+1)", "tau/num_draft_tokens"]  # topk=1: the two cannot be told apart
    assert accept.matching_formulas(tau, rate, num_steps=3, num_draft_tokens=8) == [accept.formula_by_name("tau/(num_steps+1)")]
    assert accept.matching_formulas(tau, rate * 2, num_steps=3, num_draft_tokens=4) == []


def test_formulas_introduced_after_the_log_date_are_not_candidates() -> None:
    early = [f.name for f in accept.formulas_possible_at(date(2025, 10, 22))]
    assert "drafts/(num_draft_tokens-1)" not in early and "tau/(num_steps+1)" in early
    assert len(accept.formulas_possible_at(None)) == len(accept.SGLANG_ACCEPT_RATE_FORMULAS)
