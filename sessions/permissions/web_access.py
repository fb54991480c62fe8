"""What the permission policy tells a web tool while it runs: which hosts the user's allow rules
name exactly (only those may resolve to a private address), and whether a redirect to another host
is allowed without asking (a hop the policy would ask about is reported to the model instead, so
the next call is judged, and asked, on its own)."""

from __future__ import annotations

from dataclasses import dataclass

from baton.sessions.permissions.policy import Policy


@dataclass(slots=True)
class PolicyWebAccess:
    """The :class:`baton.tools.web_fetch.WebAccess` of one web tool under ``policy``."""

    policy: Policy
    tool: str
    parameter: str

    def named_exactly(self, host: str) -> bool:
        """Whether an allow rule of this tool names ``host`` exactly."""
        return self.policy.rules.names_host(self.tool, host)

    def hop_refusal(self, url: str, host: str) -> str | None:
        """Why a redirect to ``url`` on ``host`` is not followed (``None``: allowed unasked)."""
        decision = self.policy.decide(self.tool, {self.parameter: url})
        if decision.action == "allow":
            return None
        if decision.action == "deny":
            return f"{decision.reason}"
        return f"fetching from {host} needs its own approval ({decision.reason})"
