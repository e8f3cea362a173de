"""Loading the receivable schedule, the monthly tapes and the market inputs into `raw`."""
