"""Serving local roles (protocols.runtime.session.LocalRoles ``serving``, what mpc_auc.Session keeps warm): one
session after another in the same processes, each with its own dealer keys, triples and masks."""
import dataclasses

import numpy as np
import torch

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


def test_serving_roles_run_each_session_with_fresh_keys_and_masks():
    roles = LocalRoles(_draws, "TTP", LOCAL, 30, serving=True)
    try:
        placement = dataclasses.replace(LOCAL, started=roles)
        first_pids, first = _session(placement)
        second_pids, second = _session(placement)
        assert first_pids == second_pids and roles.alive()  # the same processes served both sessions
    finally:
        roles.stop()
    for a, b in zip(first, second):
        assert np.array_equal(a["product"], np.arange(8) ** 2) and np.array_equal(b["product"], np.arange(8) ** 2)
        assert a["dealer key"] != b["dealer key"]  # new dealer keys: new triples
        assert not np.array_equal(a["mask"], b["mask"])  # new pairwise keys: new masks
    assert not roles.alive()
