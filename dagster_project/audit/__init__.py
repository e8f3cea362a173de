"""The auditor's package: the reproducible sample, the exceptions with their lifecycle, the
certificate tie-outs and the reconciliation aging, gathered per Collection Period."""
