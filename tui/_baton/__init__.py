"""baton: a terminal coding agent whose conversations survive switching models mid-session.

The installed package maps the repository's layer folders into one namespace
(``baton.providers``, ``baton.agent``, ``baton.tools``, ``baton.sessions``, ``baton.tui``);
this module is the package root and the single source of the version (see docs/architecture.md).
"""

__version__ = "0.2.0"
