"""Who holds what and who sends what: client input sharing, the party runtime
(compute parties and dealer as processes over TCP) and the AUC protocols."""
