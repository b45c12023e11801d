"""Serving local roles (protocols.runtime.session.LocalRoles ``serving``, what mpc_auc.Session keeps warm): one
session after another in the same processes, each with its own dealer keys, triples and masks."""
import dataclasses

import numpy as np
import pytest
import torch

from mpc_auc.protocols.errors import ChannelIntegrityError, PeerLost
from mpc_auc.protocols.runtime.identity import COORDINATOR, Identity
from mpc_auc.protocols.runtime.link import dial
from mpc_auc.protocols.runtime.session import LOCAL, LocalRoles, Session


def _draws(ctx):
    """This party's dealer key, a Beaver product (dealer triples) and a draw from its pairwise mask stream."""
    from mpc_auc.circuits.crypten_compat import crypten
    from mpc_auc.circuits.shares import from_share, reveal_int

    x = from_share(np.arange(8) if ctx.rank == 0 else np.zeros(8, dtype=np.int64))
    product = reveal_int(x * x).numpy()
    mask = crypten.generators["next"][torch.device("cpu")].words((4,))
    return {"dealer key": ctx.stream_key, "product": product, "mask": mask}


def _session(placement):
    with Session(_draws, provider="TTP", placement=placement, timeout_s=30) as session:
        return session.pids, [session.recv(role, "done") for role in ("P0", "P1")]


def test_serving_roles_run_each_session_with_fresh_keys_and_masks_on_loopback_for_the_pinned_coordinator_only():
    roles = LocalRoles(_draws, "TTP", LOCAL, 30, serving=True)
    try:
        placement = dataclasses.replace(LOCAL, started=roles)
        first_pids, first = _session(placement)
        deployment, _ = roles.agree(_draws, "TTP", 1.0)  # what every later session dials: the first's pins
        assert all(address.startswith("127.0.0.1:") for address in deployment.addresses.values())
        with pytest.raises((ChannelIntegrityError, PeerLost)):  # a coordinator key not pinned at the first session
            dial(Identity(COORDINATOR), deployment, "P0", {"purpose": "control", "session": "stranger"}, 5.0)
        second_pids, second = _session(placement)  # the pinned coordinator still gets its session
        assert first_pids == second_pids and roles.alive()  # the same processes served both sessions
    finally:
        roles.stop()
    for a, b in zip(first, second):
        assert np.array_equal(a["product"], np.arange(8) ** 2) and np.array_equal(b["product"], np.arange(8) ** 2)
        assert a["dealer key"] != b["dealer key"]  # new dealer keys: new triples
        assert not np.array_equal(a["mask"], b["mask"])  # new pairwise keys: new masks
    assert not roles.alive()
