"""The benchmarks (``make bench``, ``make bench-*``): ``mpc-auc run`` end to end beside SecretFlow SPU (``e2e``,
``spu_reference``), the shaped-network runs (``net``, with its ``delay_relay``), the two oblivious rankings
(``ranking``), one party's local work on 1..N threads (``threads``), ustat-2pc's throughput (``ustat``), reading
evaluation rows (``read``) and moving bytes over the links (``link``).  Each prints its figures and the machine;
docs/BENCHMARKS.md records them."""
__all__ = ["delay_relay", "e2e", "link", "net", "ranking", "read", "spu_reference", "threads", "ustat"]
