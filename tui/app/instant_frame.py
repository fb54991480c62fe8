"""The first frame, painted before Textual is imported: the interactive app's title, prompt line
and footer (the working directory, the model, the approval mode and sandbox as far as they are known
before the session opens: :mod:`baton.tui.cli.early_status`), shown within a few tens of
milliseconds of ``baton`` starting, echoing what is typed.

Textual and the app take a few hundred milliseconds more to load. Meanwhile a thread reads the
terminal (raw mode, as Textual will set it) and keeps every byte;
:meth:`InstantFrame.take_over` stops it and hands the bytes over unchanged, so the app's driver
parses them as if they had been typed into the app (escape sequences, pastes and all). Only the
echo here is approximate (printable text, Backspace, Enter); the app repaints the real editor.
Ctrl+C, and Ctrl+D on an empty editor, end baton at once from here (the app would only see them
once loaded).

Standard library only: importing this module must stay cheap.
"""

from __future__ import annotations

import atexit
import codecs
import os
import select
import sys
import threading
from typing import TYPE_CHECKING

from baton.tui.app.paste_filter import PasteEscapeFilter

if TYPE_CHECKING:
    from baton.tui.cli.early_status import EarlyStatus

BACKGROUND = "18;18;18"
SURFACE = "30;30;30"
FOOTER = "36;47;56"
ACCENT = "255;196;115"
TEXT = "224;224;224"
MUTED = "120;120;120"
RULE = "6;89;153"
WARNING = "255;166;87"
PLACEHOLDER = "Message baton…  (/ commands · @ files · ! shell)"
RESIZE_POLL_S = 0.05
"""How often the reader checks the terminal size while no key arrives."""
ECHO_LIMIT = 1024
"""The most of the editor's last line the echo keeps (the frame shows one line: a 10 MB paste
must cost no more to echo than a short one)."""
CTRL_C = "\x03"
CTRL_D = "\x04"
EXIT_INTERRUPTED = 1
QUIT_READ_LIMIT = 64
"""Ctrl+C or Ctrl+D ends baton from the frame only as the last byte of a short read holding no
ESC: keys pressed, not the middle of a paste (a terminal writes a paste at once; one that passes
an end marker in the pasted text through would otherwise let the text after it quit)."""
"""As ``baton: interrupted`` exits elsewhere (:data:`baton.tui.cli.args.EXIT_RUN_FAILED`)."""


def _bg(rgb: str) -> str:
    return f"\x1b[48;2;{rgb}m"


def _fg(rgb: str) -> str:
    return f"\x1b[38;2;{rgb}m"


class InstantFrame:
    """A painted first frame and the keys typed into it; see the module docstring."""

    started: InstantFrame | None = None
    """The frame this process painted, also while :meth:`start` has not returned (Ctrl+C or
    Ctrl+D may interrupt it as it starts its reader)."""

    def __init__(self, fd_in: int, fd_out: int, title: str, status: EarlyStatus | None = None) -> None:
        import termios

        self._fd_in = fd_in
        self._fd_out = fd_out
        self._title = title
        self._status = status
        self.original_attrs = termios.tcgetattr(fd_in)
        """The terminal settings to restore on exit (the app's driver restores these)."""
        self._typed = bytearray()
        self._text = ""
        """The echoed editor's last line (its end, at most :data:`ECHO_LIMIT` characters)."""
        self._lines = False
        """True when the echoed editor holds more than :attr:`_text` (earlier lines)."""
        self._moved = False
        """True once a key the echo does not follow (a cursor key, Alt+key...) was typed: the
        echo may then be wrong about the editor being empty."""
        self._escape = ""
        self._pasting = False
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self._pastes = PasteEscapeFilter()
        """As the app filters its input, so the echo sees the pastes the app will see."""
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._size = (0, 0)
        self._done = False

    # -- life cycle ------------------------------------------------------------------------------

    @classmethod
    def start(cls, title: str, status: EarlyStatus | None = None) -> InstantFrame | None:
        """Paint the frame (with ``status`` in its footer) and start reading keys; None where it
        cannot be done (not a terminal, a dumb one, not POSIX, or the terminal refuses raw mode)."""
        if os.name != "posix" or os.environ.get("TERM", "dumb") in ("dumb", ""):
            return None
        import termios

        try:
            fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
            if not (os.isatty(fd_in) and os.isatty(fd_out)):
                return None
            frame = cls(fd_in, fd_out, title, status)
            InstantFrame.started = frame
            frame._enter()
        except (OSError, ValueError, AttributeError, termios.error):
            InstantFrame.started = None
            return None
        atexit.register(frame.close)
        return frame

    def _enter(self) -> None:
        import termios

        raw = termios.tcgetattr(self._fd_in)
        # As Textual's driver sets it (so it can adopt the mode as it is). Ctrl+C is read as a
        # key, not a signal: a SIGINT landing while asyncio starts its loop left a traceback, and
        # one landing in asyncio.run only cancelled the app once Textual had started.
        raw[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
        raw[0] &= ~(termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR)
        raw[6][termios.VMIN] = 1
        raw[6][termios.VTIME] = 0
        termios.tcsetattr(self._fd_in, termios.TCSANOW, raw)
        # Keys typed before now went through the cooked terminal: Backspace and Ctrl+U already
        # edited the line, and Enter became a newline; it was Enter.
        early = b""
        while select.select([self._fd_in], [], [], 0)[0]:
            chunk = os.read(self._fd_in, 4096)
            if not chunk:
                break
            early += chunk
        self._typed += early.replace(b"\n", b"\r")
        self._echo(self._pastes.feed(self._decode(bytes(self._typed))))
        try:
            # Alternate screen, hidden cursor, no autowrap, bracketed paste (a paste arrives as
            # one piece, so a newline in it does not send the prompt).
            self._write("\x1b[?1049h\x1b[?25l\x1b[?7l\x1b[?2004h")
            self._paint()
        except OSError:
            self._restore()
            raise
        self._thread = threading.Thread(target=self._read_loop, name="baton-instant-frame", daemon=True)
        self._thread.start()

    def take_over(self) -> bytes:
        """Stop reading and return every byte typed so far; the terminal stays in raw mode on
        the alternate screen for the app to adopt. Idempotent (later calls return b"")."""
        self._stop()
        with self._lock:
            typed, self._typed = bytes(self._typed), bytearray()
        return typed

    def close(self) -> None:
        """Give the terminal back as it was (start-up failed or was interrupted before the
        app took over). Safe to call more than once and after :meth:`take_over`."""
        if self._stop():
            self._restore()

    def _stop(self) -> bool:
        """Stop the reader; True the first time."""
        with self._lock:
            if self._done:
                return False
            self._done = True
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        if self._thread is not None and self._thread is not threading.current_thread():
            try:
                self._thread.join(2.0)
            except RuntimeError:  # interrupted as it was starting: it never ran
                pass
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        return True

    def _restore(self) -> None:
        import termios

        try:
            self._write("\x1b[?2004l\x1b[?7h\x1b[0m\x1b[?1049l\x1b[?25h")
        except OSError:
            pass
        try:
            termios.tcsetattr(self._fd_in, termios.TCSANOW, self.original_attrs)
        except (termios.error, OSError):
            pass

    # -- reading ---------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._fd_in, self._wake_r], [], [], RESIZE_POLL_S)
            except (OSError, ValueError):
                return
            if self._wake_r in ready:
                return
            with self._lock:
                if self._done:
                    return
                if self._fd_in in ready:
                    try:
                        data = os.read(self._fd_in, 4096)
                    except OSError:
                        return
                    if not data:
                        return
                    self._typed += data
                    status = self._echo(self._pastes.feed(self._decode(data)))
                    if status is not None and len(data) <= QUIT_READ_LIMIT and b"\x1b" not in data:
                        self._quit(status)
                try:
                    if self._terminal_size() != self._size:
                        self._paint()
                    elif self._fd_in in ready:
                        self._paint_editor()
                except OSError:
                    return

    def _quit(self, status: int) -> None:
        """End baton at once with ``status``, the terminal given back first. Called with the lock
        held, so the app has not taken over; nothing baton starts runs yet (the session opens
        in the app), and the main thread may be deep in imports, where an interrupt would land
        only once Textual had started."""
        self._done = True
        self._restore()
        if status:
            try:
                os.write(2, b"baton: interrupted\n")
            except OSError:
                pass
        os._exit(status)

    def _echo(self, chars: str) -> int | None:
        """Follow the typed text roughly: printable characters, Backspace, Enter (sends),
        pastes; escape sequences (cursor keys, Alt+key...) are skipped. The exit status to end
        baton with at once when ``chars`` ends with Ctrl+C (1, start-up interrupted) or with
        Ctrl+D on what is surely an empty editor (0, the app would quit)."""
        position = 0
        while position < len(chars):
            char = chars[position]
            position += 1
            if self._escape:
                self._escape += char
                sequence = self._escape
                if len(sequence) == 2 and char not in "[O":
                    self._escape = ""  # Alt+key
                elif len(sequence) == 3 and sequence[1] == "O":
                    self._escape = ""  # SS3: F1-F4, keypad
                elif sequence[1] == "[" and len(sequence) > 2 and "\x40" <= char <= "\x7e":
                    self._escape = ""
                    if sequence in ("\x1b[200~", "\x1b[201~"):
                        self._pasting = sequence == "\x1b[200~"
                elif len(sequence) > 32:
                    self._escape = ""
                if not self._escape and not self._pasting and sequence not in ("\x1b[200~", "\x1b[201~"):
                    self._moved = True
                continue
            if char == "\x1b":
                self._escape = char
            elif self._pasting:  # up to the next ESC at once: a paste may be megabytes
                end = chars.find("\x1b", position)
                end = len(chars) if end < 0 else end
                self._add_text((char + chars[position:end]).replace("\r", "\n"))
                position = end
            elif char in ("\x7f", "\x08"):
                self._text = self._text[:-1]
            elif char == "\r" or char == "\x15":  # Enter sends (the app keeps the prompt); Ctrl+U
                self._text, self._lines = "", False
            elif char == CTRL_C and position == len(chars):
                return EXIT_INTERRUPTED
            elif char == CTRL_D and position == len(chars) and not (self._text or self._lines or self._moved):
                return 0
            elif char == CTRL_C:  # the app clears the editor
                self._text, self._lines = "", False
            elif char == "\n" or char.isprintable():
                self._add_text(char)
            else:
                self._moved = True  # a key bound in the app (Ctrl+L...): the echo cannot follow
        return None

    def _add_text(self, text: str) -> None:
        """Text typed or pasted at the end of the echoed editor (only its last line is kept)."""
        line = text.rfind("\n")
        if line >= 0:
            self._text, self._lines = text[line + 1:][-ECHO_LIMIT:], True
        else:
            self._text = (self._text + text)[-ECHO_LIMIT:]

    # -- painting --------------------------------------------------------------------------------

    def _terminal_size(self) -> tuple[int, int]:
        size = os.get_terminal_size(self._fd_out)
        return size.columns, size.lines

    def _write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        while data:
            written = os.write(self._fd_out, data)
            data = data[written:]

    def _paint(self) -> None:
        """The whole frame, laid out as the app's first frame (title at the top; activity,
        editor and footer at the bottom)."""
        self._size = columns, rows = self._terminal_size()
        if columns < 20 or rows < 6:
            self._write(_bg(BACKGROUND) + "\x1b[2J")
            return
        title = self._title[: columns - 10]
        out = [_bg(BACKGROUND), "\x1b[2J\x1b[H"]
        out.append(f"\x1b[1;3H\x1b[1m{_fg(ACCENT)}baton \x1b[22m{_fg('255;255;255')}{title}")
        out.append(f"\x1b[{rows - 4};2H\x1b[1m{_fg(ACCENT)}⠋ Starting…\x1b[22m")
        out.append(f"\x1b[{rows - 3};2H{_bg(SURFACE)}{_fg(RULE)}{'─' * (columns - 2)}")
        out.append(self._footer(columns, rows))
        self._write("".join(out))
        self._paint_editor()

    def _footer(self, columns: int, rows: int) -> str:
        """The status bar's two lines as the app will paint them: where and with what model;
        tokens, cost and the approval mode (fields not known yet stay blank)."""
        status = self._status
        width = columns - 4  # as the status bar lays out its lines (its padding, and two more)
        where = status.cwd if status else ""
        model = status.model if status else ""
        if status is not None and status.demo:
            model += " · offline demo model (no API key)"
        model = model[: max(width - 10, 0)]
        if len(where) + len(model) + 1 > width:  # as the status bar shortens it
            room = max(width - len(model) - 2, 8)
            where = where[: room - 1] + "…"
        gap = " " * max(width - len(where) - len(model), 0)
        model_colour = WARNING if status is not None and status.demo else ACCENT
        line1 = f"{_fg(TEXT)}{where}{gap}{_fg(model_colour)}{model}"
        usage = "↑0  ↓0  $0.00"
        approval = status.approval if status else ""
        line2 = usage + (f"  ·  {approval}" if approval else "")
        line2 = line2[:width]
        return (f"\x1b[{rows - 1};1H{_bg(FOOTER)} {line1}   "
                f"\x1b[{rows};1H{_bg(FOOTER)}{_fg(MUTED)} {line2}{' ' * (width - len(line2))}   ")

    def _paint_editor(self) -> None:
        columns, rows = self._size
        if columns < 20 or rows < 6:
            return
        width = columns - 4  # the editor's padding and the screen's margin
        line = self._text
        if line or self._lines:
            shown = line[-(width - 1):]
            body = f"{_fg(TEXT)}{shown}{_bg(TEXT)}{_fg(BACKGROUND)} {_bg(SURFACE)}{' ' * (width - len(shown) - 1)}"
        else:
            hint = PLACEHOLDER[: width - 1]
            body = (f"{_bg(TEXT)}{_fg(BACKGROUND)}{hint[:1]}{_bg(SURFACE)}{_fg(MUTED)}{hint[1:]}"
                    f"{' ' * (width - len(hint))}")
        self._write(f"\x1b[{rows - 2};2H{_bg(SURFACE)} {body} {_bg(BACKGROUND)} ")
