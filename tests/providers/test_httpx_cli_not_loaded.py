"""httpx's command-line client (and click, which it loads) stays out of baton's process (issue 30:
~1.5 MB of RSS for a client baton never runs); httpx itself works as without click."""

from __future__ import annotations

import subprocess
import sys


def test_importing_httpx_after_baton_leaves_click_out() -> None:
    code = (
        "import sys, baton.providers, httpx\n"
        "assert 'click' not in sys.modules, sorted(m for m in sys.modules if m.startswith('click'))\n"
        "assert httpx.Client and httpx.AsyncClient and callable(httpx.main)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
