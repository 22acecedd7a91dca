"""The one Dockerfile, resolved per service as Docker would (no Docker here: structure and paths only).
`--build-arg SERVICE=<name>` must give each service the image it had: slim multi-stage, non-root, its
entry module, ports and data directory, and only the requirements it imports."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from deploy_tools import REPO

DOCKERFILE = REPO / "Dockerfile"
WORKLOADS = ("embedder", "retriever", "generator", "orchestrator", "ingester", "gateway")
PIPEFAIL = '["/bin/bash", "-o", "pipefail", "-c"]'
# What the chart expects of each image: the exposed ports and the data directory it mounts.
PORTS = {**{svc: "50051 9464" for svc in WORKLOADS}, "gateway": "8080"}
DATA_DIRS = {"retriever": "/var/lib/weaverbird/qdrant", "ingester": "/var/lib/weaverbird/ingester"}

Instruction = tuple[str, str]


def _instructions(path: Path) -> list[Instruction]:
    text = re.sub(r"\\\n", " ", path.read_text())
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "")
        for line in (raw.strip() for raw in text.splitlines())
        if line and not line.startswith("#")
    ]


INSTRUCTIONS = _instructions(DOCKERFILE)
GLOBAL_ARGS = dict(
    a.split("=", 1) if "=" in a else (a, "")
    for op, a in INSTRUCTIONS[: next(i for i, (op, _) in enumerate(INSTRUCTIONS) if op == "FROM")]
    if op == "ARG"
)


def _stages() -> dict[str, tuple[str, list[Instruction]]]:
    """Stage name -> (its FROM, its instructions); the last stage also under the key ''."""
    stages: dict[str, tuple[str, list[Instruction]]] = {}
    for op, arg in INSTRUCTIONS:
        if op == "FROM":
            image, _, name = arg.partition(" AS ")
            body: list[Instruction] = []
            stages[name.strip()] = (image, body)
        elif stages:
            body.append((op, arg))
    stages[""] = stages[name.strip()]
    return stages


STAGES = _stages()


def _image(service: str, target: str = "") -> list[Instruction]:
    """The instructions an image runs, base first, for `--build-arg SERVICE=service [--target target]`."""
    chain: list[Instruction] = []
    name = target
    while True:
        image, body = STAGES[name]
        chain[:0] = [("FROM", image), *body]
        image = image.replace("${SERVICE}", service)
        if image == "${PYTHON_IMAGE}":
            return chain
        assert image in STAGES, f"{service}: FROM {image} is neither the base image nor a stage"
        name = image


def _last(chain: list[Instruction], op: str) -> str:
    return [a for o, a in chain if o == op][-1]


def _env(chain: list[Instruction]) -> dict[str, str]:
    return dict(pair.split("=", 1) for o, a in chain if o == "ENV" for pair in a.split())


def test_base_image_is_an_exact_slim_bookworm_release_and_service_has_no_default() -> None:
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm", GLOBAL_ARGS["PYTHON_IMAGE"])
    assert GLOBAL_ARGS["SERVICE"] == ""
    assert STAGES[""][0] == "${SERVICE}"


@pytest.mark.parametrize("svc", WORKLOADS)
def test_each_service_image_is_slim_multistage_and_non_root(svc: str) -> None:
    chain = _image(svc)
    assert chain[0] == ("FROM", "${PYTHON_IMAGE}")
    assert ("COPY", "--from=build /opt/venv /opt/venv") in chain, "only the built venv is copied"
    assert _last(chain, "USER") == "10001:10001"
    assert _last(chain, "ENTRYPOINT") == f'["python", "-m", "weaverbird_{svc}"]'
    assert _last(chain, "EXPOSE") == PORTS[svc]
    env = _env(chain)
    assert env[f"{svc.upper()}_HOST"] == "0.0.0.0"
    assert env["HOME"] == "/tmp" and env["PATH"].startswith("/opt/venv/bin:")
    if svc in DATA_DIRS:
        assert env[f"{svc.upper()}_DATA_DIR"] == DATA_DIRS[svc]
        assert ("RUN", f"install -d -o 10001 -g 10001 {DATA_DIRS[svc]}") in chain
    assert not any(op == "HEALTHCHECK" for op, _ in INSTRUCTIONS)


def test_generator_default_bakes_the_model_and_endpoint_target_leaves_llamacpp_out() -> None:
    default, endpoint = _image("generator"), _image("generator", "endpoint")
    assert ("COPY", "--from=model /opt/weaverbird/models /opt/weaverbird/models") in default
    assert _env(default)["GENERATOR_MODEL"].startswith("/opt/weaverbird/models/")
    assert ("COPY", "--from=build-endpoint /opt/venv /opt/venv") in endpoint
    assert not any("--from=model" in a for _, a in endpoint) and "GENERATOR_MODEL" not in _env(endpoint)
    assert _last(endpoint, "ENTRYPOINT") == '["python", "-m", "weaverbird_generator"]'
    assert _last(endpoint, "USER") == "10001:10001"
    (_, uninstall) = STAGES["build-endpoint"][1][0]
    assert "uninstall -y xllamacpp" in uninstall


def test_embedder_ray_target_carries_the_ray_venv_and_wget() -> None:
    ray = _image("embedder", "ray")
    assert ("COPY", "--from=build-ray /opt/venv /opt/venv") in ray
    assert any(op == "RUN" and "wget" in a for op, a in ray), "KubeRay's injected probes call wget"
    assert _last(ray, "USER") == "10001:10001"
    assert STAGES["build-ray"][0] == "build"


def test_every_run_has_pipefail() -> None:
    # A stage built on an earlier one inherits its SHELL; one on the base image starts with /bin/sh -c.
    for name in [n for n in STAGES if n]:
        shell = None
        for op, arg in _image("orchestrator", name):
            shell = None if (op, arg) == ("FROM", "${PYTHON_IMAGE}") else arg if op == "SHELL" else shell
            assert op != "RUN" or shell == PIPEFAIL, f"{name}: RUN without pipefail: {arg[:60]}"


def test_copy_sources_are_in_the_build_context() -> None:
    for op, arg in INSTRUCTIONS:
        if op == "COPY" and not arg.startswith("--from"):
            for source in arg.split()[:-1]:
                assert (REPO / source).exists(), f"COPY {source} is not in the build context (repo root)"


def _omit_lists() -> dict[str, str]:
    args = dict(a.split("=", 1) for op, a in STAGES["build"][1] if op == "ARG" and "=" in a)
    return {k.removeprefix("OMIT_"): v.strip('"') for k, v in args.items() if k.startswith("OMIT_")}


def test_every_service_has_an_omit_list_of_pinned_packages() -> None:
    omit = _omit_lists()
    assert set(omit) == set(WORKLOADS)
    pinned = {line.split("==")[0] for line in (REPO / "requirements" / "runtime.txt").read_text().splitlines()}
    for svc, names in omit.items():
        # A name not pinned there would match nothing and silently leave the package in.
        assert set(names.split()) <= pinned, (svc, set(names.split()) - pinned)
    assert "numpy" in omit["gateway"].split() and "xllamacpp" not in omit["generator"].split()


def _select_omit(service: str) -> subprocess.CompletedProcess[str]:
    """The build's first RUN up to its installs, in bash with the build args as environment."""
    (run,) = [a for op, a in STAGES["build"][1] if op == "RUN" and "OMIT_" in a]
    selection = run.split(" && python -m venv")[0]
    env = {f"OMIT_{k}": v for k, v in _omit_lists().items()} | {"SERVICE": service, "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", f'{selection} && echo "$omit"'],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_service_arg_selects_its_omit_list_and_an_unknown_one_stops_the_build() -> None:
    picked = _select_omit("gateway")
    assert picked.returncode == 0 and picked.stdout.split() == _omit_lists()["gateway"].split()
    unknown = _select_omit("gatewya")
    assert unknown.returncode != 0 and "SERVICE must be one of" in unknown.stderr


def test_make_images_builds_every_image_the_chart_uses(tmp_path: Path) -> None:
    # A stand-in `docker` records each build; the chart's image repositories must all be among them.
    log = tmp_path / "builds"
    (tmp_path / "docker").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (tmp_path / "docker").chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    subprocess.run(["make", "-s", "images"], cwd=REPO, env=env, check=True, timeout=60, capture_output=True)
    built: dict[str, tuple[str, str]] = {}
    for line in log.read_text().splitlines():
        args = line.split()
        assert args[0] == "build" and args[-1] == "." and "-f" not in args, line
        service = args[args.index("--build-arg") + 1].removeprefix("SERVICE=")
        target = args[args.index("--target") + 1] if "--target" in args else ""
        _image(service, target)  # resolves to the base image through known stages
        built[args[args.index("-t") + 1].split(":")[0]] = (service, target)
    values = (REPO / "deploy" / "helm" / "weaverbird" / "values.yaml").read_text()
    assert set(re.findall(r"repository: (weaverbird/[\w-]+)", values)) <= set(built)
    assert built["weaverbird/generator"] == ("generator", "endpoint")
    assert built["weaverbird/embedder-ray"] == ("embedder", "ray")
    assert {s for s, t in built.values() if not t} == set(WORKLOADS)
