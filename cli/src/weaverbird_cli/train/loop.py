"""A plain torch training loop (AdamW, linear warm-up and decay) shared by both trainers: the library's
Trainer would add `datasets` and `accelerate` for nothing these small CPU runs need."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weaverbird_common.training.build import TrainingPair

from weaverbird_cli.train.models import version_dir, write_card


@dataclass(frozen=True)
class TrainOptions:
    """How one training run goes (the `train encoder|reranker` flags); each model kind has its defaults."""

    batch_size: int
    max_length: int
    lr: float
    max_pairs: int = 2000
    epochs: int = 1
    seed: int = 13
    max_seconds: float | None = None
    # The learning rate of a scoring head the base model does not have (a cross-encoder's, initialised at
    # random): a body's fine-tuning rate leaves it barely moved in the few hundred steps a CPU affords.
    # None: the head learns at `lr` like the rest.
    head_lr: float | None = None


def run(
    params: Any,
    batches: Sequence[Sequence[TrainingPair]],
    step_loss: Callable[[Sequence[TrainingPair]], Any],
    lr: float,
    epochs: int,
    seed: int,
    max_seconds: float | None = None,
) -> dict[str, Any]:
    """Trains for `epochs`, or until `max_seconds` have passed (the schedule still spans every step, so
    a cut run ends at a higher learning rate; the card says how many steps were taken)."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(seed)
    # `params`: the parameters, or AdamW parameter groups (each with its own "lr").
    optimiser = torch.optim.AdamW(params, lr=lr)
    params = [p for group in optimiser.param_groups for p in group["params"]]
    steps = len(batches) * epochs
    schedule = get_linear_schedule_with_warmup(optimiser, max(1, steps // 10), steps)
    losses: list[float] = []
    start = time.perf_counter()
    done = False
    for _ in range(epochs):
        for batch in batches:
            if max_seconds is not None and time.perf_counter() - start > max_seconds:
                done = True
                break
            loss = step_loss(batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            losses.append(float(loss.detach()))
            if len(losses) % 10 == 0:
                print(
                    f"step {len(losses)}/{steps} loss {sum(losses[-10:]) / 10:.4f} {time.perf_counter() - start:.0f}s",
                    flush=True,
                )
        if done:
            break
    tenth = max(1, len(losses) // 10)
    curve = [sum(losses[i : i + tenth]) / len(losses[i : i + tenth]) for i in range(0, len(losses), tenth)]
    first, last = (round(curve[0], 4), round(curve[-1], 4)) if curve else (None, None)
    return {
        "steps": len(losses),
        "steps_planned": steps,
        "seconds": round(time.perf_counter() - start, 1),
        "loss_first": first,
        "loss_last": last,
        "loss_curve": curve,
    }


def parameter_groups(model: Any, options: TrainOptions) -> list[Any]:
    """The model's parameters; with `head_lr`, the scoring head ("classifier" parameters) in a group of
    its own at that rate."""
    named = list(model.named_parameters())
    head = [p for n, p in named if "classifier" in n]
    if options.head_lr is None or not head:
        return [p for _, p in named]
    body = [p for n, p in named if "classifier" not in n]
    return [{"params": body, "lr": options.lr}, {"params": head, "lr": options.head_lr}]


def batched(items: Sequence[TrainingPair], size: int) -> list[Sequence[TrainingPair]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def train_and_save(
    model: Any,
    kind: str,
    step_loss: Callable[[Sequence[TrainingPair]], Any],
    chosen: Sequence[TrainingPair],
    available: int,
    base: Path,
    out: Path,
    pairs_file: Path,
    options: TrainOptions,
    negatives: dict[str, Any],
    objective: str,
) -> Path:
    """Trains `model` on `chosen` (see `run`), saves it in a new version directory under `out` and writes
    its card: the run's inputs, the `negatives` facts of this kind, the options, `objective` and the report."""
    o = options
    report = run(
        parameter_groups(model, o), batched(chosen, o.batch_size), step_loss, o.lr, o.epochs, o.seed, o.max_seconds
    )
    model.eval()
    directory = version_dir(out, kind, pairs_file)
    model.save(str(directory))
    write_card(
        directory,
        kind,
        {
            "base": str(base),
            "data": str(pairs_file),
            "pairs_used": len(chosen),
            "pairs_available": available,
            **negatives,
            "epochs": o.epochs,
            "batch_size": o.batch_size,
            "max_length": o.max_length,
            "learning_rate": o.lr,
            "head_learning_rate": o.head_lr or o.lr,
            "seed": o.seed,
            "objective": objective,
            "device": "cpu",
            **report,
        },
    )
    return directory
