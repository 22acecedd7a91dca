"""Runs the gateway: settings -> FastAPI app -> uvicorn on GATEWAY_HOST:GATEWAY_PORT."""

from __future__ import annotations

import uvicorn
from weaverbird_common.logs import configure_logging

from weaverbird_gateway.app import create_app
from weaverbird_gateway.settings import GatewaySettings


def main() -> None:
    settings = GatewaySettings()  # type: ignore[call-arg]  # service addresses come from the env
    configure_logging(settings.log_level, "gateway")
    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,  # keep the service's one-line log format
        log_level=settings.log_level.lower(),
        proxy_headers=True,
        timeout_graceful_shutdown=int(settings.shutdown_grace_s),
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
