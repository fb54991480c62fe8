"""MCP client: servers from ``mcp.json`` files become agent tools named ``mcp__<server>__<tool>``.

``config`` reads and expands the configuration, ``connection`` keeps one server running (started
in the background, restarted after a crash), ``tool`` is the :class:`AgentTool` for one server
tool, ``results`` turns MCP results into tool results, ``manager`` runs them all for a session.
The official SDK (``mcp``) is imported only once a server is configured.
"""
