"""Where a web fetch may go: the URL's scheme and host, and the addresses its host resolves to.

A model must not reach the user's intranet, a service on their own machine or a cloud metadata
endpoint through ``web_fetch``. So the host is resolved here, every address it resolves to is
checked, and the request then goes to the checked address itself (the URL keeps its host for the
``Host`` header and TLS): a DNS answer that changes between the check and the connection (DNS
rebinding) cannot move the request. Addresses that are not globally routable — loopback, private,
link-local (169.254.169.254, the metadata endpoint), unique-local (``fd00::/8``, AWS's
``fd00:ec2::254``), carrier-grade NAT, multicast, reserved, unspecified, and IPv4 addresses hidden
in IPv6 forms (``::ffff:127.0.0.1``, NAT64 ``64:ff9b::/96``, 6to4) — are refused unless an allow
rule names that host exactly (``web_fetch(domain:127.0.0.1)``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from baton.agent.tool import ToolError

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


@dataclass(frozen=True, slots=True)
class WebTarget:
    """A checked URL: its parts, and the host as rules name it (lower case, IDNA, no trailing dot)."""

    url: str
    parts: SplitResult
    host: str
    port: int

    @property
    def https(self) -> bool:
        """Whether the request goes over TLS."""
        return self.parts.scheme == "https"


def url_host(url: str) -> str | None:
    """The host of ``url`` as rules name it (``None``: no http(s) URL with a host)."""
    try:
        return parse_url(url).host
    except ToolError:
        return None


def parse_url(url: str) -> WebTarget:
    """``url`` checked: http or https, a host, no user name or password; raises :class:`ToolError`."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ToolError(f"Not a valid URL: {text!r} ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ToolError(f"Only http and https URLs can be fetched, not {scheme or 'a URL without a scheme'}: {text!r}")
    if parts.username is not None or parts.password is not None:
        raise ToolError("URLs with a user name or password are not fetched")
    host = normalize_host(parts.hostname or "")
    if not host:
        raise ToolError(f"The URL has no host: {text!r}")
    return WebTarget(text, parts._replace(scheme=scheme), host, port or (443 if scheme == "https" else 80))


def normalize_host(host: str) -> str:
    """A host as rules and checks compare it: lower case, IDNA-encoded, no trailing dot, IPv6
    without brackets; ``""`` when it cannot be encoded."""
    host = host.strip().strip("[]").rstrip(".").lower()
    if not host:
        return ""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return ""


def blocked_range(address: IpAddress) -> str | None:
    """Why ``address`` is not one the open internet answers on (``None``: it is global)."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour
        if inner is None and address in _NAT64:
            inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if inner is not None:
            return blocked_range(inner)
        if address in _NAT64_LOCAL:
            return "a private address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (cloud metadata endpoints live here)"
    if address.is_private:
        return "a private address"
    if address.is_multicast or address.is_reserved or address.is_unspecified or not address.is_global:
        return "an address that is not on the public internet"
    return None


async def resolve(host: str, port: int) -> list[IpAddress]:
    """The addresses ``host`` resolves to (an address literal is itself), in the resolver's order."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ToolError(f"Cannot resolve {host}: {exc}") from None
    found: list[IpAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    if not found:
        raise ToolError(f"Cannot resolve {host}: no address")
    return found


async def checked_address(target: WebTarget, named_exactly: Callable[[str], bool]) -> IpAddress:
    """The address to connect to for ``target``: every address its host resolves to is checked
    (a mix of public and private answers is refused as a whole), unless ``named_exactly(host)``
    says an allow rule names this host exactly."""
    addresses = await resolve(target.host, target.port)
    if named_exactly(target.host):
        return addresses[0]
    for address in addresses:
        why = blocked_range(address)
        if why is not None:
            raise ToolError(
                f"Refused: {target.host} resolves to {address}, {why}. web_fetch reaches only the public "
                f"internet unless the user's allow rule names this host exactly (web_fetch(domain:{target.host}))."
            )
    return addresses[0]
