"""Any sentence-transformers model (M3E, bge-m3, e5, ...) loaded from a local directory, on CPU or GPU."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from weaverbird_common.encoders.base import (
    BackendUnavailable,
    Kind,
    check_inputs,
    empty_embeddings,
    unit_rows,
)

# Prompt names a model may declare in config_sentence_transformers.json, per kind, in order of preference.
_PROMPT_NAMES: dict[Kind, tuple[str, ...]] = {
    "query": ("query",),
    "passage": ("passage", "document", "doc"),
}


class SentenceTransformersBackend:
    """Production backend for larger models; needs `sentence-transformers` (and so torch) installed.

    The model must already be on disk: the path is checked and loading runs with
    `local_files_only=True`, so a typo never turns into a download from a model hub.
    """

    def __init__(
        self,
        model_path: str | None,
        device: str = "cpu",
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
        batch_size: int = 32,
        model_id: str | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        """`query_prefix` / `passage_prefix` are prepended per kind (e5: "query: " / "passage: ").

        When both are None, prompts named "query" / "passage" (or "document") declared by the model
        are used; models without any (M3E, bge-m3) get the raw text.
        """
        if not model_path:
            raise BackendUnavailable("backend 'sentence-transformers' needs model_path: a local model directory")
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise BackendUnavailable(
                f"backend 'sentence-transformers': model directory not found: {path} "
                "(models are never downloaded at run time; copy the model there first)"
            )
        try:
            # Imported here: it pulls in torch, which services using the light backends never need.
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise BackendUnavailable(
                "backend 'sentence-transformers' needs the packages sentence-transformers and torch "
                "(pip install sentence-transformers)"
            ) from exc
        try:
            self._model: Any = SentenceTransformer(
                str(path), device=device, local_files_only=True, trust_remote_code=trust_remote_code
            )
        except (OSError, ValueError) as exc:
            raise BackendUnavailable(f"backend 'sentence-transformers' could not load {path}: {exc}") from exc

        declared: dict[str, str] = dict(getattr(self._model, "prompts", None) or {})
        if query_prefix is None and passage_prefix is None:
            query_prefix = _first_prompt(declared, "query")
            passage_prefix = _first_prompt(declared, "passage")
        self._prefixes: dict[Kind, str] = {"query": query_prefix or "", "passage": passage_prefix or ""}
        self.device = device
        self.max_batch_size = batch_size
        self.dimension = self._find_dimension()
        self.model_id = model_id or f"{path.name}@sentence-transformers"
        self._lock = threading.Lock()

    def _find_dimension(self) -> int:
        # The accessor was renamed across sentence-transformers versions; a probe is the fallback.
        for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
            getter = getattr(self._model, name, None)
            if callable(getter):
                dim = getter()
                if dim:
                    return int(dim)
        return int(self._encode(["dimension probe"]).shape[1])

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.encode(
            texts,
            batch_size=self.max_batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors)

    def embed(self, texts: Sequence[str], kind: Kind) -> np.ndarray:
        items = check_inputs(texts, kind)
        if not items:
            return empty_embeddings(self.dimension)
        prefix = self._prefixes[kind]
        if prefix:
            items = [prefix + text for text in items]
        with self._lock:
            vectors = self._encode(items)
        # normalize_embeddings already did this in the model's dtype; repeat in float32 to be exact.
        return unit_rows(vectors)


def _first_prompt(prompts: dict[str, str], kind: Kind) -> str:
    for name in _PROMPT_NAMES[kind]:
        if name in prompts:
            return prompts[name]
    return ""
