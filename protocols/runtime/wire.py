"""The encoding of control messages between roles: JSON structure plus raw binary blobs, no pickle.

A message is a tree of None, bool, int, float, str, bytes, lists, tuples,
dicts, numpy arrays and scalars, and the dataclasses on an explicit registry
of message types: each is declared where it is defined (:func:`message`), or
by the protocol that sends it (:func:`register`).  Decoding builds only those
types (a dataclass is rebuilt through its constructor, so its own validation
runs), so a peer can never make the receiver execute code, unlike pickle, nor
build any other class, however it names it; encoding refuses any other class
too, so a sender learns of a type missing from the registry at once.

Layout: 4-byte big-endian length of the JSON header, the header, then each
blob as an 8-byte length and its bytes.
"""
import dataclasses
import json
import struct

import numpy as np

_LEN4, _LEN8 = struct.Struct(">I"), struct.Struct(">Q")
_DTYPES = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"}


_MESSAGE_TYPES = {}  # "module:qualname" -> the dataclass a control message may carry


class WireError(ValueError):
    """A control message that does not decode."""


def _type_name(cls) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def register(*classes) -> None:
    """Put dataclasses on the registry of message types (those defined in a layer below this one)."""
    for cls in classes:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls!r} is not a dataclass")
        _MESSAGE_TYPES[_type_name(cls)] = cls


def message(cls):
    """Class decorator: ``cls`` (a dataclass) may travel in control messages."""
    register(cls)
    return cls


def message_types() -> tuple:
    """The names of the registered message types."""
    return tuple(sorted(_MESSAGE_TYPES))


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
    except (struct.error, ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as err:
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
    if _MESSAGE_TYPES.get(_type_name(type(x))) is type(x):
        fields = {f.name: _pack(getattr(x, f.name), blobs) for f in dataclasses.fields(x) if f.init}
        return {"$c": _type_name(type(x)), "f": fields}
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


def _dataclass(path) -> type:
    cls = _MESSAGE_TYPES.get(path) if isinstance(path, str) else None
    if cls is None:
        raise WireError(f"{str(path)[:100]!r} is not a registered message type")
    return cls
