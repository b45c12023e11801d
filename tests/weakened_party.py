"""A compute party that rewrites the result it shares with the clients (a weakened P0), run as
``python weakened_party.py FIELD[,FIELD...] party --role P0 ...``: the real ``mpc-auc party``, except that in its
i-th job it replaces the i-th listed field (in turn) of the SharedResult it sends each client before sending it
(protocols.mpc.ranking_party.shared_result), as a P0 that lies to the clients would.  The organiser's result is
left alone."""
import dataclasses
import sys

import numpy as np

from mpc_auc.cli import main
from mpc_auc.protocols.mpc import ranking_party


def lie(shared, field: str):
    """``shared`` with ``field`` rewritten plausibly."""
    if field == "rows":
        return dataclasses.replace(shared, rows=(shared.rows[0] + 1,) + shared.rows[1:])
    if field == "missing":
        return dataclasses.replace(shared, missing=shared.missing + ("nobody",))
    if field == "clients":
        return dataclasses.replace(shared, clients=shared.clients[::-1])
    if field == "noise":
        return dataclasses.replace(shared, noise=dataclasses.replace(shared.noise, epsilon=4 * shared.noise.epsilon))
    if field == "opened":
        opened = dict(shared.opened)
        if "central" in opened:
            stat, positives = opened["central"]
            opened["central"] = (np.asarray(stat) + 1000, np.asarray(positives))
        else:
            opened["scaled"] = opened["scaled"] // 3
        return dataclasses.replace(shared, opened=opened)
    raise SystemExit(f"weakened_party.py: no lie for the field {field!r}")


def rewriting(fields: list):
    honest, jobs = ranking_party.shared_result, []

    def shared_result(job, ticket, result):
        jobs.append(job)
        return lie(honest(job, ticket, result), fields[(len(jobs) - 1) % len(fields)])

    ranking_party.shared_result = shared_result


if __name__ == "__main__":
    rewriting(sys.argv[1].split(","))
    sys.exit(main(sys.argv[2:]))
