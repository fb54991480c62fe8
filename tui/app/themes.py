"""Theme names the ``theme`` setting and ``/theme`` accept besides Textual's own."""

THEME_ALIASES = {"dark": "textual-dark", "light": "textual-light"}
"""Short names for Textual's default themes."""
