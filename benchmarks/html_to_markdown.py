"""HTML -> Markdown for web_fetch: the time to convert a 1 MB page (``python -m benchmarks.html_to_markdown``).

The page is Python's own IDLE documentation (``idlelib/help.html``, a Sphinx page) repeated to
1 MB, converted as web_fetch converts it (:func:`baton.tools.web_content.html_to_markdown`, the
same options and clean-ups). Prints the best of five runs, and the time of the first conversion,
which includes importing the converter.
"""

from __future__ import annotations

import idlelib
import os
import time

from baton.tools.web_content import html_to_markdown

TARGET = 1024 * 1024
RUNS = 5


def page() -> str:
    """A 1 MB documentation page: the IDLE help's body repeated inside one document."""
    with open(os.path.join(os.path.dirname(idlelib.__file__), "help.html"), encoding="utf-8") as handle:
        html = handle.read()
    head, _, rest = html.partition("<body")
    body = "<body" + rest.rsplit("</body>", 1)[0]
    copies = max(1, TARGET // len(body))
    return head + body * copies + "</body></html>"


def main() -> None:
    html = page()
    url = "https://docs.python.org/3/library/idle.html"
    start = time.perf_counter()
    markdown = html_to_markdown(html, url)
    first = time.perf_counter() - start
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        html_to_markdown(html, url)
        times.append(time.perf_counter() - start)
    print(f"html_to_markdown: {len(html.encode()) / 1e6:.2f} MB of HTML -> {len(markdown) / 1e3:.0f}k characters "
          f"of Markdown: best {min(times) * 1000:.0f} ms, median {sorted(times)[RUNS // 2] * 1000:.0f} ms "
          f"(first run with the import: {first * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
