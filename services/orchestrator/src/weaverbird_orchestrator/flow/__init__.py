"""The WeaverBird question-answering flow: validate, embed, search, gate on c, rank, generate, cite.

One module per step a reader can name (see flow/coordinator.py for their order)."""

from weaverbird_orchestrator.flow.coordinator import QuestionFlow
from weaverbird_orchestrator.flow.ports import Peers, Publisher

__all__ = ["Peers", "Publisher", "QuestionFlow"]
