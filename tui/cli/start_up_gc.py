"""The cyclic garbage collector paused while ``--mode acp`` starts up.

Start-up makes many long-lived objects (the modules, the settings, the session) and little
garbage; the collector's passes walk them all again and again and were a sixth of the CPU to the
``session/new`` answer. :func:`hold` pauses it from the start of ``main`` (the ACP server holds it
too, for callers that start there); :func:`release` gives it back once the first session is open,
and ``main`` releases it on every way out (an error, a shutdown before any session, another mode).
"""

from __future__ import annotations

import gc
import itertools

_held = False


def wants_hold(argv: list[str]) -> bool:
    """Whether ``argv`` asks for ACP mode as editors spell it (``--mode acp``, ``--mode=acp``);
    other spellings only start the pause later, at the server."""
    return "--mode=acp" in argv or any(a == "--mode" and b == "acp" for a, b in itertools.pairwise(argv))


def hold() -> None:
    """Pause the collector, unless it is off already (then the caller who turned it off owns it)."""
    global _held
    if not _held and gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """Turn the collector back on if :func:`hold` turned it off (a no-op otherwise)."""
    global _held
    if _held:
        _held = False
        gc.enable()
