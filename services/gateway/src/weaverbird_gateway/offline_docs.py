"""/docs and /redoc from assets the gateway serves itself, and the favicon.

FastAPI's own pages load Swagger UI and ReDoc from a CDN, so they are blank on a machine without internet.
fastapi-offline ships the same assets (Swagger UI 5, which reads OpenAPI 3.1); only its files are used
here, mounted beside the app's routes, so the app keeps its own FastAPI object and settings.
"""

from __future__ import annotations

import functools
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

    def page(path: str, build: Callable[..., HTMLResponse], title: str, **assets: str) -> None:
        # The page and its assets are linked below the root path the gateway is served under.
        async def endpoint(request: Request) -> HTMLResponse:
            root = request.scope.get("root_path", "")
            links = {name: f"{root}{url}" for name, url in assets.items()}
            return build(openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - {title}", **links)

        app.add_api_route(path, endpoint, methods=["GET"], include_in_schema=False)

    page(
        "/docs",
        get_swagger_ui_html,
        "Swagger UI",
        swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=FAVICON_URL,
    )
    page(
        "/redoc",
        functools.partial(get_redoc_html, with_google_fonts=False),
        "ReDoc",
        redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
        redoc_favicon_url=FAVICON_URL,
    )

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        # Browsers ask for /favicon.ico whatever the page links; an SVG answers it.
        return FileResponse(str(Path(static_dir) / "favicon.svg"), media_type="image/svg+xml")
