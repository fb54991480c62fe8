"""The session's checks around every tool call, in one chain.

The agent offers one ``before_tool_call`` and one ``after_tool_call`` hook; the session has
several concerns that need them (hooks from settings, the permission policy, checkpoints). Each
registers a gate here; the chain runs them in registration order. Before a call, the first gate
that blocks wins and the rest are not asked; after a call, each gate sees the result the previous
one left. A gate that raises blocks its call (before) or turns the result into an error (after),
as the agent does for a single hook.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import TypeAlias, TypeVar

from baton.agent.execution import (
    AfterToolCall,
    AfterToolCallContext,
    AfterToolCallResult,
    BeforeToolCall,
    BeforeToolCallResult,
    ToolCallContext,
)
from baton.agent.tool import AgentToolResult

BeforeGate: TypeAlias = BeforeToolCall
AfterGate: TypeAlias = AfterToolCall
T = TypeVar("T")


async def _settle(value: T | Awaitable[T]) -> T:
    return await value if inspect.isawaitable(value) else value


class ToolGates:
    """Ordered before/after gates; pass :meth:`before` and :meth:`after` to the agent."""

    def __init__(self) -> None:
        self._before: list[tuple[str, BeforeGate]] = []
        self._after: list[tuple[str, AfterGate]] = []

    def add_before(self, name: str, gate: BeforeGate, *, first: bool = False) -> None:
        """Register ``gate`` to run before each tool call (after those already registered;
        ``first``: before them, for a gate whose refusal must come before any other's effects)."""
        if first:
            self._before.insert(0, (name, gate))
        else:
            self._before.append((name, gate))

    def add_after(self, name: str, gate: AfterGate) -> None:
        """Register ``gate`` to run after each tool call (after those already registered)."""
        self._after.append((name, gate))

    def remove(self, name: str) -> None:
        """Forget every gate registered under ``name``."""
        self._before = [(n, g) for n, g in self._before if n != name]
        self._after = [(n, g) for n, g in self._after if n != name]

    async def before(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        """Run the before-gates in order; the first block answers the call."""
        for _, gate in list(self._before):
            verdict = await _settle(gate(context, signal))
            if isinstance(verdict, BeforeToolCallResult) and verdict.block:
                return verdict
        return None

    async def after(self, context: AfterToolCallContext, signal: asyncio.Event) -> AgentToolResult | None:
        """Run the after-gates in order, each seeing the result the previous one left."""
        current = context.result
        is_error = context.is_error
        changed = False
        for _, gate in list(self._after):
            step = AfterToolCallContext(
                context.assistant_message, context.tool_call, context.tool, context.args, current, is_error,
                context.messages,
            )
            change = await _settle(gate(step, signal))
            if isinstance(change, AgentToolResult):
                current, is_error, changed = change, change.is_error, True
            elif isinstance(change, AfterToolCallResult):
                is_error = change.is_error if change.is_error is not None else is_error
                current = AgentToolResult(
                    list(change.content) if change.content is not None else current.content,
                    change.details if change.details is not None else current.details,
                    is_error,
                )
                changed = True
        return current if changed else None
