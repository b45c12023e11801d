"""Test-wide settings: the parties' default privacy ledgers live in a temporary state directory; a deployment."""
import os

import pytest

from roles_on_hosts import deploy


@pytest.fixture(autouse=True, scope="session")
def _private_state_directory(tmp_path_factory):
    """XDG_STATE_HOME for this test session (roles and CLI subprocesses inherit it), never the user's."""
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))


@pytest.fixture(scope="session")
def deployed(tmp_path_factory):
    """(directory, role processes, their logs, ports) of a deployment serving on 127.0.0.2/3/4, one for the test
    modules of a worker (each test uses fresh client keys: new owners in the parties' ledgers).  A module whose
    tests stop or replace its roles defines its own (tests/protocols/runtime/test_deployment.py)."""
    yield from deploy(tmp_path_factory)
