"""JupyterLab in headless Chromium, as a learner meets it (issue 69).

A JupyterLab server is started on a free localhost port, its root a temporary copy of notebook
01, its kernels in `smoke` with a build folder of their own (COURSE_BUILD: progress.json lands
there, never in the course). Chromium opens the notebook and runs all its cells from the Run
menu; then exercise 3 (a parameter count, the same on every machine) is answered wrong, then
right, in its cell, each run with Shift+Enter, and the progress cell is run again: its table and
the progress file the kernel wrote hold the exercise as right. JupyterLab must not ask about
Jupyter news on the way (the venv's overrides.json, written by the Makefile).

On a failure the test prints the code cells' outputs (and those that did not run),
JupyterLab's console errors and the end of the server's log, and saves a screenshot of what
JupyterLab showed in the test's tmp folder.
"""

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from helpers import config

import browser as chromium
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

pytestmark = [chromium.needed, pytest.mark.browser, pytest.mark.notebooks]
NOTEBOOK = "01_cnn_basics_mnist.ipynb"
ANSWER_CELL = "q[3].check("  # exercise 3: the parameters without the second pool
WRONG, RIGHT = 93_322, 388_234  # the network with both pools; without the second one
NEWS = "official Jupyter news"  # JupyterLab's question: "... get notified about official ..."
SERVER_START_S, LOAD_S, RUN_ALL_S, CELL_S = 90, 90, 240, 60

# The code cells of the open notebook, each as its prompt ("[3]:", "[*]:", "[ ]:"), its source
# and its outputs' text. JupyterLab 4's default windowing (content-visibility) keeps every cell
# in the page; a cell's source is read from its editor's lines.
CELLS_JS = """
const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
if (!panel) return null;
return [...panel.querySelectorAll('.jp-Notebook .jp-Cell.jp-CodeCell')].map(cell => ({
  prompt: (cell.querySelector('.jp-InputPrompt') || {}).textContent || '',
  source: [...cell.querySelectorAll('.cm-content .cm-line')]
    .map(line => line.textContent).join('\\n'),
  output: (cell.querySelector('.jp-OutputArea') || {}).innerText || '',
}));
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, seconds, what, every=0.25):
    """`condition()`'s first true value, polled for up to `seconds`; else AssertionError
    saying `what` (a text, or a function that gives it then)."""
    end = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(
                f"after {seconds} s: {what() if callable(what) else what}"
            )
        time.sleep(every)


class Lab:
    """A JupyterLab server of this test: its address, token, folders and log."""

    def __init__(self, folder):
        self.folder = folder
        self.root, self.build = folder / "course", folder / "build"
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.log = folder / "jupyterlab.log"
        self.process = None

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def api(self, path):
        """JSON from the server's REST API, None while it does not answer."""
        request = urllib.request.Request(
            self.url(path), headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return json.loads(response.read())
        except OSError:
            return None

    def log_tail(self, lines=40):
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def start(self):
        (self.root / "notebooks").mkdir(parents=True)
        shutil.copy(config.ROOT / "notebooks" / NOTEBOOK, self.root / "notebooks")
        home = {  # Jupyter's own folders, so the learner's home settings play no part
            name: self.folder / folder
            for name, folder in (
                ("JUPYTER_CONFIG_DIR", "jupyter-config"),
                ("JUPYTER_DATA_DIR", "jupyter-data"),
                ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"),
                ("JUPYTERLAB_SETTINGS_DIR", "lab-user-settings"),
                ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces"),
                ("IPYTHONDIR", "ipython"),
            )
        }
        # the kernels draw Jupyter's inline figures, not the tests' Agg ones
        env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
        env |= {k: str(v) for k, v in home.items()}
        env |= {"COURSE_PROFILE": "smoke", "COURSE_BUILD": str(self.build)}
        command = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            *(["--allow-root"] if os.name == "posix" and os.geteuid() == 0 else []),
        ]
        # a session of its own: stop() ends the server and its kernels together
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=self.root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_for(
            lambda: self.process.poll() is not None or self.api("api/status"),
            SERVER_START_S,
            f"JupyterLab did not answer on port {self.port}",
        )
        assert self.process.poll() is None, (
            f"JupyterLab stopped (exit code {self.process.returncode}):\n{self.log_tail()}"
        )

    def stop(self):
        """End the server and the kernels it started (its process group), waiting for them."""
        if self.process is None or self.process.poll() is not None:
            return
        for sig, seconds in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            try:
                self.process.wait(seconds)
                break
            except subprocess.TimeoutExpired:
                continue
        with contextlib.suppress(ProcessLookupError):  # a kernel left behind
            os.killpg(self.process.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    server = Lab(tmp_path_factory.mktemp("jupyterlab"))
    try:
        server.start()
        yield server
    finally:
        server.stop()


def cells(browser):
    return browser.execute_script(CELLS_JS) or []


def cell_index(browser, text):
    found = [i for i, c in enumerate(cells(browser)) if text in c["source"]]
    assert len(found) == 1, f"{len(found)} code cells hold {text!r}"
    return found[0]


def kernel_idle(lab):
    kernels = lab.api("api/kernels") or []
    return len(kernels) == 1 and kernels[0]["execution_state"] == "idle"


def done(prompt):
    """True for a cell that ran: "[12]:", not "[*]:" (running or queued) nor "[ ]:"."""
    return prompt.strip().strip("[]:").isdigit()


@contextlib.contextmanager
def shown_on_failure(browser, lab, folder):
    """On a failure: a screenshot, the cells' prompts and outputs, console errors, the log."""
    try:
        yield
    except BaseException:
        shot = folder / "jupyterlab.png"
        with contextlib.suppress(Exception):
            browser.save_screenshot(str(shot))
            print(f"JupyterLab as it was: {shot}")
        with contextlib.suppress(Exception):
            for i, cell in enumerate(cells(browser)):
                if cell["output"].strip() or not done(cell["prompt"]):
                    print(
                        f"--- code cell {i} {cell['prompt']}\n{cell['output'][-800:]}"
                    )
        with contextlib.suppress(Exception):
            for entry in browser.get_log("browser"):
                if entry["level"] == "SEVERE":
                    print("console:", entry["message"][:300])
        print(f"--- JupyterLab's log, its end:\n{lab.log_tail()}")
        raise


def asked_about_news(browser):
    """Whether JupyterLab shows its question about Jupyter news (a toast, bottom right)."""
    return NEWS in browser.find_element(By.TAG_NAME, "body").text


def run_cell(browser, index, source):
    """Type `source` into code cell `index` in place of what it holds, as a learner does
    (click, select all, type), and run it with Shift+Enter; its output once it ran."""
    before = cells(browser)[index]["prompt"]
    editor = browser.find_elements(
        By.CSS_SELECTOR,
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell .cm-content",
    )[index]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", editor)
    editor.click()
    if source is not None:
        editor.send_keys(Keys.CONTROL, "a")
        editor.send_keys(Keys.DELETE)
        editor.send_keys(source)
        wait_for(
            lambda: cells(browser)[index]["source"] == source,
            10,
            lambda: (
                f"code cell {index} reads {cells(browser)[index]['source']!r}, "
                f"not {source!r}"
            ),
        )
    editor.send_keys(Keys.SHIFT, Keys.ENTER)
    cell = wait_for(
        lambda: (
            (c := cells(browser)[index])["prompt"] != before and done(c["prompt"]) and c
        ),
        CELL_S,
        f"code cell {index} did not run (prompt still {before})",
    )
    return cell["output"]


def test_a_learner_runs_notebook_01_and_answers_an_exercise(lab, browser, tmp_path):
    with shown_on_failure(browser, lab, tmp_path):
        start = time.monotonic()
        browser.get(lab.url(f"lab/tree/notebooks/{NOTEBOOK}?token={lab.token}"))
        wait_for(
            lambda: len(cells(browser)) > 30 and kernel_idle(lab),
            LOAD_S,
            "the notebook did not open with an idle kernel",
        )
        print(f"notebook open, kernel idle: {time.monotonic() - start:.0f} s")
        assert not asked_about_news(browser)

        # Run > Run All Cells, from the menu bar
        menu = browser.find_element(
            By.XPATH,
            "//li[contains(@class,'lm-MenuBar-item')][normalize-space()='Run']",
        )
        menu.click()
        browser.find_element(
            By.XPATH,
            "//li[contains(@class,'lm-Menu-item')][.//div[contains(@class,"
            "'lm-Menu-itemLabel')][normalize-space()='Run All Cells']]",
        ).click()
        start = time.monotonic()
        wait_for(
            lambda: all(done(c["prompt"]) for c in cells(browser)) and kernel_idle(lab),
            RUN_ALL_S,
            "Run All did not run every code cell (an error stops it: its cell is above)",
            every=1,
        )
        print(f"Run All: {time.monotonic() - start:.0f} s")
        last = cells(browser)[-1]["output"]
        assert "to do" in last, f"the progress cell shows {last!r}"

        index = cell_index(browser, ANSWER_CELL)
        source = cells(browser)[index]["source"]
        assert "answer = None" in source, source
        wrong = source.replace("answer = None", f"answer = {WRONG}", 1)
        output = run_cell(browser, index, wrong)
        assert "Exercise 3: not yet" in output, output
        progress = lab.build / "progress.json"
        assert json.loads(progress.read_text()) == {"01": {"3": "not yet"}}

        output = run_cell(
            browser, index, source.replace("answer = None", f"answer = {RIGHT:,}")
        )
        assert "Exercise 3: right." in output, output
        assert json.loads(progress.read_text()) == {"01": {"3": "right"}}

        # the progress cell, run again as it stands
        table = run_cell(browser, len(cells(browser)) - 1, None)
        row = next(line for line in table.splitlines() if line.startswith("01"))
        assert row.split("\t")[3].strip() == "right", table

        # JupyterLab asked nothing about Jupyter news: the venv's overrides.json is read
        assert not asked_about_news(browser)
        notification = lab.api(
            "lab/api/settings/@jupyterlab/apputils-extension:notification"
        )
        defaults = {  # overrides.json's values become the settings' defaults
            key: value.get("default")
            for key, value in notification["schema"]["properties"].items()
        }
        news = defaults["fetchNews"], defaults["checkForUpdates"]
        assert news == ("false", False), (
            "JupyterLab would ask about Jupyter news: "
            f"{config.ROOT}/tools/templates/jupyterlab-overrides.json is not in "
            f"{sys.prefix}/share/jupyter/lab/settings/overrides.json (make's .venv recipe "
            "copies it there)"
        )
