"""A Flower app whose federated evaluation reports the private global AUC (mpc-auc) beside the clear one."""
