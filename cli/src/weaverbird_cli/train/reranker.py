"""Cross-encoder fine-tuning: for each query, its positive against its hard negatives, one softmax over
the group (the listwise form of the paper's eq. 1), on CPU."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from weaverbird_common.training.build import TrainingPair

from weaverbird_cli.train.loop import batched, run
from weaverbird_cli.train.models import sample_pairs, version_dir, write_card


def train_reranker(
    pairs: Sequence[TrainingPair],
    base: Path,
    out: Path,
    pairs_file: Path,
    *,
    max_pairs: int = 2000,
    epochs: int = 1,
    batch_size: int = 8,
    max_length: int = 256,
    seed: int = 13,
    max_seconds: float | None = None,
    lr: float = 3e-5,
) -> Path:
    import torch
    from sentence_transformers import CrossEncoder
    from sentence_transformers.util import batch_to_device

    torch.manual_seed(seed)
    model = CrossEncoder(str(base), num_labels=1, max_length=max_length, device="cpu", local_files_only=True)
    model.train()
    chosen = sample_pairs(pairs, max_pairs, seed)

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

    report = run(list(model.parameters()), batched(chosen, batch_size), step_loss, lr, epochs, seed, max_seconds)
    model.eval()
    directory = version_dir(out, "reranker", pairs_file)
    model.save(str(directory))
    write_card(
        directory,
        "reranker",
        {
            "base": str(base),
            "data": str(pairs_file),
            "pairs_used": len(chosen),
            "pairs_available": len(pairs),
            "negatives_per_query": max((len(p.negatives) for p in chosen), default=0),
            "epochs": epochs,
            "batch_size": batch_size,
            "max_length": max_length,
            "learning_rate": lr,
            "seed": seed,
            "objective": "softmax over positive + hard negatives (cross-entropy)",
            "device": "cpu",
            **report,
        },
    )
    return directory
