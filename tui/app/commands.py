"""Slash commands: parsing, dispatch, and the app's flows of them.

A line is a command when its first word is ``/name`` (letters, digits, ``-``, ``_``); anything
else, ``/etc/hosts is wrong`` included, is a prompt. Most commands are shared actions
(``tui/actions``: the same in RPC and ACP); the flows here are how the app asks for their
arguments (pickers, confirmations) and shows their results. Commands only the app has (``/tree``,
``/theme``, ``/copy``...) are registered with :func:`command`. Flows run in a worker so they may
await the session and modal pickers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content

from baton.providers.paths import baton_home_display
from baton.tui.actions.action import ActionError
from baton.tui.actions.approval import APPROVAL, MEANINGS, MODES
from baton.tui.actions.conversation import COMPACT, FORK, NEW, RESUME
from baton.tui.actions.models import MODEL, THINKING, ModelSwitch, ModelTarget, is_current
from baton.tui.actions.session_file import EXPORT, NAME
from baton.tui.app.command_registry import COMMANDS as COMMANDS
from baton.tui.app.command_registry import SlashCommand as SlashCommand
from baton.tui.app.command_registry import bind, binds, command, find_command, perform, slash_commands
from baton.tui.app.files import fuzzy_score
from baton.tui.app.render import clean, fit_cells, format_cost, format_tokens, one_line, short_path
from baton.tui.app.themes import THEME_ALIASES
from baton.tui.app.widgets.pickers import ConfirmScreen, ListPicker, PickerItem, picker_label, picker_row_width

if TYPE_CHECKING:
    from baton.providers.models import Model, ThinkingLevel
    from baton.sessions import CodingSession
    from baton.sessions.handoff import HandoffPreview, HandoffPreviews
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
    return [(c.name, c.description) for c in slash_commands()]


async def dispatch(app: BatonApp, parsed: ParsedCommand) -> None:
    """Run a parsed command (unknown ones are reported, not sent to the model)."""
    spec = find_command(parsed.name)
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
    except ActionError as exc:  # asked for something that cannot be done: say why
        app.notice(clean(str(exc)), exc.level)
    except Exception as exc:  # a failed command must never take the app down
        app.notice(f"/{spec.name} failed: {one_line(str(exc) or type(exc).__name__, 300)}", "error")


# ---------------------------------------------------------------------------------------------
# Models and thinking


def _price(model: Model) -> str:
    cost = model.cost
    if not cost.input and not cost.output:
        return "—"
    return f"${cost.input:.3g}/${cost.output:.3g}"


@dataclass(frozen=True, slots=True)
class _Columns:
    """The model picker's column widths for one row width (0: the column is left out)."""

    ref: int
    name: int
    price: int
    date: bool
    ctx: bool
    caps: bool


def _columns(models: Sequence[Model], missing: Mapping[str, str], width: int) -> _Columns:
    price_width = max((len(_price(m)) for m in models), default=1)
    key_width = 2 + 6 if missing else 0  # "no key"; the detail line names the variable
    longest_ref = min(max((len(m.ref) for m in models), default=10), 44)
    # On a narrow screen the capabilities, then the release month, the price and the context
    # size give way, so that ids stay whole and rows do not wrap.
    optional = {"caps": 2 + 9, "date": 2 + 7, "price": 2 + price_width, "ctx": 2 + 9}
    while optional and width - 2 - key_width - sum(optional.values()) < min(longest_ref, 30):
        del optional[next(iter(optional))]
    room = max(width - 2 - sum(optional.values()) - key_width, 12)
    ref_width = min(longest_ref, room)  # the id matters most
    name_width = min(max((len(m.name) for m in models), default=4), room - ref_width - 2, 28)
    return _Columns(ref_width, name_width if name_width >= 6 else 0, price_width if "price" in optional else 0,
                    "date" in optional, "ctx" in optional, "caps" in optional)


def _model_row(model: Model, current: Model | None, missing: Mapping[str, str], cols: _Columns) -> PickerItem[Model]:
    variable = missing.get(model.ref)
    parts: list[tuple[str, str] | str] = [
        ("● " if current is not None and is_current(model, current) else "  ", "$text-accent"),
        (fit_cells(model.ref, cols.ref), "$text-muted" if variable else "bold"),
    ]
    if cols.name:
        parts += ["  ", (fit_cells(model.name, cols.name), "$text-muted")]
    if cols.date:
        parts += ["  ", (f"{(model.release_date or '')[:7]:<7}", "$text-muted")]
    if cols.ctx:
        parts += ["  ", (f"{format_tokens(model.context_window):>5} ctx", "$text-muted")]
    if cols.price:
        parts += ["  ", (f"{_price(model):>{cols.price}}", "$text-muted")]
    if cols.caps:
        caps = " ".join(c for c, on in (("think", model.reasoning), ("img", "image" in model.input)) if on)
        parts += ["  ", (f"{caps:<9}", "$text-muted")]
    if variable:
        parts += ["  ", ("no key", "$text-warning")]
    return PickerItem(picker_label(*parts), model, f"{model.ref} {model.name}")


def model_items(
    models: Sequence[Model], current: Model | None, missing: Mapping[str, str] | None = None, *, width: int = 110
) -> list[PickerItem[Model]]:
    """Picker rows for ``models`` in aligned columns fitted to ``width`` cells: id, name, release
    month, context, price ($/Mtok in/out), capabilities and key status; the current one marked,
    those without a key (``missing``: ref → variable to set) dimmed. The name column goes first
    when space is short."""
    missing = missing or {}
    cols = _columns(models, missing, width)
    return [_model_row(model, current, missing, cols) for model in models]


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


def _previews(session: CodingSession) -> HandoffPreviews | None:
    try:
        return session.models.handoff_previews()
    except Exception:  # a preview is advice; never block a switch on it
        return None


def _preview(previews: HandoffPreviews | None, model: Model) -> HandoffPreview | None:
    if previews is None:
        return None
    try:
        return previews.preview(model)
    except Exception:  # a preview is advice; never block a switch on it
        return None


def _summary(preview: HandoffPreview | None) -> str | None:
    return None if preview is None or preview.is_empty else str(preview.summary())


def handoff_summary(app: BatonApp, model: Model) -> str | None:
    """What ``model`` will not receive as is from the current history, or None when nothing."""
    return _summary(_preview(_previews(app.session), model))


def model_facts(model: Model) -> str:
    """``Released 2026-07-24 · knowledge to 2026-05 · `` (what the catalog knows), or ``""``."""
    facts = []
    if model.release_date:
        facts.append(f"Released {model.release_date}")
    if model.knowledge:
        facts.append(f"knowledge to {model.knowledge}")
    return " · ".join(facts) + " · " if facts else ""


def model_preview_detail(
    session: CodingSession, missing: Mapping[str, str], previews: HandoffPreviews | None = None
) -> Callable[[Model], Content | None]:
    """The model picker's detail line for the highlighted model: what the catalog knows, and what
    a switch would cost. One picker opening computes each target's preview once (``previews``,
    made here when not given)."""
    previews = previews if previews is not None else _previews(session)

    def detail(model: Model) -> Content | None:
        facts = (clean(model_facts(model)), "$text-muted")
        if model.ref in missing:
            return Content.assemble(facts, (f"No API key: set {missing[model.ref]} to use this model.",
                                            "$text-warning"))
        if is_current(model, session.model):
            return Content.assemble(facts, ("(current model)", "$text-muted"))
        summary = _summary(_preview(previews, model))
        if summary is None:
            return Content.assemble(facts, ("Handoff: the whole conversation carries over unchanged.",
                                            "$text-success"))
        return Content.assemble(facts, ("Handoff (compared with now): ", "bold"), clean(summary))

    return detail


def model_switch_notice(previous: Model, model: Model, summary: str | None) -> Content:
    """``⇄ Model a → b · handoff: ...``."""
    text = Content.assemble(("⇄ Model ", "bold"), (previous.ref, "$text-muted"), " → ", (model.ref, "bold"))
    if summary:
        text = Content.assemble(text, ("  ·  handoff: ", "$text-muted"), (summary, "$text-warning"))
    return text


def _missing_key_text(model: Model, variable: str) -> str:
    return (f"{model.ref} needs an API key: set {variable} (or apiKey in {baton_home_display()}/models.json) "
            "and restart baton.")


async def _switch_to(app: BatonApp, target: Model, missing: Mapping[str, str], previews: HandoffPreviews | None,
                     *, confirm: bool) -> None:
    """Switch to ``target`` (after a confirmation when ``confirm`` and the handoff loses something)."""
    if target.ref in missing:
        app.notice(_missing_key_text(target, missing[target.ref]), "error")
        return
    if is_current(target, app.session.model):
        app.notice(f"Already using {target.ref}.")
        return
    preview = _preview(previews, target)
    summary = _summary(preview)
    if confirm and summary is not None:
        confirmed = await app.push_screen_wait(ConfirmScreen(
            f"Switch to {target.ref}?",
            Content.assemble((f"Compared with {app.session.model.ref} now, the new model will not receive the "
                              "history as is: ", "$text-warning"), clean(summary)),
        ))
        if not confirmed:
            app.notice("Model unchanged.")
            return
    switch: ModelSwitch = await MODEL.run(app.session, ModelTarget(target, handoff=preview, preview=False))
    app.notice(model_switch_notice(switch.previous, switch.model, summary))
    app.refresh_status()


@binds(MODEL)
async def cmd_model(app: BatonApp, args: str) -> None:
    choices = list(app.session.models.choices())
    missing = {c.model.ref: c.missing_key for c in choices if c.missing_key}
    models = [c.model for c in choices]
    if not models:
        app.notice(f"No models are available: set an API key or add {baton_home_display()}/models.json.", "error")
        return
    previews = _previews(app.session)  # one preview per target for this opening of the picker
    if args:
        matches = match_models(models, args)
        if not matches:
            app.notice(f"No model matches {one_line(args, 80)!r}.", "error")
            return
        usable = [m for m in matches if m.ref not in missing]
        if len(matches) == 1 or len(usable) == 1:
            await _switch_to(app, (usable or matches)[0], missing, previews, confirm=True)
            return
        models = matches
    current = app.session.model
    app.notice("Model roles: " + " · ".join(b.describe() for b in app.session.role_bindings()))
    picked = await app.push_screen_wait(ListPicker(
        "Switch model", model_items(models, current, missing, width=picker_row_width(app.size.width)),
        initial=next((i for i, m in enumerate(models) if is_current(m, current)), 0),
        detail=model_preview_detail(app.session, missing, previews),
        layout=lambda width: model_items(models, current, missing, width=width),
    ))
    if picked is not None:
        await _switch_to(app, picked, missing, previews, confirm=False)


def _marked(value: str, current: str, meaning: str = "") -> PickerItem[str]:
    label = picker_label(("● " if value == current else "  ", "$text-accent"), (value, "bold"),
                         (f"  {meaning}" if meaning else "", "$text-muted"))
    return PickerItem(label, value, value)


@binds(APPROVAL)
async def cmd_approval(app: BatonApp, args: str) -> None:
    if args.strip():
        mode = APPROVAL.parse(app.session, args)
    else:
        current = app.session.permissions.mode
        chosen = await app.push_screen_wait(ListPicker(
            "Approval mode", [_marked(m, current, MEANINGS[m]) for m in MODES], initial=MODES.index(current),
            filterable=False))
        if chosen is None:
            return
        mode = chosen
    await perform(app, APPROVAL, mode)


@binds(THINKING)
async def cmd_thinking(app: BatonApp, args: str) -> None:
    from baton.providers.models import THINKING_LEVELS

    level: ThinkingLevel
    if args.strip():
        level = THINKING.parse(app.session, args)
    else:
        current = app.session.thinking_level
        items = [PickerItem(picker_label(("● " if lv == current else "  ", "$text-accent"), (lv, "bold")), lv, lv)
                 for lv in THINKING_LEVELS]
        picked = await app.push_screen_wait(ListPicker(
            "Thinking level", items, initial=THINKING_LEVELS.index(current) if current in THINKING_LEVELS else 0,
            filterable=False, hint="↑↓ move · Enter pick · Esc cancel"))
        if picked is None:
            return
        level = picked
    await perform(app, THINKING, level)


# ---------------------------------------------------------------------------------------------
# Session


@binds(COMPACT)
async def cmd_compact(app: BatonApp, args: str) -> None:
    await app.compact(COMPACT.parse(app.session, args))


bind(NEW)


@binds(RESUME)
async def cmd_resume(app: BatonApp, args: str) -> None:
    from baton.sessions.listing import list_all_sessions, list_sessions
    from baton.tui.app.widgets.session_picker import SessionPicker

    session = app.session
    picked = await app.push_screen_wait(SessionPicker(
        lambda: list_sessions(session.cwd, session.session_dir), list_all_sessions, current=session.session_file,
    ))
    if picked is None:
        return
    await perform(app, RESUME, str(picked))


@binds(FORK)
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
    app.editor.set_text(await perform(app, FORK, entry_id) or text)


@command("tree", "/tree [all]", "Move to any point of the session tree (all: with checkpoints and decisions)",
         while_running=False)
async def cmd_tree(app: BatonApp, args: str) -> None:
    from baton.tui.app.tree_view import tree_items, tree_rows

    nodes = list(app.session.tree())
    if not nodes:
        app.notice("The session is empty.")
        return
    show_all = args.strip().lower() == "all"
    initial = next((i for i, (_, _, current) in enumerate(tree_rows(nodes, show_all)) if current), 0)
    items = tree_items(nodes, picker_row_width(app.size.width), show_all)
    title = "Session tree" + ("" if show_all else " (/tree all: with checkpoints and permission decisions)")
    picked = await app.push_screen_wait(ListPicker(
        title, items, initial=initial, layout=lambda width: tree_items(nodes, width, show_all)))
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
    from baton.sessions.tokens import load_tokenizer

    await load_tokenizer()  # the breakdown counts each part exactly
    breakdown = app.session.context_breakdown()
    usage = app.session.context_usage()  # the footer's figure: reported usage plus estimates since
    window = max(breakdown.window, 1)
    scale = usage.tokens / breakdown.total if breakdown.total else 1.0
    bar: list[Content] = []
    used_cells = 0
    for part, style in zip(breakdown.parts, _PART_STYLES, strict=False):
        cells = round(_BAR_WIDTH * part.tokens * scale / window)
        if part.tokens and not cells:
            cells = 1
        cells = min(cells, _BAR_WIDTH - used_cells)
        used_cells += cells
        if cells:
            bar.append(Content.styled("█" * cells, style))
    bar.append(Content.styled("░" * (_BAR_WIDTH - used_cells), "$text-muted"))
    lines = [
        Content.assemble(("Context ", "bold"), Content("").join(bar),
                         f"  {format_tokens(usage.tokens)} / {format_tokens(breakdown.window)} ({usage.percent:.0f}%)"),
    ]
    for part, style in zip(breakdown.parts, _PART_STYLES, strict=False):
        share = 100 * part.tokens / window
        lines.append(Content.assemble(("■ ", style), (f"{part.label:<26}", ""),
                                      (f"{format_tokens(part.tokens):>7}  {share:5.1f}%", "$text-muted")))
    free = max(0, breakdown.window - usage.tokens)
    lines.append(Content.assemble(("  ", ""), (f"{'Free':<26}", ""),
                                  (f"{format_tokens(free):>7}  {100 * free / window:5.1f}%", "$text-muted")))
    if format_tokens(breakdown.total) != format_tokens(usage.tokens):
        lines.append(Content.styled(
            f"The parts are estimates (~{format_tokens(breakdown.total)} in all); the total, as in the footer, "
            "is what the provider reported for the last request plus estimates for what came after it.",
            "$text-muted"))
    app.notice(Content("\n").join(lines))


bind(EXPORT)


@command("copy", "/copy", "Copy the last answer to the clipboard")
async def cmd_copy(app: BatonApp, args: str) -> None:
    text = app.transcript.last_answer()
    if not text:
        app.notice("There is no answer to copy yet.")
        return
    app.copy_to_clipboard(text)
    app.notice(f"Copied the last answer ({len(text)} characters).", "success")


bind(NAME)


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
    ("Shift+Tab", "cycle the mode: default (ask) → plan (read-only) → auto-accept edits (auto)"),
    ("Ctrl+R", "cycle the thinking level"),
    ("Ctrl+T", "show / hide thinking blocks"),
    ("Ctrl+O", "expand / collapse tool output and subagents' transcripts"),
    ("Ctrl+G", "edit the prompt in $EDITOR"),
    ("PageUp / PageDown", "scroll the transcript"),
)


@command("hotkeys", "/hotkeys", "List the keyboard shortcuts and commands")
async def cmd_hotkeys(app: BatonApp, args: str) -> None:
    width = max(len(k) for k, _ in HOTKEYS) + 2
    rows = [Content.styled("Keys", "bold")]
    rows += [Content.assemble((f"  {key:<{width}}", "$text-accent"), text) for key, text in HOTKEYS]
    rows.append(Content.styled("Commands", "bold"))
    commands = slash_commands()
    usage_width = max(len(c.usage) for c in commands) + 2
    rows += [Content.assemble((f"  {c.usage:<{usage_width}}", "$text-accent"), c.description) for c in commands]
    app.notice(Content("\n").join(rows))


@command("quit", "/quit", "Quit baton")
async def cmd_quit(app: BatonApp, args: str) -> None:
    app.exit(0)


# Commands kept in modules of their own register themselves on import.
from baton.tui.app import mcp_command  # noqa: E402, F401
from baton.tui.app import ps_command as _ps_command  # noqa: E402, F401
from baton.tui.app import rewind as _rewind  # noqa: E402, F401
from baton.tui.app import tools_command as _tools_command  # noqa: E402, F401
