"""Exact money helpers: Decimal in Python, integer cents where arrays are needed.

Rounding is half-up to the cent, and only where the agreement or the certificate rounds.
"""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def to_decimal(value: object) -> Decimal:
    """Parse a money or rate value exactly (never through float)."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        raise TypeError(f"refusing float {value!r}: money and rates must be exact")
    return Decimal(str(value))


def round_cents(value: Decimal) -> Decimal:
    """Round half-up to the cent (the certificate prints cents)."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def decimal_to_cents(value: Decimal) -> int:
    quantized = to_decimal(value).quantize(CENT)
    if quantized != to_decimal(value):
        raise ValueError(f"{value} has fractions of a cent")
    return int(quantized.scaleb(2))
