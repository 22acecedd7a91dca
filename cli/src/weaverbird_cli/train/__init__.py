"""`weaverbird train data | reranker | encoder`: the retrieval models trained on the KB's own passages."""
