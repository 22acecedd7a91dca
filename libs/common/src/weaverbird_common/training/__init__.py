"""Training data for the retrieval models, made from the knowledge base's own passages (model-free).

`passages` cuts documents into the passages the KB stores, `questions` writes template questions over
them, `negatives` mines hard negatives with BM25, `leakage` keeps evaluation questions out, and
`build` ties them into seeded, deduplicated (query, positive, negatives) pairs with provenance.
"""
