"""Control messages decode only into the registered message types: hostile payloads fail with WireError."""
import dataclasses
import importlib
import json
import struct

import numpy as np
import pytest

from mpc_auc.protocols.inputs.encoding import ScoreEncoder
from mpc_auc.protocols.inputs.submission import Declaration, Roster
from mpc_auc.protocols.mpc.ranking_job import Job
from mpc_auc.protocols.runtime import wire
from mpc_auc.protocols.runtime.deployment import Deployment
from mpc_auc.protocols.runtime.identity import Identity
from mpc_auc.protocols.runtime.ledger import Budget
from mpc_auc.protocols.services import SERVED  # noqa: F401  (the services' message types register on import)


def _raw(tree, *blobs) -> bytes:
    """A message as a hostile peer could write it: any JSON tree and blobs."""
    header = json.dumps(tree).encode()
    return b"".join([struct.pack(">I", len(header)), header] + [struct.pack(">Q", len(b)) + b for b in blobs])


def test_registered_types_round_trip_through_their_constructors():
    message = ("job", {"encoder": ScoreEncoder(0.0, 2.0, "float32"), "budget": Budget(1.5, 1e-9),
                       "array": np.arange(5, dtype=np.int64), "blob": b"\x00\xff", "tuple": (1, 2.5, None)})
    kind, payload = wire.decode(wire.encode(message))
    assert kind == "job" and payload["encoder"] == ScoreEncoder(0.0, 2.0, "float32")
    assert payload["budget"] == Budget(1.5, 1e-9) and payload["tuple"] == (1, 2.5, None)
    assert np.array_equal(payload["array"], np.arange(5)) and payload["blob"] == b"\x00\xff"


def test_the_registry_is_explicit():
    names = wire.message_types()
    assert "mpc_auc.protocols.mpc.ranking_job:Job" in names
    assert "mpc_auc.protocols.runtime.deployment:Deployment" not in names  # a dataclass, never a message
    assert all(name.startswith("mpc_auc.") for name in names)


@pytest.mark.parametrize("name", [
    "mpc_auc.protocols.runtime.deployment:Deployment",  # an mpc-auc dataclass off the registry
    "mpc_auc.protocols.runtime.identity:Identity",  # holds private keys: must never be built from the wire
    "os:system", "builtins:eval", "subprocess:Popen",  # code execution, pickle's classic
    "mpc_auc.protocols.mpc.ranking_job:Job.__init__.__globals__",  # attribute walking
    "", 42, None, ["mpc_auc.protocols.mpc.ranking_job:Job"],
])
def test_a_type_off_the_registry_is_refused(name):
    with pytest.raises(wire.WireError, match="not a registered message type"):
        wire.decode(_raw({"$c": name, "f": {}}))


@pytest.mark.parametrize("tree, blobs", [
    ({"$c": "mpc_auc.protocols.runtime.ledger:Budget", "f": {"epsilon": -1.0}}, ()),  # the constructor's checks
    ({"$c": "mpc_auc.protocols.runtime.ledger:Budget", "f": {"epsilon": 1.0, "pwned": 1}}, ()),  # unknown field
    ({"$c": "mpc_auc.protocols.runtime.ledger:Budget", "f": [1, 2]}, ()),  # fields not a mapping
    ({"$a": 0, "dtype": "object", "shape": [1]}, (b"\x00" * 8,)),  # an object array
    ({"$a": 0, "dtype": "int64", "shape": [3]}, (b"\x00" * 8,)),  # a shape its bytes do not fill
    ({"$b": 5}, ()),  # a blob that is not there
    ({"$x": 1}, ()),  # an unknown node
])
def test_malformed_messages_are_refused(tree, blobs):
    with pytest.raises(wire.WireError):
        wire.decode(_raw(tree, *blobs))


def test_truncated_and_deeply_nested_messages_are_refused():
    good = wire.encode(("job", Budget(1.0)))
    for cut in (1, 3, 10, len(good) - 1):
        with pytest.raises(wire.WireError):
            wire.decode(good[:cut])
    nested = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(wire.WireError):
        wire.decode(struct.pack(">I", len(nested)) + nested)


def test_a_sender_cannot_put_an_unregistered_type_on_the_wire():
    with pytest.raises(wire.WireError, match="does not travel"):
        wire.encode(Deployment({}, {}))
    with pytest.raises(wire.WireError, match="do not travel"):
        wire.encode(np.array([object()]))


def test_a_job_travels_whole():
    roster = Roster((Identity("client:a").public,))
    job = Job(Declaration("e1", roster, ScoreEncoder()), "radix", False, rows=(3,), budget=Budget(2.0))
    assert wire.decode(wire.encode(job)) == job


def _any_dataclass(path):
    """The decoder as it was before the registry (a deliberately weakened variant): any dataclass of any
    mpc_auc module a peer names, rebuilt through its constructor."""
    module, _, name = str(path).partition(":")
    cls = getattr(importlib.import_module(module), name, None) if module.startswith("mpc_auc.") else None
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise wire.WireError(f"{path} is not an mpc-auc message type")
    return cls


def test_a_peer_builds_a_deployment_of_its_choosing_without_the_registry(monkeypatch):
    """The attack the registry stops: a peer sends a Deployment naming its own address and key for P1, which a
    receiver that decodes any mpc_auc dataclass builds, and which the registry refuses (a deployment never
    travels in a control message: it reaches local roles over their start-up pipe)."""
    forged = _raw({"$c": "mpc_auc.protocols.runtime.deployment:Deployment",
                   "f": {"publics": {"$d": []}, "addresses": {"$d": [["P1", "203.0.113.9:443"]]}}})
    with pytest.raises(wire.WireError, match="not a registered message type"):
        wire.decode(forged)
    monkeypatch.setattr(wire, "_dataclass", _any_dataclass)
    built = wire.decode(forged)
    assert isinstance(built, Deployment) and built.addresses == {"P1": "203.0.113.9:443"}
