"""Widgets of the interactive app: transcript, messages, tools, editor, pickers, status bar."""
