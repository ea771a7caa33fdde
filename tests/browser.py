"""Headless Chromium for the tests that check a generated page in a real browser (memory plot, sweep Pareto view).

The screenshot is taken with exact colours (no HiDPI scaling, no colour management between the page and the PNG),
so a test may look for a colour the page draws.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest


def chromium() -> str:
    """The Chromium binary, or skip the test with the way to install it."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        "headless Chromium is not installed (neither `chromium` nor `chromium-browser` is on PATH); "
        ".ci/run installs Debian's chromium package, or run `apt-get install chromium`"
    )


def screenshot(page: Path, png: Path, width: int, height: int) -> np.ndarray:
    """Render ``page`` at ``width`` x ``height`` into ``png``; its pixels as an (height, width, 3) int16 array."""
    from PIL import Image

    browser = chromium()
    home = png.parent / f"{png.stem}-home"
    home.mkdir(parents=True, exist_ok=True)
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--force-color-profile=srgb",
        "--disable-dev-shm-usage",
        "--no-first-run",
        f"--user-data-dir={home / 'profile'}",
        f"--window-size={width},{height}",
        f"--screenshot={png}",
        page.resolve().as_uri(),
    ]
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(home)}
    )
    assert result.returncode == 0 and png.is_file(), f"chromium failed ({result.returncode}):\n{result.stderr}"
    with Image.open(png) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


def rendered_dom(page: Path, width: int, height: int) -> str:
    """The page's DOM after Chromium ran its scripts (``--dump-dom``): lets a test read layout the browser
    computed (a script in the page writes it into an element)."""
    browser = chromium()
    home = page.parent / f"{page.stem}-dom-home"
    home.mkdir(parents=True, exist_ok=True)
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--force-device-scale-factor=1",
               "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={home / 'profile'}",
               f"--window-size={width},{height}", "--dump-dom", page.resolve().as_uri()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(home)})
    assert result.returncode == 0, f"chromium failed ({result.returncode}):\n{result.stderr}"
    return result.stdout


TEXT_GEOMETRY = """
<script>
(function () {
  function rects(el) {
    if (el instanceof SVGElement) { var b = el.getBoundingClientRect(); return [[b.left, b.top, b.right, b.bottom]]; }
    var range = document.createRange(); range.selectNodeContents(el);
    return Array.prototype.map.call(range.getClientRects(), function (r) { return [r.left, r.top, r.right, r.bottom]; });
  }
  var texts = [];
  document.querySelectorAll("h1, h2, h3, p, th, td, li, span, text").forEach(function (el, index) {
    if (el.children.length > 0 && !(el instanceof SVGElement)) {
      var own = Array.prototype.some.call(el.childNodes, function (n) { return n.nodeType === 3 && n.textContent.trim(); });
      if (!own) return;  /* a container: its children are measured themselves */
    }
    if (!el.textContent.trim()) return;
    rects(el).forEach(function (r) {
      if (r[2] - r[0] > 0 && r[3] - r[1] > 0) texts.push({id: index, box: r, text: el.textContent.trim()});
    });
  });
  var pre = document.createElement("pre"); pre.id = "text-geometry";
  pre.textContent = JSON.stringify({texts: texts, scroll: document.documentElement.scrollWidth,
                                    client: document.documentElement.clientWidth});
  document.body.appendChild(pre);
})();
</script>
"""
"""Appended to a page: writes the box of every piece of text (HTML line boxes, SVG text) and the page's widths."""


def text_geometry(page: Path, width: int, height: int) -> dict:
    """Where Chromium put each text of ``page`` at ``width`` pixels, and whether the page is wider than that.

    The page is copied beside itself with :data:`TEXT_GEOMETRY` appended, so the file a test checks stays as written.
    """
    import html
    import json
    import re

    measured = page.with_name(f"{page.stem}-measured.html")
    measured.write_text(page.read_text(encoding="utf-8").replace("</body>", TEXT_GEOMETRY + "</body>"),
                        encoding="utf-8")
    dom = rendered_dom(measured, width, height)
    found = re.search(r'<pre id="text-geometry">(.*?)</pre>', dom, re.S)
    assert found is not None, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


def overlapping_texts(geometry: dict, slack: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of distinct texts whose boxes overlap by more than ``slack`` pixels each way."""
    texts = geometry["texts"]
    pairs = []
    for index, first in enumerate(texts):
        for second in texts[index + 1:]:
            a, b = first["box"], second["box"]
            if first["id"] != second["id"] and a[0] < b[2] - slack and b[0] < a[2] - slack \
                    and a[1] < b[3] - slack and b[1] < a[3] - slack:
                pairs.append((first["text"], second["text"]))
    return pairs
