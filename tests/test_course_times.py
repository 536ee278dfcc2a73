"""Each notebook's "Time:" is the run time `make course` recorded (tools/course_times.py), and
the path alone runs within 15 minutes on that quiet machine."""

import json
import re

from tools import ROOT, course_times, is_deep_dive, notebooks

import pytest

RECORD = json.loads(course_times.RECORD.read_text())
SECONDS = {r["name"]: r["seconds"] for r in RECORD["runs"]}


def test_the_record_names_its_machine_command_and_every_notebook():
    assert RECORD["hardware"] and RECORD["versions"]["tensorflow"]
    assert "make course" in RECORD["command"]
    assert set(SECONDS) == {p.stem for p in notebooks()}
    assert all(r["others_cpu_share"] < 0.1 for r in RECORD["runs"]), "a quiet machine"


def test_the_path_runs_in_15_minutes_the_deep_dives_apart():
    path = sum(s for name, s in SECONDS.items() if not is_deep_dive(name))
    assert path <= 15 * 60


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.stem)
def test_the_header_gives_the_recorded_time(path):
    header = next(
        "".join(c["source"])
        for c in json.loads(path.read_text())["cells"]
        if "".join(c["source"]).startswith("# ")
    )
    line = re.search(course_times.TIME_LINE, header).group(0)
    assert line == course_times.time_line(SECONDS[path.stem], RECORD["hardware"])


def test_the_course_map_gives_the_recorded_times():
    rows = {
        m.group(1): line.rsplit(" | ", 1)[1]
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("| ")
        and (m := re.search(r"\(notebooks/(\w+)\.ipynb\)", line))
    }
    assert rows == {n: f"{course_times.about(s)} |" for n, s in SECONDS.items()}


@pytest.mark.parametrize(
    "seconds, text",
    [
        (3, "about 5 s"),
        (42, "about 40 s"),
        (97, "about 95 s"),
        (100, "about 1.5 minutes"),
        (140, "about 2.5 minutes"),
        (600, "about 10 minutes"),
    ],
)
def test_times_are_rounded_as_a_learner_reads_them(seconds, text):
    assert course_times.about(seconds) == text


def test_the_machine_is_named_short():
    line = "Intel(R) Xeon(R) Processor (2 cores usable, AMX), no GPU"
    assert course_times.machine(line) == "Intel Xeon Processor, 2 cores"
