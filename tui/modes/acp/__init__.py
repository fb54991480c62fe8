"""``baton --mode acp``: baton as an Agent Client Protocol agent (Zed, JetBrains, Neovim, Toad).

- :mod:`server`: the entry point, the start-up fast path and the SDK connection.
- :mod:`transport`: JSON-RPC messages on stdin/stdout (malformed input answered, never fatal).
- :mod:`client`: what baton asks of the editor (updates, permission, files).
- :mod:`agent`: the protocol methods; :mod:`session`: one ACP session around a CodingSession.
- :mod:`updates` and :mod:`tool_info`: events → ``session/update`` payloads; :mod:`prompt`: ACP
  content blocks → a baton prompt; :mod:`config`: the model and thinking selectors.

Nothing here imports textual, and nothing but protocol reaches stdout.
"""
