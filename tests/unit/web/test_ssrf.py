"""UrlGuard: every SSRF spelling is refused before any connection; the allow-list opens exact holes."""

from __future__ import annotations

import socket
from collections.abc import Sequence

import pytest
from fixtures.web_servers import AURORA_PATH, PageServer
from weaverbird_common.errors import InvalidArgument, Unavailable
from weaverbird_common.web import PageFetcher, UnsafeUrl, UrlGuard
from weaverbird_common.web.ssrf import HostUnresolvable

pytest_plugins = ["fixtures.web_servers"]

PUBLIC = "93.184.216.34"

FAKE_DNS: dict[str, list[str]] = {
    "public.test": [PUBLIC],
    "dualstack.test": [PUBLIC, "2606:2800:220:1:248:1893:25c8:1946"],
    "mixed.test": [PUBLIC, "10.1.2.3"],  # one bad address among good ones
    "metadata.test": ["169.254.169.254"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "ula.test": [PUBLIC, "fd00:ec2::254"],
    "cgnat.test": ["100.100.100.200"],
}


async def fake_resolver(host: str, port: int) -> Sequence[str]:
    try:
        return FAKE_DNS[host]
    except KeyError:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None


def guard(*allow: str) -> UrlGuard:
    return UrlGuard(allow, resolver=fake_resolver)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        # schemes
        ("file:///etc/passwd", "scheme 'file'"),
        ("gopher://public.test/", "scheme 'gopher'"),
        ("ftp://public.test/", "scheme 'ftp'"),
        ("//public.test/", "scheme"),
        ("http:/public.test/", "no host"),
        # parser tricks
        ("http://user:pw@public.test/", "userinfo"),
        ("http://public.test@127.0.0.1/", "userinfo"),
        ("http://public.test\\@127.0.0.1/", "userinfo"),
        ("http://127.0.0.1\\.public.test/", "backslash"),
        ("http://127%2e0%2e0%2e1/", "percent-encoded"),
        ("http://public.test\t/", "control characters"),
        ("http://public.test /", "control characters"),
        ("http://public.test:99999/", "bad port"),
        ("http://[::1/", "malformed IPv6"),
        # loopback and friends, canonical
        ("http://127.0.0.1/", "loopback"),
        ("http://127.255.0.9:8080/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://10.0.0.1/", "private"),
        ("http://172.16.5.4/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
        ("http://224.0.0.251/", "multicast"),
        ("http://[ff02::1]/", "multicast"),
        ("http://240.0.0.1/", "reserved"),
        ("http://255.255.255.255/", "reserved"),
        ("http://198.18.0.1/", "private"),
        ("http://[fd00:ec2::254]/", "unique-local"),
        ("http://[fc00::1]/", "unique-local"),
        ("http://[fec0::1]/", "site-local"),
        # IPv6 forms embedding a bad IPv4 address
        ("http://[::ffff:127.0.0.1]/", "IPv4-mapped form of 127.0.0.1"),
        ("http://[::ffff:a9fe:a9fe]/", "IPv4-mapped form of 169.254.169.254"),
        ("http://[::127.0.0.1]/", "IPv4-compatible form of 127.0.0.1"),
        ("http://[::8.8.8.8]/", "deprecated IPv4-compatible"),
        ("http://[2002:7f00:1::]/", "6to4 form of 127.0.0.1"),
        ("http://[2002:a9fe:a9fe::1]/", "6to4 form of 169.254.169.254"),
        ("http://[64:ff9b::7f00:1]/", "NAT64 form of 127.0.0.1"),
        ("http://[64:ff9b::a00:1]/", "NAT64 form of 10.0.0.1"),
        ("http://[64:ff9b:1::a00:1]/", "local-use NAT64"),
        ("http://[fe80::1%25eth0]/", "zone id"),
        ("http://[0:0:0:0:0:ffff:7f00:1]/", "IPv4-mapped form of 127.0.0.1"),
        # Unicode digits browsers fold to ASCII (１２７.０.０.１ is 127.0.0.1 to Chrome): refused as malformed
        ("http://１２７.０.０.１/", "malformed URL"),
        ("http://⑯⑨.②⑤④.⑯⑨.②⑤④/", "malformed URL"),
        # numeric spellings libc accepts (inet_aton)
        ("http://2130706433/", "means 127.0.0.1, loopback"),
        ("http://0177.0.0.1/", "means 127.0.0.1, loopback"),
        ("http://0x7f.1/", "means 127.0.0.1, loopback"),
        ("http://0x7f000001/", "means 127.0.0.1, loopback"),
        ("http://127.1/", "means 127.0.0.1, loopback"),
        ("http://127.0.1/", "means 127.0.0.1, loopback"),
        ("http://0/", "means 0.0.0.0, unspecified"),
        ("http://2852039166/latest/meta-data/", "means 169.254.169.254, link-local"),
        ("http://0xa9.0xfe.0xa9.0xfe/", "means 169.254.169.254"),
        ("http://012.0.0.1/", "means 10.0.0.1, private"),
        ("http://134744072/", "non-canonical IPv4 host"),  # 8.8.8.8: public, but no real page lives there
        # names resolving to bad addresses: every address is checked
        ("http://mixed.test/", "resolves to 10.1.2.3: private"),
        ("http://metadata.test/", "resolves to 169.254.169.254: link-local"),
        ("http://mapped.test/", "IPv4-mapped form of 127.0.0.1"),
        ("http://ula.test/", "unique-local"),
        ("http://cgnat.test/", "carrier-grade NAT"),
        ("http://nowhere.test/", "does not resolve"),
    ],
)
async def test_refuses(url: str, why: str) -> None:
    with pytest.raises(UnsafeUrl) as caught:
        await guard().check(url)
    assert why in caught.value.reason
    assert isinstance(caught.value, InvalidArgument)  # maps to INVALID_ARGUMENT at the gRPC edge


@pytest.mark.parametrize(
    "url",
    [
        "http://public.test/",
        "https://public.test/a/b?c=d#frag",
        "HTTP://PUBLIC.TEST./x",
        "http://dualstack.test:8443/",
        "http://8.8.8.8/",
        "http://[2001:4860:4860::8888]/",
        "http://[::ffff:8.8.8.8]/",  # mapped public address: the same as 8.8.8.8
        "http://[2002:808:808::1]/",  # 6to4 of a public address
    ],
)
async def test_allows_public(url: str) -> None:
    await guard().check(url)


async def test_vet_returns_every_address_for_pinning() -> None:
    vetted = await guard().vet("https://DualStack.test.:8443/report?id=1")
    assert vetted.host == "dualstack.test"
    assert vetted.port == 8443
    assert vetted.scheme == "https"
    assert vetted.addresses == tuple(FAKE_DNS["dualstack.test"])
    assert vetted.host_header == "dualstack.test:8443"
    assert not vetted.host_is_ip


async def test_system_resolver_localhost_is_refused() -> None:
    # The real getaddrinfo (/etc/hosts, no network): a name, not a literal, that means loopback.
    with pytest.raises(UnsafeUrl, match="loopback"):
        await UrlGuard().check("http://localhost:8080/")


async def test_allow_list_by_address_and_port() -> None:
    allowing = guard("127.0.0.1:8080", "[::1]:9090", "10.0.0.0/8")
    await allowing.check("http://127.0.0.1:8080/x")
    await allowing.check("http://[::1]:9090/")
    await allowing.check("http://10.20.30.40/")
    await allowing.check("http://mixed.test/")  # 10.1.2.3 is inside the allowed network
    for url in ("http://127.0.0.1:8081/", "http://[::1]:9091/", "http://192.168.0.1/", "http://metadata.test/"):
        with pytest.raises(UnsafeUrl):
            await allowing.check(url)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://metadata.test/latest/", "resolves to 169.254.169.254: link-local"),
        ("http://mixed.test:8080/", "resolves to 10.1.2.3: private"),
        ("http://mapped.test/", "IPv4-mapped form of 127.0.0.1"),
        ("http://cgnat.test/", "carrier-grade NAT"),
    ],
)
async def test_allow_listed_name_still_must_resolve_to_public_addresses(url: str, why: str) -> None:
    """A name entry does not vouch for its DNS: whoever controls the name would control what we read."""
    allowing = guard("metadata.test", "mixed.test:8080", "mapped.test", "cgnat.test")
    with pytest.raises(UnsafeUrl) as caught:
        await allowing.check(url)
    assert why in caught.value.reason


async def test_allow_listed_name_with_public_addresses_passes() -> None:
    vetted = await guard("public.test").vet("http://public.test/")
    assert vetted.addresses == (PUBLIC,)


async def test_names_may_resolve_private_is_an_explicit_opt_in() -> None:
    allowing = UrlGuard(["mixed.test:8080", "mapped.test"], resolver=fake_resolver, names_may_resolve_private=True)
    vetted = await allowing.vet("http://mixed.test:8080/")
    assert vetted.addresses == (PUBLIC, "10.1.2.3")
    await allowing.check("http://mapped.test/")
    with pytest.raises(UnsafeUrl, match="private"):
        await allowing.check("http://mixed.test:8081/")  # the entry names port 8080 only
    with pytest.raises(UnsafeUrl, match="private"):
        await allowing.check("http://10.1.2.3:8080/")  # the name was allowed, not its address
    with pytest.raises(UnsafeUrl, match="unique-local"):
        await allowing.check("http://ula.test/")  # not on the list: checked as usual


async def test_a_trusted_name_never_reaches_cloud_metadata() -> None:
    async def resolver(host: str, port: int) -> Sequence[str]:
        return {"meta.test": ["169.254.169.254"], "meta6.test": ["::ffff:169.254.169.254"]}[host]

    allowing = UrlGuard(["meta.test", "meta6.test"], resolver=resolver, names_may_resolve_private=True)
    for url in ("http://meta.test/latest/meta-data/", "http://meta6.test/"):
        with pytest.raises(UnsafeUrl, match=r"169\.254\.169\.254"):
            await allowing.check(url)
    # An explicit address entry is the one way to open link-local, and it says so in plain sight.
    await UrlGuard(["169.254.169.254"], resolver=resolver).check("http://meta.test/")


def test_a_name_entry_without_the_opt_in_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="weaverbird_common.web.ssrf"):
        UrlGuard(["search.internal", "10.0.0.0/8"])
    assert "search.internal" in caplog.text and "public addresses" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="weaverbird_common.web.ssrf"):
        UrlGuard(["10.0.0.0/8"])
        UrlGuard(["search.internal"], names_may_resolve_private=True)
    assert caplog.text == ""


async def test_allow_list_never_admits_obfuscated_or_embedded_forms() -> None:
    allowing = guard("127.0.0.1")
    await allowing.check("http://127.0.0.1/")
    for url in ("http://2130706433/", "http://127.1/", "http://[::ffff:127.0.0.1]/", "http://user@127.0.0.1/"):
        with pytest.raises(UnsafeUrl):
            await allowing.check(url)


@pytest.mark.parametrize("entry", ["", "  ", "bad host", "[::1", "127.0.0.1:notaport", "host:0", "a/b/c"])
def test_bad_allow_list_entries(entry: str) -> None:
    with pytest.raises(ValueError):
        UrlGuard([entry])


async def test_refused_forms_never_reach_the_server(web_page_server: PageServer) -> None:
    """The page server itself is allowed, but only under its canonical address: other spellings fail
    in the guard, so the server sees no request at all."""
    port = web_page_server.port
    fetcher = PageFetcher(UrlGuard([web_page_server.allow_entry]))
    sneaky = [
        f"http://2130706433:{port}{AURORA_PATH}",
        f"http://0177.0.0.1:{port}{AURORA_PATH}",
        f"http://0x7f.1:{port}{AURORA_PATH}",
        f"http://127.1:{port}{AURORA_PATH}",
        f"http://[::ffff:127.0.0.1]:{port}{AURORA_PATH}",
        f"http://[::ffff:7f00:1]:{port}{AURORA_PATH}",
        f"http://user@127.0.0.1:{port}{AURORA_PATH}",
        f"http://x.test\\@127.0.0.1:{port}{AURORA_PATH}",
        f"http://127.0.0.2:{port}{AURORA_PATH}",
        f"file:///etc/passwd?{port}",
    ]
    report = await fetcher.fetch_all(sneaky, deadline_s=5.0)
    assert not report.pages and not report.timed_out
    assert sorted(failure.url for failure in report.failed) == sorted(sneaky)
    assert web_page_server.requests == []


async def test_a_resolver_hiccup_is_retryable_not_a_refusal() -> None:
    async def flaky(host: str, port: int) -> Sequence[str]:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    with pytest.raises(HostUnresolvable) as caught:
        await UrlGuard(resolver=flaky).check("http://public.test/")
    assert isinstance(caught.value, Unavailable) and not isinstance(caught.value, InvalidArgument)
