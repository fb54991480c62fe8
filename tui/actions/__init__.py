"""Actions: what a user asks of a session, defined once for every front end.

- :mod:`action`: what an action is (arguments, session operation, availability, report) and its
  bindings (:class:`~action.RpcCommand`, :class:`~action.AcpCommand`, :class:`~action.AcpOption`).
- :mod:`registry`: every action by name; the front ends look theirs up there.
- the actions, by topic: :mod:`models` (``/model``, ``/thinking``), :mod:`conversation`
  (``/compact``, ``/new``, ``/resume``, ``/fork``), :mod:`rewind`, :mod:`session_file`
  (``/name``, ``/export``), :mod:`approval`.
- :mod:`fields` (reading an RPC command's fields) and :mod:`text` (plain-text helpers).

The app (``tui/app/command_registry.py``), RPC (``tui/modes/rpc_commands.py``) and ACP
(``tui/modes/acp/``) bind them; nothing here imports textual, the app or a mode.
"""
