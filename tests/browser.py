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
