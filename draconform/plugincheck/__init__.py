"""`draconform plugin-check`: the DRA-PLUGIN catalogue and the driver-side rules of KEP-5322 and KEP-5963,
checked against a live kubelet plugin that draconform did not start (`claims.py`: the claims it prepares and
what the driver declares; `checks.py`: one check per rule; `runner.py`: the run and its reports)."""
