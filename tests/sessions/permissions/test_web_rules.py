"""web_fetch under the permission policy: judged by its URL's host with Claude Code's rule syntax
(``web_fetch(domain:host)``, ``WebFetch(domain:host)``); in ``auto`` a fetch asks unless a rule
allows the domain; private hosts need a rule naming them exactly (the tool checks that, with
the policy's rules). Then the same through a real session: the gate, the tool and a real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.sessions.permissions import ApprovalAnswer
from baton.sessions.permissions.paths import Workspace
from baton.sessions.permissions.policy import ApprovalMode, Policy
from baton.sessions.permissions.rules import RuleSet, parse_rule
from tests.sessions.permissions.helpers import run_call
from tests.tools.web_server import web_server


def policy(tmp_path: Path, mode: ApprovalMode = "auto", *, allow: tuple[str, ...] = (), deny: tuple[str, ...] = (),
           ask: tuple[str, ...] = ()) -> Policy:
    return Policy(Workspace.for_dir(str(tmp_path)), RuleSet.parse(allow=allow, deny=deny, ask=ask), mode)


def decide(p: Policy, url: str) -> tuple[str, str | None]:
    decision = p.decide("web_fetch", {"url": url})
    return decision.action, decision.rule


def test_claude_code_names_parse_to_baton_tools() -> None:
    assert parse_rule("WebFetch(domain:example.com)").tool == "web_fetch"
    assert parse_rule("WebSearch").tool == "web_search"


@pytest.mark.parametrize("mode,expected", [("ask", "ask"), ("auto", "ask"), ("full", "allow")])
def test_without_a_rule_a_fetch_asks_except_in_full(tmp_path: Path, mode: ApprovalMode, expected: str) -> None:
    decision = policy(tmp_path, mode).decide("web_fetch", {"url": "https://docs.python.org/3/"})
    assert decision.action == expected
    assert decision.summary == decision.proposed_rule == "web_fetch(domain:docs.python.org)"


def test_domain_rules(tmp_path: Path) -> None:
    p = policy(tmp_path, allow=("WebFetch(domain:docs.python.org)", "web_fetch(domain:*.readthedocs.io)"))
    assert decide(p, "https://docs.python.org/3/library/") == ("allow", "WebFetch(domain:docs.python.org)")
    assert decide(p, "https://DOCS.python.org.:443/x")[0] == "allow"  # case, trailing dot and port do not matter
    assert decide(p, "https://pip.readthedocs.io/en/")[0] == "allow"
    assert decide(p, "https://readthedocs.io.evil.com/")[0] == "ask"
    assert decide(p, "https://evil-docs.python.org/")[0] == "ask"
    assert decide(p, "https://python.org/")[0] == "ask"
    assert decide(p, "https://docs.python.org@evil.com/")[0] == "ask"  # the host is evil.com


def test_deny_wins_and_bare_rules_cover_every_host(tmp_path: Path) -> None:
    p = policy(tmp_path, "full", allow=("web_fetch",), deny=("web_fetch(domain:evil.com)",))
    assert decide(p, "https://evil.com/")[0] == "deny"
    assert decide(p, "https://good.com/")[0] == "allow"
    assert decide(policy(tmp_path, "auto", ask=("web_fetch",), allow=("web_fetch",)), "https://a.com/")[0] == "ask"


def test_only_exact_rules_name_a_host(tmp_path: Path) -> None:
    rules = RuleSet.parse(allow=["web_fetch", "web_fetch(domain:*.corp.example)", "WebFetch(domain:intranet.corp)"])
    assert rules.names_host("web_fetch", "intranet.corp")
    assert not rules.names_host("web_fetch", "wiki.corp.example")
    assert not rules.names_host("web_fetch", "127.0.0.1")
    assert not RuleSet.parse(deny=["web_fetch(domain:127.0.0.1)"]).names_host("web_fetch", "127.0.0.1")


# ------------------------------------------------------------------------------ through a session


@pytest.fixture
def ws(tmp_path: Path, baton_home: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


async def test_auto_mode_asks_before_fetching(ws: Path) -> None:
    with web_server() as server:
        outcome = await run_call(ws, "web_fetch", {"url": f"{server.base}/readme.html"}, tools=["web_fetch"])
        assert outcome.is_error and "needs the user's approval" in outcome.result_text
        assert "web_fetch(domain:127.0.0.1)" in outcome.result_text
        assert server.hits["/readme.html"] == 0


async def test_a_rule_naming_the_host_fetches_it(ws: Path) -> None:
    with web_server() as server:
        outcome = await run_call(ws, "web_fetch", {"url": f"{server.base}/readme.html"}, tools=["web_fetch"],
                                 settings={"permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]}})
        assert not outcome.is_error and "# tinylib" in outcome.result_text
        assert outcome.approvals[0]["rule"] == "WebFetch(domain:127.0.0.1)"


async def test_a_yes_is_not_a_rule_naming_a_private_host(ws: Path) -> None:
    with web_server() as server:
        url = f"{server.base}/readme.html"
        once = await run_call(ws, "web_fetch", {"url": url}, tools=["web_fetch"],
                              answers=[ApprovalAnswer("allow_once")])
        assert once.is_error and "loopback address" in once.result_text and server.hits["/readme.html"] == 0
        always = await run_call(ws, "web_fetch", {"url": url}, tools=["web_fetch"],
                                answers=[ApprovalAnswer("allow_always")])
        assert always.asked[0].proposed_rule == "web_fetch(domain:127.0.0.1)"
        assert not always.is_error and "# tinylib" in always.result_text  # the saved rule names it exactly


async def test_a_broad_rule_does_not_open_private_addresses(ws: Path) -> None:
    with web_server() as server:
        outcome = await run_call(ws, "web_fetch", {"url": f"{server.base}/readme.html"}, tools=["web_fetch"],
                                 approval="full", settings={"permissions": {"allow": ["web_fetch"]}})
        assert outcome.is_error and "loopback address" in outcome.result_text and server.hits["/readme.html"] == 0
