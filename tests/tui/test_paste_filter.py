"""Pastes stay pastes: ESC bytes inside a bracketed paste are dropped before Textual parses them."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.tui.app.paste_filter import PASTE_END, PASTE_START, PasteEscapeFilter
from tests.tui.cli_harness import baton_env, session_files
from tests.tui.test_real_terminal import Tmux, baton_command_line

_text = st.text(alphabet=st.sampled_from(["a", "\x1b", "[", "2", "0", "1", "~", "\r", "\x07", "é"]), max_size=30)


def _without_end_markers(text: str) -> str:
    while PASTE_END in text:
        text = text.replace(PASTE_END, "")
    return text


# A fake end marker is known as one only when the real one comes in the same read (see the KeyInput
# test below), so the property is over streams with one end marker per paste.
@given(before=_text.filter(lambda t: PASTE_START not in t and not t.endswith("\x1b")), pasted=_text,
       after=_text.filter(lambda t: PASTE_END not in t), cuts=st.lists(st.integers(0, 200), max_size=4))
def test_a_paste_arrives_whole_without_escapes_however_the_reads_cut_it(
    before: str, pasted: str, after: str, cuts: list[int]
) -> None:
    stream = before + PASTE_START + _without_end_markers(pasted) + PASTE_END + after
    whole = PasteEscapeFilter().feed(stream)
    pieces = PasteEscapeFilter()
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    split = "".join(pieces.feed(stream[a:b]) for a, b in itertools.pairwise(points))
    assert split == whole
    inside = whole[whole.index(PASTE_START) + len(PASTE_START) :]
    assert "\x1b" not in inside[: inside.index(PASTE_END)], "no ESC left inside the paste"
    assert whole.startswith(before), "input before the paste passes unchanged"


def test_input_outside_a_paste_is_untouched() -> None:
    keys = "abc\x1b[A\x1bx\r\x1b"
    assert PasteEscapeFilter().feed(keys) == keys


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_pasting_text_with_escape_codes_neither_sends_nor_runs_keys_in_tmux(
    tmp_path: Path, home: Path, workdir: Path
) -> None:
    env = baton_env(home, TERM="xterm-256color")
    tmux = Tmux(baton_command_line(workdir, env, "--model demo/baton-demo", "; sleep 30"))
    clip = tmp_path / "clip.txt"
    clip.write_bytes(b"colour \x1b[31mRED\x1b[0m done\r\nsecond line\x07\r\nlast")
    try:
        # The app's footer ("context": the first frame shows the model too, and echoes a paste
        # only roughly).
        tmux.wait_for(lambda p: "demo/baton-demo" in p and "context" in p, "the editor and footer")
        subprocess.run(["tmux", "load-buffer", "-b", tmux.name, str(clip)], check=True)
        subprocess.run(["tmux", "paste-buffer", "-r", "-p", "-b", tmux.name, "-t", tmux.name], check=True)
        pane = tmux.wait_for(lambda p: "last" in p, "the pasted text in the editor")
        tmux.type(" typed")
        pane = tmux.wait_for(lambda p: "last typed" in p, "typing after the paste")
    finally:
        tmux.kill()
    assert "colour [31mRED[0m done" in pane and "second line" in pane
    assert "▌ colour" not in pane, "nothing was sent"
    assert not any("colour" in f.read_text() for f in session_files(home))


async def test_the_input_loop_ends_when_the_terminal_hangs_up() -> None:
    """Reading a closed terminal gives end of file at once, every time: Textual's loop went on
    selecting it, burning a core while the app lived on (seen: an app stuck writing to that
    terminal after an external editor returned)."""
    import asyncio
    import os
    import threading

    from textual.app import App

    from baton.tui.app.handoff_driver import HandoffDriver

    read_end, write_end = os.pipe()
    driver = HandoffDriver(App(), debug=False, mouse=False, size=(80, 24))
    driver.fileno = read_end
    gone = threading.Event()
    driver.terminal_gone = gone.set  # type: ignore[method-assign]
    reader = threading.Thread(target=driver.run_input_thread, daemon=True)
    reader.start()
    os.write(write_end, b"x")
    os.close(write_end)  # the terminal hangs up
    await asyncio.to_thread(reader.join, 5)
    try:
        assert not reader.is_alive(), "the loop still runs on a closed terminal"
        assert gone.is_set(), "the app is told the terminal is gone"
    finally:
        driver.exit_event.set()
        os.close(read_end)


def test_two_pastes_in_one_read_are_both_filtered() -> None:
    # The second start marker's position was taken from the start of the read, not from where
    # the first paste ended: the filter went back into the first paste and never finished.
    stream = f"k{PASTE_START}a\x1bb{PASTE_END}xy{PASTE_START}c\x1bd{PASTE_END}z"
    assert PasteEscapeFilter().feed(stream) == f"k{PASTE_START}ab{PASTE_END}xy{PASTE_START}cd{PASTE_END}z"


def test_key_input_makes_the_same_events_however_the_reads_cut_the_stream() -> None:
    """The instant frame's bytes and the live reads go through one KeyInput: a paste or a key
    cut by the hand-over (or by any read) is the same paste or key; a fake end marker followed by
    the real one stays text; the pasted text never becomes keys."""
    from baton.tui.app.quiet_input import KeyInput

    stream = (b"a\x1b[Z" + PASTE_START.encode() + "p\x1b[Aé\r\x1b[201~q\r".encode() + PASTE_END.encode()
              + b"b" + PASTE_START.encode() + b"two" + PASTE_END.encode())

    def described(events: list[object]) -> list[str]:
        return [f"key {e.key}" if hasattr(e, "key") else f"paste {e.text!r}" for e in events]  # type: ignore[attr-defined]

    whole = described(KeyInput().feed(stream))
    assert whole == ["key a", "key shift+tab", "paste 'p[Aé\\r[201~q\\r'", "key b", "paste 'two'"]
    # A fake end marker is known as one only with the real one in the same read (a terminal
    # writes a paste at once): no cut between the two.
    fake, real = stream.index(b"\x1b[201~"), stream.rindex(PASTE_END.encode(), 0, stream.index(b"b\x1b[200~"))
    for cut in [*range(1, fake + 1), *range(real + len(PASTE_END), len(stream))]:
        keys = KeyInput()
        assert described(keys.feed(stream[:cut]) + keys.feed(stream[cut:])) == whole, cut
