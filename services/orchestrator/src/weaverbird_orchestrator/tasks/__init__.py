"""Questions beyond one lookup: task routing, calculations, JSON extraction, charts, the PEER loop and
follow-up rewriting. Each module is plain logic over `llm.complete` and the flow's retrieval."""
