"""Proto messages filled from plain objects by field name, so a converter spells out only the fields that
differ (another name, an enum, a nested message) and a field added to both sides is carried at once."""

from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


def message_from(cls: type[M], source: object, **overrides: Any) -> M:
    """A `cls` message with each field taken from `source`'s attribute of the same name (sequences and
    mappings as they are), except the fields in `overrides`, set to the value given there. A field
    `source` has no attribute for stays unset."""
    values = {
        f.name: getattr(source, f.name)
        for f in cls.DESCRIPTOR.fields
        if f.name not in overrides and hasattr(source, f.name)
    }
    return cls(**values, **overrides)
