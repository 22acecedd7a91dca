"""Runs the orchestrator service: settings -> peer clients -> question flow -> gRPC server."""

from __future__ import annotations

import asyncio

from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_common.logs import configure_logging
from weaverbird_common.server import ServiceBinding, serve_forever

from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.peers import GrpcPeers
from weaverbird_orchestrator.servicer import OrchestratorServicer
from weaverbird_orchestrator.settings import OrchestratorSettings


async def main() -> None:
    settings = OrchestratorSettings()  # type: ignore[call-arg]  # peer addresses come from the env
    configure_logging(settings.log_level, "orchestrator")
    peers = GrpcPeers(settings)
    binding = ServiceBinding(
        orchestrator_pb2_grpc.add_OrchestratorServiceServicer_to_server,
        OrchestratorServicer(QuestionFlow(peers, settings)),
        orchestrator_pb2.DESCRIPTOR.services_by_name["OrchestratorService"].full_name,
    )
    await serve_forever(settings, [binding], on_stop=peers.close)


if __name__ == "__main__":
    asyncio.run(main())
