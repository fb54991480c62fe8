"""Two coding sessions in one process keep their own rules for what they start.

The second session opened must change nothing of the first: the first one's bash calls, its
user commands (``!cmd``) and its hooks still get the variable its ``bash.passEnv`` lets through,
and its bash calls still run one at a time (``tools.maxProcesses: 1``). Real sessions, real
processes, the faux provider making the tool calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, FauxResponse, faux_model, faux_tool_call
from baton.sessions import CodingSession, SessionOptions
from tests.sessions.conftest import quiet_settings

# Logs its start, waits (at most 3 s) until two calls have started, logs its end, and says whether
# it saw the variable. Two calls allowed at once meet; one at a time never do.
COMMAND = ('echo start >> calls.log; for i in $(seq 60); do [ "$(grep -c start calls.log)" -ge 2 ] && break; '
           'sleep 0.05; done; echo end >> calls.log; echo "token=${BATON_HOUSE_TOKEN:+seen}" >> env.log')
SEEN = 'echo "token=${BATON_HOUSE_TOKEN:+seen}"'


def _peak(log: Path) -> int:
    running = peak = 0
    for line in log.read_text().split():
        running += 1 if line == "start" else -1
        peak = max(peak, running)
    return peak


async def _open(cwd: Path, api: str, **settings: object) -> CodingSession:
    cwd.mkdir()
    hook = {"type": "command", "command": f"{SEEN} >> hook.log"}
    options = SessionOptions(
        cwd=cwd, model=faux_model("m", provider="p", api=api), tools=["bash"], context_files=False,
        session="none", approval="full",
        settings=quiet_settings(hooks={"UserPromptSubmit": [{"matcher": "", "hooks": [hook]}]}, **settings),
    )
    return await CodingSession.open(options)


async def test_two_sessions_in_one_process_keep_their_own_pass_list_and_process_limit(
    baton_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BATON_HOUSE_TOKEN", "tok-house-5c1d9e")
    strict, plain = tmp_path / "strict", tmp_path / "plain"
    with FauxProvider("faux-strict") as strict_model, FauxProvider("faux-plain") as plain_model:
        for provider in (strict_model, plain_model):
            provider.add(FauxResponse(content=[faux_tool_call("bash", {"command": COMMAND}) for _ in range(2)]),
                         "done")
        first = await _open(strict, "faux-strict", bash={"passEnv": ["BATON_HOUSE_TOKEN"]},
                            tools={"maxProcesses": 1})
        second = await _open(plain, "faux-plain")  # opened after: must change nothing of the first
        try:
            for session in (first, second):
                await session.prompt("run them")
                typed = await session.run_bash(SEEN)
                (session.cwd / "user.log").write_text(typed.output)
        finally:
            await first.close()
            await second.close()
    for log in ("env.log", "user.log", "hook.log"):
        assert set((strict / log).read_text().split()) == {"token=seen"}, log
        assert set((plain / log).read_text().split()) == {"token="}, log
    assert _peak(strict / "calls.log") == 1
    assert _peak(plain / "calls.log") == 2
