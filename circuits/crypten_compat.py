"""Make ``import crypten`` work on current torch; every module imports CrypTen from here.

CrypTen 0.4.1 (the last release) imports ``torch.onnx._internal.registration``
in ``crypten.nn.onnx_converter`` at package import time.  Torch >= 2.x no
longer has that module.  The ONNX converter is only used by
``crypten.nn.from_pytorch``/``from_onnx``, which mpc-auc never calls, so an
empty stand-in module under that name is enough for the MPC core to load.
"""
import importlib
import sys
import types

_MISSING_MODULE = "torch.onnx._internal.registration"

INSTALL_HINT = (
    "CrypTen is not installed. Its PyPI metadata is broken, so install it without "
    "dependencies: `pip install --no-deps crypten==0.4.1` (the project's `make demo` "
    "and `make test` do this for you)."
)


def _provide_onnx_registration() -> None:
    if _MISSING_MODULE in sys.modules:
        return
    try:
        importlib.import_module(_MISSING_MODULE)
        return
    except ImportError:
        pass
    import torch.onnx._internal as internal  # lazily: only where the stand-in module is missing

    stand_in = types.ModuleType(_MISSING_MODULE)
    stand_in.registry = None  # read only by crypten.nn's ONNX export path
    sys.modules[_MISSING_MODULE] = stand_in
    internal.registration = stand_in


def load_crypten():
    """Return the ``crypten`` module, or raise ImportError with the install command."""
    _provide_onnx_registration()
    try:
        return importlib.import_module("crypten")
    except ModuleNotFoundError as err:
        if err.name == "crypten":
            raise ImportError(INSTALL_HINT) from err
        raise


crypten = load_crypten()
