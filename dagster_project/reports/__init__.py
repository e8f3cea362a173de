"""Documents people read: the certificate per Distribution Date and the deal performance report."""
