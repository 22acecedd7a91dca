"""Time to first token of answers computed from statement facts, through the whole stack's AskStream.

Starts all services on 127.0.0.1 (SmolLM2 as the generator: a fact answer never calls the model), loads
the demo KB and a project-written annual report with its statements as pipe tables, then asks figure and
metric questions the fact path answers and records the first token's arrival. Target: p50 <= 1 s.

    python -m benchmarks.fact_answers [--runs 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import grpc
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc, orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_cli import commands
from weaverbird_cli.stack import LocalStack, StackConfig, free_base_port

from benchmarks.harness import DEMO_KB, write_result
from benchmarks.stats import percentiles
from tests.fixtures.statements import REPORT

QUESTIONS = [
    "What was Kestrel Loom Textiles' gross margin in 2025?",
    "What were Kestrel Loom Textiles' net sales in 2024?",
    "What was Kestrel Loom Textiles' current ratio at the end of 2025?",
    "What was Kestrel Loom Textiles' effective tax rate in 2025?",
    "What was Kestrel Loom Textiles' revenue growth in 2025?",
    "What was Kestrel Loom Textiles' return on equity in 2025?",
    "Kestrel Loom Textiles 2025年的毛利率是多少？",
]


def first_token_ms(stub: orchestrator_pb2_grpc.OrchestratorServiceStub, question: str) -> tuple[float, str]:
    start = time.perf_counter()
    first = None
    text = []
    for event in stub.AskStream(orchestrator_pb2.AskRequest(question=question), timeout=600):
        if event.HasField("token"):
            if first is None:
                first = (time.perf_counter() - start) * 1000
            text.append(event.token)
    return first if first is not None else float("nan"), "".join(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = StackConfig(
            base_port=free_base_port(5),
            data_dir=Path(tmp),
            generator_env={"GENERATOR_MODEL": "smollm2", "GENERATOR_MODEL_DIR": str(Path(tmp) / "models")},
            embedder_env={"EMBEDDER_BACKEND": "use"},
        )
        with LocalStack(config) as stack:
            assert commands.ingest([str(DEMO_KB)], stack.config.addr("ingester"), quiet=True) == 0
            with grpc.insecure_channel(stack.config.addr("ingester")) as channel:
                ingester_pb2_grpc.IngesterServiceStub(channel).AddDocument(
                    ingester_pb2.AddDocumentRequest(data=REPORT.encode(), filename="kestrel-loom-2025.md"), timeout=300
                )
            time.sleep(6)  # the orchestrator's catalog hears of the new company within its 5 s poll
            samples, answers = [], {}
            with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
                stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
                first_token_ms(stub, QUESTIONS[0])  # warm-up: first catalog read, first embedding
                for _ in range(args.runs):
                    for question in QUESTIONS:
                        ms, text = first_token_ms(stub, question)
                        samples.append(ms)
                        answers[question] = text
    computed = {q: ("Formula" in a or "公式" in a or "USD" in a) for q, a in answers.items()}
    stats = percentiles(samples)
    report = {"first_token_ms": stats, "questions": len(QUESTIONS), "runs": args.runs,
              "answered_from_facts": sum(computed.values()), "answers": answers, "target_p50_ms": 1000}
    path = write_result("fact_answers", report)
    print(f"fact answers: first token p50 {stats['p50_ms']:.0f} ms, p95 {stats['p95_ms']:.0f} ms over {len(samples)} "
          f"asks; {sum(computed.values())}/{len(QUESTIONS)} questions answered from facts (target p50 <= 1000 ms)")
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
