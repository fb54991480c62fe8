"""What a command file brings in before its prompt is sent: the output of its ``!`cmd` `` lines
and the files its ``@path`` references name (Claude Code's command files).

A command file is data, and a project's may come from anyone, so:

- ``!`cmd` `` runs only from the user's own command files, or from a project's when the user
  trusted the project with exactly this file's text (:mod:`.trust` keeps its digest); and only a
  command an allow rule matches — one of the file's ``allowed-tools`` (``Bash(git status:*)``) or
  the user's own rules — and no deny or ask rule. It runs like the bash tool: in the sandbox (or,
  with ``approval: full``, as bash runs there), in the session's environment, redacted.
- ``@path`` attaches a file only when the permission policy lets ``read`` open it unasked (inside
  the workspace, not hidden, no deny rule); the file is opened where the policy judged it.

What is not run or not attached is said in the prompt in place of its output, and as a notice.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import TYPE_CHECKING

from baton.agent.redaction import redact_result
from baton.agent.tool import AgentToolResult, ToolError
from baton.providers.messages import TextContent
from baton.sessions.permissions.rules import BASH_RULE, RuleSet
from baton.sessions.permissions.shell_parts import split_command
from baton.sessions.prompt_templates import PromptTemplate, bang_commands
from baton.sessions.trust import COMMAND_PREFIX, body_digest

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from baton.sessions.coding_session import CodingSession
    from baton.tools.shell import StartedCommand

MAX_REFERENCES = 20
_REFERENCE = re.compile(r"(?<![\w`@/])@((?:~/|\./|\.\./|/)?[\w.-][\w./~-]*)")
_ids = itertools.count(1)


async def with_command_context(session: CodingSession, template: PromptTemplate, text: str) -> str:
    """``text`` (``template`` expanded) with its ``!`cmd` `` lines replaced by their output and the
    files of its ``@path`` references appended."""
    commands = bang_commands(template.body)
    if commands:
        refusal = _refusal(session, template)
        for command in dict.fromkeys(commands):
            if f"!`{command}`" not in text:
                continue  # an argument was put into it: what would run is not what the file says
            why = refusal or _not_allowed(session, template, command)
            output = f"[not run: {why}]" if why else await _run(session, command)
            if why:
                session.events.notice("commands", "warning", f"/{template.name}: !`{command}` not run: {why}")
            text = text.replace(f"!`{command}`", output)
    references = list(dict.fromkeys(m.group(1).rstrip(".") for m in _REFERENCE.finditer(template.body)))
    attached = [await _attach(session, template, path) for path in references[:MAX_REFERENCES]]
    return "\n\n".join([text, *[a for a in attached if a]])


def _refusal(session: CodingSession, template: PromptTemplate) -> str | None:
    """Why no command of ``template`` may run (``None``: they may, if allowed one by one)."""
    files = session.prompt_library.files
    if files is not None and files.is_users(template.path):
        return None  # the user's own command file
    trust = session.settings.project_trust
    if not session.extensions.project_trusted or trust is None:
        return "the project is not trusted (trust it to run its command files' commands)"
    if trust.parts.get(COMMAND_PREFIX + template.name) != body_digest(template.body):
        return "this command file changed since you trusted the project (baton asks again at the next start)"
    return None


def _not_allowed(session: CodingSession, template: PromptTemplate, command: str) -> str | None:
    """Why ``command`` may not run (``None``: an allow rule lets it, nothing forbids it)."""
    policy = session.permissions.policy
    decision = policy.decide("bash", {"command": command})
    if decision.action == "deny" or (decision.action == "ask" and decision.source == "rule"):
        return decision.reason
    if decision.action == "allow" and decision.source == "rule":
        return None
    own = RuleSet.parse(allow=template.allowed_tools)
    matcher = own.matcher("allow", BASH_RULE, str(session.cwd))
    if matcher.match_command(command, split_command(command), every=True):
        return None
    return "no allow rule matches it (name it in the file's allowed-tools, e.g. Bash(git status:*))"


async def _run(session: CodingSession, command: str) -> str:
    from baton.tools.bash import BashTool

    permissions = session.permissions
    if permissions.sandbox is None and permissions.policy.mode != "full":
        return "[not run: no sandbox here, and commands of command files run only in it]"
    tool = BashTool(str(session.cwd), environment=session.tool_env, slots=session.process_slots)
    sandbox = permissions.sandbox
    if sandbox is not None and permissions.policy.mode != "full":
        def in_sandbox(argv: list[str], call_id: str, cwd: str, env: dict[str, str], fd: int, /, *,
                       background: bool = False) -> Awaitable[StartedCommand]:
            return sandbox.start(argv, cwd, env, fd)

        tool.command_launcher = in_sandbox
    try:
        result = await tool.execute(f"command-file-{next(_ids)}", {"command": command}, session.abort_signal,
                                    lambda partial: None)
    except ToolError as exc:
        result = AgentToolResult.text(str(exc), is_error=True)
    result = redact_result(result)
    return "".join(b.text for b in result.content if isinstance(b, TextContent)).strip()


async def _attach(session: CodingSession, template: PromptTemplate, path: str) -> str | None:
    """The file ``path`` names, as read would give it, or why not (``None``: no such file)."""
    from baton.tools.read import ReadTool

    permissions = session.permissions
    decision = permissions.policy.decide("read", {"path": path})
    if decision.path is None:
        return None
    if decision.action != "allow":
        session.events.notice("commands", "warning", f"/{template.name}: @{path} not attached: {decision.reason}")
        return f"[@{path} not attached: {decision.reason}]"
    call_id = f"command-file-{next(_ids)}"
    if decision.path_argument is not None:
        permissions.pins.pin(call_id, decision.path_argument, decision.path)
    tool = ReadTool(str(session.cwd))
    tool.pins = permissions.pins
    try:
        result = await tool.execute(call_id, {"path": path}, asyncio.Event(), lambda partial: None)
    except ToolError as exc:
        return None if "not found" in str(exc).lower() or "no such file" in str(exc).lower() else \
            f"[@{path} not attached: {exc}]"
    text = "".join(b.text for b in redact_result(result).content if isinstance(b, TextContent))
    return f"Contents of @{path}:\n```\n{text}\n```"
