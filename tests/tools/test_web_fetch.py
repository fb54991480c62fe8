"""web_fetch against a real HTTP server on 127.0.0.1 (tests/tools/web_server.py), under the real
permission policy. 127.0.0.1 is a loopback address, so every fetch here is allowed by a rule naming
that host exactly — which is also the path a user takes to reach a service on their machine."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from baton.agent.tool import AgentToolResult, ToolError
from baton.providers.json_types import JsonObject
from baton.providers.messages import ImageContent, TextContent
from baton.sessions.permissions.paths import Workspace
from baton.sessions.permissions.policy import Policy
from baton.sessions.permissions.rules import RuleSet
from baton.sessions.permissions.web_access import PolicyWebAccess
from baton.tools import tools_by_name
from baton.tools.web_address import blocked_range
from baton.tools.web_fetch import CACHE_SECONDS, MAX_CHARS, MAX_DOWNLOAD, WebFetchTool
from tests.tools.web_server import WebServer, web_server

EXACT = "web_fetch(domain:127.0.0.1)"


@pytest.fixture
def server() -> Iterator[WebServer]:
    with web_server() as running:
        yield running


def make_tool(tmp_path: Path, *allow: str, images: bool = True, mode: str = "auto") -> WebFetchTool:
    """The tool as a session builds it: made by name, its access set from a real policy."""
    policy = Policy(Workspace.for_dir(str(tmp_path)), RuleSet.parse(allow=allow), mode)  # type: ignore[arg-type]
    (tool,) = tools_by_name(["web_fetch"], str(tmp_path), images=images)
    assert isinstance(tool, WebFetchTool)
    tool.access = PolicyWebAccess(policy, "web_fetch", "url")
    return tool


async def fetch(tool: WebFetchTool, url: str) -> AgentToolResult[JsonObject]:
    return await tool.execute("call-1", {"url": url})


def text_of(result: AgentToolResult[JsonObject]) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


async def refusal(tool: WebFetchTool, url: str) -> str:
    with pytest.raises(ToolError) as caught:
        await fetch(tool, url)
    return str(caught.value)


# ------------------------------------------------------------------------------ pages


async def test_documentation_page_becomes_markdown_marked_untrusted(
    server: WebServer, tmp_path: Path, baton_home: Path
) -> None:
    result = await fetch(make_tool(tmp_path, EXACT), f"{server.base}/idle.html")
    text = text_of(result)
    assert text.startswith(f"[baton: untrusted content fetched from {server.base}/idle.html (HTTP 200, text/html)")
    assert "not instructions" in text
    assert "# IDLE" in text and "## Menus" in text and "Editing and Navigation" in text
    assert "<div" not in text and "<script" not in text
    assert f"]({server.base}/tkinter.html#module-tkinter" in text  # relative links made absolute
    assert result.details is not None and result.details["status"] == 200 and not result.details["truncated"]


async def test_readme_page_drops_chrome_and_javascript_links_keeps_code_language(
    server: WebServer, tmp_path: Path, baton_home: Path
) -> None:
    text = text_of(await fetch(make_tool(tmp_path, EXACT), f"{server.base}/readme.html"))
    assert "# tinylib" in text
    assert f"[usage]({server.base}/docs/usage.html)" in text
    assert "```python\nimport tinylib" in text
    assert "Pricing" not in text and "(c) tinylib" not in text  # navigation and footer dropped
    assert "javascript:" not in text and "data:image/svg" not in text
    # The page cannot close the fence around it: the boundary is random per call.
    boundary = text.split("<<<", 1)[1].split("\n", 1)[0]
    assert text.count(boundary) == 2 and "Ignore all previous instructions" in text.split(boundary)[1]


async def test_json_and_text_come_as_they_are(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    tool = make_tool(tmp_path, EXACT)
    assert '{"name": "tinylib",\n "versions": [1, 2, 3]}' in text_of(await fetch(tool, f"{server.base}/data.json"))
    assert "plain text: café" in text_of(await fetch(tool, f"{server.base}/notes.txt"))  # its declared charset


async def test_image_reaches_a_model_that_takes_images_only(
    server: WebServer, tmp_path: Path, baton_home: Path
) -> None:
    seen = await fetch(make_tool(tmp_path, EXACT), f"{server.base}/logo.png")
    assert any(isinstance(block, ImageContent) and block.mime_type == "image/png" for block in seen.content)
    blind = await fetch(make_tool(tmp_path, EXACT, images=False), f"{server.base}/logo.png")
    assert not any(isinstance(block, ImageContent) for block in blind.content)
    assert "does not take images" in text_of(blind)


# ------------------------------------------------------------------------------ refused or bounded


async def test_pdf_wrong_content_type_and_binary_are_refused(
    server: WebServer, tmp_path: Path, baton_home: Path
) -> None:
    tool = make_tool(tmp_path, EXACT)
    assert "is a PDF document" in await refusal(tool, f"{server.base}/paper.pdf")
    assert "not such an image" in await refusal(tool, f"{server.base}/fake.png")
    assert "application/octet-stream" in await refusal(tool, f"{server.base}/blob")
    assert "HTTP 404" in await refusal(tool, f"{server.base}/missing")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x", "http://user:pw@example.com/",
                                 "javascript:alert(1)", "not a url"])
async def test_only_plain_http_and_https_urls(url: str, tmp_path: Path) -> None:
    assert "URL" in await refusal(make_tool(tmp_path, "web_fetch"), url)


async def test_loopback_needs_a_rule_naming_it_exactly(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    for rules in ((), ("web_fetch",), ("WebFetch(domain:*.0.0.1)",), ("web_fetch(domain:localhost)",)):
        message = await refusal(make_tool(tmp_path, *rules, mode="full"), f"{server.base}/readme.html")
        assert "127.0.0.1 resolves to 127.0.0.1, a loopback address" in message
    assert server.hits["/readme.html"] == 0  # refused before any connection
    # Claude Code's spelling of the exact rule works too.
    assert "# tinylib" in text_of(await fetch(make_tool(tmp_path, "WebFetch(domain:127.0.0.1)"),
                                              f"{server.base}/readme.html"))


async def test_localhost_by_name_is_loopback_too(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    message = await refusal(make_tool(tmp_path, EXACT, "web_fetch"), f"http://localhost:{server.port}/readme.html")
    assert "localhost resolves to" in message and "loopback" in message


async def test_redirect_to_metadata_endpoint_is_refused(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    # Even with every public host allowed (a bare rule), the hop's address is checked.
    message = await refusal(make_tool(tmp_path, EXACT, "web_fetch"), f"{server.base}/to-metadata")
    assert "169.254.169.254 resolves to 169.254.169.254, a link-local address" in message
    message = await refusal(make_tool(tmp_path, EXACT, "web_fetch"), f"{server.base}/to-private")
    assert "10.1.2.3" in message and "a private address" in message


async def test_redirect_to_a_host_no_rule_allows_is_reported_not_followed(
    server: WebServer, tmp_path: Path, baton_home: Path
) -> None:
    message = await refusal(make_tool(tmp_path, EXACT), f"{server.base}/to-other-host")
    assert "Not followed" in message and "https://other.example/page" in message and "needs its own approval" in message
    denied = await refusal(make_tool(tmp_path, EXACT, "web_fetch"), f"{server.base}/to-file")
    assert "file:///etc/passwd" in denied and "Only http and https" in denied


async def test_redirect_on_the_same_host_is_followed(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    result = await fetch(make_tool(tmp_path, EXACT), f"{server.base}/to-readme")
    assert "# tinylib" in text_of(result)
    assert result.details is not None and result.details["finalUrl"] == f"{server.base}/readme.html"


async def test_more_than_ten_redirects_are_refused(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    assert "more than 10 redirects" in await refusal(make_tool(tmp_path, EXACT), f"{server.base}/loop/0")
    assert server.hits["/loop/10"] == 1 and server.hits["/loop/11"] == 0


async def test_slow_drip_ends_at_the_time_limit(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    tool = make_tool(tmp_path, EXACT)
    tool.timeout = 1.0  # the default is 30 s; the drip would last a minute
    assert "Timed out" in await refusal(tool, f"{server.base}/drip")


async def test_fifty_megabyte_body_is_cut_at_five_and_the_text_at_100k(
    server: WebServer, tmp_path: Path, baton_home: Path
) -> None:
    result = await fetch(make_tool(tmp_path, EXACT), f"{server.base}/huge")
    details = result.details
    assert details is not None
    assert details["bytes"] == MAX_DOWNLOAD and details["downloadCut"] and details["truncated"]
    text = text_of(result)
    assert len(text) < MAX_CHARS + 2000 and "the download stopped at 5 MB" in text
    saved = Path(str(details["fullOutputPath"]))
    assert saved.stat().st_size == MAX_DOWNLOAD and saved.is_relative_to(baton_home)
    assert f"the full text is in {saved}" in text


async def test_compressed_bomb_is_cut_after_decompression(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    result = await fetch(make_tool(tmp_path, EXACT), f"{server.base}/bomb")
    assert result.details is not None and result.details["bytes"] == MAX_DOWNLOAD and result.details["downloadCut"]


async def test_abort_stops_a_fetch(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    signal = asyncio.Event()
    asyncio.get_running_loop().call_later(0.5, signal.set)
    with pytest.raises(ToolError, match="aborted"):
        await make_tool(tmp_path, EXACT).execute("call-1", {"url": f"{server.base}/drip"}, signal)


async def test_long_text_keeps_its_whole_in_the_temp_folder(
    server: WebServer, tmp_path: Path, baton_home: Path
) -> None:
    result = await fetch(make_tool(tmp_path, EXACT), f"{server.base}/long.txt")
    assert result.details is not None and result.details["chars"] == 13 * 20_000
    assert Path(str(result.details["fullOutputPath"])).read_text() == "line of text\n" * 20_000


async def test_cached_for_fifteen_minutes(server: WebServer, tmp_path: Path, baton_home: Path) -> None:
    tool = make_tool(tmp_path, EXACT)
    now = [1000.0]
    tool.clock = lambda: now[0]
    first = await fetch(tool, f"{server.base}/data.json")
    again = await fetch(tool, f"{server.base}/data.json")
    assert server.hits["/data.json"] == 1 and again.details is not None and again.details["cached"]
    assert text_of(again) == text_of(first)
    now[0] += CACHE_SECONDS + 1
    await fetch(tool, f"{server.base}/data.json")
    assert server.hits["/data.json"] == 2


async def test_connects_to_the_address_it_checked(
    server: WebServer, tmp_path: Path, baton_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resolver is asked once per hop and the connection goes to its answer: a name the
    system cannot resolve (``rebind.test``) is reached through the checked address, and sent with
    its own Host header. A second answer (a rebinding DNS server's) is never asked for."""
    answers = [[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", server.port))]]
    asked: list[str] = []

    async def getaddrinfo(self: asyncio.AbstractEventLoop, host: str, port: int, **kwargs: object) -> object:
        asked.append(host)
        return answers.pop(0) if answers else [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("8.8.8.8", port))]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)
    tool = make_tool(tmp_path, "web_fetch(domain:rebind.test)")
    result = await fetch(tool, f"http://rebind.test:{server.port}/readme.html")
    assert "# tinylib" in text_of(result)
    assert asked == ["rebind.test"] and server.hosts[-1] == f"rebind.test:{server.port}"


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.1", "::1", "fd00::1", "fd00:ec2::254", "fe80::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
    "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "::",
])
def test_blocked_ranges(address: str) -> None:
    assert blocked_range(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "64:ff9b::808:808"])
def test_public_addresses_pass(address: str) -> None:
    assert blocked_range(ipaddress.ip_address(address)) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
@example(int(ipaddress.IPv4Address("224.0.0.1")))
@example(int(ipaddress.IPv4Address("169.254.169.254")))
@example(int(ipaddress.IPv4Address("8.8.8.8")))
def test_an_ipv4_address_gets_the_same_verdict_in_every_ipv6_disguise(value: int) -> None:
    v4 = ipaddress.IPv4Address(value)
    verdict = blocked_range(v4) is None
    assert verdict == (v4.is_global and not v4.is_multicast)  # only the public internet's hosts pass
    for disguised in (f"::ffff:{v4}", f"64:ff9b::{v4}", f"2002:{value >> 16:x}:{value & 0xFFFF:x}::1"):
        assert (blocked_range(ipaddress.ip_address(disguised)) is None) == verdict, disguised
