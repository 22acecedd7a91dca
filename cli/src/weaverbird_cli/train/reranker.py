"""Cross-encoder fine-tuning: for each query, its positive against its hard negatives, one softmax over
the group (the listwise form of the paper's eq. 1), on CPU."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from weaverbird_common.training.build import TrainingPair

from weaverbird_cli.train.loop import TrainOptions, train_and_save
from weaverbird_cli.train.models import sample_pairs

RERANKER_OPTIONS = TrainOptions(batch_size=8, max_length=256, lr=3e-5, head_lr=1e-3)


def train_reranker(
    pairs: Sequence[TrainingPair],
    base: Path,
    out: Path,
    pairs_file: Path,
    options: TrainOptions = RERANKER_OPTIONS,
) -> Path:
    import torch
    from sentence_transformers import CrossEncoder
    from sentence_transformers.util import batch_to_device

    torch.manual_seed(options.seed)
    model = CrossEncoder(str(base), num_labels=1, max_length=options.max_length, device="cpu", local_files_only=True)
    model.train()
    chosen = sample_pairs(pairs, options.max_pairs, options.seed)

    def step_loss(batch: Sequence[TrainingPair]) -> torch.Tensor:
        groups = [[p.positive, *p.negatives] for p in batch]
        flat = [(p.query, text) for p, group in zip(batch, groups, strict=True) for text in group]
        features = batch_to_device(model.preprocess(flat), model.device)
        scores = model(features)["scores"].view(-1)
        losses, at = [], 0
        for group in groups:  # the positive is first in its group
            logits = scores[at : at + len(group)]
            losses.append(torch.nn.functional.cross_entropy(logits.unsqueeze(0), torch.zeros(1, dtype=torch.long)))
            at += len(group)
        return torch.stack(losses).mean()

    negatives = {"negatives_per_query": max((len(p.negatives) for p in chosen), default=0)}
    objective = "softmax over positive + hard negatives (cross-entropy)"
    return train_and_save(
        model, "reranker", step_loss, chosen, len(pairs), base, out, pairs_file, options, negatives, objective
    )
