"""Short lower-case names of the proto enums, as the HTTP JSON, the CLI and the page spell them: a value's
proto name without its enum's prefix (ANSWER_CHECK_NO_NUMBERS -> "no_numbers", DOCUMENT_ORIGIN_USER ->
"user"). Derived from the generated enums, so a value added to a .proto is named everywhere at once."""

from __future__ import annotations

from typing import Protocol

from google.protobuf.descriptor import EnumDescriptor

UNSPECIFIED = "unspecified"


class _GeneratedEnum(Protocol):
    """A generated enum wrapper (common_pb2.Task, ...)."""

    DESCRIPTOR: EnumDescriptor


def _descriptor(enum: _GeneratedEnum | EnumDescriptor) -> EnumDescriptor:
    return enum if isinstance(enum, EnumDescriptor) else enum.DESCRIPTOR


def _prefix(enum: EnumDescriptor) -> str:
    # Every enum's zero value is <PREFIX>UNSPECIFIED (the proto lint rule ENUM_ZERO_VALUE_SUFFIX).
    return enum.values_by_number[0].name.removesuffix(UNSPECIFIED.upper())


def short_name(enum: _GeneratedEnum | EnumDescriptor, number: int, unknown: str = UNSPECIFIED) -> str:
    """The value's short name; `unknown` for the zero value and for one this build does not know (a
    newer peer's)."""
    descriptor = _descriptor(enum)
    value = descriptor.values_by_number.get(number) if number else None
    return value.name.removeprefix(_prefix(descriptor)).lower() if value else unknown


def numbers(enum: _GeneratedEnum | EnumDescriptor) -> dict[str, int]:
    """Short name -> value of every value but the zero one, in .proto order (the choices a user has)."""
    descriptor = _descriptor(enum)
    return {short_name(descriptor, v.number): v.number for v in descriptor.values if v.number}


def number(enum: _GeneratedEnum | EnumDescriptor, name: str) -> int:
    """The value of a short name; ValueError when the enum has no such value."""
    descriptor = _descriptor(enum)
    value = descriptor.values_by_name.get(_prefix(descriptor) + name.upper())
    if value is None:
        raise ValueError(f"{descriptor.name} has no value {name!r}")
    return value.number
