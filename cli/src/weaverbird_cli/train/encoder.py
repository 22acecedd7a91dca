"""Bi-encoder fine-tuning with the paper's objective (eq. 1): a softmax of the query against its positive,
its I hard negatives and the other queries' passages in the batch (sentence-transformers'
MultipleNegativesRankingLoss with hard-negative columns)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from weaverbird_common.training.build import TrainingPair

from weaverbird_cli.train.loop import batched, run
from weaverbird_cli.train.models import sample_pairs, version_dir, write_card


def train_encoder(
    pairs: Sequence[TrainingPair],
    base: Path,
    out: Path,
    pairs_file: Path,
    *,
    max_pairs: int = 2000,
    epochs: int = 1,
    batch_size: int = 16,
    max_length: int = 128,
    seed: int = 13,
    max_seconds: float | None = None,
    lr: float = 2e-5,
    hard_negatives: int = 1,
) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.util import batch_to_device

    torch.manual_seed(seed)
    model = SentenceTransformer(str(base), device="cpu", local_files_only=True)
    model.max_seq_length = max_length
    model.train()
    loss_fn = MultipleNegativesRankingLoss(model)
    chosen = sample_pairs(pairs, max_pairs, seed)
    # Every row needs the same number of negative columns: pairs with fewer repeat their last one.
    count = min(hard_negatives, min(len(p.negatives) for p in chosen))

    def step_loss(batch: Sequence[TrainingPair]) -> torch.Tensor:
        columns = [[p.query for p in batch], [p.positive for p in batch]]
        columns += [[p.negatives[min(k, len(p.negatives) - 1)] for p in batch] for k in range(count)]
        features = [batch_to_device(model.preprocess(col), model.device) for col in columns]
        return loss_fn(features, torch.empty(0))

    report = run(list(model.parameters()), batched(chosen, batch_size), step_loss, lr, epochs, seed, max_seconds)
    model.eval()
    directory = version_dir(out, "encoder", pairs_file)
    model.save(str(directory))
    write_card(
        directory,
        "encoder",
        {
            "base": str(base),
            "data": str(pairs_file),
            "pairs_used": len(chosen),
            "pairs_available": len(pairs),
            "hard_negatives_per_query": count,
            "in_batch_negatives": batch_size - 1,
            "epochs": epochs,
            "batch_size": batch_size,
            "max_length": max_length,
            "learning_rate": lr,
            "seed": seed,
            "objective": "MultipleNegativesRankingLoss (in-batch + hard negatives, scale 20, cosine)",
            "device": "cpu",
            **report,
        },
    )
    return directory
