"""Open a local HTML page in a real headless Chromium, offline, and report what a reader gets.

Driven by Playwright for Python with Debian's own Chromium (``executable_path``): no browser is
downloaded. Every request that is not a local file is aborted and recorded, so a page that
needs the network shows it twice: the recorded request and the console error of the failed
load. The accessibility check is axe-core, injected from the copy bundled in the
``axe-playwright-python`` wheel.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# Playwright waits 30 s by default; on a shared 2-core machine under full load, starting
# Chromium and running axe over a long page has taken several times its quiet duration.
TIMEOUT_MS = 120_000
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
# Where screenshots go; printed by the tests so CI can keep them as artifacts.
ARTIFACTS_ENV = "SEQLAB_BROWSER_ARTIFACTS"
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
PHONE = {"width": 375, "height": 812}  # an iPhone X/11 Pro class screen, in CSS pixels
DESKTOP = {"width": 1280, "height": 900}
# axe-core impact levels that fail a page. "moderate" and "minor" are reported by the tests
# but do not fail them: the requirement is no serious violation.
FAILING_IMPACTS = ("serious", "critical")
# Flags for a sandboxed, quiet, offline run. Root cannot use Chromium's own sandbox
# (--no-sandbox); the page is our own local file, and every non-file request is aborted anyway.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--disable-dev-shm-usage",
]


def find_chromium() -> str | None:
    explicit = os.environ.get("SEQLAB_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).is_file():
            return candidate
    return shutil.which("chromium")


def require_browser() -> str:
    """The Chromium to use; skips with the reason when there is none, but fails under CI,
    where a skipped browser check would hide a broken page."""
    reason = None
    chromium = find_chromium()
    if chromium is None:
        reason = "no browser found: install chromium (Debian: apt-get install chromium)"
    else:
        try:
            import axe_playwright_python  # noqa: F401
            import playwright.sync_api  # noqa: F401
        except ImportError as exc:
            reason = f"no browser driver: pip install playwright axe-playwright-python ({exc})"
    if reason is None:
        return chromium
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this check may not be skipped)")
    pytest.skip(reason)


def artifacts_dir() -> Path:
    folder = os.environ.get(ARTIFACTS_ENV) or os.path.join(tempfile.gettempdir(), "seqlab-browser-artifacts")
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


def axe_source() -> str:
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


@dataclass
class PageVisit:
    """What one page did at one width."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    violations: list[dict] = field(default_factory=list)  # axe-core's, every impact
    screenshot: Path | None = None
    page_width: int = 0  # document scroll width, to catch sideways scrolling
    page_height: int = 0  # document height as the page opens (details closed), for a length budget
    viewport_width: int = 0
    visible_text: str = ""
    boxes: dict[str, list[dict]] = field(default_factory=dict)  # selector -> bounding boxes

    def failing_violations(self) -> list[str]:
        return [
            f"{v['impact']}: {v['id']} ({v['help']}) at {[n['target'] for n in v['nodes'][:3]]}"
            for v in self.violations
            if v.get("impact") in FAILING_IMPACTS
        ]


class Browser:
    """One Chromium for a test session; `visit` opens a page in a fresh context."""

    def __init__(self, executable: str):
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_ARGS, timeout=TIMEOUT_MS
        )
        self._axe = axe_source()

    def close(self) -> None:
        self._browser.close()
        self._playwright.stop()

    def visit(
        self, page_file: Path, viewport: dict, name: str, boxes: tuple[str, ...] = (), accessibility: bool = True
    ) -> PageVisit:
        # bypass_csp: the exam's content security policy refuses every script, axe-core's included;
        # the route below still refuses and records any request, so offline is checked without it.
        context = self._browser.new_context(viewport=viewport, bypass_csp=True)
        context.set_default_timeout(TIMEOUT_MS)
        visit = PageVisit(url=Path(page_file).resolve().as_uri(), viewport_width=viewport["width"])

        def route(route):  # the page must work without the network: anything else is refused
            if route.request.url.startswith(LOCAL_SCHEMES):
                route.continue_()
            else:
                route.abort()

        context.route("**/*", route)
        page = context.new_page()
        # Recorded from the page's side, so a request counts even when no route saw it.
        page.on("request", lambda r: None if r.url.startswith(LOCAL_SCHEMES) else visit.outside_requests.append(r.url))
        page.on("websocket", lambda ws: visit.outside_requests.append(ws.url))
        page.on("console", lambda m: visit.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: visit.console_errors.append(f"uncaught: {e}"))
        try:
            page.goto(visit.url, wait_until="load")
            # The screenshot shows the page as it opens; then the closed <details> (the
            # side-by-side code) are opened so that what they hold is measured and checked too.
            visit.screenshot = artifacts_dir() / f"{name}-{viewport['width']}px.png"
            page.screenshot(path=str(visit.screenshot), full_page=True)
            visit.page_height = page.evaluate("document.documentElement.scrollHeight")
            page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
            visit.page_width = page.evaluate("document.documentElement.scrollWidth")
            visit.visible_text = page.inner_text("body")
            for selector in boxes:
                # Measured where the page lays them out, with nothing scrolled sideways: an element
                # that only a sideways scroll (of the page or of a table's frame) would bring in
                # lies beyond the screen's edge.
                visit.boxes[selector] = page.evaluate(_MEASURE, selector)
            if accessibility:
                page.add_script_tag(content=self._axe)
                result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
                visit.violations = result["violations"]
        finally:
            context.close()
        return visit


_MEASURE = """selector => Array.from(document.querySelectorAll(selector), e => {
    const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top + window.scrollY, width: r.width, height: r.height,
            visible: e.checkVisibility({visibilityProperty: true, opacityProperty: true}),
            text: (e.getAttribute("aria-label") || e.textContent || "").trim().slice(0, 80)};
})"""
