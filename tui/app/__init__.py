"""The interactive Textual app: the app, its slash commands and widgets, the early frame."""
