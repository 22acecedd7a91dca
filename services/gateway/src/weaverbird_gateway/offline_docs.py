"""/docs and /redoc from assets the gateway serves itself, and the favicon.

FastAPI's own pages load Swagger UI and ReDoc from a CDN, so they are blank on a machine without internet.
fastapi-offline ships the same assets (Swagger UI 5, which reads OpenAPI 3.1); only its files are used
here, mounted beside the app's routes, so the app keeps its own FastAPI object and settings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"
ASSETS_URL = "/static-docs"
FAVICON_URL = "/static/favicon.svg"


def install(app: FastAPI, static_dir: str) -> None:
    """Adds /docs, /redoc, their assets under /static-docs and /favicon.ico; the app must be built with
    docs_url=None and redoc_url=None."""
    app.mount(ASSETS_URL, StaticFiles(directory=str(DOCS_ASSETS)), name="static-docs")

    def page(path: str, build: Callable[[str], HTMLResponse]) -> None:
        # The pages link their assets below the root path the gateway is served under.
        async def endpoint(request: Request) -> HTMLResponse:
            return build(request.scope.get("root_path", ""))

        app.add_api_route(path, endpoint, methods=["GET"], include_in_schema=False)

    page(
        "/docs",
        lambda root: get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{FAVICON_URL}",
        ),
    )
    page(
        "/redoc",
        lambda root: get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{FAVICON_URL}",
            with_google_fonts=False,
        ),
    )

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        # Browsers ask for /favicon.ico whatever the page links; an SVG answers it.
        return FileResponse(str(Path(static_dir) / "favicon.svg"), media_type="image/svg+xml")
