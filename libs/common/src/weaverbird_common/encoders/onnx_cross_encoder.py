"""A cross-encoder on ONNX Runtime (CPU): the directory `weaverbird train export` writes (model.onnx,
model.int8.onnx, tokenizer.json, onnx.json), scored with onnxruntime and tokenizers only: no torch."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

ONNX_DIR = "onnx"
FP32_FILE = "model.onnx"
INT8_FILE = "model.int8.onnx"
SETTINGS_FILE = "onnx.json"

Variant = Literal["int8", "fp32"]


class CrossEncoderUnavailable(RuntimeError):
    """The runtime packages or the exported files are missing here."""


def onnx_dir(path: Path) -> Path:
    """The export folder of a model directory, or `path` itself when it is one."""
    return path if (path / SETTINGS_FILE).is_file() else path / ONNX_DIR


class OnnxCrossEncoder:
    """Scores (query, text) pairs jointly: one logit per pair, higher is more relevant.

    Pairs longer than `max_length` tokens are cut longest side first, as in training. `threads` sets the
    session's intra-op threads (0: onnxruntime's default, one per core)."""

    def __init__(
        self,
        path: str | Path,
        variant: Variant = "int8",
        max_length: int = 256,
        batch_size: int = 16,
        threads: int = 0,
    ) -> None:
        directory = onnx_dir(Path(path).expanduser())
        settings_file = directory / SETTINGS_FILE
        if not settings_file.is_file():
            raise CrossEncoderUnavailable(f"no ONNX export under {path} (run `weaverbird train export --model {path}`)")
        settings = json.loads(settings_file.read_text(encoding="utf-8"))
        name = settings["files"].get(variant)
        if name is None:
            raise CrossEncoderUnavailable(f"{directory} has no {variant} model ({', '.join(settings['files'])})")
        try:
            # Imported here: deployments without this reranker never need them.
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise CrossEncoderUnavailable(
                "the onnx cross-encoder needs onnxruntime and tokenizers (requirements/gpu-path.txt)"
            ) from exc
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        self._session: Any = ort.InferenceSession(str(directory / name), options, providers=["CPUExecutionProvider"])
        self.max_length = min(max_length, int(settings["model_max_length"]))
        self._tokenizer: Any = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        self._tokenizer.enable_padding(pad_id=settings["pad_id"], pad_token=settings["pad_token"])
        self._inputs: list[str] = settings["inputs"]
        self.batch_size = max(1, batch_size)
        self.variant = variant
        self.name = f"onnx_cross_encoder:{directory.parent.name if directory.name == ONNX_DIR else directory.name}"
        self._lock = threading.Lock()  # the tokenizer's padding state is shared; runs are serialised anyway

    def _batch(self, query: str, texts: Sequence[str]) -> list[float]:
        import numpy as np

        with self._lock:
            encodings = self._tokenizer.encode_batch([(query, text) for text in texts])
            columns = {
                "input_ids": [e.ids for e in encodings],
                "attention_mask": [e.attention_mask for e in encodings],
                "token_type_ids": [e.type_ids for e in encodings],
            }
            feed = {name: np.asarray(columns[name], dtype=np.int64) for name in self._inputs}
            logits = self._session.run(["logits"], feed)[0]
        return [float(x) for x in np.asarray(logits).reshape(len(texts), -1)[:, 0]]

    def score(self, query: str, texts: Sequence[str], deadline: float | None = None) -> list[float]:
        """Scores for `texts` in order, batch by batch. With `deadline` (a time.perf_counter() value) it
        stops after the batch that passes it: the list then scores only the first texts (at least one batch)."""
        scores: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            if scores and deadline is not None and time.perf_counter() >= deadline:
                break
            scores += self._batch(query, texts[start : start + self.batch_size])
        return scores
