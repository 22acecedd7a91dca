"""`weaverbird kb reembed`: a local Qdrant store the test fills -> every chunk under a tiny encoder the test
builds, in a new collection (payloads and BM25 vectors kept) -> the served alias switched in one step;
a served name that is a collection is left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fixtures.tiny_models import build_tiny_bi_encoder
from weaverbird_cli.__main__ import main
from weaverbird_common.docs.chunker import titled_text

CHUNKS = [
    ("acme 10-k 2022", "results", "total revenue was 394 billion."),
    ("acme 10-k 2022", "", "the board declared a cash dividend of 0.23 per share."),
    ("", "", "net income decreased 3% in fiscal 2022."),
]


def _store(path: Path, alias: str | None = None) -> None:
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(path))
    client.create_collection(
        "weaverbird",
        vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE),
        sparse_vectors_config={"lexical": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    points = [
        models.PointStruct(
            id=i + 1,
            vector={"": [1.0, 0.0, 0.0, float(i)], "lexical": models.SparseVector(indices=[i, 7], values=[1.0, 0.5])},
            payload={"title": title, "heading": heading, "text": text, "document_id": f"d{i}"},
        )
        for i, (title, heading, text) in enumerate(CHUNKS)
    ]
    client.upsert("weaverbird", points=points, wait=True)
    if alias:
        create = models.CreateAlias(collection_name="weaverbird", alias_name=alias)
        client.update_collection_aliases(change_aliases_operations=[models.CreateAliasOperation(create_alias=create)])
    client.close()


def _open(path: Path) -> Any:
    from qdrant_client import QdrantClient

    return QdrantClient(path=str(path))


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_bi_encoder(tmp_path_factory.mktemp("enc") / "tiny-encoder")


def test_reembed_writes_a_new_collection_of_every_chunk_under_the_new_encoder(encoder: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    _store(tmp_path / "q")
    assert main(["kb", "reembed", "--encoder", str(encoder), "--qdrant-path", str(tmp_path / "q"), "--batch", "2"]) == 0
    client = _open(tmp_path / "q")
    try:
        target = "weaverbird--tiny-encoder"
        records, _ = client.scroll(target, limit=10, with_payload=True, with_vectors=True)
        assert sorted(r.id for r in records) == [1, 2, 3]
        expected = SentenceTransformer(str(encoder), device="cpu").encode(
            [titled_text(*c) for c in CHUNKS], normalize_embeddings=True
        )
        for r in records:
            i = r.id - 1
            assert r.payload["text"] == CHUNKS[i][2] and r.payload["document_id"] == f"d{i}"
            np.testing.assert_allclose(r.vector[""], expected[i], atol=1e-5)  # the titled text, embedded anew
            assert list(r.vector["lexical"].indices) == [i, 7]  # BM25 vector carried over unchanged
        # The served collection is untouched: nothing mixed, no switch asked for.
        assert client.get_collection("weaverbird").config.params.vectors.size == 4
        assert client.get_collection(target).config.params.vectors.size == len(expected[0]) == 32
    finally:
        client.close()


def test_switch_moves_the_served_alias_in_one_step(encoder: Path, tmp_path: Path) -> None:
    _store(tmp_path / "q", alias="served")
    argv = ["kb", "reembed", "--encoder", str(encoder), "--qdrant-path", str(tmp_path / "q")]
    assert main([*argv, "--collection", "served", "--to", "kb-v2", "--switch"]) == 0
    client = _open(tmp_path / "q")
    try:
        assert [(a.alias_name, a.collection_name) for a in client.get_aliases().aliases] == [("served", "kb-v2")]
        assert client.count("served").count == 3 and client.collection_exists("weaverbird")  # old kept to roll back
    finally:
        client.close()
    # A second run may not overwrite a collection that exists.
    assert main([*argv, "--collection", "served", "--to", "kb-v2"]) == 2


def test_a_served_collection_is_not_switched_over(
    encoder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _store(tmp_path / "q")
    argv = ["kb", "reembed", "--encoder", str(encoder), "--qdrant-path", str(tmp_path / "q"), "--switch"]
    assert main(argv) == 2
    assert "not an alias" in capsys.readouterr().err
    client = _open(tmp_path / "q")
    try:
        assert client.get_aliases().aliases == [] and client.count("weaverbird").count == 3
        assert not client.collection_exists("weaverbird--tiny-encoder")  # refused before any work
    finally:
        client.close()


def test_an_unknown_backend_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _store(tmp_path / "q")
    assert main(["kb", "reembed", "--backend", "nope", "--qdrant-path", str(tmp_path / "q")]) == 2
    assert "unknown embedder backend" in capsys.readouterr().err
    client = _open(tmp_path / "q")
    try:
        assert [c.name for c in client.get_collections().collections] == ["weaverbird"]
    finally:
        client.close()
