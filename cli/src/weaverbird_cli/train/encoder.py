"""Bi-encoder fine-tuning with the paper's objective (eq. 1): a softmax of the query against its positive,
its I hard negatives and the other queries' passages in the batch (sentence-transformers'
MultipleNegativesRankingLoss with hard-negative columns)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from weaverbird_common.training.build import TrainingPair

from weaverbird_cli.train.loop import TrainOptions, train_and_save
from weaverbird_cli.train.models import sample_pairs

ENCODER_OPTIONS = TrainOptions(batch_size=16, max_length=128, lr=2e-5)


def train_encoder(
    pairs: Sequence[TrainingPair],
    base: Path,
    out: Path,
    pairs_file: Path,
    options: TrainOptions = ENCODER_OPTIONS,
    *,
    hard_negatives: int = 1,
) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.util import batch_to_device

    torch.manual_seed(options.seed)
    model = SentenceTransformer(str(base), device="cpu", local_files_only=True)
    model.max_seq_length = options.max_length
    model.train()
    loss_fn = MultipleNegativesRankingLoss(model)
    chosen = sample_pairs(pairs, options.max_pairs, options.seed)
    # Every row needs the same number of negative columns: pairs with fewer repeat their last one.
    count = min(hard_negatives, min(len(p.negatives) for p in chosen))

    def step_loss(batch: Sequence[TrainingPair]) -> torch.Tensor:
        columns = [[p.query for p in batch], [p.positive for p in batch]]
        columns += [[p.negatives[min(k, len(p.negatives) - 1)] for p in batch] for k in range(count)]
        features = [batch_to_device(model.preprocess(col), model.device) for col in columns]
        return loss_fn(features, torch.empty(0))

    negatives = {"hard_negatives_per_query": count, "in_batch_negatives": options.batch_size - 1}
    objective = "MultipleNegativesRankingLoss (in-batch + hard negatives, scale 20, cosine)"
    return train_and_save(
        model, "encoder", step_loss, chosen, len(pairs), base, out, pairs_file, options, negatives, objective
    )
