"""Vet URLs before the server fetches them, so web search results cannot make it read its own network (SSRF).

Threat model: the URLs come from a search engine or a user, i.e. from the internet. Fetching them
from inside the cluster must never reach loopback, the pod/VPC network, link-local cloud metadata
(169.254.169.254) or any other address that is not on the public internet, however the address is
spelled.

How a URL is vetted (`UrlGuard.vet`):

1. Only ``http``/``https``; no whitespace or control characters anywhere (browsers silently drop
   tabs and newlines, so the same string can name two hosts); no userinfo (``@``), backslash or
   ``%`` in the authority. Each of these is a known trick for making two URL parsers disagree
   about the host, and none appears in a legitimate search result.
2. Numeric hosts are parsed with ``socket.inet_aton``, which is what libc's resolver (and so the
   connection) does: ``2130706433``, ``0177.0.0.1``, ``0x7f.1`` and ``127.1`` all mean 127.0.0.1.
   Any numeric host that is not in canonical dotted-quad form is refused outright: no real page
   lives at one, and refusing them removes any doubt about which address is meant.
3. The URL is parsed again by httpx (the client that will connect) and must agree on host and port.
4. Host names are resolved with the event loop's ``getaddrinfo`` and EVERY address must be public.
   IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible, 6to4, NAT64) are judged by
   the IPv4 address inside them.

DNS rebinding: a name can resolve to a public address when vetted and to 127.0.0.1 a moment later
when the HTTP client resolves it again. We do not re-resolve: `vet` returns the vetted addresses
and the fetcher (`weaverbird_common.web.fetch`) connects to one of them directly ("pinning"),
sending the original name in the Host header and as the TLS SNI/certificate name. Every redirect
hop is vetted and pinned again.

Allow-list: an address or network entry opens exactly that hole, under any name. A host-name entry
does not vouch for what the name resolves to: DNS for it may be changed, hijacked or rebound, so
its addresses are checked like any other name's, and private ones are refused unless the guard is
built with ``names_may_resolve_private=True`` (tests, private deployments that accept the risk);
even then a name never reaches link-local addresses (cloud metadata). To reach a private service,
list its address or network instead.

Not covered here: ports are not restricted (public sites on odd ports are legitimate), and an
egress HTTP proxy would resolve names itself, which is why the fetcher ignores proxy variables.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

import httpx

from weaverbird_common.errors import InvalidArgument, Unavailable

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# (host, port) -> IP address strings, in the order a connection should try them.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

_SCHEMES = {"http": 80, "https": 443}
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_MAX_URL_CHARS = 4096

# Ranges the ipaddress flags miss or name too vaguely for a useful refusal message.
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


class HostUnresolvable(Unavailable):
    """DNS gave no answer this time (timeout, SERVFAIL): asking again later may work."""

    def __init__(self, reason: str, url: str = "") -> None:
        super().__init__(f"cannot resolve URL host now: {reason}")
        self.reason = reason
        self.url = url


class UnsafeUrl(InvalidArgument):
    """The URL was refused before any connection was made; `reason` says why."""

    def __init__(self, reason: str, url: str = "") -> None:
        super().__init__(f"refused URL: {reason}")
        self.reason = reason
        self.url = url


@dataclass(frozen=True, slots=True)
class VettedUrl:
    """A URL that passed the guard, with the addresses it may be fetched from."""

    url: str
    scheme: str
    # Lower-case, IDNA-encoded, without brackets or a trailing dot.
    host: str
    port: int
    # Vetted IP addresses in resolver order; connect only to these (see module docstring).
    addresses: tuple[str, ...]

    @property
    def host_is_ip(self) -> bool:
        """True when the URL names an address rather than a host name."""
        return _ip_or_none(self.host) is not None

    @property
    def host_header(self) -> str:
        """The Host header value for this URL: host, plus the port when it is not the default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _SCHEMES[self.scheme] else f"{host}:{self.port}"


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, via the event loop's getaddrinfo (no blocking of the loop)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


class UrlGuard:
    """Refuses URLs that point at non-public addresses unless an allow-list entry permits them.

    Args:
        allow_hosts: Exceptions for tests and private deployments. Each entry is a host name
            (``search.internal``), an IP address (``127.0.0.1``, ``::1``) or network
            (``10.0.0.0/8``), optionally with a port (``127.0.0.1:8080``, ``[::1]:8080``,
            ``search.internal:8080``) that then must match too. An address entry permits that
            address under any name. A host name entry admits only public addresses, exactly like
            an unlisted name, unless `names_may_resolve_private` is set. Default: nothing is
            allowed beyond the public internet.
        resolver: Resolves a host name to IP strings; defaults to `system_resolver`. Tests inject
            one so names resolve without DNS.
        names_may_resolve_private: Lets allow-listed host names resolve to non-public addresses
            (loopback, private, ...), except link-local (cloud metadata), which a name never
            reaches. For tests and private deployments that trust their DNS; off by default
            because whoever controls the name's DNS then controls what the server reads.

    Raises:
        ValueError: An allow-list entry cannot be parsed.
    """

    def __init__(
        self,
        allow_hosts: Iterable[str] = (),
        *,
        resolver: Resolver | None = None,
        names_may_resolve_private: bool = False,
    ) -> None:
        self._allowed_names: set[tuple[str, int | None]] = set()
        self._allowed_networks: list[tuple[IPNetwork, int | None]] = []
        for entry in allow_hosts:
            self._add_allowed(entry)
        self._resolve = resolver or system_resolver
        self._names_may_resolve_private = names_may_resolve_private
        if self._allowed_names and not names_may_resolve_private:
            # Not an error: the entry is harmless, but it no longer opens anything by itself.
            log.warning(
                "allow-list host names %s admit only public addresses; list an IP or CIDR to reach a private service",
                sorted(name for name, _ in self._allowed_names),
            )

    def _add_allowed(self, entry: str) -> None:
        text = entry.strip().lower()
        if not text:
            raise ValueError("empty allow-list entry")
        port: int | None = None
        if text.startswith("["):  # [v6] or [v6]:port
            host, sep, rest = text[1:].partition("]")
            if not sep or (rest and not rest.startswith(":")):
                raise ValueError(f"bad allow-list entry {entry!r}")
            port = _parse_port(rest[1:], entry) if rest else None
        elif text.count(":") == 1:  # name:port or v4:port; more colons is a bare IPv6 address
            host, _, port_text = text.partition(":")
            port = _parse_port(port_text, entry)
        else:
            host = text
        host = host.rstrip(".")
        try:
            self._allowed_networks.append((ipaddress.ip_network(host, strict=False), port))
        except ValueError:
            if not re.fullmatch(r"[a-z0-9_\-.]+", host):
                raise ValueError(f"bad allow-list entry {entry!r}") from None
            self._allowed_names.add((host, port))

    async def check(self, url: str) -> None:
        """Raises UnsafeUrl unless `url` may be fetched; see `vet`."""
        await self.vet(url)

    async def vet(self, url: str) -> VettedUrl:
        """Parses `url`, resolves its host and checks every address.

        Returns:
            The URL with the vetted addresses a fetcher must connect to (DNS pinning).

        Raises:
            UnsafeUrl: The URL is malformed, uses another scheme or a parser trick, or its host is
                (or resolves to) a non-public address that the allow-list does not permit; also
                when the host does not resolve, since an address that cannot be checked cannot
                be trusted.
        """
        scheme, host, port = _split_url(url)
        literal = _literal_address(host, url)
        parsed = _httpx_agrees(url, scheme, host, port)
        if literal is None and not host.isascii():
            # The IDNA form is what the resolver and the Host header see.
            host = _normalise_host(parsed.raw_host.decode("ascii"))
            literal = _literal_address(host, url)

        name_allowed = (host, None) in self._allowed_names or (host, port) in self._allowed_names
        if literal is not None:
            addresses: list[str] = [str(literal)]
        else:
            try:
                addresses = list(dict.fromkeys(await self._resolve(host, port)))
            except socket.gaierror as exc:
                if exc.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)):
                    raise UnsafeUrl(f"host {host!r} does not resolve ({exc})", url) from exc
                # A resolver hiccup is not a verdict on the URL: callers may retry.
                raise HostUnresolvable(f"host {host!r}: {exc}", url) from exc
            except (OSError, UnicodeError) as exc:
                raise UnsafeUrl(f"host {host!r} does not resolve ({exc})", url) from exc
            if not addresses:
                raise UnsafeUrl(f"host {host!r} does not resolve", url)

        # A trusted name skips the public-address check, but never reaches cloud metadata.
        trusted_name = name_allowed and literal is None and self._names_may_resolve_private
        for text in addresses:
            ip = _ip_or_none(text.split("%", 1)[0])  # getaddrinfo may append an IPv6 scope id
            if ip is None:
                raise UnsafeUrl(f"host {host!r} resolved to unparsable address {text!r}", url)
            if self._address_allowed(ip, port):
                continue
            refusal = address_refusal(ip)
            if refusal and trusted_name and not _is_link_local(ip):
                continue
            if refusal:
                where = f"{ip}" if literal is not None else f"host {host!r} resolves to {ip}"
                raise UnsafeUrl(f"{where}: {refusal}", url)
        return VettedUrl(url=str(parsed), scheme=scheme, host=host, port=port, addresses=tuple(addresses))

    def _address_allowed(self, ip: IPAddress, port: int) -> bool:
        return any(
            ip.version == network.version and ip in network and allowed_port in (None, port)
            for network, allowed_port in self._allowed_networks
        )


def address_refusal(ip: IPAddress) -> str | None:
    """Why `ip` must not be fetched from (e.g. "loopback"), or None for a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            form, inner = embedded
            refusal = address_refusal(inner)
            if refusal:
                return f"{form} form of {inner}, {refusal}"
            if form == "IPv4-compatible":  # deprecated (RFC 4291) and never routed: no reason to allow
                return "deprecated IPv4-compatible form"
            return None
        if ip in _NAT64_LOCAL:
            return "local-use NAT64"
        if ip.is_site_local:
            return "site-local"
        if ip in _UNIQUE_LOCAL:
            return "unique-local (private)"
    checks: list[tuple[bool, str]] = [
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local (includes cloud metadata)"),
        (ip.is_multicast, "multicast"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT, "carrier-grade NAT shared space"),
        (ip.is_reserved, "reserved"),
        (ip.is_private, "private"),
        (not ip.is_global, "not globally routable"),
    ]
    return next((name for hit, name in checks if hit), None)


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


def _split_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) read from the raw string, refusing the constructs parsers disagree on."""
    if not isinstance(url, str) or not url:
        raise UnsafeUrl("empty URL", str(url))
    if len(url) > _MAX_URL_CHARS:
        raise UnsafeUrl(f"URL longer than {_MAX_URL_CHARS} characters", url[:100])
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url):
        raise UnsafeUrl("whitespace or control characters in URL", url)
    match = _SCHEME_RE.match(url)
    scheme = match.group(1).lower() if match else ""
    if scheme not in _SCHEMES:
        raise UnsafeUrl(f"scheme {scheme or '(none)'!r} is not allowed (http and https only)", url)
    rest = url[match.end() :] if match else ""
    if not rest.startswith("//"):
        raise UnsafeUrl("URL has no host", url)
    authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
    if "@" in authority:
        raise UnsafeUrl("credentials (userinfo) in URLs are not allowed", url)
    if "\\" in authority:
        raise UnsafeUrl("backslash in the host part", url)
    if "%" in authority:
        raise UnsafeUrl("percent-encoded host (or IPv6 zone id)", url)

    port_text = ""
    if authority.startswith("["):
        host, sep, after = authority[1:].partition("]")
        if not sep or (after and not after.startswith(":")):
            raise UnsafeUrl("malformed IPv6 host", url)
        port_text = after[1:]
        if _ip_or_none(host) is None or ":" not in host:
            raise UnsafeUrl("malformed IPv6 host", url)
    elif ":" in authority:
        host, _, port_text = authority.partition(":")
    else:
        host = authority
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise UnsafeUrl(f"bad port {port_text!r}", url)
        port = int(port_text)
    else:
        port = _SCHEMES[scheme]
    host = _normalise_host(host)
    if not host:
        raise UnsafeUrl("URL has no host", url)
    return scheme, host, port


def _normalise_host(host: str) -> str:
    # One trailing dot is the fully qualified form of the same name ("localhost." is localhost).
    host = host.lower()
    return host[:-1] if host.endswith(".") and not host.endswith("..") else host


def _literal_address(host: str, url: str) -> IPAddress | None:
    """The address a numeric host means to libc, refusing every non-canonical IPv4 spelling."""
    if ":" in host:
        return ipaddress.IPv6Address(host)  # already validated by _split_url
    if not host.isascii():
        return None
    try:
        packed = socket.inet_aton(host)
    except (OSError, ValueError):
        return None
    ip = ipaddress.IPv4Address(packed)
    if host != str(ip):
        refusal = address_refusal(ip)
        meaning = f"{ip}, {refusal}" if refusal else str(ip)
        raise UnsafeUrl(f"non-canonical IPv4 host {host!r} (means {meaning})", url)
    return ip


def _httpx_agrees(url: str, scheme: str, host: str, port: int) -> httpx.URL:
    """httpx's reading of `url`; refused unless it names the same scheme, host and port as ours."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise UnsafeUrl(f"malformed URL: {exc}", url) from exc
    parsed_port = parsed.port or _SCHEMES.get(parsed.scheme, 0)
    raw_host = parsed.raw_host.decode("ascii", errors="replace")
    same_host = _normalise_host(raw_host) == host if host.isascii() else bool(raw_host)
    if parsed.scheme != scheme or not same_host or parsed_port != port or parsed.userinfo:
        raise UnsafeUrl("ambiguous URL (parsers disagree about its host)", url)
    return parsed


def _parse_port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"bad port in allow-list entry {entry!r}")
    return int(text)


def _ip_or_none(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _is_link_local(ip: IPAddress) -> bool:
    """Link-local, also inside an IPv6 form that embeds an IPv4 address (169.254.169.254 is metadata)."""
    embedded = _embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    return ip.is_link_local or (embedded is not None and embedded[1].is_link_local)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 transition form routes to, with the form's name."""
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:  # :: and ::1 are unspecified/loopback, judged below
        return "IPv4-compatible", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None
