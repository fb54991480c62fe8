"""Hooks with Claude Code's command-hook contract (``hooks`` in settings).

``config`` reads the settings shape, ``runner`` runs one command (JSON on stdin, killed at its
timeout), ``manager`` decides what each event's outcome means for the session.
"""
