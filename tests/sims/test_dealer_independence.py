"""The suite's dealer check (sims.security.checks.key_independence) on the project's Dealer and on Dealers
weakened in ways no list of P0's guesses would name.

The check runs a Dealer's key set-up with its randomness source, ``secrets.token_bytes``, answering from a
script and its sends recorded; it flips each bit of the script in turn and notes whose view moves.  The
honest Dealer passes every one of 200 trials; a Dealer deriving k_1 from k_0 in any way is flagged, as is one
whose keys come from another source, rest on too few bits, or that tells P1 anything derived from k_0.
"""
import hashlib
import os

import numpy as np
import pytest

from mpc_auc.circuits.crypten_compat import crypten
from mpc_auc.protocols.runtime.dealer import Dealer
from mpc_auc.sims.security import checks as sc


def test_our_dealer_passes_200_of_200_trials():
    found = sc.key_independence(Dealer, 200, np.random.default_rng(21))
    assert found["flagged"] == 0 and found["trials"] == 200 and found["draws"] == [2]
    assert found["most shared bits"] == 0
    assert found["fewest bits P0's view moves with"] == found["fewest bits P1's view moves with"] == 256


@pytest.mark.parametrize("dealer", sc.WEAKENED_DEALERS.values(), ids=lambda d: d.__name__)
def test_every_derivation_of_k1_from_k0_is_flagged_in_every_trial(dealer):
    found = sc.key_independence(dealer, 5, np.random.default_rng(22))
    assert found["flagged"] == 5 and found["most shared bits"] == 256  # every bit of k_0 moves k_1


class OtherSourceDealer(Dealer):
    """k_0 from os.urandom (not the source the check controls), k_1 = SHA-256(k_0)."""

    @staticmethod
    def draw_keys() -> list:
        k0 = os.urandom(32)
        return [k0, hashlib.sha256(k0).digest()]


class FewBitsDealer(Dealer):
    """k_1 = SHA-256 of two bytes of a fresh draw: independent of k_0 but 16 bits of entropy."""

    @staticmethod
    def draw_keys() -> list:
        k0, r = Dealer.draw_keys()
        return [k0, hashlib.sha256(r[:2]).digest()]


class TellsP1Dealer(Dealer):
    """Fresh keys, but P1 is also sent SHA-256(k_0)."""

    def draw_keys(self) -> list:
        self.keys = Dealer.draw_keys()
        return self.keys

    def _setup_generators(self):
        super()._setup_generators()
        comm = crypten.communicator.get()
        comm.send_obj(hashlib.sha256(self.keys[0]).digest(), 1, comm.ttp_group)


@pytest.mark.parametrize("dealer, reason", [(OtherSourceDealer, "not reproduced"), (FewBitsDealer, "few bits"),
                                            (TellsP1Dealer, "shared")])
def test_keys_from_another_source_on_few_bits_or_a_view_told_about_k0_are_flagged(dealer, reason):
    trial = sc.key_dependence(dealer, np.random.default_rng(23))
    assert not trial["independent"]
    assert {"not reproduced": not trial["reproduced"], "few bits": trial["bits"][1] == 16,
            "shared": trial["shared"] == 256}[reason]
