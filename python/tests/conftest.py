"""Shared by the Python tests: the rsim command line they compare the module with."""

import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def rsim_cli():
    """Runs the rsim executable built beside the module (CTest sets RSIM_CLI) and returns its
    stdout; the module's results must equal what it prints."""
    executable = os.environ.get("RSIM_CLI")
    if not executable:
        pytest.skip("RSIM_CLI (the rsim executable) is not set")

    def run(*args: str) -> str:
        return subprocess.run([executable, *args], check=True, capture_output=True,
                              text=True).stdout

    return run
