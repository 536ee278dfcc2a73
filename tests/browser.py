"""Headless Chromium for the slide and site tests (Debian's chromium with chromedriver)."""

import io
import os
import shutil
import tempfile

import pytest
from PIL import Image, ImageStat

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
# CI installs the browser (.ci/run): there a missing browser fails the tests, never skips them.
needed = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER) and not os.environ.get("CI"),
    reason="needs chromium and chromedriver (apt-get install)",
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
]


def start():
    """A headless Chromium that keeps its console and network logs."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM or "/usr/bin/chromium"
    for flag in [*FLAGS, f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-')}"]:
        options.add_argument(flag)
    options.set_capability(
        "goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"}
    )
    driver = webdriver.Chrome(
        options=options, service=Service(CHROMEDRIVER or "/usr/bin/chromedriver")
    )
    driver.set_script_timeout(30)
    return driver


def not_blank(png):
    """A figure, not an empty or single-colour box: varied pixels, many of them not white."""
    image = Image.open(io.BytesIO(png)).convert("L")
    dark = sum(image.histogram()[:200]) / (image.width * image.height)
    return image.width > 100 and ImageStat.Stat(image).stddev[0] > 10 and dark > 0.02


def painted(browser, figure, name):
    """True once `figure` (an <img> on screen) shows a drawing, waiting up to 4 s for the
    browser to decode and paint it; else False, with a screenshot of the page saved."""
    import time
    from pathlib import Path

    for _ in range(20):
        if not_blank(figure.screenshot_as_png):
            return True
        time.sleep(0.2)
    Path(tempfile.gettempdir(), f"{name}-blank.png").write_bytes(
        browser.get_screenshot_as_png()
    )
    return False
