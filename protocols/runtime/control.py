"""The control channel between a coordinator and its roles, and the registry of what a role serves.

Every link from a coordinator to a role carries messages on :data:`CONTROL` (``(kind, payload)``,
encoded by protocols.runtime.wire) and an abort reason on :data:`ABORT`.  A session's ``start`` message
names its target: a :class:`Service` (a deployed role runs only services, found in its registry), or,
for roles spawned by this process, a function it handed them at spawn time.

The registry: each service's module registers the function a role runs with :func:`serves`; a role
imports the modules of the services it offers (:func:`load`) and nothing else, so the coordinator never
imports CrypTen or the circuits.  :func:`served` lists what this process serves.
"""
import importlib
from dataclasses import dataclass

from . import wire

CONTROL, ABORT = 1, 2  # channels of a control link
ABORT_EXIT = 3
INTERRUPTED = "the coordinator was interrupted"  # its user pressed Ctrl-C and was told so: roles stop quietly

_REGISTERED = {}  # service name -> the function a role runs for it


@dataclass(frozen=True)
class Service:
    """A session target a serving role runs: its name in ``start`` messages and the module registering it
    (imported by role processes only: it loads CrypTen and the circuits)."""
    name: str
    module: str


def serves(service: Service):
    """Decorator: ``service`` runs the decorated function ``(ctx, *args)`` in P0 and P1."""
    def register(function):
        _REGISTERED[service.name] = function
        return function
    return register


def load_services(services) -> None:
    """Import each service's module in this role process, which registers its function."""
    for service in services:
        importlib.import_module(service.module)
        if service.name not in _REGISTERED:
            raise RuntimeError(f"{service.module} does not register the service {service.name!r}")


def served() -> tuple:
    """The names of the services this process can run (after :func:`load_services`)."""
    return tuple(sorted(_REGISTERED))


def target_name(target) -> str:
    """How a ``start`` message names ``target``: a service by its name, a local function by its path."""
    return target.name if isinstance(target, Service) else f"{target.__module__}:{target.__qualname__}"


def resolve_target(name: str, local_targets: dict):
    """The function a start message names: one handed over at spawn (local run) or a registered service."""
    if name in local_targets:
        return local_targets[name]
    if name not in _REGISTERED:
        raise PermissionError(f"this role does not serve {name!r}")
    return _REGISTERED[name]


def send_message(link, kind: str, payload=None) -> None:
    link.send(CONTROL, wire.encode((kind, payload)))


def recv_message(link, operation: str = "control message"):
    kind, payload = wire.decode(link.recv(CONTROL, operation))
    return kind, payload
