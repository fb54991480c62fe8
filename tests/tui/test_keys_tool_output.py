"""The second wall: a key a tool prints reaches neither the model, the screen, JSON output nor
the session file — in any encoding — even with the sandbox off (``--approval full``).

Driven through the real program (``baton -p --mode json``) against a hostile local provider
that makes the tool calls, with the key where a user keeps it (``~/.baton/models.json``,
an environment variable, ``--api-key-file``, a ``!command``) and printed by real commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.key_leaks import encodings, leaks
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, session_files, write_models_json

API = "openai-completions"
# A key that URL-encoding changes ('+', '/', '=', '?') and whose base64 differs between the
# standard and the URL-safe alphabet in every alignment.
KEY = "bk-Zq8+v2/Lr7Yt9~Wm4Xc1Nb6?Pd3Kf0Jh5>Gs8=Ta2Qe7Uy"

# Every encoding of $K the wall must catch, printed by ordinary commands.
ENCODE = r"""
printf '%s' "$K" | base64
printf 'a%s' "$K" | base64 -w0; echo
printf 'ab%s' "$K" | base64 -w0; echo
printf 'abc%s' "$K" | base64 -w0 | tr '+/' '-_'; echo
printf 'a%s' "$K" | base64 -w0 | tr '+/' '-_'; echo
printf 'ab%s' "$K" | base64 -w0 | tr '+/' '-_'; echo
printf '%s' "$K" | od -An -tx1 | tr -d ' \n'; echo
printf '%s' "$K" | od -An -tx1 | tr -d ' \n' | tr a-f A-F; echo
python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$K"
printf '%s' "$K" | tr a-z A-Z; echo
printf '%s' "$K" | tr A-Z a-z; echo
printf '%s' "$K" | fold -w 20; echo
echo done-encoding
"""


def test_the_key_is_a_hard_one() -> None:
    forms = encodings(KEY)
    assert forms["url"] != KEY
    assert all(forms[f"base64+{i}"] != forms[f"base64url+{i}"] for i in range(3))


@pytest.fixture
def user(tmp_path: Path) -> Path:
    """A home folder holding ``.baton`` (``$BATON_HOME``), as on a user's machine."""
    path = tmp_path / "user"
    (path / ".baton").mkdir(parents=True)
    return path


def _run(user: Path, workdir: Path, calls: list[tuple[str, dict[str, Any]]], *flags: str,
         key: str = KEY, api_key_in_models_json: bool = True, **env: str) -> dict[str, str]:
    """Let the hostile provider make ``calls``, then answer; every output baton produced."""
    home = user / ".baton"
    replies = [Reply.sse(tool_call_reply(API, f"call_{i}", name, args)) for i, (name, args) in enumerate(calls)]
    replies.append(Reply.sse(text_reply(API, "Done.")))
    with ReplayServer(replies) as server:
        provider = models_json_provider(API, server.url)
        if api_key_in_models_json:
            provider["apiKey"] = key
        else:
            del provider["apiKey"]
        write_models_json(home, {"replay": provider})
        result = run_baton(home, workdir, "-p", "--mode", "json", "--model", "replay/replay-model", *flags,
                           "go", HOME=str(user), **env)
        requests = [json.dumps(r.json()) for r in server.requests]
    assert result.returncode == 0, result.stderr
    assert "tool_execution_end" in result.stdout
    outputs = {"stdout": result.stdout, "stderr": result.stderr}
    outputs.update({f"request {i}": body for i, body in enumerate(requests)})
    outputs.update({f"session {p.name}": p.read_text() for p in session_files(home)})
    return outputs


def _bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command})


def test_cat_models_json_with_the_sandbox_off(user: Path, workdir: Path) -> None:
    """The issue's attack: ``cat ~/.bat''on/models.json`` printed the stored key, which then
    reached the provider and the session file. With the sandbox off, the wall still holds."""
    command = ("cat ~/.bat''on/models.json; echo\n"
               "K=$(sed -n 's/.*\"apiKey\": \"\\([^\"]*\\)\".*/\\1/p' ~/.bat''on/models.json)\n" + ENCODE)
    outputs = _run(user, workdir, [_bash(command)], "--approval", "full")
    # The command ran and its output went back (a sandbox or rule that refuses it holds too).
    assert "done-encoding" in outputs["request 1"] or "Not run" in outputs["request 1"]
    assert leaks(outputs, KEY) == []


def test_a_key_the_user_passes_to_commands_is_still_redacted(user: Path, workdir: Path) -> None:
    """``bash.passEnv`` gives a command the user's token; what it prints is still redacted."""
    token = "ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78"
    (user / ".baton" / "settings.json").write_text(json.dumps({"bash": {"passEnv": ["GITHUB_TOKEN"]}}))
    outputs = _run(user, workdir, [_bash('K="$GITHUB_TOKEN"; echo "token=$K"\n' + ENCODE)],
                   GITHUB_TOKEN=token)
    assert "token=" in outputs["request 1"] and "done-encoding" in outputs["request 1"]
    assert leaks(outputs, token) == []


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "CORP_SERVICE_TOKEN", "STRIPE_SECRET", "DB_PASSWORD"])
def test_credential_variables_are_redacted_from_files_the_model_reads(
    name: str, user: Path, workdir: Path
) -> None:
    """A project's ``.env`` holds the same value as a credential variable of baton's environment:
    ``read``, ``grep`` and ``bash`` show it redacted, in every encoding the file holds."""
    value = "Vx9-" + name.lower().replace("_", "") + "-4RtY+7uI/0pLk="
    forms = encodings(value)
    (workdir / ".env").write_text(f"{name}={value}\n" + "".join(f"{k}: {v}\n" for k, v in forms.items()))
    calls = [("read", {"path": ".env"}), ("grep", {"pattern": "base64", "path": "."}), _bash("cat .env")]
    outputs = _run(user, workdir, calls, **{name: value})
    assert "raw:" in outputs["request 3"] and "base64url+2:" in outputs["request 3"]
    assert leaks(outputs, value) == []


def test_an_api_key_file_key_is_redacted(user: Path, workdir: Path, tmp_path: Path) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_text(KEY + "\n")
    outputs = _run(user, workdir, [_bash(f"K=$(cat {key_file})\n" + ENCODE)], "--api-key-file", str(key_file),
                   api_key_in_models_json=False)
    assert "done-encoding" in outputs["request 1"]
    assert leaks(outputs, KEY) == []


def test_a_command_key_is_redacted_once_resolved(user: Path, workdir: Path, tmp_path: Path) -> None:
    """``apiKey: "!command"``: the key exists only as the command's output."""
    vault = tmp_path / "vault.txt"
    vault.write_text(KEY)
    outputs = _run(user, workdir, [_bash(f"K=$(cat {vault})\n" + ENCODE)], "--approval", "full",
                   key=f"!cat {vault}")
    assert "done-encoding" in outputs["request 1"]
    assert leaks(outputs, KEY) == []


def test_a_key_printed_in_two_pieces_never_shows_half(user: Path, workdir: Path, tmp_path: Path) -> None:
    """Streamed output (``tool_execution_update`` events) holds back a tail that begins a key."""
    vault = tmp_path / "vault.txt"
    vault.write_text(KEY)
    half = len(KEY) // 2
    command = (f"K=$(cat {vault}); printf '%s' \"${{K:0:{half}}}\"; sleep 1.5; "
               f"printf '%s\\n' \"${{K:{half}}}\"; echo finished")
    outputs = _run(user, workdir, [_bash(command)], "--approval", "full", key=f"!cat {vault}")
    assert "tool_execution_update" in outputs["stdout"]
    assert "finished" in outputs["request 1"]
    assert leaks(outputs, KEY) == []
    assert KEY[:half] not in outputs["stdout"]


def test_short_values_are_left_alone(user: Path, workdir: Path) -> None:
    """A credential variable under eight characters is no secret to look for: the same word in
    a command's output stays as it is (and the variable itself still stays out of commands)."""
    outputs = _run(user, workdir, [_bash("echo \"[$SHORT_TOKEN]\" dev1234")], "--approval", "full",
                   SHORT_TOKEN="dev1234")
    assert "[] dev1234" in outputs["request 1"]
