"""Slash commands: parsing, the registry (for completion and ``/hotkeys``) and their actions.

A line is a command when its first word is ``/name`` (letters, digits, ``-``, ``_``); anything
else, ``/etc/hosts is wrong`` included, is a prompt. Actions run in a worker so they may await
the session and modal pickers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content

from baton.providers.paths import baton_home_display
from baton.tui.app.command_registry import COMMANDS as COMMANDS
from baton.tui.app.command_registry import SlashCommand as SlashCommand
from baton.tui.app.command_registry import command
from baton.tui.app.files import fuzzy_score
from baton.tui.app.render import clean, fit_cells, format_cost, format_tokens, one_line, short_path
from baton.tui.app.themes import THEME_ALIASES
from baton.tui.app.widgets.pickers import ConfirmScreen, ListPicker, PickerItem, picker_label, picker_row_width

if TYPE_CHECKING:
    from baton.providers.models import Model
    from baton.sessions.tree import TreeNode
    from baton.tui.app.baton_app import BatonApp

_COMMAND = re.compile(r"^/([A-Za-z][\w-]*)(?:\s+(.*))?$", re.DOTALL)

@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """``/name args`` split."""

    name: str
    args: str


def parse_command(text: str) -> ParsedCommand | None:
    """The command in ``text``, or None when ``text`` is a prompt."""
    match = _COMMAND.match(text.strip())
    if not match:
        return None
    return ParsedCommand(match.group(1).lower(), (match.group(2) or "").strip())


def command_list() -> list[tuple[str, str]]:
    """``(name, description)`` of every command, for completion."""
    return [(c.name, c.description) for c in COMMANDS.values()]


async def dispatch(app: BatonApp, parsed: ParsedCommand) -> None:
    """Run a parsed command (unknown ones are reported, not sent to the model)."""
    spec = COMMANDS.get(parsed.name)
    if spec is None and app.is_prompt_command(parsed.name):
        app.send_prompt_command(f"/{parsed.name} {parsed.args}".rstrip())
        return
    if spec is None:
        app.notice(f"Unknown command: /{clean(parsed.name)} — type / to see the commands, or /hotkeys.",
                   "error")
        return
    if not spec.while_running and app.is_busy:
        app.notice(f"/{spec.name} is not available while the agent is working (Esc aborts).", "warning")
        return
    try:
        await spec.action(app, parsed.args)
    except Exception as exc:  # a failed command must never take the app down
        app.notice(f"/{spec.name} failed: {one_line(str(exc) or type(exc).__name__, 300)}", "error")


# ---------------------------------------------------------------------------------------------
# Models and thinking


def _price(model: Model) -> str:
    cost = model.cost
    if not cost.input and not cost.output:
        return "—"
    return f"${cost.input:.3g}/${cost.output:.3g}"


def model_items(
    models: Sequence[Model], current: Model | None, missing: dict[str, str] | None = None, *, width: int = 110
) -> list[PickerItem[Model]]:
    """Picker rows for ``models`` in aligned columns fitted to ``width`` cells: id, name, release
    month, context, price ($/Mtok in/out), capabilities and key status; the current one marked,
    those without a key (``missing``: ref → variable to set) dimmed. The name column goes first
    when space is short."""
    missing = missing or {}
    price_width = max((len(_price(m)) for m in models), default=1)
    key_width = 6 if missing else 0  # "no key"; the detail line names the variable
    longest_ref = min(max((len(m.ref) for m in models), default=10), 44)
    # On a narrow screen the capabilities, then the release month, the price and the context
    # size give way, so that ids stay whole and rows do not wrap.
    optional = {"caps": 2 + 9, "date": 2 + 7, "price": 2 + price_width, "ctx": 2 + 9}
    while optional and width - 2 - (2 + key_width if key_width else 0) - sum(optional.values()) < min(longest_ref, 30):
        del optional[next(iter(optional))]
    fixed = 2 + sum(optional.values()) + (2 + key_width if key_width else 0)
    room = max(width - fixed, 12)
    ref_width = min(longest_ref, room)  # the id matters most
    name_width = min(max((len(m.name) for m in models), default=4), room - ref_width - 2, 28)
    items = []
    for model in models:
        is_current = current is not None and model.ref == current.ref and model.api == current.api
        variable = missing.get(model.ref)
        caps = " ".join(c for c, on in (("think", model.reasoning), ("img", "image" in model.input)) if on)
        parts: list[tuple[str, str] | str] = [
            ("● " if is_current else "  ", "$text-accent"),
            (fit_cells(model.ref, ref_width), "$text-muted" if variable else "bold"),
        ]
        if name_width >= 6:
            parts += ["  ", (fit_cells(model.name, name_width), "$text-muted")]
        if "date" in optional:
            parts += ["  ", (f"{(model.release_date or '')[:7]:<7}", "$text-muted")]
        if "ctx" in optional:
            parts += ["  ", (f"{format_tokens(model.context_window):>5} ctx", "$text-muted")]
        if "price" in optional:
            parts += ["  ", (f"{_price(model):>{price_width}}", "$text-muted")]
        if "caps" in optional:
            parts += ["  ", (f"{caps:<9}", "$text-muted")]
        if variable:
            parts += ["  ", ("no key", "$text-warning")]
        items.append(PickerItem(picker_label(*parts), model, f"{model.ref} {model.name}"))
    return items


def match_models(models: Sequence[Model], pattern: str) -> list[Model]:
    """Models whose ``provider/id`` or name match ``pattern`` (an exact match wins outright)."""
    pattern = pattern.strip()
    exact = [m for m in models if pattern in (m.ref, m.id)]
    if exact:
        return exact[:1]
    scored = []
    for index, model in enumerate(models):
        score = fuzzy_score(pattern, f"{model.ref} {model.name}")
        if score is not None:
            scored.append((score, index, model))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [m for _, _, m in scored]


def handoff_summary(app: BatonApp, model: Model) -> str | None:
    """What ``model`` will not receive as is from the current history, or None when nothing."""
    try:
        preview = app.session.models.handoff_preview(model)
    except Exception:  # a preview is advice; never block a switch on it
        return None
    if preview.is_empty:
        return None
    return str(preview.summary())


def model_facts(model: Model) -> str:
    """``Released 2026-07-24 · knowledge to 2026-05 · `` (what the catalog knows), or ``""``."""
    facts = []
    if model.release_date:
        facts.append(f"Released {model.release_date}")
    if model.knowledge:
        facts.append(f"knowledge to {model.knowledge}")
    return " · ".join(facts) + " · " if facts else ""


def _preview_detail(app: BatonApp, missing: dict[str, str] | None = None) -> Callable[[Model], Content | None]:
    def detail(model: Model) -> Content | None:
        facts = (clean(model_facts(model)), "$text-muted")
        if missing and model.ref in missing:
            return Content.assemble(facts, (f"No API key: set {missing[model.ref]} to use this model.",
                                            "$text-warning"))
        current = app.session.model
        if model.ref == current.ref and model.api == current.api:
            return Content.assemble(facts, ("(current model)", "$text-muted"))
        summary = handoff_summary(app, model)
        if summary is None:
            return Content.assemble(facts, ("Handoff: the whole conversation carries over unchanged.",
                                            "$text-success"))
        return Content.assemble(facts, ("Handoff: ", "bold"), clean(summary))

    return detail


def _missing_key_text(model: Model, variable: str) -> str:
    return (f"{model.ref} needs an API key: set {variable} (or apiKey in {baton_home_display()}/models.json) "
            "and restart baton.")


@command("model", "/model [pattern]", "Switch model (picker; shows what the new model will not receive)")
async def cmd_model(app: BatonApp, args: str) -> None:
    choices = list(app.session.models.choices())
    missing = {c.model.ref: c.missing_key for c in choices if c.missing_key}
    models = [c.model for c in choices]
    if not models:
        app.notice(f"No models are available: set an API key or add {baton_home_display()}/models.json.", "error")
        return
    current = app.session.model
    if args:
        matches = match_models(models, args)
        if not matches:
            app.notice(f"No model matches {one_line(args, 80)!r}.", "error")
            return
        usable = [m for m in matches if m.ref not in missing]
        if len(matches) == 1 or len(usable) == 1:
            target = (usable or matches)[0]
            if target.ref in missing:
                app.notice(_missing_key_text(target, missing[target.ref]), "error")
                return
            if target.ref == current.ref and target.api == current.api:
                app.notice(f"Already using {target.ref}.")
                return
            summary = handoff_summary(app, target)
            if summary is not None:
                confirmed = await app.push_screen_wait(ConfirmScreen(
                    f"Switch to {target.ref}?",
                    Content.assemble(("The new model will not receive the history as is: ", "$text-warning"),
                                     clean(summary)),
                ))
                if not confirmed:
                    app.notice("Model unchanged.")
                    return
            await app.switch_model(target, summary)
            return
        models = matches
    initial = next((i for i, m in enumerate(models) if m.ref == current.ref and m.api == current.api), 0)
    picked = await app.push_screen_wait(ListPicker(
        "Switch model", model_items(models, current, missing, width=picker_row_width(app.size.width)),
        initial=initial, detail=_preview_detail(app, missing),
        layout=lambda width: model_items(models, current, missing, width=width),
    ))
    if picked is None:
        return
    if picked.ref in missing:
        app.notice(_missing_key_text(picked, missing[picked.ref]), "error")
        return
    if picked.ref == current.ref and picked.api == current.api:
        app.notice(f"Already using {picked.ref}.")
        return
    await app.switch_model(picked, handoff_summary(app, picked))


@command("approval", "/approval [ask|auto|full]", "What runs without asking: ask, auto (sandboxed) or full")
async def cmd_approval(app: BatonApp, args: str) -> None:
    modes = ("ask", "auto", "full")
    mode = args.strip().lower()
    if not mode:
        current = app.session.permissions.mode
        items = [PickerItem(picker_label(("● " if m == current else "  ", "$text-accent"), (m, "bold")), m, m)
                 for m in modes]
        chosen = await app.push_screen_wait(ListPicker("Approval mode", items, initial=modes.index(current),
                                                       filterable=False))
        if chosen is None:
            return
        mode = str(chosen)
    if mode not in modes:
        app.notice(f"Unknown approval mode {one_line(mode, 40)!r}; use ask, auto or full.", "warning")
        return
    app.set_approval_mode(mode)


@command("thinking", "/thinking [level]", "Set the thinking level (off, minimal, low, medium, high, xhigh)")
async def cmd_thinking(app: BatonApp, args: str) -> None:
    from baton.providers.models import THINKING_LEVELS

    level = args.strip().lower()
    if not level:
        items = [PickerItem(picker_label(("● " if lv == app.session.thinking_level else "  ", "$text-accent"),
                                         (lv, "bold")), lv, lv) for lv in THINKING_LEVELS]
        picked = await app.push_screen_wait(ListPicker(
            "Thinking level", items, initial=THINKING_LEVELS.index(app.session.thinking_level)
            if app.session.thinking_level in THINKING_LEVELS else 0, filterable=False,
            hint="↑↓ move · Enter pick · Esc cancel"))
        if picked is None:
            return
        level = picked
    if level not in THINKING_LEVELS:
        app.notice(f"Unknown thinking level {one_line(level, 40)!r}; use one of: {', '.join(THINKING_LEVELS)}.",
                   "error")
        return
    app.set_thinking(level)


# ---------------------------------------------------------------------------------------------
# Session


@command("compact", "/compact [focus]", "Summarise the conversation so far to free context",
         while_running=False)
async def cmd_compact(app: BatonApp, args: str) -> None:
    await app.compact(args or None)


@command("new", "/new", "Start a new session", while_running=False)
async def cmd_new(app: BatonApp, args: str) -> None:
    await app.session.new_session()
    app.notice("New session started.", "success")


@command("resume", "/resume", "Resume a session (this directory; Tab: all projects; Ctrl+D deletes)",
         while_running=False)
async def cmd_resume(app: BatonApp, args: str) -> None:
    from baton.sessions.listing import list_all_sessions, list_sessions
    from baton.tui.app.widgets.session_picker import SessionPicker

    session_dir = getattr(app.session, "session_dir", None)
    picked = await app.push_screen_wait(SessionPicker(
        lambda: list_sessions(app.session.cwd, session_dir), list_all_sessions,
        current=app.session.session_file,
    ))
    if picked is None:
        return
    await app.session.switch_session(str(picked))
    app.notice(f"Resumed {short_path(picked)}.", "success")


@command("fork", "/fork", "Start a new session from an earlier message (it goes back to the editor)",
         while_running=False)
async def cmd_fork(app: BatonApp, args: str) -> None:
    points = list(app.session.fork_points())
    if not points:
        app.notice("Nothing to fork from yet.")
        return
    items = [PickerItem(picker_label(one_line(text, 100)), (entry_id, text), text)
             for entry_id, text in reversed(points)]
    picked = await app.push_screen_wait(ListPicker("Fork from a message", items))
    if picked is None:
        return
    entry_id, text = picked
    text = await app.session.fork(entry_id) or text
    app.editor.set_text(text)
    app.notice("Forked into a new session; the message is back in the editor.", "success")


def tree_items(nodes: Sequence[TreeNode], width: int) -> list[PickerItem[str]]:
    """``/tree`` rows for rows ``width`` cells wide: indentation, branch marker, kind, preview (cut to
    fit) and label."""
    items = []
    for node in nodes:
        marker = "◆ " if getattr(node, "is_leaf", False) else ("● " if node.on_current_branch else "○ ")
        label_text = getattr(node, "label", None)
        tag = f"  [{label_text}]" if label_text else ""
        room = max(width - 2 * node.depth - len(marker) - len(node.kind) - 1 - len(tag), 20)
        label = picker_label(("  " * node.depth, ""), (marker, "$text-accent"), (node.kind, "$text-muted"), " ",
                             one_line(node.preview, room), (tag, "$text-accent"))
        items.append(PickerItem(label, node.id, f"{node.kind} {node.preview}"))
    return items


@command("tree", "/tree", "Move to any point of the session tree", while_running=False)
async def cmd_tree(app: BatonApp, args: str) -> None:
    nodes = list(app.session.tree())
    if not nodes:
        app.notice("The session is empty.")
        return
    initial = next((i for i, node in enumerate(nodes) if getattr(node, "is_leaf", False)), 0)
    items = tree_items(nodes, picker_row_width(app.size.width))
    picked = await app.push_screen_wait(ListPicker(
        "Session tree", items, initial=initial, layout=lambda width: tree_items(nodes, width)))
    if picked is None:
        return
    text = app.session.navigate(picked)
    if text:
        app.editor.set_text(text)
    app.notice("Moved to the selected point of the tree" + ("; the message is back in the editor." if text else "."),
               "success")


@command("session", "/session", "Show the session file, id, message counts, tokens and cost")
async def cmd_session(app: BatonApp, args: str) -> None:
    session = app.session
    stats = session.stats()
    file = session.session_file
    lines = [
        ("file", short_path(file) if file else "(not saved: --no-session)"),
        ("id", str(session.session_id)),
        ("name", session.session_name or "—"),
        ("model", f"{session.model.ref} · thinking {session.thinking_level}"),
        ("messages", f"{stats.user_messages} user · {stats.assistant_messages} assistant · "
                     f"{stats.tool_calls} tool calls · {stats.tool_results} tool results"),
        ("tokens", f"↑{format_tokens(stats.input_tokens)} ↓{format_tokens(stats.output_tokens)} · "
                   f"cache read {format_tokens(stats.cache_read_tokens)} · "
                   f"cache write {format_tokens(stats.cache_write_tokens)}"),
        ("cost", format_cost(stats.cost)),
    ]
    body = Content("\n").join(
        Content.assemble((f"{key:<9}", "$text-muted"), clean(str(value))) for key, value in lines
    )
    app.notice(body)


_PART_STYLES = ("$text-accent", "$secondary", "$warning", "$success", "$primary", "$error", "$text-muted")
_BAR_WIDTH = 50


@command("theme", "/theme [name]", "Pick the colour theme (dark, light or a Textual theme); saved in settings")
async def cmd_theme(app: BatonApp, args: str) -> None:
    names = app.theme_names()
    name = args.strip()
    if not name:
        current = app.theme
        items = [PickerItem(picker_label(("● " if THEME_ALIASES.get(n, n) == current else "  ", "$text-accent"),
                                         (n, "bold")), n, n) for n in names]
        initial = next((i for i, n in enumerate(names) if THEME_ALIASES.get(n, n) == current), 0)
        picked = await app.push_screen_wait(ListPicker("Theme", items, initial=initial))
        if picked is None:
            return
        name = picked
    if not app.set_theme_name(name):
        app.notice(f"Unknown theme {one_line(name, 40)!r}; one of: {', '.join(names)}.", "error")
        return
    from baton.sessions.settings import save_setting

    try:
        save_setting("theme", name)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        app.notice(f"Theme {name} applied, but the settings file could not be written: {reason}", "warning")
        return
    app.notice(f"Theme: {name} (saved in {baton_home_display()}/settings.json).", "success")


@command("context", "/context", "Show what fills the context window (system prompt, tools, files, messages)")
async def cmd_context(app: BatonApp, args: str) -> None:
    breakdown = app.session.context_breakdown()
    window = max(breakdown.window, 1)
    bar: list[Content] = []
    used_cells = 0
    for part, style in zip(breakdown.parts, _PART_STYLES, strict=False):
        cells = round(_BAR_WIDTH * part.tokens / window)
        if part.tokens and not cells:
            cells = 1
        cells = min(cells, _BAR_WIDTH - used_cells)
        used_cells += cells
        if cells:
            bar.append(Content.styled("█" * cells, style))
    bar.append(Content.styled("░" * (_BAR_WIDTH - used_cells), "$text-muted"))
    percent = 100 * breakdown.total / window
    lines = [
        Content.assemble(("Context ", "bold"), Content("").join(bar),
                         f"  {format_tokens(breakdown.total)} / {format_tokens(breakdown.window)} ({percent:.0f}%)"),
    ]
    for part, style in zip(breakdown.parts, _PART_STYLES, strict=False):
        share = 100 * part.tokens / window
        lines.append(Content.assemble(("■ ", style), (f"{part.label:<26}", ""),
                                      (f"{format_tokens(part.tokens):>7}  {share:5.1f}%", "$text-muted")))
    lines.append(Content.assemble(("  ", ""), (f"{'Free':<26}", ""),
                                  (f"{format_tokens(breakdown.free):>7}  {100 * breakdown.free / window:5.1f}%",
                                   "$text-muted")))
    app.notice(Content("\n").join(lines))


@command("export", "/export [file]", "Export the session to HTML (or Markdown for a .md file)")
async def cmd_export(app: BatonApp, args: str) -> None:
    target = Path(args).expanduser() if args else None
    if target is not None and not target.is_absolute():
        target = Path(app.session.cwd) / target
    if target is not None and target.suffix.lower() in (".md", ".markdown"):
        written = app.session.export_markdown(target)
    else:
        written = app.session.export_html(target)
    app.notice(f"Exported to {short_path(written)}", "success")


@command("copy", "/copy", "Copy the last answer to the clipboard")
async def cmd_copy(app: BatonApp, args: str) -> None:
    text = app.transcript.last_answer()
    if not text:
        app.notice("There is no answer to copy yet.")
        return
    app.copy_to_clipboard(text)
    app.notice(f"Copied the last answer ({len(text)} characters).", "success")


@command("name", "/name [name]", "Name this session (shown in /resume)")
async def cmd_name(app: BatonApp, args: str) -> None:
    if not args:
        current = app.session.session_name
        app.notice(f"Session name: {current}" if current else "This session has no name; /name <name> sets one.")
        return
    app.session.set_name(args)
    app.refresh_status()
    app.notice(f"Session named {one_line(args, 80)!r}.", "success")


HOTKEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send (while working: queue a steering message)"),
    ("Tab / Alt+Enter", "while working: queue a follow-up (delivered when the agent is done)"),
    ("Shift+Enter / Ctrl+J", "new line (so does \\ then Enter)"),
    ("Up / Down", "prompt history (on the first / last line)"),
    ("Alt+Up", "pull queued messages back into the editor"),
    ("@", "complete a file path (Tab or Enter accepts)"),
    ("/", "complete a command"),
    ("!cmd / !!cmd", "run a shell command (with / without adding its output to the context)"),
    ("Esc / Ctrl+C", "abort the running agent (the partial answer stays)"),
    ("Esc Esc", "rewind code and/or conversation (on an empty editor; same as /rewind)"),
    ("Ctrl+C", "clear the editor; twice quickly quits"),
    ("Ctrl+D", "quit (on an empty editor)"),
    ("Ctrl+L", "model picker"),
    ("Ctrl+P / Shift+Ctrl+P", "next / previous favourite model"),
    ("Shift+Tab", "cycle the thinking level"),
    ("Ctrl+T", "show / hide thinking blocks"),
    ("Ctrl+O", "expand / collapse tool output"),
    ("Ctrl+G", "edit the prompt in $EDITOR"),
    ("PageUp / PageDown", "scroll the transcript"),
)


@command("hotkeys", "/hotkeys", "List the keyboard shortcuts and commands")
async def cmd_hotkeys(app: BatonApp, args: str) -> None:
    width = max(len(k) for k, _ in HOTKEYS) + 2
    rows = [Content.styled("Keys", "bold")]
    rows += [Content.assemble((f"  {key:<{width}}", "$text-accent"), text) for key, text in HOTKEYS]
    rows.append(Content.styled("Commands", "bold"))
    usage_width = max(len(c.usage) for c in COMMANDS.values()) + 2
    rows += [Content.assemble((f"  {c.usage:<{usage_width}}", "$text-accent"), c.description)
             for c in COMMANDS.values()]
    app.notice(Content("\n").join(rows))


@command("quit", "/quit", "Quit baton")
async def cmd_quit(app: BatonApp, args: str) -> None:
    app.exit(0)


# Commands kept in modules of their own register themselves on import.
from baton.tui.app import mcp_command  # noqa: E402, F401
from baton.tui.app import rewind as _rewind  # noqa: E402, F401
