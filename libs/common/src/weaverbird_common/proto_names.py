"""Short lower-case names of the proto enums, as the HTTP JSON, the CLI and the page spell them: a value's
proto name without its enum's prefix (ANSWER_CHECK_NO_NUMBERS -> "no_numbers", DOCUMENT_ORIGIN_USER ->
"user"). Derived from the generated enums, so a value added to a .proto is named everywhere at once."""

from __future__ import annotations

from typing import Protocol

UNSPECIFIED = "unspecified"


class ProtoEnum(Protocol):
    """What the generated enum wrappers (common_pb2.Task, ...) offer."""

    def Name(self, number: int) -> str: ...
    def Value(self, name: str) -> int: ...
    def values(self) -> list[int]: ...


def _prefix(enum: ProtoEnum) -> str:
    # Every enum's zero value is <PREFIX>UNSPECIFIED (the proto lint rule ENUM_ZERO_VALUE_SUFFIX).
    return enum.Name(0).removesuffix(UNSPECIFIED.upper())


def short_name(enum: ProtoEnum, number: int, unknown: str = UNSPECIFIED) -> str:
    """The value's short name; `unknown` for the zero value and for one this build does not know (a
    newer peer's)."""
    if not number:
        return unknown
    try:
        return enum.Name(number).removeprefix(_prefix(enum)).lower()
    except ValueError:
        return unknown


def numbers(enum: ProtoEnum) -> dict[str, int]:
    """Short name -> value of every value but the zero one, in .proto order (the choices a user has)."""
    return {short_name(enum, number): number for number in enum.values() if number}


def number(enum: ProtoEnum, name: str) -> int:
    """The value of a short name; ValueError when the enum has no such value."""
    return enum.Value(_prefix(enum) + name.upper())
