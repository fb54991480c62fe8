"""Command-line arguments of ``baton`` (argparse only: importing this module is cheap)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from baton import __version__

VERSION = __version__

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_USAGE = 2

THINKING_CHOICES = ("off", "minimal", "low", "medium", "high", "xhigh")

_EPILOG = """\
examples:
  baton                                  interactive session (offline demo model without a key)
  baton "explain this repo"              interactive, starting with a prompt
  baton -p "list files"                  print the final answer and exit
  baton -p --mode json "fix the tests"   one JSON event per line on stdout
  git diff | baton -p "review this"      piped stdin joins the prompt
  baton @src/app.py "what does this do?" attach files (text or images)
  baton -c                               continue the most recent session here
  baton --mode rpc                       JSON commands on stdin, events on stdout (pi's RPC)
  baton --mode acp                       serve an editor over the Agent Client Protocol
  baton --model anthropic/claude-sonnet-4-5:high
  baton --list-models gpt
  baton --update-models                  refresh the model catalog from models.dev
  baton --checkpoints                    the latest session's checkpoints as JSON

environment:
  BATON_HOME            config and sessions (default ~/.baton)
  ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, ...
"""


@dataclass
class CliArgs:
    """Parsed command line."""

    print_mode: bool = False
    mode: str = "text"
    model: str | None = None
    thinking: str | None = None
    provider: str | None = None
    api_key: str | None = None
    api_key_file: str | None = None
    continue_session: bool = False
    resume: bool = False
    session: str | None = None
    no_session: bool = False
    session_dir: str | None = None
    tools: str | None = None
    no_tools: bool = False
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    list_models: str | None = None
    list_models_requested: bool = False
    update_models: bool = False
    export: list[str] = field(default_factory=list)
    checkpoints: str | None = None
    """``--checkpoints [SESSION]`` ("" for the most recent session; None when not given)."""
    no_context_files: bool = False
    approval: str | None = None
    plan: bool = False
    """``--plan``: start in plan mode (print mode prints the plan the model proposes)."""
    mcp_config: list[str] = field(default_factory=list)
    no_mcp: bool = False
    list_mcp: bool = False
    fallback: list[str] = field(default_factory=list)
    max_cost: float | None = None
    trust_project: bool = False
    inline: bool = False
    files: list[str] = field(default_factory=list)
    prompt_words: list[str] = field(default_factory=list)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"baton: {message}\nTry 'baton --help'.\n")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser for ``baton``."""
    p = _Parser(
        prog="baton",
        description="A terminal coding agent. Switch models mid-conversation; the transcript follows.",
        usage="baton [options] [@files...] [prompt...]",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-p", "--print", dest="print_mode", action="store_true",
                   help="non-interactive: run the prompt, print the final answer, exit")
    p.add_argument("--mode", choices=("text", "json", "rpc", "acp"), default="text",
                   help="text (default) or json: print-mode output; rpc: pi's RPC protocol on "
                        "stdin/stdout; acp: Agent Client Protocol for editors")
    p.add_argument("--model", metavar="PROVIDER/ID[:LEVEL]",
                   help="model to use, optionally with a thinking level (e.g. openai/gpt-5.1:high)")
    p.add_argument("--thinking", choices=THINKING_CHOICES, help="thinking level")
    p.add_argument("--provider", help="provider of --model when it is given without one")
    p.add_argument("--api-key", metavar="KEY",
                   help="API key for this run (never saved; visible to other users in the process "
                        "list: prefer --api-key-file, or '--api-key -' to read it from stdin)")
    p.add_argument("--api-key-file", metavar="PATH", help="read the API key for this run from PATH")
    p.add_argument("-c", "--continue", dest="continue_session", action="store_true",
                   help="continue the most recent session in this directory")
    p.add_argument("-r", "--resume", action="store_true", help="pick a session to resume")
    p.add_argument("--session", metavar="PATH|ID", help="use a session file (path or id prefix)")
    p.add_argument("--no-session", action="store_true", help="keep nothing on disk")
    p.add_argument("--session-dir", metavar="DIR", help="where session files live")
    p.add_argument("--tools", metavar="LIST",
                   help="comma-separated tools (read,bash,edit,write,grep,find,ls,web_fetch,web_search)")
    p.add_argument("--no-tools", action="store_true", help="no tools at all")
    p.add_argument("--system-prompt", metavar="TEXT", help="replace the system prompt")
    p.add_argument("--append-system-prompt", metavar="TEXT", help="append to the system prompt")
    p.add_argument("--list-models", nargs="?", const="", metavar="SEARCH",
                   help="list available models (optionally filtered) and exit")
    p.add_argument("--update-models", action="store_true",
                   help="download current model data (models.dev) into the catalog, then exit")
    p.add_argument("--export", nargs="+", metavar=("SESSION", "OUT"),
                   help="export a session file to HTML (or .md) and exit")
    p.add_argument("--checkpoints", nargs="?", const="", metavar="SESSION",
                   help="print a session's checkpoints (for /rewind) as JSON and exit")
    p.add_argument("--no-context-files", action="store_true",
                   help="do not load AGENTS.md / CLAUDE.md context files")
    p.add_argument("--approval", choices=("plan", "ask", "auto", "full"),
                   help="what runs unasked: plan (read-only, ends with a plan), ask (only reads), auto (sandboxed "
                        "bash, edits in the workspace; default), full (everything)")
    p.add_argument("--plan", action="store_true",
                   help="start in plan mode (--approval plan): read-only tools, the model proposes a plan; "
                        "with -p the plan is printed")
    p.add_argument("--mcp-config", action="append", metavar="FILE",
                   help="MCP servers from FILE ({\"mcpServers\": ...}), after ~/.baton/mcp.json and .mcp.json")
    p.add_argument("--no-mcp", action="store_true", help="start no MCP servers")
    p.add_argument("--fallback", action="append", metavar="MODEL",
                   help="a model to continue on when the current one keeps failing (overloaded, 5xx, rate "
                        "limited, connection lost); repeat for more, in order (replaces fallbackModels)")
    p.add_argument("--max-cost", type=_positive_usd, metavar="USD",
                   help="stop before a request once this run has spent USD on the session (catalog prices)")
    p.add_argument("--list-mcp", action="store_true", help="list the MCP servers and their tools, then exit")
    p.add_argument("--trust-project", action="store_true",
                   help="run this project's .mcp.json servers and hooks without asking (this run only)")
    p.add_argument("--inline", action="store_true",
                   help="interactive: render in the terminal's normal screen (no alternate screen)")
    p.add_argument("--version", action="version", version=f"baton {VERSION}")
    p.add_argument("words", nargs="*", metavar="[@files...] [prompt...]", help=argparse.SUPPRESS)
    return p


def parse_args(argv: list[str]) -> CliArgs:
    """Parse ``argv``; usage errors exit with code 2 and a one-line message."""
    ns = build_parser().parse_intermixed_args(argv)
    args = CliArgs(
        print_mode=ns.print_mode,
        mode=ns.mode,
        model=ns.model,
        thinking=ns.thinking,
        provider=ns.provider,
        api_key=ns.api_key,
        api_key_file=ns.api_key_file,
        continue_session=ns.continue_session,
        resume=ns.resume,
        session=ns.session,
        no_session=ns.no_session,
        session_dir=ns.session_dir,
        tools=ns.tools,
        no_tools=ns.no_tools,
        system_prompt=ns.system_prompt,
        append_system_prompt=ns.append_system_prompt,
        list_models=ns.list_models,
        list_models_requested=ns.list_models is not None,
        update_models=ns.update_models,
        export=ns.export or [],
        checkpoints=ns.checkpoints,
        no_context_files=ns.no_context_files,
        approval="plan" if ns.plan else ns.approval,
        plan=ns.plan,
        mcp_config=ns.mcp_config or [],
        no_mcp=ns.no_mcp,
        list_mcp=ns.list_mcp,
        fallback=ns.fallback or [],
        max_cost=ns.max_cost,
        trust_project=ns.trust_project,
        inline=ns.inline,
    )
    for word in ns.words:
        if word.startswith("@") and len(word) > 1:
            args.files.append(word[1:])
        else:
            args.prompt_words.append(word)
    if args.mode == "json":
        args.print_mode = True
    if len(args.export) > 2:
        raise SystemExit(_usage("--export takes SESSION and an optional OUT file"))
    exclusive = [args.continue_session, args.resume, args.session is not None, args.no_session]
    if sum(exclusive) > 1:
        raise SystemExit(_usage("use only one of --continue, --resume, --session, --no-session"))
    return args


def _usage(message: str) -> int:
    import sys

    print(f"baton: {message}", file=sys.stderr)
    return EXIT_USAGE


def _positive_usd(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an amount of US dollars: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value
