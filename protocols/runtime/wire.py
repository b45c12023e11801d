"""The encoding of control messages between roles: JSON structure plus raw binary blobs, no pickle.

A message is a tree of None, bool, int, float, str, bytes, lists, tuples,
dicts, numpy arrays and scalars, and dataclasses defined in mpc_auc itself.
Decoding builds only those types (a dataclass is rebuilt through its
constructor, so its own validation runs), so a peer can never make the
receiver execute code, unlike pickle.

Layout: 4-byte big-endian length of the JSON header, the header, then each
blob as an 8-byte length and its bytes.
"""
import dataclasses
import importlib
import json
import struct

import numpy as np

_LEN4, _LEN8 = struct.Struct(">I"), struct.Struct(">Q")
_PACKAGE = "mpc_auc."
_DTYPES = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"}


class WireError(ValueError):
    """A control message that does not decode."""


def encode(obj) -> bytes:
    blobs = []
    header = json.dumps(_pack(obj, blobs), separators=(",", ":")).encode()
    parts = [_LEN4.pack(len(header)), header]
    for blob in blobs:
        parts += [_LEN8.pack(len(blob)), blob]
    return b"".join(parts)


def decode(data) -> object:
    view = memoryview(data)
    try:
        (size,) = _LEN4.unpack_from(view)
        tree = json.loads(bytes(view[4:4 + size]))
        blobs, at = [], 4 + size
        while at < len(view):
            (n,) = _LEN8.unpack_from(view, at)
            blobs.append(view[at + 8:at + 8 + n])
            at += 8 + n
        return _unpack(tree, blobs)
    except (struct.error, ValueError, KeyError, IndexError, TypeError) as err:
        raise WireError(f"malformed control message: {err}") from None


def _pack(x, blobs):
    if x is None or isinstance(x, (bool, str, int, float)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (bytes, bytearray, memoryview)):
        blobs.append(bytes(x))
        return {"$b": len(blobs) - 1}
    if isinstance(x, np.ndarray):
        if x.dtype.name not in _DTYPES:
            raise WireError(f"arrays of dtype {x.dtype} do not travel")
        blobs.append(np.ascontiguousarray(x).tobytes())
        return {"$a": len(blobs) - 1, "dtype": x.dtype.name, "shape": list(x.shape)}
    if isinstance(x, tuple):
        return {"$t": [_pack(v, blobs) for v in x]}
    if isinstance(x, list):
        return [_pack(v, blobs) for v in x]
    if isinstance(x, dict):
        return {"$d": [[_pack(k, blobs), _pack(v, blobs)] for k, v in x.items()]}
    if dataclasses.is_dataclass(x) and type(x).__module__.startswith(_PACKAGE):
        fields = {f.name: _pack(getattr(x, f.name), blobs) for f in dataclasses.fields(x) if f.init}
        return {"$c": f"{type(x).__module__}:{type(x).__qualname__}", "f": fields}
    raise WireError(f"a {type(x).__name__} does not travel in a control message")


def _unpack(x, blobs):
    if not isinstance(x, (dict, list)):
        return x
    if isinstance(x, list):
        return [_unpack(v, blobs) for v in x]
    if "$b" in x:
        return bytes(blobs[x["$b"]])
    if "$a" in x:
        if x["dtype"] not in _DTYPES:
            raise WireError(f"arrays of dtype {x['dtype']} do not travel")
        return np.frombuffer(blobs[x["$a"]], dtype=x["dtype"]).reshape(x["shape"]).copy()
    if "$t" in x:
        return tuple(_unpack(v, blobs) for v in x["$t"])
    if "$d" in x:
        return {_unpack(k, blobs): _unpack(v, blobs) for k, v in x["$d"]}
    if "$c" in x:
        return _dataclass(x["$c"])(**{k: _unpack(v, blobs) for k, v in x["f"].items()})
    raise WireError("unknown node in a control message")


def _dataclass(path: str):
    module, _, name = path.partition(":")
    if not module.startswith(_PACKAGE) or "." in name:
        raise WireError(f"{path} is not an mpc-auc message type")
    cls = getattr(importlib.import_module(module), name, None)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise WireError(f"{path} is not an mpc-auc message type")
    return cls
