"""Server-Sent Events wire format (text/event-stream): `event: <name>` and one `data:` line of JSON."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any


def encode(name: str, payload: Any) -> bytes:
    # json.dumps escapes newlines inside strings, so the data is always a single line.
    return f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


async def stream(events: AsyncIterator[tuple[str, Any]]) -> AsyncIterator[bytes]:
    async for name, payload in events:
        yield encode(name, payload)
