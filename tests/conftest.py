"""Test-wide settings: the parties' default privacy ledgers live in a temporary state directory."""
import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_state_directory(tmp_path_factory):
    """XDG_STATE_HOME for this test session (roles and CLI subprocesses inherit it), never the user's."""
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
