"""ustat-2pc's pair-parties: P0 holds the first users of the sampled pairs, P1 the second ones.

Runs in P0 and P1 only (it loads CrypTen and the circuits): per job, each pair's kernel and its noise in
2PC (circuits.kernels) in chunks of CHUNK pairs; the shares of the noisy kernel values go to the
aggregator (protocols.ustat.two_party), nothing is opened here.
"""
import numpy as np

from ...circuits import kernels
from ...circuits.gates import Gates
from ..runtime.metrics import TrafficMeter
from ..runtime.control import serves
from .two_party import CHUNK, SERVICE, bound


@serves(SERVICE)
def serve_pairs(ctx):
    """The pair-parties' session target: evaluate each job's kernels with their noise until None comes."""
    def kernel(job, part):
        limit = bound(job.kernel)
        if job.kernel == "auc":
            return kernels.auc_public_classes(gates, job.inputs[part], job.noise, limit)
        if job.kernel == "auc-private":
            return kernels.auc_private_labels(gates, job.inputs[part], job.labels[part], job.noise, limit)
        if job.kernel == "gini":
            return kernels.gini(gates, job.inputs[part], job.noise, limit)
        return kernels.kendall(gates, job.inputs[part], job.noise, limit)

    gates = Gates(ctx.stream_key)
    while (job := ctx.recv("job")) is not None:
        meter = TrafficMeter()
        parts = [kernel(job, slice(start, start + CHUNK)) for start in range(0, len(job.inputs), CHUNK)]
        ctx.send("result", (np.concatenate(parts, axis=-1), meter.read()))
