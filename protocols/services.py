"""What a deployed role serves: every service a coordinator may start on ``mpc-auc party`` (the public registry).

A service names the function P0 and P1 run in a session and the module that registers it
(protocols.runtime.control); a role imports exactly these modules when it starts, and refuses a session
that names anything else.
"""
from .mpc.ranking_job import SERVICE as RANKING
from .ustat.two_party import SERVICE as USTAT_PAIRS

SERVED = (RANKING, USTAT_PAIRS)
