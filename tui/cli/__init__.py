"""The command line: `baton`'s entry point, its arguments and errors, launching a mode, opening a session."""
