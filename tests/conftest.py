"""Shared test settings: hypothesis profiles and the path to shared data."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# A run started in the background by a non-interactive shell (`pytest &`, as some CI
# runners do) has SIGINT ignored, and every child inherits that: the tests that press
# Ctrl-C on a `bytepair` child would wait for it forever. Take SIGINT back, so children
# start with Python's usual KeyboardInterrupt, as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parent.parent

# The quick tier (`pytest -m "not slow"`) is kept under 3 minutes: a test that is not
# marked slow and takes longer than this is named at the end of the run, to be marked.
QUICK_TEST_SECONDS = 5.0
_quick_seconds: dict[str, float] = {}


def shared_data_dir() -> Path:
    return Path(os.environ.get("BYTEPAIR_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(
            f"shared data not found at {path} (set BYTEPAIR_SHARED_DATA to the shared/data folder)"
        )
    return path


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "slow" not in report.keywords:
        _quick_seconds[report.nodeid] = _quick_seconds.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    over = sorted(
        (
            (seconds, test)
            for test, seconds in _quick_seconds.items()
            if seconds > QUICK_TEST_SECONDS
        ),
        reverse=True,
    )
    if over:
        terminalreporter.section("slow tests not marked slow")
        terminalreporter.write_line(
            f"these are not marked @pytest.mark.slow but took over {QUICK_TEST_SECONDS:g} s"
            " (setup, call and teardown) here:"
        )
        for seconds, test in over:
            terminalreporter.write_line(f"{seconds:7.1f} s  {test}")
