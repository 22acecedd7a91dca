"""Runs the gateway: settings -> FastAPI app -> uvicorn (h11, bounded headers) on GATEWAY_HOST:GATEWAY_PORT."""

from __future__ import annotations

import uvicorn
from weaverbird_common.logs import configure_logging

from weaverbird_gateway.app import create_app
from weaverbird_gateway.server import config
from weaverbird_gateway.settings import GatewaySettings


def main() -> None:
    settings = GatewaySettings()  # type: ignore[call-arg]  # service addresses come from the env
    configure_logging(settings.log_level, "gateway")
    uvicorn.Server(config(create_app(settings), settings)).run()


if __name__ == "__main__":
    main()
