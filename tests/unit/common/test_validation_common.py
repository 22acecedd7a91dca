"""The shared edge checks: each bad value is an InvalidArgument whose message names the field."""

from __future__ import annotations

import math

import pytest
from weaverbird.v1 import common_pb2
from weaverbird_common import validation as v
from weaverbird_common.errors import InvalidArgument


@pytest.mark.parametrize(
    ("values", "fragment"),
    [
        ([], "must not be empty"),
        ([0.1, math.nan], "vec[1] is nan"),
        ([math.inf, 0.0], "vec[0] is inf"),
        ([-math.inf], "finite"),
        ([0.0, 0.0, 0.0], "all zeros"),
        ([1e7, 0.0], "within"),
        ([0.1] * (v.MAX_VECTOR_DIMENSION + 1), "dimension"),
    ],
)
def test_bad_vectors_are_refused_with_the_component(values: list[float], fragment: str) -> None:
    with pytest.raises(InvalidArgument, match="vec") as err:
        v.check_vector(values, "vec")
    assert fragment in str(err.value)


def test_a_unit_vector_passes() -> None:
    v.check_vector([0.6, -0.8], "vec")


@pytest.mark.parametrize("value", [math.nan, math.inf, -0.1, 2.5])
def test_numbers_must_be_finite_and_in_range(value: float) -> None:
    with pytest.raises(InvalidArgument, match="temperature"):
        v.check_number(value, "temperature", minimum=0.0, maximum=2.0)


def test_counts_ints_texts_and_uuids() -> None:
    with pytest.raises(InvalidArgument, match="items must not be empty"):
        v.check_count([], "items", minimum=1, maximum=3)
    with pytest.raises(InvalidArgument, match="at most 3"):
        v.check_count([1, 2, 3, 4], "items", minimum=1, maximum=3)
    with pytest.raises(InvalidArgument, match="k must be between 1 and 10, got -5"):
        v.check_int(-5, "k", minimum=1, maximum=10)
    with pytest.raises(InvalidArgument, match="q must not be empty"):
        v.check_text("  \n", "q", max_chars=10, required=True)
    with pytest.raises(InvalidArgument, match="11 characters; the limit is 10"):
        v.check_text("x" * 11, "q", max_chars=10)
    with pytest.raises(InvalidArgument, match="id is not a UUID string"):
        v.check_uuid("not-a-uuid", "id")
    v.check_uuid("3f2504e0-4f89-11d3-9a0c-0305e82c3301", "id")


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("file:///etc/passwd", "scheme 'file'"),
        ("gopher://127.0.0.1:70/_x", "scheme 'gopher'"),
        ("ftp://example.com/a", "scheme 'ftp'"),
        ("dict://127.0.0.1:11211/stat", "scheme 'dict'"),
        ("example.com/page", "scheme (none)"),
        ("http:///nohost", "no host"),
        ("http://[::1", "not a valid URL"),
        ("", "must not be empty"),
        ("https://example.com/" + "a" * 5000, "limit"),
    ],
)
def test_urls_must_be_absolute_http(url: str, fragment: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        v.check_http_url(url)
    assert fragment in str(err.value)


def test_http_urls_pass_the_form_check() -> None:
    v.check_http_url("https://example.com/report.html")
    v.check_http_url("HTTP://example.com")


@pytest.mark.parametrize(
    ("flt", "fragment"),
    [
        (common_pb2.PayloadFilter(origin=7), "filter.origin must be ORIGIN_LOCAL or ORIGIN_WEB, got 7"),
        (common_pb2.PayloadFilter(origin=common_pb2.ORIGIN_UNSPECIFIED), "filter.origin"),
        (common_pb2.PayloadFilter(quarter=5), "filter.quarter"),
        (common_pb2.PayloadFilter(year=-1), "filter.year"),
        (common_pb2.PayloadFilter(year=2**31 - 1), "filter.year"),
        (common_pb2.PayloadFilter(company="x" * 5000), "filter.company"),
    ],
)
def test_payload_filters_are_checked_field_by_field(flt: common_pb2.PayloadFilter, fragment: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        v.check_payload_filter(flt)
    assert fragment in str(err.value)


def test_a_sensible_filter_passes() -> None:
    v.check_payload_filter(common_pb2.PayloadFilter(company="ADOBE", year=2023, quarter=0, origin=1, doc_type="10K"))
