"""The HTML report in a real browser: headless Chromium driven by selenium through the system
chromedriver (Debian's chromium and chromium-driver; the Makefile installs them when missing).

Loads a report built from a tiny results folder and checks what a reader sees: every image
decoded (non-zero natural width), every internal link resolves, one summary row per planned
paper, the claim filter works. A screenshot of the top is written for a person to look at
(`runs/report-screenshot.png`).
"""

import shutil
from pathlib import Path

import pytest

from iclr25.core.report import build_html
from iclr25.core.testing import needs
from iclr25.papers import PLANNED

ROOT = Path(__file__).resolve().parents[2]
CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    needs("selenium"),
    pytest.mark.skipif(
        not (CHROMEDRIVER and CHROMIUM),
        reason="no chromium/chromedriver on PATH (`apt-get install chromium chromium-driver`)",
    ),
]


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1600"):
        opts.add_argument(arg)
    opts.add_argument("--disable-dev-shm-usage")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


def _tiny_results(dst: Path) -> Path:
    """Two experiments of the committed results: one with figures, one without."""
    for rel in ("mgda/toy/full", "lsa_scaling/ode/full"):
        shutil.copytree(ROOT / "results" / rel, dst / rel)
    return dst


def test_report_in_a_real_browser(browser, tmp_path):
    index = build_html(_tiny_results(tmp_path / "results"), tmp_path / "report")
    browser.get(index.as_uri())
    images = browser.find_elements("css selector", "img")
    assert images, "the report has figures"
    widths = [browser.execute_script("return arguments[0].naturalWidth", im) for im in images]
    assert all(w > 0 for w in widths), widths
    missing = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href^=\"#\"]'))"
        ".map(a => a.getAttribute('href').slice(1))"
        ".filter(id => !document.getElementById(id))"
    )
    assert missing == [], missing
    rows = browser.find_elements("css selector", "#summary tr")
    assert len(rows) == 1 + len(PLANNED)  # header + one per planned paper
    box = browser.find_element("id", "filter")
    box.send_keys("lsa_scaling.ode")
    shown = [
        r for r in browser.find_elements("css selector", "#claims tbody tr") if r.is_displayed()
    ]
    assert shown and all("lsa_scaling.ode" in r.text for r in shown)
    box.clear()
    out = ROOT / "runs" / "report-screenshot.png"
    out.parent.mkdir(exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(out)) and out.stat().st_size > 10_000
