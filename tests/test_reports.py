"""The rendered documents: a certificate and a statement for every Distribution Date, the plots."""

import duckdb


def test_every_distribution_date_has_a_rendered_certificate_and_statement(built_warehouse):
    reports = built_warehouse["reports"]
    con = duckdb.connect(str(built_warehouse["published"]), read_only=True)
    dates = [
        r[0]
        for r in con.execute(
            "select distinct distribution_date from marts.rpt_servicer_certificate order by 1"
        ).fetchall()
    ]
    first_pool = con.execute(
        "select value from marts.rpt_servicer_certificate "
        "where distribution_date = ? and line = '5'",
        [dates[0]],
    ).fetchone()[0]
    con.close()
    for date in dates:
        certificate = (reports / "certificates" / f"certificate_{date}.html").read_text()
        assert "MONTHLY SERVICER'S CERTIFICATE" in certificate
        assert f"{date:%m/%d/%Y}" in certificate
        for line in ("1.", "8.", "29.", "45.", "78.", "80."):
            assert f'<td class="no">{line}</td>' in certificate, (date, line)
        statement = (reports / "statements" / f"statement_{date}.html").read_text()
        assert "(xxii)" in statement and "(i)" in statement
    first = (reports / "certificates" / f"certificate_{dates[0]}.html").read_text()
    assert "$39,678.33" in first and "$78,602.15" in first  # Art. I first-period interest
    assert f"${float(first_pool):,.2f}" in first
    performance = (reports / "performance.html").read_text()
    assert performance.count("data:image/png;base64,") == 7
    index = (reports / "index.html").read_text()
    assert index.count("certificate</a>") == len(dates)
