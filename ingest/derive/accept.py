"""Accept length and accept rate: the definitions engines use, and conversions between them.

Two quantities per speculative step (cycle), both stored (DOMAIN.md §3):

* ``tokens_per_step`` (τ) — tokens a step emits: accepted drafts + 1 bonus token.
  SGLang's logged ``accept len``, its ``spec_accept_length`` gauge and
  ``bench_serving``'s ``accept_length``, and vLLM's "Mean acceptance length"
  are all this bonus-inclusive figure; its floor is 1.0 (dead drafter).
* ``accepted_drafts_per_step`` = τ − 1 — what the team's story calls
  "accept length 0.58".

``accept_rate_drafts`` is accepted drafts ÷ drafts proposed per step, i.e.
(τ − 1) ÷ (num_draft_tokens − 1) with SGLang's ``speculative_num_draft_tokens``
(which counts the verified root token) or (τ − 1) ÷ k with vLLM's k =
``num_speculative_tokens``. A dead drafter shows 0.0, a perfect one 1.0.

SGLang's logged ``accept rate`` changed formula several times (``SGLANG_ACCEPT_RATE_FORMULAS``);
we keep it raw and detect which formula a segment used from its values when the
configuration is known.

Functions take floats or numpy arrays (NaN for missing) alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TypeVar

import numpy as np

Number = TypeVar("Number", float, np.ndarray)

# A logged value printed with 2 decimals is within 0.005 of the truth; allow a little more.
PRINT_TOLERANCE = 0.0051


def tokens_per_step_from_sglang_accept_len(accept_len: Number) -> Number:
    """SGLang's ``accept len`` already includes the bonus token."""
    return accept_len


def tokens_per_step_from_vllm_mean_acceptance_length(mean_acceptance_length: Number) -> Number:
    """vLLM's "Mean acceptance length" is 1 + accepted ÷ drafts: bonus-inclusive too."""
    return mean_acceptance_length


def accepted_drafts_per_step(tokens_per_step: Number) -> Number:
    return tokens_per_step - 1.0


def accept_rate_drafts(tokens_per_step: Number, num_draft_tokens: int | None) -> Number | None:
    """Accepted drafts ÷ drafts proposed per step, from τ and SGLang's ``speculative_num_draft_tokens``."""
    proposed = proposed_drafts_per_step(num_draft_tokens)
    if proposed is None:
        return None
    return (tokens_per_step - 1.0) / proposed


def proposed_drafts_per_step(num_draft_tokens: int | None) -> int | None:
    """SGLang's ``speculative_num_draft_tokens`` counts the root (already verified) token."""
    if num_draft_tokens is None or num_draft_tokens < 2:
        return None
    return num_draft_tokens - 1


def tokens_per_step_from_counts(accepted: Number, drafted: Number, num_speculative_tokens: int) -> Number:
    """vLLM counters: steps = drafted ÷ k, so τ = 1 + accepted ÷ steps."""
    steps = drafted / num_speculative_tokens
    return 1.0 + accepted / steps


def tokens_per_step_from_emitted(emitted: Number, drafted: Number, num_speculative_tokens: int) -> Number:
    """vLLM V0 counters: emitted tokens (bonus included) ÷ steps, steps = drafted ÷ k."""
    return emitted / (drafted / num_speculative_tokens)


def rate_as_fraction(value: Number, is_percent: bool) -> Number:
    """vLLM prints acceptance rate as a fraction (V0, early V1) or a percent (V1 since 2025-04)."""
    return value / 100.0 if is_percent else value


@dataclass(frozen=True)
class AcceptRateFormula:
    """One historical definition of SGLang's logged ``accept rate``.

    rate = (accepted drafts + ``bonus`` · requests) ÷ (requests · denominator),
    i.e. per step: (τ − 1 + bonus) ÷ denominator(num_steps, num_draft_tokens).
    """

    name: str
    definition: str
    since: date
    bonus: float  # 1.0 when the bonus token is counted in the numerator
    denominator_from: str  # "num_steps", "num_steps+1", "num_draft_tokens", "num_draft_tokens-1"

    def denominator(self, num_steps: int | None, num_draft_tokens: int | None) -> int | None:
        value = {
            "num_steps": num_steps,
            "num_steps+1": None if num_steps is None else num_steps + 1,
            "num_draft_tokens": num_draft_tokens,
            "num_draft_tokens-1": None if num_draft_tokens is None else num_draft_tokens - 1,
        }[self.denominator_from]
        return value if value else None

    def rate(self, tokens_per_step: Number, num_steps: int | None, num_draft_tokens: int | None) -> Number | None:
        denominator = self.denominator(num_steps, num_draft_tokens)
        if denominator is None:
            return None
        return (tokens_per_step - 1.0 + self.bonus) / denominator

    def tokens_per_step(self, rate: Number, num_steps: int | None, num_draft_tokens: int | None) -> Number | None:
        denominator = self.denominator(num_steps, num_draft_tokens)
        if denominator is None:
            return None
        return rate * denominator + 1.0 - self.bonus


SGLANG_ACCEPT_RATE_FORMULAS: tuple[AcceptRateFormula, ...] = (
    # sglang#11441 (2025-10-10) put accept rate in the decode log; it could exceed 1
    AcceptRateFormula("tau/num_steps", "τ ÷ speculative_num_steps", date(2025, 10, 10), 1.0, "num_steps"),
    # sglang#11572: the denominator counts the verified token too
    AcceptRateFormula("tau/(num_steps+1)", "τ ÷ (speculative_num_steps + 1)", date(2025, 10, 13), 1.0, "num_steps+1"),
    # sglang#13212: the denominator became speculative_num_draft_tokens (differs only when topk > 1)
    AcceptRateFormula("tau/num_draft_tokens", "τ ÷ speculative_num_draft_tokens", date(2025, 11, 13), 1.0, "num_draft_tokens"),
    # sglang#23530: drafts only, a dead drafter shows 0.00
    AcceptRateFormula(
        "drafts/(num_draft_tokens-1)", "(τ − 1) ÷ (speculative_num_draft_tokens − 1)", date(2026, 4, 23), 0.0, "num_draft_tokens-1"
    ),
)


def formula_by_name(name: str) -> AcceptRateFormula:
    return next(formula for formula in SGLANG_ACCEPT_RATE_FORMULAS if formula.name == name)


def formulas_possible_at(log_date: date | None) -> tuple[AcceptRateFormula, ...]:
    """Formulas a build could have used at ``log_date``: any introduced on or before it (old builds run late)."""
    if log_date is None:
        return SGLANG_ACCEPT_RATE_FORMULAS
    return tuple(formula for formula in SGLANG_ACCEPT_RATE_FORMULAS if formula.since <= log_date) or SGLANG_ACCEPT_RATE_FORMULAS[:1]


def matching_formulas(
    accept_len: np.ndarray,
    accept_rate: np.ndarray,
    num_steps: int | None,
    num_draft_tokens: int | None,
    candidates: tuple[AcceptRateFormula, ...] = SGLANG_ACCEPT_RATE_FORMULAS,
) -> list[AcceptRateFormula]:
    """The formulas that reproduce every logged (accept len, accept rate) pair within print rounding.

    Lines with a dead drafter (τ = 1) and lines missing either value carry no evidence
    against a formula only when they agree; every line with both values must agree.
    """
    both = ~(np.isnan(accept_len) | np.isnan(accept_rate))
    if not both.any():
        return []
    tau, rate = accept_len[both], accept_rate[both]
    matches = []
    for formula in candidates:
        predicted = formula.rate(tau, num_steps, num_draft_tokens)
        if predicted is None:
            continue
        # τ is itself rounded to 2 decimals: its error is scaled by 1/denominator, within tolerance
        if np.all(np.abs(predicted - rate) <= PRINT_TOLERANCE + 0.0051 / max(formula.denominator(num_steps, num_draft_tokens) or 1, 1)):
            matches.append(formula)
    return matches
