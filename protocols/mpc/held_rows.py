"""One job's admitted rows at a compute party, as its circuits read them: each client's shares side by side in
roster order, and the same rows without some clients' (whose row ranges are public: each client's row count is).
"""
from dataclasses import dataclass

import numpy as np

from ..runtime.memory import release_free_memory


@dataclass(frozen=True)
class HeldRows:
    keys: np.ndarray  # (columns, M): this party's additive shares of each score column's keys
    key_xor: np.ndarray  # (columns, M): its XOR shares of the non-negative radix keys
    labels: np.ndarray  # (M,): its additive shares of the labels
    weights: np.ndarray  # (M,): its shares of the weight units, None in an unweighted evaluation
    owners: tuple  # (client, its key for rank bundles, its row count) per client, in row order

    @classmethod
    def take(cls, opened: list, weighted: bool) -> "HeldRows":
        """The rows of ``opened`` (protocols.inputs.bundles.OpenedBundle, in roster order) side by side; the list
        is emptied, so that the bundles' buffers are freed with it, and the freed heap handed back."""
        held = cls(np.concatenate([o.key_shares for o in opened], axis=1),
                   np.concatenate([o.key_xor_shares for o in opened], axis=1),
                   np.concatenate([o.label_shares for o in opened]),
                   np.concatenate([o.weight_shares for o in opened]) if weighted else None,
                   tuple((o.client, o.reply_to, len(o.label_shares)) for o in opened))
        opened.clear()
        release_free_memory()
        return held

    @property
    def rows(self) -> list:
        """Each client's row count, in row order."""
        return [rows for _, _, rows in self.owners]

    def without(self, clients) -> "HeldRows":
        """The same rows less every row of ``clients``."""
        keep = np.concatenate([np.full(rows, client not in clients) for client, _, rows in self.owners])
        return HeldRows(self.keys[:, keep], self.key_xor[:, keep], self.labels[keep],
                        None if self.weights is None else self.weights[keep],
                        tuple(o for o in self.owners if o[0] not in clients))
