"""Suite power as a measured property: known-bad variants of the reference implementation (fault
switches, `draconform.faults`), each tied to the rule it breaks, run against the relevant features."""
